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
    const update = updateFromAssignments(base, ["settings.maxRevisions=0", "request.userIntent=What if?"]);
    expect(update.settings).toEqual({ ...base.settings, maxRevisions: 0 });
    const { values, checkpointId } = await forkFrom(agent.graph, THREAD, understood.id, update, Node.UNDERSTAND);
    expect(values.status).toBe("completed");
    expect(values.settings.maxRevisions).toBe(0);
    expect(values.request.userIntent).toBe("What if?");
    const fork = (await listCheckpoints(agent.graph, THREAD)).find((c) => c.id === checkpointId)!;
    expect(fork.parent).toBe(understood.id);
    // The checkpoint the fork branched from is unchanged.
    const again = (await agent.graph.getState(checkpointConfig(THREAD, understood.id))).values as AgentStateValue;
    expect(again.settings.maxRevisions).toBe(base.settings.maxRevisions);
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
