import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StateSnapshot } from "@langchain/langgraph";
import { Node } from "../../nodes/names.js";
import type { AgentStateValue } from "../../nodes/state.js";
import {
  EASY_TRIP,
  afterUnderstand,
  historyOf,
  startAgent,
  tempDir,
  threadConfig,
  tripInput,
  valuesOf,
  type Agent,
} from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";

const THREAD = "replay";
const tmp = tempDir();
let agent: Agent;
let original: StateSnapshot;
let originalIds: string[];
let understood: StateSnapshot;

const idOf = (s: { config: StateSnapshot["config"] }) => s.config.configurable!.checkpoint_id as string;
const at = (checkpointId: string) => ({ configurable: { thread_id: THREAD, checkpoint_id: checkpointId } });
const resultOf = (s: AgentStateValue, id: string) =>
  planOf(s)!.steps.find((x) => x.id === id)!.result as Record<string, unknown>;

beforeAll(async () => {
  agent = startAgent({ dbPath: tmp.dbPath });
  await agent.graph.invoke(tripInput(EASY_TRIP), threadConfig(THREAD));
  original = await agent.graph.getState(threadConfig(THREAD));
  const history = await historyOf(agent, THREAD);
  originalIds = history.map(idOf);
  understood = afterUnderstand(history);
});
afterAll(() => {
  agent.close();
  tmp.cleanup();
});

describe("time travel on a SQLite checkpointer", () => {
  it("finds the checkpoint right after understand: a plan, nothing run yet", () => {
    expect(valuesOf(original).status).toBe("completed");
    expect(understood.next).toEqual([Node.EXECUTE]);
    expect(planOf(valuesOf(understood))!.steps.every((s) => s.status === "pending")).toBe(true);
    expect(valuesOf(understood).feedback).toEqual([]);
    expect(agent.calls.total()).toBe(5);
  });

  it("replays from it: the steps really run again and reach the same final status and answer", async () => {
    const replayed = await agent.graph.invoke(null, at(idOf(understood)));
    expect(replayed.status).toBe("completed");
    expect(replayed.answer).toBe(valuesOf(original).answer);
    expect(planOf(replayed)!.planId).toBe(planOf(valuesOf(original))!.planId);
    // Re-executed, not read back from the old checkpoints.
    expect(agent.calls.total()).toBe(10);
    const latest = await agent.graph.getState(threadConfig(THREAD));
    expect(idOf(latest)).not.toBe(idOf(original));
    const history = await historyOf(agent, THREAD);
    expect(history.map(idOf)).toEqual(expect.arrayContaining(originalIds));
  });

  it("forks it with updateState (another destination): the fork diverges and the original branch is intact", async () => {
    const plan = valuesOf(understood).plan!;
    const toRome = {
      ...plan,
      steps: plan.steps.map((s) =>
        s.id === "flight"
          ? { ...s, params: { ...s.params, destination: "Rome" } }
          : s.id === "hotel" || s.id === "activities"
            ? { ...s, params: { ...s.params, city: "Rome" } }
            : s,
      ),
    };
    const forkConfig = await agent.graph.updateState(understood.config, { plan: toRome }, Node.UNDERSTAND);
    const fork = await agent.graph.getState(forkConfig);
    expect(fork.next).toEqual([Node.EXECUTE]);
    expect(fork.parentConfig?.configurable?.checkpoint_id).toBe(idOf(understood));

    const forked = await agent.graph.invoke(null, forkConfig);
    expect(forked.status).toBe("completed");
    expect(resultOf(forked, "flight")).toMatchObject({ origin: "Madrid", destination: "Rome" });
    expect(resultOf(forked, "hotel")).toMatchObject({ city: "Rome" });
    expect(resultOf(forked, "itinerary").itinerary).toContain("Madrid → Rome");
    expect(forked.answer).not.toBe(valuesOf(original).answer);

    // The original run is still there, checkpoint for checkpoint, with its Paris trip.
    const history = await historyOf(agent, THREAD);
    expect(history.map(idOf)).toEqual(expect.arrayContaining(originalIds));
    const again = await agent.graph.getState(at(idOf(original)));
    expect(again.values).toEqual(original.values);
    expect(resultOf(valuesOf(again), "flight")).toMatchObject({ destination: "Paris" });
    // And the understand checkpoint the fork branched from was not modified.
    expect((await agent.graph.getState(at(idOf(understood)))).values).toEqual(understood.values);
  });
});
