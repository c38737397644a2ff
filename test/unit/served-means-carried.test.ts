import { describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { openQuestions } from "../../src/domain/understanding.js";
import { planWithRules } from "../../src/planning/rules-planner.js";
import { ToolRegistry } from "../../src/tools/registry.js";

// Regression (issue 23 item 4): "as cheap as possible" was claimed served by the budget check with no budget, and the
// run completed with a 4★ hotel at more than twice the cheapest; "children under 10" was served by the same check
// through the word "under". A part is served only by a step that carries it.
const registry = ToolRegistry.create([travelToolkit({ latencyMs: 0 })]);
const plan = (userIntent: string) => planWithRules(PlanningRequest.parse({ userIntent }), registry);
const params = (userIntent: string) => Object.fromEntries(plan(userIntent).steps.map((s) => [s.tools[0], s.params]));

describe("a price preference is carried by the searches' own settings", () => {
  it.each([
    "Find a hotel in Rome for 3 nights, as cheap as possible",
    "a cheap hotel in Rome for 3 nights",
    "Un hotel barato en Roma para 3 noches",
    "Un hôtel pas cher à Rome pour 3 nuits",
  ])("%s: the hotel search orders by price, and no budget check stands in for it", (request) => {
    const p = params(request);
    expect(p.search_hotels).toMatchObject({ priority: "price" });
    expect(p.check_budget).toBeUndefined();
    expect(openQuestions(plan(request).understanding)).toEqual([]);
    expect(plan(request).understanding.values).toContainEqual(
      expect.objectContaining({ name: "priority", value: "price" }),
    );
  });

  it("a cheap trip orders every search by price", () => {
    const p = params("Plan a cheap 4-day trip from Madrid to Rome for 2");
    expect(p.search_flights).toMatchObject({ priority: "price" });
    expect(p.search_hotels).toMatchObject({ priority: "price" });
    expect(p.search_activities).toMatchObject({ focus: "price" });
  });

  it("a luxury hotel is searched by quality", () => {
    expect(params("A luxury hotel in Paris for 2 nights").search_hotels).toMatchObject({ priority: "quality" });
  });

  it("no preference, no setting: the provider's own order stands", () => {
    expect(params("Find a hotel in Rome for 3 nights").search_hotels).not.toHaveProperty("priority");
  });
});

describe("a limit check given no limit serves nothing", () => {
  it('"children under 10" is not served by the budget check; what no step carries is named', () => {
    const u = plan(
      "Plan a 3-day trip from Madrid to Paris for 2 people, accommodations must be suitable for children under 10",
    ).understanding;
    expect(u.parts.some((p) => p.stepIds.includes("budget_status"))).toBe(false);
    expect(u.parts.find((p) => p.text.includes("children"))).toMatchObject({
      text: "suitable for children under 10",
      status: "unsupported",
      stepIds: [],
      why: "the searches take a number of travellers, not their ages: nothing chooses what suits children",
    });
    // The hotel search serves the rest of the clause, never the words it does not carry.
    expect(u.parts.find((p) => p.text === "accommodations must be")).toMatchObject({ status: "served" });
  });

  it('"keep it under budget" with no figure is named unsupported, with why', () => {
    const u = plan("Plan a 3-day trip from Madrid to Paris for 2 people, keep it under budget").understanding;
    expect(u.parts.find((p) => p.text === "keep it under budget")).toMatchObject({
      status: "unsupported",
      why: 'check_budget would check it, but the request gives it no limit to check, so no step carries "under budget"',
    });
  });

  it("a budget with a figure is still served by the check", () => {
    const u = plan("Plan a 3-day trip from Madrid to Paris for 2 people under $2000").understanding;
    expect(u.parts[0]!.stepIds).toContain("budget_status");
    expect(openQuestions(u)).toEqual([]);
  });
});

describe("what no travel tool's parameter carries is named with why, never taken as served", () => {
  it.each([
    ["pet-friendly hotel in Lisbon for 3 nights", "pet-friendly", /no rule about pets/],
    ["a hotel in Rome for 2 nights, we want an entire room", "entire room", /no room type/],
    [
      "Plan a 3-day trip from Madrid to Paris for 2 people, accommodations must be suitable for children under 10",
      "suitable for children",
      /not their ages/,
    ],
    ["3 days in Rome from Madrid, Italian and Chinese food", "Chinese", /by cuisine/],
    ["3 days in Rome from Madrid, no self-driving", "self-driving", /no tool arranges ground or sea transport/],
  ])("%s", (request, words, why) => {
    const u = plan(request).understanding;
    expect(openQuestions(u).some((q) => q.includes(words) && why.test(q))).toBe(true);
  });

  it("a party with children is counted, not asked about", () => {
    const p = plan("Plan a 3-day trip from Madrid to Paris for 2 adults and 2 children");
    expect(openQuestions(p.understanding)).toEqual([]);
    expect(p.steps.find((s) => s.tools[0] === "search_flights")!.params).toMatchObject({ travellers: 4 });
  });
});
