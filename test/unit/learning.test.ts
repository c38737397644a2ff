import { describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { planWithRules } from "../../src/planning/rules-planner.js";
import { ToolRegistry } from "../../src/tools/registry.js";

const registry = ToolRegistry.create([travelToolkit({ latencyMs: 0 })]);
const request = PlanningRequest.parse({
  userIntent: "Plan a 3-day trip from Madrid to Paris for 2 people under $2000",
});
const flightTool = (unreliableTools: Record<string, number>) =>
  planWithRules(request, registry, { unreliableTools }).steps.find((s) => s.id === "flight");

describe("the rules planner learns from memory", () => {
  it("lowers confidence, with the reason, for a tool that misbehaved once, but keeps it", () => {
    const plan = planWithRules(request, registry, { unreliableTools: { search_flights: 1 } });
    expect(plan.confidence).toBe(0.8);
    expect(plan.confidenceReasons).toContain("search_flights failed in 1 recent run(s)");
    expect(flightTool({ search_flights: 1 })?.tools).toEqual(["search_flights"]);
  });

  it("plans the alternative producer after two bad runs, on the worker that may use it, with the same parameters", () => {
    const step = flightTool({ search_flights: 2 });
    expect(step?.tools).toEqual(["search_flights_backup"]);
    expect(step?.workerType).toBe("backup_flight_agent");
    expect(step?.params).toEqual(flightTool({})?.params);
    expect(
      planWithRules(request, registry, { unreliableTools: { search_flights: 2 } }).confidenceReasons.join(),
    ).toContain("search_flights_backup is planned instead");
  });

  it("keeps the original when the alternative's record is no better", () => {
    expect(flightTool({ search_flights: 2, search_flights_backup: 3 })?.tools).toEqual(["search_flights"]);
  });
});
