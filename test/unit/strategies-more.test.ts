import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { Plan } from "../../src/domain/plan.js";
import { assignOrder, findCycle } from "../../src/planning/validate.js";
import {
  decompose,
  fixDependencies,
  retryWithParams,
  swapTool,
  type StrategyInput,
} from "../../src/replanning/strategies/index.js";
import {
  NO_BUDGET_REQUEST,
  countingTool,
  failStep,
  plan as makePlan,
  registryOf,
  request,
  runWaves,
  strategyInput,
  travelPlan,
  travelRegistry,
  withSteps,
  applied,
  refused,
  stepOf,
} from "../fakes/toolkit-fixtures.js";

const travel = travelRegistry();

/** Plan order as the planner assigns it, so a revision's re-ordering does not show up as a change. */
const ordered = (p: Plan): Plan => ({ ...p, steps: assignOrder(p.steps) });
const withRequest = (input: StrategyInput, text = NO_BUDGET_REQUEST): StrategyInput => ({
  ...input,
  request: request(text),
});

/** The no-budget travel plan with hotel and activities already done: results a revision must not touch. */
function searchesDone(): Plan {
  return withSteps(travelPlan(NO_BUDGET_REQUEST), {
    hotel: { status: "done", dispatches: 1, result: { cost: 922 } },
    activities: { status: "done", dispatches: 1, result: { cost: 412 } },
  });
}

describe("RETRY_WITH_PARAMS (seed 003): same tool, corrected parameters", () => {
  // A plan whose flight step lost its destination (as a model's plan might): the schema refuses it.
  const broken = withSteps(searchesDone(), { flight: { params: { origin: "Madrid", travellers: 2 } } });
  const { plan: failed, feedback: fb } = failStep(
    broken,
    "flight",
    "Invalid parameters for search_flights: destination: no destination given",
    { failureClass: "invalid_parameters" },
  );
  const { plan: revised, revision } = applied(
    retryWithParams(withRequest(strategyInput(failed, "flight", [fb], travel))),
  );
  const fixed = stepOf(revised, "flight_params");

  it("takes the missing field from the request, as <id>_params in the failed step's place", () => {
    expect(fixed.params).toEqual({ origin: "Madrid", destination: "Paris", travellers: 2 });
    expect(fixed).toMatchObject({
      tools: ["search_flights"],
      workerType: "flight_agent",
      status: "pending",
      replaces: "flight",
      lineage: ["flight"],
      dispatches: 0,
    });
    expect(revised.steps.some((s) => s.id === "flight")).toBe(false);
    expect(stepOf(revised, "budget_status").dependsOn).toContain("flight_params");
    expect(findCycle(revised.steps)).toBeNull();
  });

  it("records the revision with −0.05 and says which parameter changed, from what to what, and why", () => {
    expect(revision).toMatchObject({
      strategy: "RETRY_WITH_PARAMS",
      newStepIds: ["flight_params"],
      removedStepIds: ["flight"],
      modifiedStepIds: [],
      confidenceDelta: -0.05,
      confidenceBefore: 0.85,
      confidenceAfter: 0.8,
    });
    expect(revised.confidence).toBe(0.8);
    expect(revision.changes).toEqual([
      'Retry task flight with corrected parameters as flight_params: destination unset → "Paris" (from the request)',
    ]);
  });

  it("leaves done steps untouched (partial replanning)", () => {
    expect(stepOf(revised, "hotel")).toEqual(stepOf(failed, "hotel"));
    expect(stepOf(revised, "activities")).toEqual(stepOf(failed, "activities"));
  });

  it("the corrected search really runs, and the done searches are not repeated", async () => {
    const second = await runWaves(revised, travel, [fb]);
    expect(stepOf(second.plan, "flight_params").status).toBe("done");
    expect(stepOf(second.plan, "hotel").dispatches).toBe(1);
  });

  it("clamps a number out of range to the schema's bound", () => {
    const { plan: p, feedback: f } = failStep(
      withSteps(travelPlan(NO_BUDGET_REQUEST), {
        flight: { params: { origin: "Madrid", destination: "Paris", travellers: 40 } },
      }),
      "flight",
      "Invalid parameters for search_flights: travellers: Too big",
      {
        failureClass: "invalid_parameters",
      },
    );
    const { plan: r, revision: rev } = applied(retryWithParams(strategyInput(p, "flight", [f], travel)));
    expect(stepOf(r, "flight_params").params.travellers).toBe(20);
    expect(rev.changes[0]).toMatch(/travellers 40 → 20 \(clamped: /);
  });

  it("replaces an invalid optional value by the schema's default when there is no request to read", () => {
    const { plan: p, feedback: f } = failStep(
      withSteps(travelPlan(NO_BUDGET_REQUEST), {
        hotel: { params: { city: "Paris", nights: 2, travellers: 2, radiusKm: "far" } },
      }),
      "hotel",
      "Invalid parameters for search_hotels: radiusKm: expected number",
      {
        failureClass: "invalid_parameters",
      },
    );
    const { plan: r, revision: rev } = applied(retryWithParams(strategyInput(p, "hotel", [f], travel)));
    expect(stepOf(r, "hotel_params").params).toEqual({ city: "Paris", nights: 2, travellers: 2, radiusKm: 0 });
    expect(rev.changes[0]).toContain(`radiusKm "far" → 0 (the tool's default)`);
  });

  it("drops a parameter the tool does not know", () => {
    const strict = countingTool("lookup", { schema: z.strictObject({ q: z.string() }), category: "lookup" }).spec;
    const reg = registryOf([strict], [{ name: "looker", description: "", categories: ["lookup"] }]);
    const { plan: p, feedback: f } = failStep(
      makePlan([
        {
          id: "find",
          workerType: "looker",
          tools: ["lookup"],
          params: { q: "x", colour: "red" },
          expectedOutputs: ["lookup"],
        },
      ]),
      "find",
      'Invalid parameters for lookup: (arguments): Unrecognized key: "colour"',
      {
        failureClass: "invalid_parameters",
      },
    );
    const { plan: r, revision: rev } = applied(retryWithParams(strategyInput(p, "find", [f], reg)));
    expect(stepOf(r, "find_params").params).toEqual({ q: "x" });
    expect(rev.changes[0]).toContain('colour "red" → unset (dropped: the tool does not know it)');
  });

  it("fixes a parameter the tool refused at run time and named (origin = destination), from the request", () => {
    const { plan: p, feedback: f } = failStep(
      withSteps(travelPlan(NO_BUDGET_REQUEST), {
        flight: { params: { origin: "Paris", destination: "Paris", travellers: 2 } },
      }),
      "flight",
      "Invalid destination: origin and destination are both Paris",
      {
        failureClass: "invalid_parameters",
        outputs: { failureClass: "invalid_parameters", param: "origin", value: "Paris" },
      },
    );
    const { plan: r } = applied(retryWithParams(withRequest(strategyInput(p, "flight", [f], travel))));
    expect(stepOf(r, "flight_params").params.origin).toBe("Madrid");
  });

  it("does not apply when nothing can be corrected, and says which field and why", () => {
    const reason = refused(retryWithParams(strategyInput(failed, "flight", [fb], travel)));
    expect(reason).toMatch(/^Nothing in flight's parameters can be corrected: destination: no destination given/);
    const named = failStep(travelPlan(NO_BUDGET_REQUEST), "flight", "Invalid destination", {
      failureClass: "invalid_parameters",
    });
    expect(refused(retryWithParams(strategyInput(named.plan, "flight", [named.feedback], travel)))).toMatch(
      /names no parameter and the schema accepts them all/,
    );
  });
});

/** Two tools with the same purpose in one worker's grant, one outside it, and a consumer of their output. */
function fetchKit() {
  const a = countingTool("fetch_a", {
    category: "fetch",
    produces: ["data"],
    schema: z.strictObject({ q: z.string(), limit: z.number().max(10) }),
  }).spec;
  const b = countingTool("fetch_b", { category: "fetch", produces: ["data"] }).spec;
  const c = countingTool("fetch_c", { category: "elsewhere", produces: ["data"] }).spec;
  const use = countingTool("summarize", { category: "use", consumes: ["data"], produces: ["summary"] }).spec;
  const registry = registryOf(
    [a, b, c, use],
    [
      { name: "fetcher", description: "", categories: ["fetch"] },
      { name: "outsider", description: "", categories: ["elsewhere"] },
      { name: "user", description: "", categories: ["use"] },
    ],
  );
  const p = ordered(
    makePlan([
      {
        id: "data",
        workerType: "fetcher",
        tools: ["fetch_a"],
        params: { q: "x", limit: 5 },
        expectedOutputs: ["data"],
      },
      {
        id: "other",
        workerType: "fetcher",
        tools: ["fetch_b"],
        params: { q: "y" },
        expectedOutputs: ["data2"],
        status: "done",
        result: { ok: true },
      },
      {
        id: "summary",
        workerType: "user",
        tools: ["summarize"],
        dependsOn: ["data"],
        expectedOutputs: ["summary"],
        order: 1,
      },
    ]),
  );
  return { registry, plan: p };
}

describe("SWAP_TOOL (seed 003): another tool with the same purpose, inside the worker's grant", () => {
  const { registry, plan: p } = fetchKit();
  const { plan: failed, feedback: fb } = failStep(p, "data", "Tool fetch_a is not granted to the fetcher worker", {
    failureClass: "wrong_tool",
  });
  const { plan: revised, revision } = applied(swapTool(strategyInput(failed, "data", [fb], registry)));
  const swapped = stepOf(revised, "data_swap");

  it("puts <id>_swap with the other tool on the same worker in the failed step's place", () => {
    expect(swapped).toMatchObject({
      tools: ["fetch_b"],
      workerType: "fetcher",
      params: { q: "x", limit: 5 },
      expectedOutputs: ["data"],
      replaces: "data",
      status: "pending",
    });
    expect(stepOf(revised, "summary").dependsOn).toEqual(["data_swap"]);
    expect(stepOf(revised, "other")).toEqual(stepOf(failed, "other"));
  });

  it("lowers confidence by exactly 0.08 and names both tools", () => {
    expect(revision).toMatchObject({
      strategy: "SWAP_TOOL",
      newStepIds: ["data_swap"],
      removedStepIds: ["data"],
      confidenceDelta: -0.08,
      confidenceAfter: 0.77,
    });
    expect(revision.changes).toEqual(["Swap tool for task data: fetch_a → fetch_b as data_swap (same output: data)"]);
  });

  it("never offers a tool outside the grant or one that already failed the lineage", () => {
    const { plan: p2, feedback: fb2 } = failStep(
      revised,
      "data_swap",
      "fetch_b failed: simulated internal error (HTTP 500)",
      { failureClass: "agent_unavailable" },
    );
    const reason = refused(swapTool(strategyInput(p2, "data_swap", [fb, fb2], registry)));
    expect(reason).toBe("No other tool in fetcher's grant produces data (already failed: fetch_b, fetch_a)");
  });
});

describe("DECOMPOSE (seed 000 scenario 5): 2–4 smaller chained steps from the worker's grant", () => {
  const tool = (name: string, consumes: string[], produces: string[], durationMs: number) =>
    countingTool(name, { category: "writing", consumes, produces, estimates: { durationMs, cost: 0.01 } }).spec;
  const registry = registryOf(
    [
      tool("write_report", ["notes"], ["report"], 600),
      tool("outline", ["notes"], ["outline"], 200),
      tool("draft_sections", ["outline"], ["sections"], 250),
      tool("assemble", ["sections"], ["report"], 100),
      tool("slow_assemble", ["outline"], ["report"], 900),
      countingTool("read_notes", { category: "reading", produces: ["notes"] }).spec,
      countingTool("publish", { category: "publishing", consumes: ["report"], produces: ["published"] }).spec,
    ],
    [
      { name: "writer", description: "", categories: ["writing"] },
      { name: "reader", description: "", categories: ["reading"] },
      { name: "publisher", description: "", categories: ["publishing"] },
    ],
  );
  const before = ordered(
    makePlan([
      {
        id: "notes",
        workerType: "reader",
        tools: ["read_notes"],
        expectedOutputs: ["notes"],
        status: "done",
        dispatches: 1,
        result: { ok: true },
      },
      {
        id: "report",
        workerType: "writer",
        tools: ["write_report"],
        dependsOn: ["notes"],
        expectedOutputs: ["report"],
        estimates: { durationMs: 600, cost: 0.01 },
        order: 1,
      },
      {
        id: "publish",
        workerType: "publisher",
        tools: ["publish"],
        dependsOn: ["report"],
        expectedOutputs: ["published"],
        order: 2,
      },
    ]),
  );
  const { plan: failed, feedback: fb } = failStep(before, "report", "Task too complex to execute in one step", {
    failureClass: "too_complex",
  });
  const { plan: revised, revision } = applied(decompose(strategyInput(failed, "report", [fb], registry)));

  it("replaces the step with a chain of 2–4 substeps, each shorter than the original", () => {
    expect(revision.newStepIds).toEqual(["report_part1", "report_part2", "report_part3"]);
    expect(revision.removedStepIds).toEqual(["report"]);
    expect(revised.steps.some((s) => s.id === "report")).toBe(false);
    const subs = revision.newStepIds.map((id) => stepOf(revised, id));
    expect(subs.map((s) => [s.tools[0], s.dependsOn])).toEqual([
      ["outline", ["notes"]],
      ["draft_sections", ["report_part1"]],
      ["assemble", ["report_part2"]],
    ]);
    for (const s of subs) expect(s.estimates.durationMs).toBeLessThan(600);
    expect(findCycle(revised.steps)).toBeNull();
  });

  it("keeps the expected output on the last substep and rewires the dependents to it", () => {
    expect(stepOf(revised, "report_part3").expectedOutputs).toEqual(["report"]);
    expect(stepOf(revised, "publish").dependsOn).toEqual(["report_part3"]);
  });

  it("lowers confidence by exactly 0.05 and leaves the done step alone", () => {
    expect(revision).toMatchObject({ strategy: "DECOMPOSE", confidenceDelta: -0.05, confidenceAfter: 0.8 });
    expect(revision.changes[0]).toBe(
      "Decompose task report into report_part1 → report_part2 → report_part3 (outline → draft_sections → assemble); report_part3 produces report",
    );
    expect(stepOf(revised, "notes")).toEqual(stepOf(failed, "notes"));
  });

  it("the substeps really run in order, and the done step is not re-run", async () => {
    const run = await runWaves(revised, registry, [fb]);
    expect(run.plan.steps.every((s) => s.status === "done")).toBe(true);
    expect(stepOf(run.plan, "notes").dispatches).toBe(1);
  });

  it("does not apply when the grant has no shorter chain, and says so", () => {
    const { plan: p, feedback: f } = failStep(travelPlan(), "hotel", "Task too complex to execute", {
      failureClass: "too_complex",
    });
    expect(refused(decompose(strategyInput(p, "hotel", [f], travel)))).toBe(
      "No chain of 2–4 tools in hotel_agent's grant, each shorter than hotel, leads from its inputs to hotel",
    );
  });
});

describe("FIX_DEPENDENCIES: a step failed because of its input, so the upstream step is repaired and re-run", () => {
  const done = withSteps(travelPlan(NO_BUDGET_REQUEST), {
    flight: { status: "done", dispatches: 1, result: "garbage" },
    hotel: { status: "done", dispatches: 1, result: { cost: 922 } },
    activities: { status: "done", dispatches: 1, result: { cost: 412 } },
    budget_status: { status: "done", dispatches: 1, result: { total: 2000 } },
  });
  const { plan: failed, feedback: fb } = failStep(
    done,
    "itinerary",
    'build_itinerary cannot use the flight result: expected the flight search\'s structured output, got the string "garbage".',
    {
      failureClass: "unknown",
      outputs: { input: "flight" },
    },
  );
  const { plan: revised, revision } = applied(fixDependencies(strategyInput(failed, "itinerary", [fb], travel)));

  it("replaces the upstream step whose tool gave an unusable result with another agent's", () => {
    expect(stepOf(revised, "flight_retry")).toMatchObject({
      workerType: "backup_flight_agent",
      tools: ["search_flights_backup"],
      status: "pending",
      replaces: "flight",
    });
    expect(revision).toMatchObject({
      strategy: "FIX_DEPENDENCIES",
      newStepIds: ["flight_retry"],
      removedStepIds: ["flight"],
      modifiedStepIds: ["budget_status", "itinerary"],
    });
  });

  it("re-runs the failed step and the other dependents, and keeps the independent results", () => {
    expect(stepOf(revised, "itinerary")).toMatchObject({
      status: "pending",
      dependsOn: expect.arrayContaining(["flight_retry"]),
    });
    expect(stepOf(revised, "budget_status")).toMatchObject({ status: "pending", result: null });
    expect(stepOf(revised, "hotel")).toEqual(stepOf(failed, "hotel"));
    expect(stepOf(revised, "activities")).toEqual(stepOf(failed, "activities"));
  });

  it("lowers confidence by exactly 0.10 and explains the repair", () => {
    expect(revision).toMatchObject({ confidenceDelta: -0.1, confidenceAfter: 0.75 });
    expect(revision.changes[0]).toMatch(
      /^Fix dependency of itinerary: redo flight with agent backup_flight_agent using search_flights_backup as flight_retry/,
    );
    expect(revision.changes[1]).toBe("Re-run budget_status, itinerary with the repaired input");
  });

  it("the repaired plan really completes, without repeating the hotel and activities searches", async () => {
    // Real results this time, with the flight's replaced by garbage as a misbehaving provider would return.
    const first = await runWaves(travelPlan(NO_BUDGET_REQUEST), travel);
    const corrupted = withSteps(first.plan, { flight: { result: "garbage" } });
    const broken = failStep(corrupted, "itinerary", "build_itinerary cannot use the flight result", {
      failureClass: "unknown",
      outputs: { input: "flight" },
    });
    const { plan: repaired } = applied(
      fixDependencies(strategyInput(broken.plan, "itinerary", [broken.feedback], travel)),
    );
    const run = await runWaves(repaired, travel, [broken.feedback]);
    expect(run.plan.steps.map((s) => [s.id, s.status])).toEqual(repaired.steps.map((s) => [s.id, "done"]));
    expect(stepOf(run.plan, "hotel").dispatches).toBe(1);
    expect(stepOf(run.plan, "activities").dispatches).toBe(1);
  });

  it("re-runs the upstream step as it is when no other agent can produce its output (seed 000's 'Dependency X failed')", () => {
    const { plan: p, feedback: f } = failStep(done, "itinerary", "Dependency hotel failed", {
      failureClass: "dependency_failed",
    });
    const { plan: r, revision: rev } = applied(fixDependencies(strategyInput(p, "itinerary", [f], travel)));
    expect(rev).toMatchObject({
      newStepIds: [],
      removedStepIds: [],
      modifiedStepIds: ["hotel", "budget_status", "itinerary"],
    });
    expect(stepOf(r, "hotel")).toMatchObject({ status: "pending", result: null });
    expect(stepOf(r, "flight")).toEqual(stepOf(p, "flight"));
    expect(rev.changes[0]).toBe("Fix dependency of itinerary: re-run hotel (no other agent can produce hotel)");
  });

  it("does not apply when the error blames no input, or the blamed step has not finished", () => {
    const { plan: p, feedback: f } = failStep(done, "itinerary", "flux capacitor misaligned", {
      failureClass: "unknown",
    });
    expect(refused(fixDependencies(strategyInput(p, "itinerary", [f], travel)))).toBe(
      "itinerary's error does not blame any of its inputs (flux capacitor misaligned)",
    );
    const pending = withSteps(failed, { flight: { status: "failed" } });
    expect(refused(fixDependencies(strategyInput(pending, "itinerary", [fb], travel)))).toMatch(
      /^flight is failed: an upstream step that did not finish is recovered on its own/,
    );
  });
});
