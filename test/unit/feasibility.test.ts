import { describe, expect, it } from "vitest";
import { FailureEscalationRequest } from "../../src/domain/approval.js";
import { RunSettings } from "../../src/domain/request.js";
import { parseDecision } from "../../src/replanning/human-decision.js";
import { resumeCommands } from "../../src/cli/render.js";
import { selectStrategy } from "../../src/replanning/select.js";
import { adjustParameters, infeasibility, violationFacts } from "../../src/replanning/strategies/adjust-parameters.js";
import {
  applied,
  failStep,
  refused,
  runWaves,
  stepOf,
  strategyInput,
  travelPlan,
  travelRegistry,
  withSteps,
} from "../fakes/toolkit-fixtures.js";

// Issue 3 / seed 000 scenario 6: a $500 budget for a ~$2,200 trip capped the flight and hotel far below anything
// that exists, and every revision was burnt on searches that could only fail before anyone was told.

const registry = travelRegistry();
const settings = RunSettings.parse({});
const TRIP = (budget: number) => `Plan a 3-day trip from Madrid to Paris for 2 people under $${budget}`;
const searchesDone = (budget: number) =>
  withSteps(travelPlan(TRIP(budget)), {
    flight: { status: "done", dispatches: 1, result: { cost: 848 } },
    hotel: { status: "done", dispatches: 1, result: { cost: 922 } },
    activities: { status: "done", dispatches: 1, result: { cost: 412 } },
  });

/** The budget check failed with these figures (the demo trip's, with the catalog's real floors by default). */
function violation(budget: number, floors: Record<string, number> | null = { flight: 482, hotel: 392, activities: 0 }) {
  const outputs = {
    total: 2182,
    budget,
    overage: 2182 - budget,
    breakdown: { flight: 848, hotel: 922, activities: 412 },
    ...(floors ? { floors } : {}),
  };
  return failStep(searchesDone(budget), "budget_status", `Total cost $2,182 exceeds budget $${budget}`, {
    feedbackType: "CONSTRAINT_VIOLATION",
    failureClass: "constraint_violated",
    outputs,
  });
}

describe("violationFacts and infeasibility read the floors a check reports", () => {
  it("floors are optional: present when reported (zero allowed), absent otherwise", () => {
    expect(
      violationFacts({ total: 10, limit: 5, breakdown: { a: 10 }, floors: { a: 3, b: 0, c: -1, d: "x" } }),
    ).toEqual({ total: 10, limit: 5, breakdown: { a: 10 }, floors: { a: 3, b: 0 } });
    expect(violationFacts({ total: 10, limit: 5, breakdown: { a: 10 }, floors: {} })).toEqual({
      total: 10,
      limit: 5,
      breakdown: { a: 10 },
    });
  });

  it("a limit below the sum of the floors is infeasible, named with its figures; a limit at or above it is not", () => {
    const hopeless = infeasibility({
      total: 2182,
      budget: 500,
      breakdown: { flight: 848, hotel: 922 },
      floors: { flight: 482, hotel: 392, activities: 0 },
    });
    expect(hopeless).toEqual({
      least: 874,
      limit: 500,
      floors: { flight: 482, hotel: 392, activities: 0 },
      reason:
        "Even the cheapest options cost $874 (flight $482, hotel $392, activities $0), over the $500 limit: no price cap can fit; raise the budget to at least $874 or change the request",
    });
    expect(
      infeasibility({ total: 2182, budget: 874, breakdown: { flight: 848 }, floors: { flight: 482, hotel: 392 } }),
    ).toBeNull();
    // Without floors nobody can tell, so nothing is declared infeasible.
    expect(infeasibility({ total: 2182, budget: 1, breakdown: { flight: 848 } })).toBeNull();
  });
});

describe("ADJUST_PARAMETERS with floors", () => {
  it("feasible: every cap stays at or above its part's floor, and the caps together remove the overage", () => {
    const { plan, feedback: fb } = violation(1000);
    const { plan: revised, revision } = applied(adjustParameters(strategyInput(plan, "budget_status", [fb], registry)));
    const caps = {
      flight: stepOf(revised, "flight").params.maxCost as number,
      hotel: stepOf(revised, "hotel").params.maxCost as number,
      activities: stepOf(revised, "activities").params.maxCost as number,
    };
    expect(caps.flight).toBeGreaterThanOrEqual(482);
    expect(caps.hotel).toBeGreaterThanOrEqual(392);
    expect(caps.activities).toBeGreaterThanOrEqual(1);
    expect(caps.flight + caps.hotel + caps.activities).toBeLessThanOrEqual(1000);
    // The flight and hotel alone can save only $896 above their floors, less than the $1,182 overage: activities too.
    expect(revision.modifiedStepIds).toEqual(["hotel", "flight", "activities", "budget_status"]);
    expect(revision.changes[0]).toMatch(
      /^Adjust parameters of hotel: maxCost unset → \$\d+ \(it cost \$922 of a \$2,182 total over the \$1,000 limit; its cheapest option costs \$392\)$/,
    );
    expect(revision.rationale).toContain("no lower than their cheapest option");
  });

  it("feasible with room to spare: only the two largest parts are capped, as without floors", () => {
    const { plan, feedback: fb } = violation(2000);
    const { plan: revised, revision } = applied(adjustParameters(strategyInput(plan, "budget_status", [fb], registry)));
    expect(revision.modifiedStepIds).toEqual(["hotel", "flight", "budget_status"]);
    expect(stepOf(revised, "activities").params).not.toHaveProperty("maxCost");
  });

  it("the caps of a feasible limit really fit when the searches run again (the hotel by widening its search)", async () => {
    const first = await runWaves(travelPlan(TRIP(900)), registry);
    const fb = first.feedback.find((f) => f.taskId === "budget_status")!;
    expect(fb.outputs).toMatchObject({ floors: { flight: 482, hotel: 392, activities: 0 } });
    const { plan: adjusted } = applied(
      adjustParameters(strategyInput(first.plan, "budget_status", first.feedback, registry)),
    );
    const second = await runWaves(adjusted, registry, first.feedback);
    // The centre has no hotel under the cap; the cap is above the floor a widened search reaches.
    expect(stepOf(second.plan, "hotel").status).toBe("failed");
    expect(second.feedback.find((f) => f.taskId === "hotel" && f.dispatch === 2)?.failureClass).toBe(
      "resource_unavailable",
    );
    expect(["flight", "activities"].map((id) => stepOf(second.plan, id).status)).toEqual(["done", "done"]);
  });

  it("infeasible: does not apply, and says why with the figures", () => {
    const { plan, feedback: fb } = violation(500);
    expect(refused(adjustParameters(strategyInput(plan, "budget_status", [fb], registry)))).toBe(
      "Even the cheapest options cost $874 (flight $482, hotel $392, activities $0), over the $500 limit: no price cap can fit; raise the budget to at least $874 or change the request",
    );
  });

  it("a part already at its floor is not capped; the others take the overage", () => {
    const { plan, feedback: fb } = violation(1900, { flight: 848, hotel: 392, activities: 0 });
    const { plan: revised, revision } = applied(adjustParameters(strategyInput(plan, "budget_status", [fb], registry)));
    expect(revision.modifiedStepIds).toEqual(["hotel", "activities", "budget_status"]);
    expect(stepOf(revised, "flight").params).not.toHaveProperty("maxCost");
  });
});

describe("selectStrategy: an infeasible limit goes to a human on the first violation, with its figures", () => {
  it("escalates at once instead of ADJUST_PARAMETERS or SKIP, spending no revision", () => {
    const { plan, feedback: fb } = violation(500);
    const s = selectStrategy({ plan, feedback: [fb], settings, revisionCount: 0, registry });
    if (s?.kind !== "escalate") throw new Error(`expected an escalation, got ${JSON.stringify(s)}`);
    const r = s.request;
    expect(() => FailureEscalationRequest.parse(r)).not.toThrow();
    expect(r).toMatchObject({
      kind: "infeasible_constraint",
      taskId: "budget_status",
      revisionCount: 0,
      failureCount: 1,
      params: { budget: 500 },
    });
    expect(r.reason).toBe(
      "The limit checked by budget_status cannot be met. Even the cheapest options cost $874 (flight $482, hotel $392, activities $0), over the $500 limit: no price cap can fit; raise the budget to at least $874 or change the request.",
    );
    expect(r.question).toContain(r.reason);
    expect(r.question).toMatch(/skip budget_status and finish without it, or abort the run\?$/);
    expect(r.suggestedActions[0]).toMatch(
      /^Raise the budget to at least \$874: retry --set budget=874, replan with it as guidance/,
    );
    expect(r.question).toContain("retry budget_status with a new limit (e.g. retry --set budget=874)");
    // A plain retry would fail the same check the same way: only a retry with a new limit is taken.
    expect(r.decisions).toEqual(["skip", "retry", "replan", "abort"]);
    expect(parseDecision("retry", r)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^A plain retry would fail the same way/),
    });
    expect(parseDecision({ decision: "retry", params: { budget: 900 } }, r)).toMatchObject({ ok: true });
    expect(parseDecision("abort", r)).toMatchObject({ ok: true });
    // The printed retry command carries the limit that would fit, since a plain retry is refused.
    expect(r.retryWith).toEqual({ budget: 874 });
    const commands = resumeCommands("t1", r, { commandPrefix: "candor", dbArg: null });
    expect(commands.find((c) => c.decision === "retry")).toMatchObject({
      command: "candor resume t1 --retry --set budget=874",
      meaning: "check again with a limit that can be met",
    });
  });

  it("is reported before the revision cap, which would only say that revisions ran out", () => {
    const { plan, feedback: fb } = violation(500);
    expect(selectStrategy({ plan, feedback: [fb], settings, revisionCount: 3, registry })).toMatchObject({
      kind: "escalate",
      request: { reason: expect.stringMatching(/cannot be met/) },
    });
  });

  it("a feasible limit, or one without floors (nobody can tell), is left to ADJUST_PARAMETERS as before", () => {
    for (const [budget, floors] of [
      [2000, undefined],
      [900, undefined],
      [500, null],
    ] as const) {
      const { plan, feedback: fb } = floors === null ? violation(budget, null) : violation(budget);
      const s = selectStrategy({ plan, feedback: [fb], settings, revisionCount: 0, registry });
      expect(s?.kind === "strategy" ? s.strategy : s?.kind).toBe("ADJUST_PARAMETERS");
    }
  });
});
