import { describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import type { Plan } from "../../src/domain/plan.js";
import { PlanningRequest, RunSettings } from "../../src/domain/request.js";
import { parseDecision } from "../../src/replanning/human-decision.js";
import { selectStrategy } from "../../src/replanning/select.js";
import { planWithRules } from "../../src/planning/rules-planner.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { failStep } from "../fakes/toolkit-fixtures.js";

const registry = ToolRegistry.create([travelToolkit({ latencyMs: 0 })]);
const settings = RunSettings.parse({});

/** The plan for `text` (approved as it is) with `step` failed on invalid parameters, as the worker reports it. */
function failedOnParams(
  text: string,
  step: string,
  error: string,
): { plan: Plan; feedback: ReturnType<typeof failStep>["feedback"]; request: PlanningRequest } {
  const request = PlanningRequest.parse({ userIntent: text });
  const plan = { ...planWithRules(request, registry), confidence: 0.85 };
  const failed = failStep(plan, step, error, { failureClass: "invalid_parameters" });
  return { ...failed, request };
}

describe("a recovery that would change what the user asked for is put to a person (issue 9)", () => {
  it.each([
    [
      "Rome from Paris for -2 people, 3 days",
      "flight",
      "Invalid parameters for search_flights: travellers: Too small: expected number to be >=1",
      { travellers: 1 },
    ],
    [
      "Rome from Paris for 30 people, 3 days",
      "flight",
      "Invalid parameters for search_flights: travellers: Too big: expected number to be <=20",
      { travellers: 20 },
    ],
    [
      "365 days in Rome from Paris",
      "activities",
      "Invalid parameters for search_activities: days: Too big: expected number to be <=60",
      { days: 60 },
    ],
  ])(
    "%s: RETRY_WITH_PARAMS is not applied; the change is named and a retry accepts it",
    (text, step, error, retryWith) => {
      const { plan, feedback, request } = failedOnParams(text, step, error);
      const s = selectStrategy({ plan, feedback: [feedback], settings, revisionCount: 0, registry, request });
      expect(s?.kind).toBe("escalate");
      if (s?.kind !== "escalate") return;
      expect(s.request.kind).toBe("request_change");
      expect(s.request.reason).toMatch(/^RETRY_WITH_PARAMS would change what you asked for: /);
      expect(s.request.retryWith).toEqual(retryWith);
      const accepted = parseDecision({ decision: "retry" }, s.request);
      expect(accepted).toEqual({
        ok: true,
        decision: expect.objectContaining({ decision: "retry", params: retryWith }),
      });
    },
  );

  it("a correction of something Candor set itself (not from the request) is applied without asking", () => {
    const { plan, feedback, request } = failedOnParams(
      "Plan a 3-day trip from Madrid to Paris for 2 people",
      "hotel",
      "Invalid parameters for search_hotels: radiusKm: Too big: expected number to be <=50",
    );
    const withRadius = {
      ...plan,
      steps: plan.steps.map((st) => (st.id === "hotel" ? { ...st, params: { ...st.params, radiusKm: 80 } } : st)),
    };
    const s = selectStrategy({
      plan: withRadius,
      feedback: [{ ...feedback, params: { ...feedback.params, radiusKm: 80 } }],
      settings,
      revisionCount: 0,
      registry,
      request,
    });
    expect(s).toMatchObject({ kind: "strategy", strategy: "RETRY_WITH_PARAMS" });
  });
});
