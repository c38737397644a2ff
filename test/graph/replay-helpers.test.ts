import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Node } from "../../nodes/names.js";
import type { AgentStateValue } from "../../nodes/state.js";
import {
  checkpointConfig,
  forkFrom,
  listCheckpoints,
  replayFrom,
  updateFromAssignments,
  type CheckpointInfo,
} from "../../src/replay.js";
import { EASY_TRIP, startAgent, tempDir, threadConfig, tripInput, type Agent } from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";

const THREAD = "helpers";
const tmp = tempDir();
let agent: Agent;
let original: CheckpointInfo[];
let understood: CheckpointInfo;

beforeAll(async () => {
  agent = startAgent({ dbPath: tmp.dbPath });
  await agent.graph.invoke(tripInput(EASY_TRIP), threadConfig(THREAD));
  original = await listCheckpoints(agent.graph, THREAD);
  understood = original.find(
    (c) =>
      c.next.includes(Node.EXECUTE) &&
      c.status === "executing" &&
      original.find((p) => p.id === c.parent)?.next.includes(Node.UNDERSTAND),
  )!;
});
afterAll(() => {
  agent.close();
  tmp.cleanup();
});

describe("replay helpers", () => {
  it("listCheckpoints: newest first, each linked to its parent, from the input checkpoint to the end", () => {
    expect(original[0]).toMatchObject({ next: [], status: "completed" });
    expect(original.at(-1)).toMatchObject({ step: -1, next: ["__start__"], parent: null });
    const steps = original.map((c) => c.step ?? 0);
    expect(steps).toEqual([...steps].sort((a, b) => b - a));
    for (const [i, c] of original.slice(0, -1).entries()) expect(c.parent).toBe(original[i + 1]!.id);
    expect(understood).toBeDefined();
  });

  it("replayFrom re-runs the steps after a checkpoint and returns the final values; the old branch stays", async () => {
    const before = agent.calls.total();
    const replayed = await replayFrom(agent.graph, THREAD, understood.id);
    expect(replayed.status).toBe("completed");
    expect(agent.calls.total()).toBe(before + 5);
    const after = await listCheckpoints(agent.graph, THREAD);
    expect(after.map((c) => c.id)).toEqual(expect.arrayContaining(original.map((c) => c.id)));
    expect(after.length).toBeGreaterThan(original.length);
  });

  it("forkFrom applies a dotted-path update as the checkpoint's writer and runs the branch", async () => {
    const base = (await agent.graph.getState(checkpointConfig(THREAD, understood.id))).values as AgentStateValue;
    const update = updateFromAssignments(base, ["settings.maxRevisions=0"]);
    expect(update.settings).toEqual({ ...base.settings, maxRevisions: 0 });
    const { values, checkpointId, notes } = await forkFrom(agent.graph, THREAD, understood.id, update, Node.UNDERSTAND);
    expect(values.status).toBe("completed");
    expect(values.settings.maxRevisions).toBe(0);
    expect(planOf(values)!.planId).toBe(planOf(base)!.planId);
    expect(notes).toEqual([]);
    const fork = (await listCheckpoints(agent.graph, THREAD)).find((c) => c.id === checkpointId)!;
    expect(fork.parent).toBe(understood.id);
    // The checkpoint the fork branched from is unchanged.
    const again = (await agent.graph.getState(checkpointConfig(THREAD, understood.id))).values as AgentStateValue;
    expect(again.settings.maxRevisions).toBe(base.settings.maxRevisions);
  });

  // Bug: forkFrom(…, "understand") at a checkpoint that already had its plan ran that plan for a changed request
  // (the CLI planned again; the library did not).
  it.each([
    ["as UNDERSTAND", Node.UNDERSTAND, "Plan a 3-day trip from Madrid to Rome for 2 people", "Rome"],
    ["with no asNode", undefined, "4 days in Lisbon from Madrid for 2", "Lisbon"],
    ["for a request in Spanish", Node.UNDERSTAND, "3 días a Viena desde Madrid para 2", "Vienna"],
  ])("a changed request at a planned checkpoint is planned again (%s)", async (_, asNode, text, city) => {
    const base = (await agent.graph.getState(checkpointConfig(THREAD, understood.id))).values as AgentStateValue;
    const update = { request: { ...base.request, userIntent: text } };
    const { values, checkpointId, notes } = await forkFrom(agent.graph, THREAD, understood.id, update, asNode);
    expect(values.status).toBe("completed");
    expect(planOf(values)!.objective).toBe(text);
    expect(planOf(values)!.planId).not.toBe(planOf(base)!.planId);
    expect(planOf(values)!.steps.find((s) => s.id === "hotel")!.params.city).toBe(city);
    const all = await listCheckpoints(agent.graph, THREAD);
    const before = all.find((c) => c.id === all.find((f) => f.id === checkpointId)!.parent)!;
    expect(before.next).toEqual([Node.UNDERSTAND]);
    expect(notes.join(" ")).toMatch(
      /made for the old request, so the fork starts from checkpoint .* before understand/,
    );
  });

  it("a changed request with an explicit later node keeps the old plan, and says so", async () => {
    const base = (await agent.graph.getState(checkpointConfig(THREAD, understood.id))).values as AgentStateValue;
    const update = { request: { ...base.request, userIntent: "Plan a 3-day trip from Madrid to Rome for 2 people" } };
    const { values, notes } = await forkFrom(agent.graph, THREAD, understood.id, update, Node.EXECUTE);
    expect(planOf(values)!.planId).toBe(planOf(base)!.planId);
    expect(notes.join(" ")).toMatch(/asNode execute keeps it/);
  });

  it("a changed request and plan together at a planned checkpoint is refused: the plan is made again", async () => {
    const base = (await agent.graph.getState(checkpointConfig(THREAD, understood.id))).values as AgentStateValue;
    const update = { request: { ...base.request, userIntent: "Rome instead" }, plan: base.plan };
    await expect(forkFrom(agent.graph, THREAD, understood.id, update, Node.UNDERSTAND)).rejects.toMatchObject({
      code: "INVALID_REQUEST",
      message: expect.stringContaining("changes the request and the plan together"),
    });
  });

  it("an update the state schema refuses is INVALID_REQUEST with the graph's reason, and nothing is written", async () => {
    const count = (await listCheckpoints(agent.graph, THREAD)).length;
    await expect(
      forkFrom(agent.graph, THREAD, understood.id, { settings: { maxRevisions: "lots" } }, Node.UNDERSTAND),
    ).rejects.toMatchObject({
      code: "INVALID_REQUEST",
      message: expect.stringContaining("maxRevisions"),
    });
    expect((await listCheckpoints(agent.graph, THREAD)).length).toBe(count);
  });

  it("an unknown checkpoint id is UNKNOWN_THREAD, naming how to list the real ones", async () => {
    await expect(replayFrom(agent.graph, THREAD, "no-such-checkpoint")).rejects.toMatchObject({
      code: "UNKNOWN_THREAD",
      message: expect.stringContaining("history helpers"),
    });
  });

  it("updateFromAssignments parses JSON values, keeps other text as strings, and refuses a missing '='", () => {
    expect(updateFromAssignments({ a: { b: 1, c: 2 } }, ["a.b=[1,2]", "x=true", "y=hello world"])).toEqual({
      a: { b: [1, 2], c: 2 },
      x: true,
      y: "hello world",
    });
    expect(updateFromAssignments({ list: [{ v: 1 }, { v: 2 }] }, ["list.1.v=9"])).toEqual({
      list: [{ v: 1 }, { v: 9 }],
    });
    expect(() => updateFromAssignments({}, ["novalue"])).toThrow(/not key=value/);
    expect(() => updateFromAssignments({}, ["a..b=1"])).toThrow(/not key=value/);
  });
});
