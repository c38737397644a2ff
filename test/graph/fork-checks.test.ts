import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Node } from "../../nodes/names.js";
import { checkpointBefore, forkCheckpoint, listCheckpoints, type CheckpointInfo } from "../../src/replay.js";
import { EASY_TRIP, startAgent, tempDir, threadConfig, tripInput, type Agent } from "../fakes/graph-harness.js";

const THREAD = "fork-checks";
const tmp = tempDir();
let agent: Agent;
let history: CheckpointInfo[];

beforeAll(async () => {
  agent = startAgent({ dbPath: tmp.dbPath });
  await agent.graph.invoke(tripInput(EASY_TRIP), threadConfig(THREAD));
  history = await listCheckpoints(agent.graph, THREAD);
});
afterAll(() => {
  agent.close();
  tmp.cleanup();
});

describe("fork helpers on a SQLite checkpointer (issue 8 defect 7)", () => {
  it("checkpointBefore finds the checkpoint, on the same branch, from which planning runs next", async () => {
    const last = history[0]!;
    const before = await checkpointBefore(agent.graph, THREAD, last.id, Node.UNDERSTAND);
    expect(before?.next).toEqual([Node.UNDERSTAND]);
    expect(history.find((c) => c.id === before?.config.configurable?.checkpoint_id)).toMatchObject({ step: 0 });
    expect(await checkpointBefore(agent.graph, THREAD, last.id, "no_such_node")).toBeNull();
  });

  // Regression: the graph's refusal was passed on as zod's issues in JSON ([{"origin":"number",...}]).
  it("a refusal by the graph's state schema is in plain words (field: what is wrong), and nothing is written", async () => {
    const count = (await listCheckpoints(agent.graph, THREAD)).length;
    const refused = forkCheckpoint(agent.graph, THREAD, history[1]!.id, { settings: { maxRevisions: -1 } });
    await expect(refused).rejects.toMatchObject({
      code: "INVALID_REQUEST",
      message:
        "The graph refused the state update, nothing was changed: settings.maxRevisions: Too small: expected number to be >=0.",
    });
    expect((await listCheckpoints(agent.graph, THREAD)).length).toBe(count);
  });
});
