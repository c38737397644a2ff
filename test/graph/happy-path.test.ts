import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Node } from "../../nodes/names.js";
import { recentEpisodes } from "../../src/memory/episodes.js";
import {
  EASY_TRIP,
  historyOf,
  startAgent,
  tempDir,
  threadConfig,
  tripInput,
  type Agent,
} from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";

describe("a fault-free trip on a SQLite checkpointer", () => {
  const tmp = tempDir();
  let agent: Agent;
  let out: Awaited<ReturnType<Agent["graph"]["invoke"]>>;

  beforeAll(async () => {
    agent = startAgent({ dbPath: tmp.dbPath });
    out = await agent.graph.invoke(tripInput(EASY_TRIP, {}, "ana"), threadConfig("happy"));
  });
  afterAll(() => {
    agent.close();
    tmp.cleanup();
  });

  it("completes with an answer built from every step's result", () => {
    expect(out.status).toBe("completed");
    expect(out.failureReason).toBeNull();
    expect(out.revisionCount).toBe(0);
    expect(out.revisions).toEqual([]);
    const steps = planOf(out)!.steps;
    expect(steps.map((s) => s.id).sort()).toEqual(["activities", "budget_status", "flight", "hotel", "itinerary"]);
    expect(steps.every((s) => s.status === "done")).toBe(true);
    for (const step of steps) expect(out.answer).toContain((step.result as { summary: string }).summary);
  });

  it("records exactly one SUCCESS per step and calls each planned tool once", () => {
    expect(out.feedback).toHaveLength(planOf(out)!.steps.length);
    for (const step of planOf(out)!.steps) {
      const mine = out.feedback.filter((f) => f.taskId === step.id);
      expect(mine.map((f) => f.feedbackType)).toEqual(["SUCCESS"]);
      expect(mine[0]!.workerType).toBe(step.workerType);
    }
    expect(agent.calls.all()).toEqual({
      search_flights: 1,
      search_hotels: 1,
      search_activities: 1,
      check_budget: 1,
      build_itinerary: 1,
    });
  });

  it("writes a post-execution report with summary, tasks, confidence evolution and lessons", () => {
    const report = out.report!;
    expect(report.planId).toBe(planOf(out)!.planId);
    expect(report.summary).toMatchObject({
      status: "completed",
      stepsSucceeded: 5,
      stepsFailed: 0,
      stepsSkipped: 0,
      revisionCount: 0,
      failureReason: null,
    });
    expect(report.summary.totalDurationMs).toBeGreaterThan(0);
    expect(report.tasks.map((t) => [t.id, t.status, t.lastFeedback])).toEqual(
      planOf(out)!.steps.map((s) => [s.id, "done", "SUCCESS"]),
    );
    expect(report.confidenceEvolution[0]).toMatchObject({ value: 0.85 });
    expect(report.confidenceEvolution[0]!.reason).toMatch(/initial plan/);
    expect(report.lessonsLearned.length).toBeGreaterThan(0);
    expect(report.missing).toEqual([]);
    expect(out.notifications.at(-1)).toMatchObject({ kind: "outcome", severity: "INFO" });
  });

  it("stores the episode under [userId, 'episodes'] in the SQLite store", async () => {
    const episodes = await recentEpisodes(agent.persistence.store, "ana");
    expect(episodes).toHaveLength(1);
    expect(episodes[0]).toMatchObject({
      threadId: "happy",
      planId: planOf(out)!.planId,
      status: "completed",
      request: EASY_TRIP,
      failures: [],
      strategiesUsed: [],
    });
    expect(await recentEpisodes(agent.persistence.store, "someone_else")).toEqual([]);
  });

  it("runs the whole plan in ONE execute pass, each step once its own inputs exist (read from the checkpoint history)", async () => {
    const history = await historyOf(agent, "happy");
    // Eager scheduling: no step waits for a wave, so no checkpoint sends work to the worker subgraph (that is
    // only for calls that need approval) and execute runs once.
    expect(history.filter((s) => s.next.includes(Node.WORKER))).toEqual([]);
    expect(history.filter((s) => s.next.includes(Node.EXECUTE))).toHaveLength(1);
    const order = out.feedback.map((f) => f.taskId);
    expect(order.slice(0, 3).sort()).toEqual(["activities", "flight", "hotel"]);
    const byId = new Map(planOf(out)!.steps.map((s) => [s.id, s]));
    for (const [i, id] of order.entries()) {
      const finishedBefore = new Set(order.slice(0, i));
      expect(
        byId.get(id)!.dependsOn.every((d) => finishedBefore.has(d)),
        `${id} after its dependencies`,
      ).toBe(true);
    }
  });
});
