import { describe, expect, it } from "vitest";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { keywordScore, planWithRules, requestFacts } from "../../src/planning/rules-planner.js";
import { assertLogicalOrder, criticalPathMs, findCycle, validatePlan } from "../../src/planning/validate.js";
import type { Plan } from "../../src/domain/plan.js";
import { DEMO_REQUEST } from "../../examples/travel/index.js";
import { caught, countingTool, registryOf, request, travelRegistry } from "../fakes/toolkit-fixtures.js";

const registry = travelRegistry();
const stepOf = (p: Plan, id: string) => {
  const found = p.steps.find((s) => s.id === id);
  if (!found) throw new Error(`plan has no step ${id}; it has ${p.steps.map((s) => s.id).join(", ")}`);
  return found;
};
/** What INV-PLAN-001 compares: the plan's content, not when it was made or the id that tells it apart. */
const content = ({ createdAt: _createdAt, planId: _planId, ...rest }: Plan) => rest;

describe("planWithRules on the travel demo request", () => {
  const plan = planWithRules(request(DEMO_REQUEST), registry);

  it("plans flight, hotel, activities, budget check and itinerary, each on its own agent and tool", () => {
    expect(plan.steps.map((s) => [s.id, s.workerType, s.tools])).toEqual([
      ["flight", "flight_agent", ["search_flights"]],
      ["hotel", "hotel_agent", ["search_hotels"]],
      ["activities", "activities_agent", ["search_activities"]],
      ["budget_status", "budget_agent", ["check_budget"]],
      ["itinerary", "itinerary_agent", ["build_itinerary"]],
    ]);
    expect(plan.createdBy).toBe("rules");
    expect(plan.objective).toBe(DEMO_REQUEST);
  });

  it("draws dependencies from what each tool consumes and produces", () => {
    expect(stepOf(plan, "flight").dependsOn).toEqual([]);
    expect(stepOf(plan, "hotel").dependsOn).toEqual([]);
    expect(stepOf(plan, "activities").dependsOn).toEqual([]);
    expect([...stepOf(plan, "budget_status").dependsOn].sort()).toEqual(["activities", "flight", "hotel"]);
    expect([...stepOf(plan, "itinerary").dependsOn].sort()).toEqual(["activities", "budget_status", "flight", "hotel"]);
    for (const s of plan.steps) expect(s.expectedOutputs).toEqual([s.id]);
  });

  it("is acyclic, in logical order and valid", () => {
    expect(findCycle(plan.steps)).toBeNull();
    expect(() => assertLogicalOrder(plan.steps)).not.toThrow();
    expect(() => validatePlan(plan, request(DEMO_REQUEST), registry)).not.toThrow();
  });

  it("extracts origin, destination, travellers, nights and budget from the request", () => {
    expect(stepOf(plan, "flight").params).toEqual({ origin: "Madrid", destination: "Paris", travellers: 2 });
    expect(stepOf(plan, "hotel").params).toMatchObject({ city: "Paris", nights: 2, travellers: 2 });
    expect(stepOf(plan, "activities").params).toEqual({ city: "Paris", days: 3, travellers: 2 });
    expect(stepOf(plan, "budget_status").params).toEqual({ budget: 2000 });
    expect(stepOf(plan, "itinerary").params).toEqual({ days: 3 });
  });

  it("estimates duration as the critical path (parallel searches) and cost as the sum of tool costs", () => {
    // search_flights 150 ms → check_budget 20 ms → build_itinerary 50 ms.
    expect(plan.estimatedDurationMs).toBe(220);
    expect(plan.estimatedDurationMs).toBe(criticalPathMs(plan.steps));
    expect(plan.estimatedDurationMs).toBeLessThan(plan.steps.reduce((n, s) => n + s.estimates.durationMs, 0));
    expect(plan.estimatedCost).toBeCloseTo(0.01 + 0.01 + 0.005 + 0.001 + 0.002, 10);
  });

  it("starts at 0.85 confidence with a reason when no tool has a bad record", () => {
    expect(plan.confidence).toBe(0.85);
    expect(plan.confidenceReasons).toHaveLength(1);
  });

  it("gives every step a retry policy and a time limit generous against its estimate", () => {
    for (const s of plan.steps) {
      expect(s.retry.maxAttempts).toBeGreaterThanOrEqual(2);
      expect(s.timeoutMs).toBeGreaterThanOrEqual(Math.max(1000, s.estimates.durationMs * 4));
    }
  });
});

describe("planWithRules is deterministic (INV-PLAN-001)", () => {
  it("gives the same plan content for the same request, apart from createdAt and planId", () => {
    const a = planWithRules(request(DEMO_REQUEST), registry);
    const b = planWithRules(request(DEMO_REQUEST), registry);
    expect(content(b)).toEqual(content(a));
  });

  it("gives each plan its own id, even for the same request (issue 8: a hash of the request mixed runs up in `logs --plan`)", () => {
    const a = planWithRules(request(DEMO_REQUEST), registry);
    const b = planWithRules(request(DEMO_REQUEST), registry);
    expect(a.planId).toMatch(/^plan-[0-9a-f]{12}$/);
    expect(b.planId).not.toBe(a.planId);
  });

  it("gives a different plan id for a different request", () => {
    const a = planWithRules(request(DEMO_REQUEST), registry);
    const b = planWithRules(request("Plan a 3-day trip from Madrid to Rome for 2 people under $2000"), registry);
    expect(b.planId).not.toBe(a.planId);
    expect(b.steps.find((s) => s.id === "flight")?.params).toMatchObject({ destination: "Rome" });
  });
});

describe("planWithRules extracts parameters from other trips", () => {
  it("a week in Tokyo from London for 4 under 8000", () => {
    const plan = planWithRules(request("a week in Tokyo from London for 4 under 8000"), registry);
    expect(stepOf(plan, "flight").params).toEqual({ origin: "London", destination: "Tokyo", travellers: 4 });
    expect(stepOf(plan, "hotel").params).toMatchObject({ city: "Tokyo", nights: 6, travellers: 4 });
    expect(stepOf(plan, "activities").params).toEqual({ city: "Tokyo", days: 7, travellers: 4 });
    expect(stepOf(plan, "budget_status").params).toEqual({ budget: 8000 });
    // The budget check pulls in the searches it consumes, even though the request never says "flight".
    expect([...stepOf(plan, "budget_status").dependsOn].sort()).toEqual(["activities", "flight", "hotel"]);
  });

  it("from Berlin to Rome for 3 people, 4 days, budget of $3,000", () => {
    const plan = planWithRules(request("Trip from Berlin to Rome for 3 people, 4 days, budget of $3,000"), registry);
    expect(stepOf(plan, "flight").params).toEqual({ origin: "Berlin", destination: "Rome", travellers: 3 });
    expect(stepOf(plan, "hotel").params).toMatchObject({ city: "Rome", nights: 3, travellers: 3 });
    expect(stepOf(plan, "budget_status").params).toEqual({ budget: 3000 });
  });

  it("takes the budget from the request's constraints when they set one", () => {
    const plan = planWithRules(
      request("Plan a 3-day trip from Madrid to Paris for 2 people", { budget: 1500 }),
      registry,
    );
    expect(stepOf(plan, "budget_status").params).toEqual({ budget: 1500 });
  });

  it("adds the booking step (after the itinerary) only when the request asks to book", () => {
    const plan = planWithRules(request("book a trip to Rome"), registry);
    expect(stepOf(plan, "booking").dependsOn).toEqual(["itinerary"]);
    expect(stepOf(plan, "booking").order).toBeGreaterThan(stepOf(plan, "itinerary").order);
    expect(planWithRules(request(DEMO_REQUEST), registry).steps.some((s) => s.id === "booking")).toBe(false);
  });

  it("books what was found when only a budget check stands between: the check orders the booking, the hotel feeds it", () => {
    // A constraint check carries none of what it checks, so it never stands in for the hotel upstream of it (the
    // booking was once wired to the check alone, and book_trip was asked to book nothing).
    const plan = planWithRules(request("Book me a hotel in Lisbon for 2 nights under 700 dollars"), registry);
    expect(stepOf(plan, "booking").dependsOn).toEqual(["hotel", "budget_status"]);
  });
});

describe("planWithRules refuses what it cannot plan", () => {
  it("a request no tool covers: NO_VALID_PLAN saying to rephrase, which tools exist, or to use a model", () => {
    const e = caught(() => planWithRules(request("write a poem about cats"), registry));
    expect(CandorError.hasCode(e, ErrorCode.NO_VALID_PLAN)).toBe(true);
    const message = (e as Error).message;
    expect(message).toContain("write a poem about cats");
    expect(message).toMatch(/Rephrase/);
    expect(message).toContain("search_flights");
    expect(message).toMatch(/register a tool|--model/);
  });

  it("an empty request: INVALID_REQUEST, not a search for matching tools", () => {
    const e = caught(() =>
      planWithRules({ userIntent: "   ", userContext: { userId: "u", preferences: {} }, constraints: {} }, registry),
    );
    expect(CandorError.hasCode(e, ErrorCode.INVALID_REQUEST)).toBe(true);
  });

  it("maxSteps too small: INSUFFICIENT_RESOURCES saying to raise maxSteps", () => {
    const e = caught(() => planWithRules(request(DEMO_REQUEST, { maxSteps: 3 }), registry));
    expect(CandorError.hasCode(e, ErrorCode.INSUFFICIENT_RESOURCES)).toBe(true);
    expect((e as Error).message).toContain("5 steps");
    expect((e as Error).message).toMatch(/Raise maxSteps/);
  });

  it("maxSteps exactly the plan's size is enough", () => {
    expect(planWithRules(request(DEMO_REQUEST, { maxSteps: 5 }), registry).steps).toHaveLength(5);
  });

  it("a time limit below the critical path: INSUFFICIENT_RESOURCES", () => {
    const e = caught(() => planWithRules(request(DEMO_REQUEST, { timeoutMs: 100 }), registry));
    expect(CandorError.hasCode(e, ErrorCode.INSUFFICIENT_RESOURCES)).toBe(true);
    expect((e as CandorError).details).toMatchObject({ constraint: "timeoutMs", limit: 100, actual: 220 });
  });
});

describe("planWithRules learns from unreliable tools", () => {
  // search_hotels has no alternative producer, so it stays in the plan however often it failed.
  it("loses 0.05 per recent failure of a tool it keeps, and says why", () => {
    const plan = planWithRules(request(DEMO_REQUEST), registry, { unreliableTools: { search_hotels: 2 } });
    expect(plan.steps.find((s) => s.id === "hotel")?.tools).toEqual(["search_hotels"]);
    expect(plan.confidence).toBe(0.75);
    expect(plan.confidenceReasons).toEqual(["search_hotels failed in 2 recent run(s)"]);
  });

  it("counts at most 3 failures per tool, and adds the penalties of several tools", () => {
    expect(planWithRules(request(DEMO_REQUEST), registry, { unreliableTools: { search_hotels: 10 } }).confidence).toBe(
      0.7,
    );
    expect(
      planWithRules(request(DEMO_REQUEST), registry, { unreliableTools: { search_flights: 1, search_hotels: 1 } })
        .confidence,
    ).toBe(0.75);
  });

  it("ignores failures of tools the plan does not use", () => {
    expect(planWithRules(request(DEMO_REQUEST), registry, { unreliableTools: { book_trip: 3 } }).confidence).toBe(0.85);
  });
});

describe("planWithRules on a generic toolkit", () => {
  const fetch = countingTool("fetch_data", { keywords: ["fetch", "download"], produces: ["data"] }).spec;
  const mirror = countingTool("fetch_mirror", { keywords: ["mirror"], produces: ["data"] }).spec;
  const analyze = countingTool("analyze_data", {
    keywords: ["analyze"],
    consumes: ["data"],
    produces: ["analysis"],
  }).spec;
  const report = countingTool("write_report", {
    keywords: ["report"],
    consumes: ["analysis", "data"],
    produces: ["report"],
  }).spec;
  const general = { name: "general", description: "does anything", categories: ["*"] };

  it("pulls in producers of what a matched tool consumes, one producer per output", () => {
    const reg = registryOf([fetch, mirror, analyze, report], [general]);
    const plan = planWithRules(request("write a report"), reg);
    expect(plan.steps.map((s) => s.tools[0])).toEqual(["fetch_data", "analyze_data", "write_report"]);
    expect(plan.steps.map((s) => s.dependsOn)).toEqual([[], ["data"], ["analysis", "data"]]);
  });

  it("prefers the producer whose keywords the request names", () => {
    const reg = registryOf([fetch, mirror, analyze, report], [general]);
    const plan = planWithRules(request("write a report from the mirror"), reg);
    expect(plan.steps.find((s) => s.id === "data")?.tools).toEqual(["fetch_mirror"]);
    expect(plan.steps.some((s) => s.tools.includes("fetch_data"))).toBe(false);
  });

  it("never plans a tool that no worker is granted", () => {
    const secret = countingTool("secret_tool", { keywords: ["secret"], category: "secret" }).spec;
    const reg = registryOf([fetch, secret], [{ name: "reader", description: "", categories: ["general"] }]);
    expect(
      CandorError.hasCode(
        caught(() => planWithRules(request("the secret"), reg)),
        ErrorCode.NO_VALID_PLAN,
      ),
    ).toBe(true);
  });
});

describe("keywordScore", () => {
  const tool = { keywords: ["flight", "hotel", "things to do"] };

  it("counts each keyword found as a word", () => {
    expect(keywordScore(tool, "a flight and a hotel")).toBe(2);
    expect(keywordScore(tool, "nothing relevant")).toBe(0);
  });

  it("matches plural stems but not longer words that merely start with the keyword", () => {
    expect(keywordScore(tool, "flights and hotels")).toBe(2);
    expect(keywordScore(tool, "a hotelier")).toBe(0);
  });

  it("matches multi-word keywords as phrases", () => {
    expect(keywordScore(tool, "some things to do in rome")).toBe(1);
    expect(keywordScore(tool, "things we do")).toBe(0);
  });

  it("is what requestFacts lowercases for", () => {
    expect(keywordScore(tool, requestFacts(request("FLIGHTS to Rome")).lower)).toBe(1);
  });
});
