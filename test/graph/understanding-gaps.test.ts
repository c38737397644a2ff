import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { HumanApprovalRequest } from "../../src/domain/approval.js";
import { agentsOnTempDb, interruptValues, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";

const { agent } = agentsOnTempDb();

describe("a place several cities of comparable size share: asked before anything runs", () => {
  // Bug: "5 days in El Dorado from Lima" completed, El Dorado, Arkansas taken over El Dorado, Sinaloa silently.
  it.each([
    ["5 days in El Dorado from Lima", ["El Dorado, Arkansas, United States", "El Dorado, Sinaloa, Mexico"]],
    ["Lyon to Valencia, 4 days for 2", ["Valencia, Carabobo, Venezuela", "Valencia, Spain"]],
  ])("%s: approval first, the candidates named; approved, the run is partial", async (text, candidates) => {
    const a = agent();
    const config = threadConfig(`homonym-${text.length}`);
    const asked = HumanApprovalRequest.parse(interruptValues(await a.graph.invoke(tripInput(text), config))[0]);
    for (const c of candidates) expect(asked.openQuestions!.join(" ")).toContain(c);
    expect(a.calls.total()).toBe(0);
    const done = await a.graph.invoke(new Command({ resume: { decision: "approve" } }), config);
    expect(done.status).toBe("partial");
    expect(done.answer).toMatch(/Missing from this answer:[\s\S]*names places of comparable size/);
  });

  it("the request's other places settle it: 'a week in Valencia from Madrid' runs in Valencia, Spain", async () => {
    const a = agent();
    const done = await a.graph.invoke(tripInput("a week in Valencia from Madrid"), threadConfig("valencia-es"));
    expect(done.status).toBe("completed");
    expect(planOf(done)!.steps.find((s) => s.id === "hotel")!.result).toMatchObject({ city: "Valencia, Spain" });
  });
});

describe("the plan's shape follows what was asked", () => {
  // Bug: asking what to do in a city searched flights from an assumed Madrid and a hotel.
  it.each([
    "what can we see in Lisbon over 2 days",
    "things to do in Kraków this weekend, 2 days",
    "qué ver en Oporto",
  ])("%s: only activities are searched", async (text) => {
    const a = agent();
    const config = threadConfig(`shape-${text.length}`);
    let out = await a.graph.invoke(tripInput(text), config);
    // A date no step takes ("this weekend") is asked about first; the plan's shape is the same either way.
    if (out.status === "awaiting_approval")
      out = await a.graph.invoke(new Command({ resume: { decision: "approve" } }), config);
    expect(Object.keys(a.calls.all())).toEqual(["search_activities"]);
    expect(planOf(out)!.understanding.assumptions.find((x) => x.name === "what is planned")?.value).toBe(
      "activities only",
    );
  });

  // Bug: "get travel insurance" added a hotel search through "travel" and the run could complete.
  it.each([
    ["find flights from Madrid to Paris and get travel insurance", /travel insurance/],
    ["vols de Paris à Rome et une assurance du voyage", /assurance du voyage/],
  ])("%s: the unserved clause is asked about, adds no step, and the approved run is partial", async (text, named) => {
    const a = agent();
    const config = threadConfig(`incidental-${text.length}`);
    const asked = HumanApprovalRequest.parse(interruptValues(await a.graph.invoke(tripInput(text), config))[0]);
    expect(asked.openQuestions!.join(" ")).toMatch(named);
    const done = await a.graph.invoke(new Command({ resume: { decision: "approve" } }), config);
    expect(done.status).toBe("partial");
    expect(Object.keys(a.calls.all())).toEqual(["search_flights"]);
    expect(done.report!.missing.join(" ")).toMatch(named);
  });
});
