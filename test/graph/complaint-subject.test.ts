import { describe, expect, it } from "vitest";
import { giveFeedback } from "../../src/reflection/feedback.js";
import { planOf } from "../../src/domain/plan-state.js";
import { agentsOnTempDb, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { travelRegistry } from "../fakes/toolkit-fixtures.js";

// Issue 26: "Pick a more affordable place to sleep" on a trip with a budget was read as about every search the
// budget check adds up (flights and activities too); a complaint about the hotel must adjust the hotel search only.
const { agent } = agentsOnTempDb();
const TRIP = "Plan a 3-day trip from Madrid to Rome for 2 people with a budget of $9000";
const COMPLAINTS = [
  "Pick a more affordable place to sleep",
  "The room rate was steep",
  "La habitación era demasiado cara",
] as const;

describe("a complaint about the hotel on a trip (issue 26)", () => {
  it("is read as about search_hotels alone and, after three rejections, changes only search_hotels", async () => {
    const a = agent();
    const deps = { store: a.persistence.store, registry: travelRegistry() };
    for (const [i, reason] of COMPLAINTS.entries()) {
      const out = await a.graph.invoke(tripInput(TRIP, {}, "rosa"), threadConfig(`cs-${i}`));
      expect(planOf(out)!.steps.map((s) => s.tools[0])).toContain("check_budget");
      const fb = await giveFeedback(a.graph, `cs-${i}`, { verdict: "rejected", reason, comment: null }, deps);
      expect(fb.evaluation.blamed).toEqual(["search_hotels.priority=price"]);
    }
    const next = await a.graph.invoke(tripInput(TRIP, {}, "rosa"), threadConfig("cs-next"));
    const plan = planOf(next)!;
    expect(plan.learned.map((l) => l.summary)).toEqual([expect.stringMatching(/^search_hotels priority /)]);
    const hotel = plan.steps.find((s) => s.tools[0] === "search_hotels")!;
    expect(hotel.params.priority).toBe("price");
    const flight = plan.steps.find((s) => s.tools[0] === "search_flights")!;
    expect(flight.params.priority ?? "recommended").toBe("recommended");
    const activities = plan.steps.find((s) => s.tools[0] === "search_activities")!;
    expect(activities.params.focus ?? "recommended").toBe("recommended");
  });
});
