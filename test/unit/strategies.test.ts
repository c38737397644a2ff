import { describe, expect, it } from "vitest";
import type { ExecutionFeedback } from "../../src/domain/feedback.js";
import type { Plan } from "../../src/domain/plan.js";
import { settleBlockedSteps } from "../../src/planning/schedule.js";
import { assertLogicalOrder, findCycle, validatePlan } from "../../src/planning/validate.js";
import { triggerText } from "../../src/replanning/context.js";
import { freshId, replaceStep, resetForRerun, transitiveDependents } from "../../src/replanning/plan-edit.js";
import { rankWorkers } from "../../src/replanning/router.js";
import {
  adjustParameters,
  findWorkaround,
  retryDifferentAgent,
  skip,
  skipWithReason,
  violationFacts,
} from "../../src/replanning/strategies/index.js";
import { DEMO_REQUEST } from "../../examples/travel/index.js";
import {
  countingTool,
  failStep,
  failure,
  feedback,
  plan as makePlan,
  registryOf,
  request,
  runWaves,
  strategyInput,
  travelPlan,
  travelRegistry,
  withSteps,
  applied,
  stepOf,
} from "../fakes/toolkit-fixtures.js";

const registry = travelRegistry();

/** The demo plan with the hotel and activities searches done (independent results that must survive a revision). */
function demoWithSearchesDone(): Plan {
  return withSteps(travelPlan(), {
    hotel: { status: "done", dispatches: 1, result: { cost: 922, name: "Royal Hotel Paris" } },
    activities: { status: "done", dispatches: 1, result: { cost: 412 } },
  });
}

describe("RETRY_DIFFERENT_AGENT (seed 000 scenario 4)", () => {
  const before = demoWithSearchesDone();
  const { plan: failed, feedback: fb } = failStep(before, "flight", "Agent timeout after 10s", {
    failureClass: "timeout",
  });
  const original = stepOf(failed, "flight");
  const { plan: revised, revision } = applied(retryDifferentAgent(strategyInput(failed, "flight", [fb], registry)));
  const retry = stepOf(revised, "flight_retry");

  it("replaces the failed step with <id>_retry on the next-best worker, never the one that failed", () => {
    expect(revised.steps.some((s) => s.id === "flight")).toBe(false);
    expect(retry.workerType).toBe("backup_flight_agent");
    expect(retry.workerType).not.toBe(original.workerType);
    expect(retry.tools).toEqual(["search_flights_backup"]);
    expect(retry.failedWorkers).toContain("flight_agent");
    expect(revised.steps.findIndex((s) => s.id === "flight_retry")).toBe(
      failed.steps.findIndex((s) => s.id === "flight"),
    );
  });

  it("copies the inputs and expected outputs of the original", () => {
    expect(retry.params).toEqual(original.params);
    expect(retry.expectedOutputs).toEqual(original.expectedOutputs);
    expect(retry.description).toBe(original.description);
  });

  it("gives the retry its own retry policy and a clean slate", () => {
    expect(retry.retry).toEqual({ maxAttempts: 2, backoffMs: [500] });
    expect(retry.retry).not.toEqual(original.retry);
    expect(retry).toMatchObject({
      status: "pending",
      result: null,
      attempts: 0,
      dispatches: 0,
      replaces: "flight",
      lineage: ["flight"],
    });
  });

  it("rewires the dependents to the retry and keeps the plan valid", () => {
    expect(stepOf(revised, "budget_status").dependsOn).toContain("flight_retry");
    expect(stepOf(revised, "budget_status").dependsOn).not.toContain("flight");
    expect(stepOf(revised, "itinerary").dependsOn).toContain("flight_retry");
    expect(findCycle(revised.steps)).toBeNull();
    expect(() => assertLogicalOrder(revised.steps)).not.toThrow();
    expect(() => validatePlan(revised, request(DEMO_REQUEST), registry)).not.toThrow();
  });

  it("keeps the results of independent steps (partial replanning)", () => {
    expect(stepOf(revised, "hotel")).toEqual(stepOf(failed, "hotel"));
    expect(stepOf(revised, "activities")).toEqual(stepOf(failed, "activities"));
  });

  it("lowers confidence by exactly 0.10: 0.85 → 0.75", () => {
    expect(failed.confidence).toBe(0.85);
    expect(revised.confidence).toBe(0.75);
    expect(revision).toMatchObject({ confidenceDelta: -0.1, confidenceBefore: 0.85, confidenceAfter: 0.75 });
  });

  it("records the revision: trigger, the task, 'retry', new and removed steps", () => {
    expect(revision).toMatchObject({
      revisionId: "rev_1",
      strategy: "RETRY_DIFFERENT_AGENT",
      failedTaskId: "flight",
      failureClass: "timeout",
      trigger: "1 failures, 0 violations",
      newStepIds: ["flight_retry"],
      removedStepIds: ["flight"],
    });
    expect(revision.changes.some((c) => /retry/i.test(c))).toBe(true);
    expect(revision.changes.join(" ")).toContain("flight");
    expect(revision.changes.join(" ")).toContain("backup_flight_agent");
  });

  it("does not apply to a step that names no tool and expects no output (a model-driven step): a stand-in would be a guess", () => {
    // Regression: a failed reactive step (no tools, no expected outputs) was retried on any worker's first tool.
    const toolless = withSteps(failed, { flight: { tools: [], expectedOutputs: [] } });
    const outcome = retryDifferentAgent(strategyInput(toolless, "flight", [fb], registry));
    expect(outcome.applies).toBe(false);
    if (!outcome.applies) expect(outcome.reason).toMatch(/names no tool and expects no tool's output/);
    const hinted = retryDifferentAgent({
      ...strategyInput(toolless, "flight", [fb], registry),
      hint: {
        by: "model",
        workerType: "backup_flight_agent",
        tool: null,
        params: null,
        substeps: null,
        rationale: "try it",
      },
    });
    expect(hinted.applies).toBe(false);
  });

  it("does not change the plan it was given", () => {
    const snapshot = structuredClone(failed);
    retryDifferentAgent(strategyInput(failed, "flight", [fb], registry));
    expect(failed).toEqual(snapshot);
  });

  it("says it does not apply when every worker able to do the step has failed it", () => {
    const { plan: p2, feedback: fb2 } = failStep(revised, "flight_retry", "backup timed out", {
      failureClass: "timeout",
    });
    const outcome = retryDifferentAgent(strategyInput(p2, "flight_retry", [fb, fb2], registry));
    expect(outcome.applies).toBe(false);
    if (!outcome.applies) {
      expect(outcome.reason).toMatch(/No other worker can produce flight/);
      expect(outcome.reason).toContain("flight_agent");
      expect(outcome.reason).toContain("backup_flight_agent");
    }
  });

  it("really recovers the demo's hung flight search: the backup provider succeeds and the trip completes", async () => {
    const faulty = travelRegistry(["search_flights=timeout"]);
    const start = withSteps(travelPlan(DEMO_REQUEST, faulty), {
      flight: { timeoutMs: 30, retry: { maxAttempts: 1, backoffMs: [0] } },
    });
    const first = await runWaves(start, faulty);
    expect(stepOf(first.plan, "flight").status).toBe("failed");
    expect(first.feedback.find((f) => f.taskId === "flight")?.failureClass).toBe("timeout");
    const { plan: recovering } = applied(
      retryDifferentAgent(strategyInput(first.plan, "flight", first.feedback, faulty)),
    );
    const second = await runWaves(recovering, faulty, first.feedback);
    expect(stepOf(second.plan, "flight_retry")).toMatchObject({ status: "done", result: { provider: "backup" } });
    expect(stepOf(second.plan, "hotel").dispatches).toBe(1);
  });
});

describe("rankWorkers (the router behind RETRY_DIFFERENT_AGENT)", () => {
  const primary = countingTool("fetch_primary", { produces: ["data"], category: "primary" }).spec;
  const backup = countingTool("fetch_backup", { produces: ["data"], category: "backup" }).spec;
  const workers = [
    { name: "primary_agent", description: "", categories: ["primary"] },
    { name: "backup_agent", description: "", categories: ["backup"], keywords: ["data"] },
    { name: "general", description: "", categories: ["*"], fallback: true },
  ];
  const reg = registryOf([primary, backup], workers);

  it("ranks specialists above the fallback worker and a different tool above the failed one", () => {
    const s = makePlan([
      {
        id: "data",
        workerType: "primary_agent",
        tools: ["fetch_primary"],
        expectedOutputs: ["data"],
        description: "fetch the data",
      },
    ]).steps[0]!;
    const ranked = rankWorkers(reg, s, ["primary_agent"]);
    expect(ranked.map((c) => [c.worker.name, c.tool.name])).toEqual([
      ["backup_agent", "fetch_backup"],
      ["general", "fetch_backup"],
    ]);
    expect(ranked[0]!.score).toBeGreaterThan(ranked[1]!.score);
    expect(ranked[0]!.reasons).toContain("specialist");
  });

  it("walks down the ranking on each failure and gives up when no untried tool is left (the fallback worker would only reuse failed tools)", () => {
    let p = makePlan([
      { id: "data", workerType: "primary_agent", tools: ["fetch_primary"], expectedOutputs: ["data"] },
      { id: "use", workerType: "general", tools: ["fetch_backup"], dependsOn: ["data"], order: 2 },
    ]);
    const history: ExecutionFeedback[] = [];
    const seen: string[] = [];
    for (const id of ["data", "data_retry", "data_retry2"]) {
      const { plan: failedPlan, feedback: fb } = failStep(p, id, "503 Service Unavailable", {
        failureClass: "agent_unavailable",
      });
      history.push(fb);
      const outcome = retryDifferentAgent(strategyInput(failedPlan, id, history, reg, history.length));
      if (!outcome.applies) {
        seen.push(`gave up: ${outcome.reason}`);
        break;
      }
      const next = outcome.revision.newStepIds[0]!;
      seen.push(`${next} on ${stepOf(outcome.plan, next).workerType}`);
      p = outcome.plan;
      expect(stepOf(p, "use").dependsOn).toEqual([next]);
    }
    expect(seen[0]).toBe("data_retry on backup_agent");
    expect(seen[1]).toMatch(/^gave up: No other worker .* with a tool that has not failed it/);
    expect(seen).toHaveLength(2);
  });
});

describe("FIND_WORKAROUND (seed 000 scenario 7)", () => {
  const before = withSteps(travelPlan(), {
    flight: { status: "done", dispatches: 1, result: { cost: 848 } },
    activities: { status: "done", dispatches: 1, result: { cost: 412 } },
  });
  const { plan: failed, feedback: fb } = failStep(
    before,
    "hotel",
    "search_hotels: the requested option is fully booked / unavailable",
    { failureClass: "resource_unavailable" },
  );
  const original = stepOf(failed, "hotel");
  const { plan: revised, revision } = applied(findWorkaround(strategyInput(failed, "hotel", [fb], registry)));
  const alt = stepOf(revised, "hotel_alt");

  it("replaces the step with an alternative that widens the search and produces the same output", () => {
    expect(revised.steps.some((s) => s.id === "hotel")).toBe(false);
    expect(alt.params.radiusKm).toBeGreaterThan(original.params.radiusKm as number);
    expect({ ...alt.params, radiusKm: 0 }).toEqual(original.params);
    expect(alt.expectedOutputs).toEqual(["hotel"]);
    expect(alt.workerType).toBe("hotel_agent");
    expect(alt.description).toMatch(/within 15 km/);
    expect(alt).toMatchObject({ status: "pending", replaces: "hotel", lineage: ["hotel"], dispatches: 0 });
  });

  it("rewires dependents and keeps the independent results", () => {
    expect(stepOf(revised, "budget_status").dependsOn).toContain("hotel_alt");
    expect(stepOf(revised, "flight")).toEqual(stepOf(failed, "flight"));
    expect(stepOf(revised, "activities")).toEqual(stepOf(failed, "activities"));
  });

  it("lowers confidence by 0.15 and documents the workaround and why it was needed", () => {
    expect(revised.confidence).toBe(0.7);
    expect(revision.confidenceDelta).toBe(-0.15);
    expect(revision.changes.some((c) => /workaround/i.test(c))).toBe(true);
    expect(revision.rationale).toMatch(/workaround was needed/i);
    expect(revision.rationale).toContain("fully booked");
    expect(revision).toMatchObject({
      strategy: "FIND_WORKAROUND",
      newStepIds: ["hotel_alt"],
      removedStepIds: ["hotel"],
    });
  });

  it("without a wider search, uses another tool that produces the same output", () => {
    const { plan: f2, feedback: fb2 } = failStep(
      travelPlan(),
      "flight",
      "search_flights: the requested option is fully booked / unavailable",
      { failureClass: "resource_unavailable" },
    );
    const { plan: r2 } = applied(findWorkaround(strategyInput(f2, "flight", [fb2], registry)));
    const flightAlt = stepOf(r2, "flight_alt");
    expect(flightAlt.tools).toEqual(["search_flights_backup"]);
    expect(flightAlt.workerType).toBe("backup_flight_agent");
    expect(flightAlt.params).toEqual(stepOf(f2, "flight").params);
  });

  it("says it does not apply when the search is already as wide as it goes and nothing else produces the output", () => {
    const { plan: f3, feedback: fb3 } = failStep(revised, "hotel_alt", "No hotel within 15 km", {
      failureClass: "resource_unavailable",
    });
    const outcome = findWorkaround(strategyInput(f3, "hotel_alt", [fb, fb3], registry));
    expect(outcome.applies).toBe(false);
    if (!outcome.applies) expect(outcome.reason).toMatch(/cannot widen its search and no other tool produces hotel/);
  });

  it("really gets around the demo's booked-out central hotel", async () => {
    const faulty = travelRegistry(["search_hotels=unavailable*1"]);
    const first = await runWaves(travelPlan(DEMO_REQUEST, faulty), faulty);
    expect(stepOf(first.plan, "hotel").status).toBe("failed");
    const { plan: recovering } = applied(findWorkaround(strategyInput(first.plan, "hotel", first.feedback, faulty)));
    const second = await runWaves(recovering, faulty, first.feedback);
    const hotel = stepOf(second.plan, "hotel_alt");
    expect(hotel.status).toBe("done");
    expect((hotel.result as { searchArea: string }).searchArea).toBe("within 15 km of the centre");
  });
});

describe("ADJUST_PARAMETERS (seed 000 scenario 6)", () => {
  const seedOutputs = {
    budget_status: "EXCEEDED",
    total_cost: 2150,
    budget: 2000,
    overage: 150,
    breakdown: { flight: 720, hotel: 660, activities: 103 },
  };
  const before = withSteps(travelPlan(), {
    flight: { status: "done", dispatches: 1, result: { cost: 720 } },
    hotel: { status: "done", dispatches: 1, result: { cost: 660 } },
    activities: { status: "done", dispatches: 1, result: { cost: 103 } },
  });
  const { plan: failed, feedback: fb } = failStep(before, "budget_status", "Total cost $2150 exceeds budget $2000", {
    feedbackType: "CONSTRAINT_VIOLATION",
    failureClass: "constraint_violated",
    outputs: seedOutputs,
  });
  const { plan: revised, revision } = applied(adjustParameters(strategyInput(failed, "budget_status", [fb], registry)));

  it("caps the two largest contributors below what they cost", () => {
    expect(revision.modifiedStepIds.length).toBeGreaterThanOrEqual(2);
    expect(revision.modifiedStepIds).toEqual(expect.arrayContaining(["flight", "hotel"]));
    const flightCap = stepOf(revised, "flight").params.maxCost as number;
    const hotelCap = stepOf(revised, "hotel").params.maxCost as number;
    expect(flightCap).toBeLessThan(720);
    expect(hotelCap).toBeLessThan(660);
    expect(flightCap).toBeGreaterThan(0);
    expect(hotelCap).toBeGreaterThan(0);
    // Together the caps take at least the overage off what the two cost.
    expect(720 + 660 - (flightCap + hotelCap)).toBeGreaterThanOrEqual(150);
    expect(stepOf(revised, "activities").params).not.toHaveProperty("maxCost");
  });

  it("re-runs the capped steps and the check (and what depends on it)", () => {
    for (const id of ["flight", "hotel", "budget_status", "itinerary"]) {
      expect(stepOf(revised, id)).toMatchObject({ status: "pending", result: null });
    }
    expect(revision.modifiedStepIds).toContain("budget_status");
    expect(revision.newStepIds).toEqual([]);
    expect(revision.removedStepIds).toEqual([]);
  });

  it("leaves independent done steps untouched (partial replanning)", () => {
    expect(stepOf(revised, "activities")).toEqual(stepOf(failed, "activities"));
  });

  it("lowers confidence by 0.08 and says which parameters were adjusted and why", () => {
    expect(revised.confidence).toBe(0.77);
    expect(revision.confidenceDelta).toBe(-0.08);
    expect(revision.trigger).toBe("0 failures, 1 violations");
    expect(revision.changes.some((c) => /adjust|parameter/i.test(c))).toBe(true);
    expect(revision.changes.find((c) => c.includes("flight"))).toMatch(/maxCost unset → \$\d+ \(it cost \$720/);
    expect(revision.changes.some((c) => /Re-run budget_status/.test(c))).toBe(true);
    expect(revision.rationale).toContain("$150");
  });

  it("keeps an earlier, lower cap rather than raising it", () => {
    const capped = withSteps(failed, { flight: { params: { ...stepOf(failed, "flight").params, maxCost: 500 } } });
    const { plan: again } = applied(adjustParameters(strategyInput(capped, "budget_status", [fb], registry)));
    expect(stepOf(again, "flight").params.maxCost).toBe(500);
  });

  it("really brings the demo trip under its budget when the capped searches run again", async () => {
    const first = await runWaves(travelPlan(), registry);
    const violation = first.feedback.find((f) => f.taskId === "budget_status");
    expect(violation?.feedbackType).toBe("CONSTRAINT_VIOLATION");
    const { plan: adjusted } = applied(
      adjustParameters(strategyInput(first.plan, "budget_status", first.feedback, registry)),
    );
    const second = await runWaves(adjusted, registry, first.feedback);
    expect(second.plan.steps.every((s) => s.status === "done")).toBe(true);
    const status = stepOf(second.plan, "budget_status").result as { withinBudget: boolean; total: number };
    expect(status.withinBudget).toBe(true);
    expect(status.total).toBeLessThanOrEqual(2000);
    expect(stepOf(second.plan, "activities").dispatches).toBe(1);
  });

  it("regression: does not apply when the overage is more than the capped steps cost (a cap below $1 cannot be searched for)", () => {
    // It used to set a negative maxCost, which the re-run rejected as invalid parameters.
    const { plan: p, feedback: f } = failStep(before, "budget_status", "Total cost $5000 exceeds budget $1000", {
      feedbackType: "CONSTRAINT_VIOLATION",
      failureClass: "constraint_violated",
      outputs: { total: 5000, budget: 1000, breakdown: { flight: 720, hotel: 660, activities: 103 } },
    });
    const outcome = adjustParameters(strategyInput(p, "budget_status", [f], registry));
    expect(outcome.applies).toBe(false);
    if (!outcome.applies)
      expect(outcome.reason).toBe(
        "Capping flight, hotel and activities cannot remove the $4,000 overage: together they cost only $1,483",
      );
  });

  it("does not apply without a breakdown, within the limit, or when no contributor can be capped", () => {
    const attempt = (outputs: Record<string, unknown>) => {
      const { plan: p, feedback: f } = failStep(before, "budget_status", "over budget", {
        feedbackType: "CONSTRAINT_VIOLATION",
        failureClass: "constraint_violated",
        outputs,
      });
      return adjustParameters(strategyInput(p, "budget_status", [f], registry));
    };
    expect(attempt({ total: 2150, budget: 2000 })).toMatchObject({
      applies: false,
      reason: expect.stringMatching(/did not say what each part cost/),
    });
    expect(attempt({ total: 1900, budget: 2000, breakdown: { flight: 900 } })).toMatchObject({
      applies: false,
      reason: expect.stringMatching(/within the limit/),
    });
    expect(attempt({ total: 2150, budget: 2000, breakdown: { taxes: 400 } })).toMatchObject({
      applies: false,
      reason: expect.stringMatching(/None of taxes/),
    });
  });
});

describe("violationFacts", () => {
  it("reads total/budget/breakdown under either naming and drops non-positive parts", () => {
    expect(violationFacts({ total_cost: 2150, budget: 2000, breakdown: { flight: 720, fees: 0, bad: "x" } })).toEqual({
      total: 2150,
      limit: 2000,
      breakdown: { flight: 720 },
    });
    expect(violationFacts({ actual: 12, limit: 10, breakdown: { a: 12 } })).toEqual({
      total: 12,
      limit: 10,
      breakdown: { a: 12 },
    });
    expect(violationFacts({ total: 12, limit: 10 })).toBeNull();
    expect(violationFacts({ total: 12, limit: 10, breakdown: {} })).toBeNull();
  });
});

describe("SKIP", () => {
  const { plan: failed, feedback: fb } = failStep(demoWithSearchesDone(), "flight", "Agent timeout after 10s", {
    failureClass: "timeout",
  });
  const { plan: revised, revision } = applied(skip(strategyInput(failed, "flight", [fb], registry)));

  it("skips the failed step with the error as its reason and says what will be missing", () => {
    expect(stepOf(revised, "flight")).toMatchObject({
      status: "skipped",
      skipReason: "Skipped after it failed: Agent timeout after 10s",
    });
    expect(revision.changes[0]).toMatch(/^Skip task flight/);
    expect(revision.changes[0]).toContain("will not include flight");
    expect(revision).toMatchObject({ strategy: "SKIP", modifiedStepIds: ["flight"], confidenceDelta: -0.05 });
    expect(revised.confidence).toBe(0.8);
  });

  it("lets execute skip the dependents as DEPENDENCY_FAILURE while the independent steps stay done", () => {
    const { plan: settled, skipped } = settleBlockedSteps(revised);
    expect(skipped.map((s) => [s.step.id, s.dependencyFailure])).toEqual([
      ["budget_status", true],
      ["itinerary", true],
    ]);
    expect(stepOf(settled, "hotel").status).toBe("done");
    // With the tools' view, the budget check and the itinerary take flights as optional: they run and say so.
    expect(revision.rationale).toContain(
      "(budget_status, itinerary still run without flight (an optional input of theirs)",
    );
  });

  it("skipping an optional input says its dependents still run without it, and a person's skip is recorded as theirs", async () => {
    // Issue 8 defect 10: a skipped activities search took the budget check and the itinerary with it.
    const faulty = travelRegistry(["search_activities=error"]);
    const first = await runWaves(
      withSteps(travelPlan(DEMO_REQUEST, faulty), { activities: { retry: { maxAttempts: 1, backoffMs: [0] } } }),
      faulty,
    );
    expect(["flight", "hotel", "activities"].map((id) => stepOf(first.plan, id).status)).toEqual([
      "done",
      "done",
      "failed",
    ]);
    const input = strategyInput(first.plan, "activities", first.feedback, faulty);
    const error = "search_activities failed: simulated internal error (HTTP 500)";
    const byRules = applied(skip(input));
    expect(byRules.revision.rationale).toContain(
      "(budget_status, itinerary still run without activities (an optional input of theirs) and say what they left out)",
    );
    expect(byRules.revision.changes).toEqual([
      "Skip task activities (Pick activities in Paris for 3 day(s)); the answer will not include activities",
      "Run budget_status, itinerary without activities; their results say so",
    ]);
    const byPerson = applied(skipWithReason(input, "A person chose to skip activities: not needed.", "person"));
    expect(stepOf(byPerson.plan, "activities")).toMatchObject({
      status: "skipped",
      skipCause: "failed",
      skipReason: `Skipped by a person after it failed: ${error}`,
    });
    expect(byPerson.revision.rationale).toMatch(
      /^A person chose to skip activities: not needed\. The rest of the plan continues without activities/,
    );
    // And the rest of the plan really runs: the check and the itinerary finish, saying what they left out.
    const after = await runWaves(byPerson.plan, faulty, first.feedback);
    expect(["budget_status", "itinerary"].map((id) => stepOf(after.plan, id).status)).toEqual(["done", "done"]);
    expect((stepOf(after.plan, "budget_status").result as { summary: string }).summary).toContain(
      `without activities (skipped by a person after it failed: ${error})`,
    );
    expect((stepOf(after.plan, "itinerary").result as { itinerary: string }).itinerary).toContain(
      `No activities were planned: activities skipped by a person after it failed: ${error}.`,
    );
    expect(after.feedback.filter((f) => f.feedbackType === "PARTIAL_SUCCESS").map((f) => f.taskId)).toEqual([
      "budget_status",
      "itinerary",
    ]);
  });
});

describe("revision bookkeeping", () => {
  it("numbers the revision from the input and clamps confidence at 0", () => {
    const low = { ...travelPlan(), confidence: 0.05 };
    const { plan: failed, feedback: fb } = failStep(low, "hotel", "fully booked", {
      failureClass: "resource_unavailable",
    });
    const { plan: revised, revision } = applied(findWorkaround(strategyInput(failed, "hotel", [fb], registry, 3)));
    expect(revision.revisionId).toBe("rev_3");
    expect(revised.confidence).toBe(0);
    expect(revision.confidenceDelta).toBe(-0.05);
  });

  it("triggerText counts each failed step once (its latest feedback) and violations apart", () => {
    const p = withSteps(travelPlan(), {
      flight: { status: "failed" },
      hotel: { status: "failed" },
      budget_status: { status: "failed" },
    });
    const all = [
      failure("flight", "timeout"),
      failure("flight", "timeout again"),
      failure("hotel", "fully booked"),
      feedback({ taskId: "budget_status", feedbackType: "CONSTRAINT_VIOLATION" }),
      failure("activities", "old failure of a step that is no longer failed"),
    ];
    expect(triggerText(p, all)).toBe("2 failures, 1 violations");
  });
});

describe("plan edits", () => {
  const p = travelPlan();

  it("freshId appends the suffix, then numbers it, without stacking suffixes", () => {
    expect(freshId(p, "flight", "retry")).toBe("flight_retry");
    const withRetry = replaceStep(p, "flight", { ...stepOf(p, "flight"), id: "flight_retry" });
    const both = { ...withRetry, steps: [...withRetry.steps, { ...stepOf(p, "flight") }] };
    expect(freshId(both, "flight_retry", "retry")).toBe("flight_retry2");
  });

  it("transitiveDependents follows dependencies through intermediate steps", () => {
    expect(transitiveDependents(p, ["flight"]).sort()).toEqual(["budget_status", "itinerary"]);
    expect(transitiveDependents(p, ["itinerary"])).toEqual([]);
  });

  it("resetForRerun sends the steps and their dependents back to pending, clearing results", () => {
    const done = withSteps(p, {
      flight: { status: "done", result: 1, attempts: 1 },
      hotel: { status: "done", result: 2 },
      budget_status: { status: "failed" },
    });
    const reset = resetForRerun(done, ["flight"]);
    expect(stepOf(reset, "flight")).toMatchObject({ status: "pending", result: null, attempts: 0 });
    expect(stepOf(reset, "budget_status").status).toBe("pending");
    expect(stepOf(reset, "hotel")).toMatchObject({ status: "done", result: 2 });
  });
});
