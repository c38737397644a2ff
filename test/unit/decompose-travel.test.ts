import { describe, expect, it } from "vitest";
import { MAX_ACTIVITY_DAYS_PER_CALL } from "../../examples/travel/index.js";
import { RunSettings } from "../../src/domain/request.js";
import { findCycle, validatePlan } from "../../src/planning/validate.js";
import { lacksInputs } from "../../src/replanning/recover.js";
import { selectStrategy } from "../../src/replanning/select.js";
import { decompose, retryDifferentAgent } from "../../src/replanning/strategies/index.js";
import { generalToolkit } from "../../src/tools/general.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import {
  NO_BUDGET_REQUEST,
  applied,
  failStep,
  request,
  runWaves,
  stepOf,
  strategyInput,
  travelKit,
  travelPlan,
  travelRegistry,
} from "../fakes/toolkit-fixtures.js";

// Issue 3 / seed 000 scenario 5: DECOMPOSE never applied in the travel domain, because no travel tool ever failed
// as too complex and no smaller tools could do a step's work between them.

const TEN_DAYS = "Plan a 10-day trip from Madrid to Rome for 2 people";
const settings = RunSettings.parse({});
/** As the graph builds it: the travel tools plus the `general` fallback worker, which may use every tool. */
const travel = ToolRegistry.create([travelKit(), generalToolkit()]);

/** The travel plan run until it stops, with the activities step failed (too long a trip, or an injected fault). */
async function failedActivities(text: string, faults: readonly string[] = []) {
  const registry = travelRegistry(faults);
  const first = await runWaves(travelPlan(text, registry), registry);
  return { registry, ...first };
}

describe(`a trip longer than ${MAX_ACTIVITY_DAYS_PER_CALL} days: DECOMPOSE splits the activities step in two`, async () => {
  const { registry, plan: failed, feedback } = await failedActivities(TEN_DAYS);
  const outcome = decompose(strategyInput(failed, "activities", feedback, registry));
  const { plan: revised, revision } = applied(outcome);
  const [part1, part2] = revision.newStepIds.map((id) => stepOf(revised, id));

  it("the activities step fails as too_complex, the other searches succeed, and selection picks DECOMPOSE", () => {
    expect(stepOf(failed, "activities").status).toBe("failed");
    const fb = feedback.find((f) => f.taskId === "activities")!;
    expect(fb).toMatchObject({
      feedbackType: "FAILURE",
      failureClass: "too_complex",
      attempt: 1,
      tool: "search_activities",
    });
    expect(fb.errors[0]).toMatch(
      /^search_activities cannot plan 10 days in Rome in one call: it plans at most 7 days per request/,
    );
    expect(["flight", "hotel"].map((id) => stepOf(failed, id).status)).toEqual(["done", "done"]);
    const selection = selectStrategy({ plan: failed, feedback, settings, revisionCount: 0, registry });
    expect(selection).toMatchObject({
      kind: "strategy",
      strategy: "DECOMPOSE",
      taskId: "activities",
      failureClass: "too_complex",
    });
  });

  it("into two substeps chained by a dependency, from activities_agent's grant, the original removed", () => {
    expect(revision.newStepIds).toEqual(["activities_part1", "activities_part2"]);
    expect(revision.removedStepIds).toEqual(["activities"]);
    expect(revised.steps.some((s) => s.id === "activities")).toBe(false);
    expect(part1).toMatchObject({
      tools: ["find_attractions"],
      workerType: "activities_agent",
      dependsOn: [],
      expectedOutputs: ["attractions"],
      params: { city: "Rome" },
      replaces: "activities",
    });
    expect(part2).toMatchObject({
      tools: ["plan_days"],
      workerType: "activities_agent",
      dependsOn: ["activities_part1"],
      params: { city: "Rome", days: 10, travellers: 2 },
      replaces: "activities",
    });
    expect(findCycle(revised.steps)).toBeNull();
    expect(() => validatePlan(revised, request(TEN_DAYS), registry)).not.toThrow();
  });

  it("keeps the expected output on the last substep and rewires the dependents to it", () => {
    expect(part2!.expectedOutputs).toEqual(["activities"]);
    expect(stepOf(revised, "budget_status").dependsOn).toEqual(
      expect.arrayContaining(["flight", "hotel", "activities_part2"]),
    );
    expect(stepOf(revised, "itinerary").dependsOn).toContain("activities_part2");
    expect(revised.steps.filter((s) => s.dependsOn.includes("activities"))).toEqual([]);
  });

  it("each substep is estimated shorter than the step it replaces", () => {
    const original = stepOf(failed, "activities").estimates.durationMs;
    for (const s of [part1!, part2!]) expect(s.estimates.durationMs).toBeLessThan(original);
  });

  it("lowers confidence by exactly 0.05 and says what was split and why", () => {
    expect(revision).toMatchObject({
      strategy: "DECOMPOSE",
      confidenceBefore: 0.85,
      confidenceDelta: -0.05,
      confidenceAfter: 0.8,
      failureClass: "too_complex",
    });
    expect(revised.confidence).toBe(0.8);
    expect(revision.changes).toEqual([
      "Decompose task activities into activities_part1 → activities_part2 (find_attractions → plan_days); activities_part2 produces activities",
    ]);
    expect(revision.rationale).toContain("find_attractions → plan_days do the same work in 2 smaller steps");
  });

  it("the decomposed plan really completes: the itinerary is built from plan_days' ten days, the done searches are not repeated", async () => {
    const second = await runWaves(revised, registry, feedback);
    expect(second.plan.steps.every((s) => s.status === "done")).toBe(true);
    expect(["flight", "hotel"].map((id) => stepOf(second.plan, id).dispatches)).toEqual([1, 1]);
    expect(second.feedback.filter((f) => f.tool === "search_activities")).toHaveLength(1);
    const planned = stepOf(second.plan, "activities_part2").result as {
      activities: { day: number; name: string }[];
      cost: number;
    };
    expect(planned.activities).toHaveLength(10);
    const status = stepOf(second.plan, "budget_status").result as { breakdown: { activities: number } };
    expect(status.breakdown.activities).toBe(planned.cost);
    const itinerary = stepOf(second.plan, "itinerary").result as { days: string[] };
    expect(itinerary.days).toHaveLength(10);
    planned.activities.forEach((a, i) => expect(itinerary.days[i]).toContain(a.name));
  });
});

describe("the `complex` fault: DECOMPOSE on a trip one call could plan", async () => {
  const {
    registry,
    plan: failed,
    feedback,
  } = await failedActivities(NO_BUDGET_REQUEST, ["search_activities=complex*1"]);
  const { plan: revised, revision } = applied(decompose(strategyInput(failed, "activities", feedback, registry)));

  it("fails the step as too_complex (injected) and recovers it into the same two substeps", () => {
    const fb = feedback.find((f) => f.taskId === "activities")!;
    expect(fb).toMatchObject({ failureClass: "too_complex", outputs: { injected: true, tool: "search_activities" } });
    expect(revision.newStepIds.map((id) => stepOf(revised, id).tools[0])).toEqual(["find_attractions", "plan_days"]);
  });

  it("and the substeps produce exactly the activities one healthy search_activities call would have", async () => {
    const second = await runWaves(revised, registry, feedback);
    expect(second.plan.steps.every((s) => s.status === "done")).toBe(true);
    const healthy = await runWaves(travelPlan(NO_BUDGET_REQUEST), travelRegistry());
    expect(stepOf(second.plan, "activities_part2").result).toEqual(stepOf(healthy.plan, "activities").result);
  });

  it("a part that is still too complex is not decomposed again: DECOMPOSE's budget is one per step lineage", async () => {
    const faulty = travelRegistry(["search_activities=complex*1", "plan_days=complex*1"]);
    const first = await runWaves(travelPlan(NO_BUDGET_REQUEST, faulty), faulty);
    const split = applied(decompose(strategyInput(first.plan, "activities", first.feedback, faulty)));
    const second = await runWaves(split.plan, faulty, first.feedback);
    expect(stepOf(second.plan, "activities_part2").status).toBe("failed");
    const selection = selectStrategy({
      plan: second.plan,
      feedback: second.feedback,
      settings,
      revisionCount: 1,
      registry: faulty,
      revisions: [split.revision],
    });
    expect(selection).toMatchObject({ kind: "strategy", strategy: "SKIP", taskId: "activities_part2" });
    if (selection?.kind === "strategy")
      expect(selection.reasoning).toContain("DECOMPOSE (its budget of 1 per step is spent on activities_part2)");
  });
});

describe("the smaller tools are no drop-in replacement for search_activities", () => {
  it("a timed-out activities search is not handed to another worker's plan_days, which would run without attractions", () => {
    const { plan, feedback: fb } = failStep(
      travelPlan(NO_BUDGET_REQUEST, travel),
      "activities",
      "search_activities timed out after 800 ms",
      { failureClass: "timeout" },
    );
    // plan_days produces activities but needs attractions the step never gets: the worker ranking does not
    // offer it as a stand-in (canStandIn), so no different agent is left.
    const outcome = retryDifferentAgent(strategyInput(plan, "activities", [fb], travel));
    expect(outcome.applies).toBe(false);
    // What a timeout gets instead, once no other agent or tool is left: the chain, each part with the whole time limit.
    const s = selectStrategy({ plan, feedback: [fb], settings, revisionCount: 0, registry: travel });
    expect(s).toMatchObject({ kind: "strategy", strategy: "DECOMPOSE" });
    if (s?.kind === "strategy") {
      expect(s.reasoning).toMatch(/RETRY_DIFFERENT_AGENT \(/);
      expect(s.reasoning).not.toContain("plan_days without");
      expect(s.reasoning).toContain(
        "SWAP_TOOL (No other tool in activities_agent's grant produces activities (already failed: search_activities; unusable: plan_days needs attractions))",
      );
    }
  });

  it("while DECOMPOSE's chain passes the same guard: each part gets what it consumes from the one before", async () => {
    const { registry, plan: failed, feedback } = await failedActivities(TEN_DAYS);
    expect(
      lacksInputs(applied(decompose(strategyInput(failed, "activities", feedback, registry))), registry),
    ).toBeNull();
  });
});

describe("DECOMPOSE beyond too_complex (issue 8 defect 10: it was only tried for too complex)", () => {
  it("a timed-out activities search, with no other agent or tool, is split into smaller calls rather than skipped", async () => {
    const { plan, feedback: fb } = failStep(
      travelPlan(NO_BUDGET_REQUEST, travel),
      "activities",
      "search_activities timed out after 800 ms",
      { failureClass: "timeout" },
    );
    const selection = selectStrategy({ plan, feedback: [fb], settings, revisionCount: 0, registry: travel });
    expect(selection).toMatchObject({
      kind: "strategy",
      strategy: "DECOMPOSE",
      taskId: "activities",
      failureClass: "timeout",
    });
    if (selection?.kind === "strategy")
      expect(selection.reasoning).toMatch(/Passed over: RETRY_DIFFERENT_AGENT \(.*\); SWAP_TOOL \(/);
    const { plan: revised, revision } = applied(decompose(strategyInput(plan, "activities", [fb], travel)));
    expect(revision.rationale).toBe(
      "activities did not finish in time as one call (search_activities timed out after 800 ms), and each smaller call has the whole time limit; find_attractions → plan_days do the same work in 2 smaller steps, the last producing activities.",
    );
    // Each part keeps the step's own time limit, which a shorter call fits.
    for (const id of revision.newStepIds)
      expect(stepOf(revised, id).timeoutMs).toBe(stepOf(plan, "activities").timeoutMs);
  });

  it("an activities search whose service is down goes around it through the smaller tools, and the plan completes", async () => {
    const { registry, plan: failed, feedback } = await failedActivities(NO_BUDGET_REQUEST, ["search_activities=error"]);
    expect(feedback.find((f) => f.taskId === "activities")).toMatchObject({ failureClass: "agent_unavailable" });
    const selection = selectStrategy({ plan: failed, feedback, settings, revisionCount: 0, registry });
    expect(selection).toMatchObject({ kind: "strategy", strategy: "DECOMPOSE", failureClass: "agent_unavailable" });
    const { plan: revised, revision } = applied(decompose(strategyInput(failed, "activities", feedback, registry)));
    expect(revision.rationale).toMatch(
      /^activities failed on its tool \(search_activities failed: simulated internal error \(HTTP 500\)\), and smaller steps on other tools do without it; find_attractions → plan_days/,
    );
    const second = await runWaves(revised, registry, feedback);
    expect(second.plan.steps.every((s) => s.status === "done")).toBe(true);
  });

  it("not for a class where the cause goes with the work: an unavailable resource is still worked around or skipped", () => {
    const { plan, feedback: fb } = failStep(
      travelPlan(NO_BUDGET_REQUEST, travel),
      "activities",
      "no availability for these dates",
      { failureClass: "resource_unavailable" },
    );
    const selection = selectStrategy({ plan, feedback: [fb], settings, revisionCount: 0, registry: travel });
    expect(selection).toMatchObject({ kind: "strategy", strategy: "SKIP" });
    if (selection?.kind === "strategy") expect(selection.reasoning).not.toContain("DECOMPOSE");
  });
});
