import { describe, expect, it } from "vitest";
import {
  guidedRequest,
  guidedRevision,
  mergeGuidedPlan,
  retryWithHumanParams,
} from "../../src/replanning/human-guidance.js";
import { failStep, request, stepOf, travelPlan, travelRegistry, withSteps } from "../fakes/toolkit-fixtures.js";

const registry = travelRegistry();
const TRIP = "Plan a 3-day trip from Madrid to Paris for 2 people, budget 2000 dollars";
const base = travelPlan(TRIP, registry);
const done = (id: string) => ({ status: "done" as const, result: { from: id } });
// Flight and activities finished; the hotel failed; the budget check and the itinerary never ran.
const { plan: stuck, feedback } = failStep(
  withSteps(base, { flight: done("flight"), activities: done("activities") }),
  "hotel",
  "search_hotels: fully booked",
  { failureClass: "resource_unavailable" },
);

describe("retryWithHumanParams (resume --retry --set)", () => {
  const retry = (params: Record<string, unknown>, taskId = "hotel") =>
    retryWithHumanParams({ plan: stuck, feedback: [feedback], revisionCount: 2, registry, taskId, params });

  it("replaces the failed step with <id>_retry carrying the merged parameters, as a RETRY_WITH_PARAMS revision", () => {
    const r = retry({ radiusKm: 20 });
    if (!r.ok) throw new Error(r.error);
    const next = stepOf(r.outcome.plan, "hotel_retry");
    expect(next.params).toEqual({ ...stepOf(stuck, "hotel").params, radiusKm: 20 });
    expect(next).toMatchObject({ status: "pending", replaces: "hotel", tools: ["search_hotels"] });
    expect(r.outcome.plan.steps.some((s) => s.id === "hotel")).toBe(false);
    // Dependents now wait for the retried step; finished steps are untouched.
    expect(stepOf(r.outcome.plan, "budget_status").dependsOn).toContain("hotel_retry");
    expect(stepOf(r.outcome.plan, "flight")).toEqual(stepOf(stuck, "flight"));
    expect(r.outcome.revision).toMatchObject({
      strategy: "RETRY_WITH_PARAMS",
      revisionId: "rev_3",
      failedTaskId: "hotel",
      newStepIds: ["hotel_retry"],
      removedStepIds: ["hotel"],
    });
    expect(r.outcome.revision.changes[0]).toContain("radiusKm 0 → 20");
  });

  it("refuses a parameter the tool does not have, listing those it has, instead of repeating the call", () => {
    expect(retry({ radiusKM: 20 })).toMatchObject({
      ok: false,
      error:
        'search_hotels has no parameter "radiusKM"; its parameters are city, nights, travellers, radiusKm, maxCost, priority, minRating.',
    });
  });

  it("never gives a retried step an id the run used before, however often a person retries", () => {
    let plan = stuck;
    const ids: string[] = [];
    const fb = [feedback];
    for (const radiusKm of [5, 10, 15, 20]) {
      const taskId = ids.at(-1) ?? "hotel";
      const r = retryWithHumanParams({
        plan,
        feedback: fb,
        revisionCount: ids.length,
        registry,
        taskId,
        params: { radiusKm },
      });
      if (!r.ok) throw new Error(r.error);
      const id = r.outcome.revision.newStepIds[0]!;
      ids.push(id);
      // The new step fails too, so the next retry starts from it.
      const failedAgain = failStep(r.outcome.plan, id, "search_hotels: fully booked", {
        failureClass: "resource_unavailable",
      });
      plan = failedAgain.plan;
      fb.push(failedAgain.feedback);
    }
    expect(new Set(ids).size).toBe(4);
    expect(ids).not.toContain("hotel");
  });

  it("refuses a value the tool's schema rejects, naming the field", () => {
    const r = retry({ radiusKm: 500 });
    expect(r).toMatchObject({
      ok: false,
      error: expect.stringMatching(/search_hotels would refuse these parameters \(radiusKm: /),
    });
  });

  it("refuses a retry that would repeat the same call, no parameters, and a step that is not waiting", () => {
    expect(retry({ radiusKm: 0 })).toMatchObject({ ok: false, error: expect.stringMatching(/already has that value/) });
    expect(retry({})).toMatchObject({ ok: false, error: expect.stringMatching(/No parameters were given/) });
    expect(retry({ radiusKm: 5 }, "flight")).toMatchObject({
      ok: false,
      error: expect.stringMatching(/flight is not waiting for recovery/),
    });
  });
});

describe("guidedRequest", () => {
  it("puts the guidance first, so a value it restates is the one the planner reads", () => {
    const guided = guidedRequest(request(TRIP), "Budget 3000 dollars.");
    expect(guided.userIntent).toBe(`Budget 3000 dollars. ${TRIP}`);
    expect(stepOf(travelPlan(guided.userIntent, registry), "budget_status").params.budget).toBe(3000);
  });
});

describe("mergeGuidedPlan", () => {
  const used = ["hotel"];

  it("keeps finished steps the new plan repeats, re-runs what changed and everything downstream of it", () => {
    const fresh = travelPlan(guidedRequest(request(TRIP), "budget 3000 dollars").userIntent, registry);
    const m = mergeGuidedPlan(stuck, fresh, used);
    expect(m.kept.sort()).toEqual(["activities", "flight"]);
    // The hotel id was used by the failed step: the ledger keys calls by step id, so it is never reused.
    expect(m.added).toEqual(["hotel_g2", "budget_status", "itinerary"]);
    expect(m.dropped).toEqual(["hotel"]);
    expect(stepOf(m.plan, "flight")).toEqual(stepOf(stuck, "flight"));
    expect(stepOf(m.plan, "budget_status")).toMatchObject({ status: "pending", params: { budget: 3000 } });
    expect(stepOf(m.plan, "budget_status").dependsOn.sort()).toEqual(["activities", "flight", "hotel_g2"]);
    expect(stepOf(m.plan, "itinerary").dependsOn).toContain("hotel_g2");
  });

  it("re-runs a finished step whose parameters the guidance changed, and its dependents", () => {
    const fresh = travelPlan("Plan a 3-day trip from Madrid to Rome for 2 people, budget 2000 dollars", registry);
    const m = mergeGuidedPlan(stuck, fresh, used);
    expect(m.kept).toEqual([]);
    expect(stepOf(m.plan, "flight_g2").params.destination).toBe("Rome");
    expect(m.dropped.sort()).toEqual(["activities", "flight", "hotel"]);
  });

  it("never gives a new step the id of a step the thread used before", () => {
    const fresh = travelPlan(TRIP, registry);
    const m = mergeGuidedPlan(stuck, fresh, ["hotel", "budget_status", "hotel_g2"]);
    expect(m.added).toEqual(["hotel_g3", "budget_status_g2", "itinerary"]);
  });
});

describe("guidedRevision", () => {
  const args = (fresh = travelPlan(TRIP, registry)) => ({
    current: stuck,
    merge: mergeGuidedPlan(stuck, fresh, ["hotel"]),
    guidance: "try again",
    request: request(TRIP),
    registry,
    feedback: [feedback],
    revisionCount: 1,
    failed: stepOf(stuck, "hotel"),
    failureClass: "resource_unavailable" as const,
  });

  it("explains what runs, what is kept and what is dropped, with the guided plan's confidence", () => {
    const r = guidedRevision(args());
    if (!r.ok) throw new Error(r.error);
    expect(r.revision).toMatchObject({
      strategy: "REPLAN_WITH_GUIDANCE",
      revisionId: "rev_2",
      failedTaskId: "hotel",
      newStepIds: ["hotel_g2", "budget_status", "itinerary"],
      removedStepIds: ["hotel"],
    });
    expect(r.revision.changes).toEqual([
      `Plan again with the guidance "try again": 3 step(s) to run (hotel_g2, budget_status, itinerary)`,
      "Keep 2 finished step(s) and their results (flight, activities)",
      "Drop hotel",
    ]);
    expect(r.revision.confidenceAfter).toBe(r.plan.confidence);
  });

  it("refuses a guided plan with no new work", () => {
    const allDone = withSteps(base, Object.fromEntries(base.steps.map((s) => [s.id, done(s.id)])));
    const r = guidedRevision({
      ...args(),
      current: allDone,
      merge: mergeGuidedPlan(allDone, travelPlan(TRIP, registry), []),
    });
    expect(r).toMatchObject({ ok: false, error: expect.stringMatching(/led to no new work/) });
  });
});
