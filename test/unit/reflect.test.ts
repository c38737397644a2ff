import { describe, expect, it } from "vitest";
import { Episode } from "../../src/domain/report.js";
import { STRATEGY_DELTAS, clampConfidence, confidencePoint, outcomeDelta } from "../../src/confidence/update.js";
import { finalStatus, reflectOnRun, type RunFacts } from "../../src/reflection/reflect.js";
import { adjustParameters } from "../../src/replanning/strategies/index.js";
import {
  NO_BUDGET_REQUEST,
  flightTimeoutRun,
  runWaves,
  strategyInput,
  travelPlan,
  travelRegistry,
  withSteps,
  type RunRecord,
} from "../fakes/toolkit-fixtures.js";

function factsOf(run: Pick<RunRecord, "plan" | "feedback" | "revisions">, overrides: Partial<RunFacts> = {}): RunFacts {
  return {
    threadId: "thread-1",
    request: NO_BUDGET_REQUEST,
    plan: run.plan,
    feedback: run.feedback,
    revisions: run.revisions,
    status: "completed",
    initialConfidence: 0.85,
    startedAt: new Date(Date.now() - 1000).toISOString(),
    ...overrides,
  };
}

describe("confidence updates (seed 000 scenarios 4–7, 9, 10)", () => {
  it("outcomeDelta: +0.05 when nothing stayed failed, then −0.10 / −0.20 / −0.35", () => {
    expect([0, 1, 2, 3, 4, 10].map(outcomeDelta)).toEqual([0.05, -0.1, -0.2, -0.35, -0.35, -0.35]);
  });

  it("applied to 0.85 gives 0.90, 0.75, 0.65 and 0.50 exactly", () => {
    expect([0, 1, 2, 3].map((n) => clampConfidence(0.85 + outcomeDelta(n)))).toEqual([0.9, 0.75, 0.65, 0.5]);
  });

  it("strategy deltas follow the seed: retry −0.10, decompose −0.05, adjust −0.08, workaround −0.15", () => {
    expect(STRATEGY_DELTAS).toMatchObject({
      RETRY_DIFFERENT_AGENT: -0.1,
      DECOMPOSE: -0.05,
      ADJUST_PARAMETERS: -0.08,
      FIND_WORKAROUND: -0.15,
    });
    for (const delta of Object.values(STRATEGY_DELTAS)) expect(delta).toBeLessThan(0);
  });

  it("clampConfidence rounds to 2 decimals and stays within [0, 1]", () => {
    expect(clampConfidence(0.85 - 0.1)).toBe(0.75);
    expect(clampConfidence(0.85 - 0.08)).toBe(0.77);
    expect(clampConfidence(-0.2)).toBe(0);
    expect(clampConfidence(1.3)).toBe(1);
    expect(confidencePoint(0.7499999, "why")).toMatchObject({ value: 0.75, reason: "why" });
  });
});

describe("reflectOnRun", () => {
  it("a clean run: says the plan worked, earns +0.05, stores an episode without failures", async () => {
    const registry = travelRegistry();
    const run = await runWaves(travelPlan(NO_BUDGET_REQUEST, registry), registry);
    expect(run.plan.steps.every((s) => s.status === "done")).toBe(true);
    const r = reflectOnRun(factsOf({ ...run, revisions: [] }));
    expect(r.lessons).toEqual(["Every step succeeded on its first dispatch: the plan worked as designed."]);
    expect(r.unrecoveredSteps).toEqual([]);
    expect(r.outcomeDelta).toBe(0.05);
    expect(r.episode).toMatchObject({
      threadId: "thread-1",
      planId: run.plan.planId,
      request: NO_BUDGET_REQUEST,
      status: "completed",
      failures: [],
      strategiesUsed: [],
      confidenceInitial: 0.85,
    });
    expect(r.episode.cost).toBeCloseTo(0.028, 10);
    expect(r.episode.plan.steps.map((s) => s.id)).toEqual([
      "flight",
      "hotel",
      "activities",
      "budget_status",
      "itinerary",
    ]);
    expect(() => Episode.parse(r.episode)).not.toThrow();
  });

  it("a plan rejected before it ran is not said to have worked as designed (issue 12 item 11)", () => {
    // Regression: a rejected plan's report and stored episode said "Every step succeeded on its first dispatch".
    const p = travelPlan(NO_BUDGET_REQUEST);
    const r = reflectOnRun(factsOf({ plan: p, feedback: [], revisions: [] }, { status: "rejected" }));
    expect(r.lessons.join(" ")).not.toMatch(/Every step succeeded|worked as designed/);
    expect(r.lessons).toEqual([
      "No step ran (the run ended rejected before execution), so this run says nothing about the plan's steps or tools.",
    ]);
    expect(r.episode.lessons).toEqual(r.lessons);
  });

  it("a recovered failure: names the failure and the strategy that fixed it, and the unreliable tool", async () => {
    const run = await flightTimeoutRun(true);
    const r = reflectOnRun(factsOf(run));
    expect(r.lessons).toEqual([
      `flight failed (timeout); RETRY_DIFFERENT_AGENT recovered it: ${run.revisions[0]!.changes[0]}.`,
      "search_flights misbehaved (timeout); plans that use it start with lower confidence next time, and after repeated failures an alternative is planned instead.",
    ]);
    expect(r.unrecoveredSteps).toEqual([]);
    expect(r.outcomeDelta).toBe(0.05);
    expect(r.episode.failures).toEqual([
      {
        taskId: "flight",
        tool: "search_flights",
        workerType: "flight_agent",
        failureClass: "timeout",
        error: "search_flights timed out after 30 ms",
      },
    ]);
    expect(r.episode.strategiesUsed).toEqual(["RETRY_DIFFERENT_AGENT"]);
  });

  it("a situational failure (fully booked) is not held against the tool", async () => {
    const registry = travelRegistry(["search_hotels=unavailable"]);
    const run = await runWaves(travelPlan(NO_BUDGET_REQUEST, registry), registry);
    const r = reflectOnRun(factsOf({ ...run, revisions: [] }, { status: "partial" }));
    expect(r.lessons).toContain(
      "search_hotels reported resource unavailable: a property of this request, not of the tool.",
    );
    expect(r.lessons.join(" ")).not.toContain("search_hotels misbehaved");
  });

  it("a skipped failure: the skipped step is unrecovered, its dependency skips are not, and the outcome costs −0.10", async () => {
    const run = await flightTimeoutRun(false);
    const r = reflectOnRun(factsOf(run, { status: "partial" }));
    expect(r.unrecoveredSteps).toEqual(["flight"]);
    expect(r.outcomeDelta).toBe(-0.1);
    expect(r.lessons).toContain("flight failed (timeout) and SKIP did not recover it.");
    expect(r.lessons).toContain("Not recovered: flight. Consider another tool or relaxing the request's constraints.");
    expect(r.lessons.some((l) => l.startsWith("Every step succeeded"))).toBe(false);
    // Flights are an optional input of the budget check and the itinerary: they ran without them, so no
    // DEPENDENCY_FAILURE records; only the flight's own failure is a failure of the episode.
    expect(run.feedback.filter((f) => f.feedbackType === "DEPENDENCY_FAILURE")).toEqual([]);
    expect(r.episode.failures.map((f) => f.taskId)).toEqual(["flight"]);
  });

  it("an adjusted budget: recovered when every modified step ended done", async () => {
    const registry = travelRegistry();
    const first = await runWaves(travelPlan(), registry);
    const outcome = adjustParameters(strategyInput(first.plan, "budget_status", first.feedback, registry));
    if (!outcome.applies) throw new Error(outcome.reason);
    const second = await runWaves(outcome.plan, registry, first.feedback);
    const r = reflectOnRun(factsOf({ ...second, revisions: [outcome.revision] }));
    expect(r.lessons[0]).toMatch(
      /^budget_status failed \(constraint_violated\); ADJUST_PARAMETERS recovered it: Adjust parameters of /,
    );
    expect(r.unrecoveredSteps).toEqual([]);
    expect(r.outcomeDelta).toBe(0.05);
  });

  it("counts steps still failed, and maps 2 and 3 of them to −0.20 and −0.35", () => {
    const base = travelPlan();
    const two = withSteps(base, { flight: { status: "failed" }, hotel: { status: "failed" } });
    const three = withSteps(two, { activities: { status: "failed" } });
    expect(reflectOnRun(factsOf({ plan: two, feedback: [], revisions: [] }, { status: "failed" }))).toMatchObject({
      unrecoveredSteps: ["flight", "hotel"],
      outcomeDelta: -0.2,
    });
    expect(reflectOnRun(factsOf({ plan: three, feedback: [], revisions: [] }, { status: "failed" })).outcomeDelta).toBe(
      -0.35,
    );
  });

  it("does not count a step skipped because its condition was false as unrecovered", () => {
    const p = withSteps(travelPlan(), {
      flight: { status: "done" },
      hotel: { status: "done" },
      activities: { status: "done" },
      budget_status: { status: "done" },
      itinerary: { status: "skipped", skipReason: "Condition not met: budget_status.withinBudget == false is false" },
    });
    expect(reflectOnRun(factsOf({ plan: p, feedback: [], revisions: [] })).unrecoveredSteps).toEqual([]);
  });
});

describe("finalStatus", () => {
  /** Regression: a fallback step skipped because its condition was false made a fully successful run "partial". */
  it("a step skipped because its condition was false is not missing: the run is completed", () => {
    const p = withSteps(travelPlan(NO_BUDGET_REQUEST, travelRegistry()), {
      flight: { status: "done" },
      hotel: { status: "done" },
      activities: { status: "done" },
      budget_status: { status: "done" },
      itinerary: { status: "skipped", skipCause: "condition_false", skipReason: "Condition 'failure' not met" },
    });
    expect(finalStatus("reflecting", p)).toBe("completed");
  });
  it("a step given up on, or blocked by one, makes the run partial; nothing done makes it failed; a human's end stands", () => {
    const base = travelPlan(NO_BUDGET_REQUEST, travelRegistry());
    const gap = withSteps(base, { flight: { status: "skipped", skipCause: "failed" }, hotel: { status: "done" } });
    expect(finalStatus("reflecting", gap)).toBe("partial");
    expect(finalStatus("reflecting", withSteps(base, { flight: { status: "skipped", skipCause: "failed" } }))).toBe(
      "failed",
    );
    expect(finalStatus("rejected", gap)).toBe("rejected");
  });
});
