import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_FAULTS, DEMO_REQUEST } from "../../examples/travel/index.js";
import { CandorEvent } from "../../src/domain/notification.js";
import { startAgent, tempDir, threadConfig, tripInput, valuesOf, type Agent } from "../fakes/graph-harness.js";

const tmp = tempDir();
let agent: Agent;
const events: { namespace: string[]; event: CandorEvent }[] = [];

beforeAll(async () => {
  agent = startAgent({ dbPath: tmp.dbPath, faults: DEMO_FAULTS, stepTimeoutMs: 150 });
  const stream = await agent.graph.stream(tripInput(DEMO_REQUEST), {
    ...threadConfig("stream"),
    streamMode: "custom",
    subgraphs: true,
  });
  for await (const chunk of stream) {
    const [namespace, data] = chunk as [string[], unknown];
    // The documented event schema: anything else on the custom channel is a bug.
    events.push({ namespace, event: CandorEvent.parse(data) });
  }
});
afterAll(() => {
  agent.close();
  tmp.cleanup();
});

const notifications = () =>
  events.flatMap((e, i) =>
    e.event.type === "notification" ? [{ i, namespace: e.namespace, n: e.event.notification }] : [],
  );
const progress = () => events.flatMap((e, i) => (e.event.type === "progress" ? [{ i, p: e.event.progress }] : []));

describe("custom stream events (streamMode 'custom', subgraphs: true)", () => {
  it("announces each failure from inside the worker before any strategy event for it", () => {
    for (const [taskId, severity] of [
      ["flight", "ERROR"],
      ["hotel", "ERROR"],
      ["budget_status", "WARNING"],
    ] as const) {
      const failure = notifications().find(
        ({ n }) => n.kind === "step_failed" && n.taskId === taskId && n.severity === severity,
      );
      expect(failure, `failure of ${taskId}`).toBeDefined();
      // Said by the worker task inside execute (steps that need no approval run there), not by a later node.
      expect(failure!.namespace[0]).toMatch(/^execute:/);
      const strategies = notifications().filter(({ n }) => n.kind === "strategy" && n.taskId === taskId);
      expect(strategies.length, `strategy events for ${taskId}`).toBeGreaterThanOrEqual(1);
      expect(strategies.every(({ i }) => i > failure!.i)).toBe(true);
      // Even before execute folds the result into progress.
      const folded = progress().find(({ p }) => p.taskId === taskId && p.status === "FAILURE");
      expect(folded!.i).toBeGreaterThan(failure!.i);
    }
    // select_strategy's choice, in the order the failures were handled.
    const chosen = notifications().filter(({ n }) => n.kind === "strategy" && n.title.startsWith("Strategy for"));
    expect(chosen.map(({ n }) => [n.taskId, n.recoveryStrategy])).toEqual([
      ["flight", "RETRY_DIFFERENT_AGENT"],
      ["hotel", "FIND_WORKAROUND"],
      ["budget_status", "ADJUST_PARAMETERS"],
    ]);
  });

  it("reports progress that reaches 100% once every step is done", () => {
    const ps = progress();
    expect(ps.length).toBeGreaterThan(5);
    expect(ps.at(-1)!.p).toMatchObject({ percent: 100, done: 5, total: 5, taskId: "itinerary", status: "SUCCESS" });
    expect(ps.filter(({ p }) => p.percent === 100)).toHaveLength(1);
    const lastStrategy = Math.max(
      ...notifications()
        .filter(({ n }) => n.kind === "strategy")
        .map(({ i }) => i),
    );
    expect(ps.at(-1)!.i).toBeGreaterThan(lastStrategy);
  });

  it("streams exactly the notifications that end up in state", async () => {
    const state = await agent.graph.getState(threadConfig("stream"));
    expect(valuesOf(state).status).toBe("completed");
    expect(
      notifications()
        .map(({ n }) => n.id)
        .sort(),
    ).toEqual(
      valuesOf(state)
        .notifications.map((n) => n.id)
        .sort(),
    );
  });
});
