import { describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { planWithRules } from "../../src/planning/rules-planner.js";
import { ToolRegistry } from "../../src/tools/registry.js";

const registry = ToolRegistry.create([travelToolkit({ latencyMs: 0 })]);
const plan = (userIntent: string) => planWithRules(PlanningRequest.parse({ userIntent }), registry);

describe("the rules planner checks the parameters it extracted", () => {
  it("a request without a destination is planned with low confidence and says what is missing, so a human is asked first", () => {
    const p = plan("plan a 3-day trip for 2 people");
    expect(p.confidence).toBeLessThan(0.5);
    expect(p.confidenceReasons.join(" | ")).toMatch(/flight: destination — no destination given: say where to go/);
  });

  it("a city the tools do not serve is caught at planning, named in the reasons, so a human is asked first", () => {
    const p = plan("Plan a 4-day trip to Atlantis from Paris");
    expect(p.confidence).toBeLessThan(0.5);
    expect(p.confidenceReasons.join(" | ")).toMatch(
      /hotel: city — "Atlantis" is not a city the travel tools serve: no city of that name; did you mean Atlanta\?/,
    );
  });

  it("a trip named only by its cities is recognised by the travel tools when no keyword matches, a little less surely", () => {
    const p = plan("10 days in Rome from Madrid");
    expect(p.steps.map((s) => s.tools[0])).toEqual(
      expect.arrayContaining(["search_flights", "search_hotels", "search_activities", "build_itinerary"]),
    );
    expect(p.steps.find((s) => s.id === "hotel")!.params).toMatchObject({ city: "Rome", nights: 9 });
    expect(p.confidence).toBe(0.75);
    expect(p.confidenceReasons[0]).toMatch(
      /^no tool's keywords appear in the request; .*search_hotels.* recognised what it asks/,
    );
  });

  it.each([
    "Email the Tokyo team the Q3 numbers",
    "What is the weather in Paris",
    "Cancel my dentist appointment in London",
    "Translate this paragraph into Japanese for the Rome office",
  ])("a city alone does not make a trip: %s", (text) => {
    expect(() => plan(text)).toThrow(/No tool matches/);
  });

  it("recognising never adds a tool to a request whose words matched: asking for flights plans no hotel", () => {
    expect(plan("Find flights from Madrid to Paris for 2").steps.map((s) => s.tools[0])).toEqual(["search_flights"]);
  });

  it("a request with neither keywords nor a known city still has no plan, and is told the words tools know", () => {
    expect(() => plan("hello there")).toThrow(
      /No tool matches "hello there". Rephrase it with words the tools know — .*search_hotels \(hotel\)/,
    );
    expect(() => plan("hello there")).not.toThrow(/plan_days/);
  });

  it("a complete request keeps its confidence and gives no parameter reasons", () => {
    const p = plan("Plan a 3-day trip from Madrid to Paris for 2 people");
    expect(p.confidence).toBe(0.85);
    expect(p.confidenceReasons.join(" ")).not.toMatch(/—/);
  });
});
