import { describe, expect, it } from "vitest";
import type { PlanAdjustment } from "../../src/domain/approval.js";
import { applyAdjustments } from "../../src/replanning/human-decision.js";
import { retryWithHumanParams } from "../../src/replanning/human-guidance.js";
import { checkEditedStep } from "../../src/replanning/plan-edit.js";
import { failStep, request, stepOf, travelPlan, travelRegistry } from "../fakes/toolkit-fixtures.js";

const registry = travelRegistry();
const TRIP = "Plan a 3-day trip from Paris to Rome for 1 person";
const base = travelPlan(TRIP, registry);
const adjust = (adjustments: PlanAdjustment[]) => applyAdjustments(base, adjustments, request(TRIP), registry);
const errorOf = (r: { ok: boolean; error?: string }) => (r.ok ? "no error" : r.error);

describe("resume --adjust is held to the tool's schema, as --retry --set is (issue 8 defect 6)", () => {
  // Regression: these adjustments were accepted, failed at run time and were "repaired" by recovery into
  // something else (nights -5 ran as a 1-night stay for a 3-night trip, exit 0).
  it.each([
    [
      "a negative number of nights",
      { taskId: "hotel", field: "params.nights", newValue: -5 },
      /The adjusted step hotel is not valid: search_hotels would refuse these parameters \(nights: Too small/,
    ],
    [
      "nights as words",
      { taskId: "hotel", field: "params.nights", newValue: "three" },
      /search_hotels would refuse these parameters \(nights: .*expected number/,
    ],
    [
      "a billion travellers",
      { taskId: "flight", field: "params.travellers", newValue: 1e9 },
      /search_flights would refuse these parameters \(travellers: Too big/,
    ],
    [
      "a parameter the tool does not have",
      { taskId: "hotel", field: "params.nightz", newValue: 3 },
      /search_hotels has no parameter "nightz"; its parameters are city, nights/,
    ],
    [
      "a whole params object the tool refuses",
      { taskId: "hotel", field: "params", newValue: { city: "Rome", nights: 0 } },
      /search_hotels would refuse these parameters \(nights: /,
    ],
    [
      "a tool the step's worker is not granted",
      { taskId: "hotel", field: "tools", newValue: ["search_flights"] },
      /The adjusted step hotel is not valid: worker "hotel_agent" may not use tool "search_flights"; it may use search_hotels/,
    ],
    [
      "a worker not granted the step's tool",
      { taskId: "hotel", field: "workerType", newValue: "flight_agent" },
      /worker "flight_agent" may not use tool "search_hotels"/,
    ],
  ] as [string, PlanAdjustment, RegExp][])(
    "refuses %s, naming the field and what is wrong",
    (_what, adjustment, error) => {
      expect(errorOf(adjust([adjustment]))).toMatch(error);
    },
  );

  it("keeps the step's description in step with its params: the tool's describeStep writes it again", () => {
    expect(stepOf(base, "hotel").description).toBe("Find a hotel in Rome for 2 night(s)");
    const r = adjust([{ taskId: "hotel", field: "params.nights", newValue: 3 }]);
    if (!r.ok) throw new Error(r.error);
    expect(stepOf(r.plan, "hotel")).toMatchObject({
      description: "Find a hotel in Rome for 3 night(s)",
      params: expect.objectContaining({ nights: 3 }),
    });
    // A description the person wrote in the same decision is theirs to keep.
    const own = adjust([
      { taskId: "hotel", field: "params.nights", newValue: 3 },
      { taskId: "hotel", field: "description", newValue: "Three nights near the Colosseum" },
    ]);
    if (!own.ok) throw new Error(own.error);
    expect(stepOf(own.plan, "hotel").description).toBe("Three nights near the Colosseum");
    // A step whose params were not touched keeps its description.
    expect(stepOf(r.plan, "flight").description).toBe(stepOf(base, "flight").description);
  });
});

describe("checkEditedStep: one validator for every person's edit of a step", () => {
  const hotel = stepOf(base, "hotel");

  it("accepts an untouched step without re-checking it, and a valid edit with a fresh description", () => {
    expect(checkEditedStep(hotel, hotel, registry)).toEqual({ ok: true, value: hotel });
    expect(checkEditedStep({ ...hotel, params: { ...hotel.params, radiusKm: 5 } }, hotel, registry)).toMatchObject({
      ok: true,
      value: { description: "Find a hotel in Rome for 2 night(s) within 5 km" },
    });
  });

  it("is the check --retry --set uses: the same refusal for the same value", () => {
    const { plan: stuck, feedback } = failStep(base, "hotel", "search_hotels: fully booked", {
      failureClass: "resource_unavailable",
    });
    const viaRetry = retryWithHumanParams({
      plan: stuck,
      feedback: [feedback],
      revisionCount: 0,
      registry,
      taskId: "hotel",
      params: { nights: -5 },
    });
    const viaCheck = checkEditedStep({ ...hotel, params: { ...hotel.params, nights: -5 } }, hotel, registry);
    expect(viaRetry.ok || viaCheck.ok).toBe(false);
    expect(!viaRetry.ok && viaRetry.error).toBe(!viaCheck.ok && viaCheck.reason);
    // And the retried step's description follows its new params.
    const ok = retryWithHumanParams({
      plan: stuck,
      feedback: [feedback],
      revisionCount: 0,
      registry,
      taskId: "hotel",
      params: { nights: 3 },
    });
    if (!ok.ok) throw new Error(ok.error);
    expect(stepOf(ok.outcome.plan, "hotel_retry").description).toBe("Find a hotel in Rome for 3 night(s)");
  });
});
