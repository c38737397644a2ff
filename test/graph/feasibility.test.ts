import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { Node } from "../../nodes/names.js";
import { FailureEscalationRequest } from "../../src/domain/approval.js";
import {
  interruptValues,
  notificationsOf,
  agentsOnTempDb,
  threadConfig,
  tripInput,
  valuesOf,
} from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";

// Issue 3 / seed 000 scenario 6: a budget far below anything the catalog offers burnt every revision on price caps
// no search could meet (flight under $33, hotel under $36) before a human heard that the budget was the problem.

const { agent } = agentsOnTempDb();
const TRIP = (budget: number, extra = "") =>
  `Plan a 3-day trip from Madrid to Paris for 2 people under $${budget}${extra}`;
const FIGURES = "Even the cheapest options cost $874 (flight $482, hotel $392, activities $0), over the $500 limit";

describe("a budget even the cheapest options exceed", () => {
  it("stops for a human on the first violation, naming the figures, with no revision spent and no search repeated", async () => {
    const a = agent();
    const config = threadConfig("infeasible-abort");
    const out = await a.graph.invoke(tripInput(TRIP(500)), config);
    const [payload, ...more] = interruptValues(out);
    expect(more).toEqual([]);
    const request = FailureEscalationRequest.parse(payload);
    expect(request).toMatchObject({ taskId: "budget_status", revisionCount: 0, failureCount: 1 });
    expect(request.reason).toContain(FIGURES);
    expect(request.reason).toContain("raise the budget to at least $874 or change the request");
    expect(request.kind).toBe("infeasible_constraint");
    expect(out.revisions).toEqual([]);
    expect(out.revisionCount).toBe(0);
    expect(a.calls.all()).toEqual({ search_flights: 1, search_hotels: 1, search_activities: 1, check_budget: 1 });
    const waiting = await a.graph.getState(config);
    expect(waiting.next).toEqual([Node.HUMAN_INTERRUPT]);
    const escalation = notificationsOf(valuesOf(waiting), "escalation", "budget_status");
    expect(escalation).toHaveLength(1);
    expect(escalation[0]!.title).toContain(FIGURES);

    const done = await a.graph.invoke(new Command({ resume: { decision: "abort" } }), config);
    expect(done.status).toBe("failed");
    expect(done.failureReason).toContain(FIGURES);
    expect(done.report!.summary.failureReason).toContain("raise the budget to at least $874");
    expect(a.calls.all()).toEqual({ search_flights: 1, search_hotels: 1, search_activities: 1, check_budget: 1 });
  });

  it("skipping the check is a human's choice, and nothing built on it runs: no itinerary, no booking", async () => {
    const a = agent();
    const config = threadConfig("infeasible-skip");
    interruptValues(await a.graph.invoke(tripInput(TRIP(500, " and book it")), config));
    const done = await a.graph.invoke(
      new Command({ resume: { decision: "skip", comment: "show me the searches anyway" } }),
      config,
    );
    expect(done.status).toBe("partial");
    const status = Object.fromEntries(planOf(done)!.steps.map((s) => [s.id, s.status]));
    expect(status).toMatchObject({
      flight: "done",
      hotel: "done",
      activities: "done",
      budget_status: "skipped",
      itinerary: "skipped",
      booking: "skipped",
    });
    expect([a.calls.count("build_itinerary"), a.calls.count("book_trip")]).toEqual([0, 0]);
    expect(done.revisions.map((r) => r.strategy)).toEqual(["SKIP"]);
    expect(done.report!.missing.join(" ")).toMatch(/budget_status.*itinerary.*booking/);
  });

  it("a retry with a limit the cheapest options fit re-runs only the check, then the caps apply", async () => {
    const a = agent();
    const config = threadConfig("infeasible-retry-set");
    interruptValues(await a.graph.invoke(tripInput(TRIP(500)), config));
    const done = await a.graph.invoke(new Command({ resume: { decision: "retry", params: { budget: 3000 } } }), config);
    expect(done.status).toBe("completed");
    expect(done.revisions.map((r) => `${r.strategy}:${r.failedTaskId}`)).toEqual(["RETRY_WITH_PARAMS:budget_status"]);
    expect(a.calls.all()).toMatchObject({ search_flights: 1, search_hotels: 1, search_activities: 1, check_budget: 2 });
  });
});

describe("a budget the cheapest options fit", () => {
  it("caps each search at or above its floor and completes within the budget", async () => {
    const a = agent();
    const out = await a.graph.invoke(tripInput(TRIP(900)), threadConfig("feasible"));
    expect(out.status).toBe("completed");
    // The hotel cap is below anything in the centre but above the floor a widened search reaches.
    expect(out.revisions.map((r) => `${r.strategy}:${r.failedTaskId}`)).toEqual([
      "ADJUST_PARAMETERS:budget_status",
      "FIND_WORKAROUND:hotel",
    ]);
    const steps = new Map(planOf(out)!.steps.map((s) => [s.id, s]));
    expect(steps.get("flight")!.params.maxCost).toBeGreaterThanOrEqual(482);
    expect(steps.get("hotel_alt")!.params.maxCost).toBeGreaterThanOrEqual(392);
    const status = steps.get("budget_status")!.result as { withinBudget: boolean; total: number };
    expect(status.withinBudget).toBe(true);
    expect(status.total).toBeLessThanOrEqual(900);
  });
});
