import { describe, expect, it } from "vitest";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { ModelPlan } from "../../src/domain/plan.js";
import {
  extractJson,
  extractJsonWithNotes,
  fallbackPlan,
  planFromText,
  toPlan,
  toPlanResult,
} from "../../src/planning/parse.js";
import { pipelineRegistry } from "../fakes/toolkit.js";

const registry = pipelineRegistry();
const request = PlanningRequest.parse({ userIntent: "Fetch the sales data, analyse it and write a report" });

/** A three-step plan in exactly the shape ModelPlan asks models for. */
const modelPlan: ModelPlan = {
  objective: "A sales report",
  contextSummary: null,
  confidence: 0.8,
  understanding: null,
  steps: [
    {
      id: "fetch",
      description: "Fetch sales data",
      workerType: "reader",
      tools: ["fetch_data"],
      paramsJson: '{"topic":"sales"}',
      dependsOn: [],
      expectedOutputs: null,
    },
    {
      id: "analyze",
      description: "Analyse it",
      workerType: "analyzer",
      tools: ["analyze_data"],
      paramsJson: null,
      dependsOn: ["fetch"],
      expectedOutputs: null,
    },
    {
      id: "report",
      description: "Write the report",
      workerType: "reporter",
      tools: ["write_report"],
      paramsJson: null,
      dependsOn: ["analyze"],
      expectedOutputs: ["report"],
    },
  ],
};
const modelPlanJson = JSON.stringify(modelPlan, null, 2);

function thrown(fn: () => unknown): CandorError {
  try {
    fn();
  } catch (e) {
    if (CandorError.isInstance(e)) return e;
    throw e;
  }
  throw new Error("expected a CandorError, nothing was thrown");
}

describe("extractJson", () => {
  it("returns clean JSON unchanged and without notes", () => {
    expect(extractJsonWithNotes(modelPlanJson)).toEqual({ value: modelPlan, notes: [] });
  });

  it("strips a markdown fence", () => {
    const out = extractJsonWithNotes("```json\n" + modelPlanJson + "\n```");
    expect(out.value).toEqual(modelPlan);
    expect(out.notes.join(" ")).toMatch(/fence/);
  });

  it("finds the JSON inside prose", () => {
    const out = extractJsonWithNotes(
      `Sure! Here is the plan you asked for:\n${modelPlanJson}\nLet me know if {anything} should change.`,
    );
    expect(out.value).toEqual(modelPlan);
    expect(out.notes.join(" ")).toMatch(/prose/);
  });

  it("repairs trailing commas", () => {
    expect(extractJson('{"objective": "x", "steps": [{"id": "a", "description": "d",},],}')).toEqual({
      objective: "x",
      steps: [{ id: "a", description: "d" }],
    });
  });

  it("repairs single quotes and unquoted keys", () => {
    const out = extractJsonWithNotes("{objective: 'x', steps: [{id: 'a', description: 'it\\'s fine'}]}");
    expect(out.value).toEqual({ objective: "x", steps: [{ id: "a", description: "it's fine" }] });
    expect(out.notes.join(" ")).toMatch(/repaired/);
  });

  it("repairs JSON cut off by a length limit inside an unclosed fence", () => {
    expect(extractJson('```json\n{"objective": "x", "steps": [{"id": "a"')).toEqual({
      objective: "x",
      steps: [{ id: "a" }],
    });
  });

  it("throws MODEL_OUTPUT saying there is no JSON for plain prose", () => {
    const e = thrown(() => extractJson("I'm sorry, I can't help with planning today."));
    expect(e.code).toBe(ErrorCode.MODEL_OUTPUT);
    expect(e.message).toMatch(/no JSON object/);
    expect(e.message).toMatch(/I'm sorry/);
  });

  it("throws MODEL_OUTPUT for an empty answer", () => {
    expect(thrown(() => extractJson("   ")).message).toMatch(/empty answer/);
  });
});

describe("toPlan", () => {
  it("builds a validated plan from a ModelPlan, filling defaults from the registry", () => {
    const plan = toPlan(modelPlan, request, registry, "llm");
    expect(plan.createdBy).toBe("llm");
    expect(plan.confidence).toBe(0.8);
    expect(plan.steps.map((s) => [s.id, s.order, s.workerType])).toEqual([
      ["fetch", 1, "reader"],
      ["analyze", 2, "analyzer"],
      ["report", 3, "reporter"],
    ]);
    expect(plan.steps[0]?.params).toEqual({ topic: "sales" });
    expect(plan.steps[0]?.expectedOutputs).toEqual(["data"]);
    expect(plan.steps[1]?.expectedOutputs).toEqual(["analysis"]);
    expect(plan.steps[1]?.estimates).toEqual({ durationMs: 500, cost: 0.05 });
    // A chain: the critical path is every step; the cost is every tool's estimate.
    expect(plan.estimatedDurationMs).toBe(200 + 500 + 300);
    expect(plan.estimatedCost).toBeCloseTo(0.08);
  });

  it("accepts a bare {steps} object with optional fields missing, snake_case keys and numeric ids", () => {
    const result = toPlanResult(
      {
        steps: [
          { id: 1, description: "Fetch", tools: ["fetch_data"] },
          { id: 2, description: "Analyse", tools: "analyze_data", depends_on: [1], worker_type: "wizard" },
        ],
      },
      request,
      registry,
      "llm",
    );
    const [fetch, analyze] = result.plan.steps;
    expect(fetch).toMatchObject({ id: "1", workerType: "reader", dependsOn: [] });
    expect(analyze).toMatchObject({ id: "2", workerType: "analyzer", tools: ["analyze_data"], dependsOn: ["1"] });
    expect(result.plan.objective).toBe(request.userIntent);
    // The model gave no confidence (0.7 assumed), and its plan leaves "write a report" undone: capped (issue 9).
    expect(result.plan.confidence).toBe(0.45);
    expect(result.plan.confidenceReasons.join(" ")).toMatch(
      /The model gave no confidence; 0\.7 assumed\..*"write a report" cannot be done/,
    );
    expect(result.notes.join(" ")).toMatch(/no worker type was given; assigned "reader"/);
    expect(result.notes.join(" ")).toMatch(/worker type "wizard" is not registered; assigned "analyzer"/);
  });

  it("reassigns a registered worker that may not use the step's tool", () => {
    const result = toPlanResult(
      { steps: [{ id: "a", description: "Write", workerType: "reader", tools: ["write_report"] }] },
      request,
      registry,
      "llm",
    );
    expect(result.plan.steps[0]?.workerType).toBe("reporter");
    expect(result.notes.join(" ")).toMatch(/"reader" may not use write_report/);
  });

  it("rejects a cycle with PLAN_CYCLE naming the steps in it", () => {
    const cyclic = {
      steps: [
        { id: "a", description: "A", tools: ["fetch_data"], dependsOn: ["b"] },
        { id: "b", description: "B", tools: ["analyze_data"], dependsOn: ["a"] },
      ],
    };
    const e = thrown(() => toPlan(cyclic, request, registry, "llm"));
    expect(e.code).toBe(ErrorCode.PLAN_CYCLE);
    expect(e.message).toMatch(/a → b → a|b → a → b/);
  });

  it("rejects an unknown tool with PLAN_UNKNOWN_REFERENCE naming it and the known tools", () => {
    const e = thrown(() =>
      toPlan({ steps: [{ id: "a", description: "Fly", tools: ["book_flight"] }] }, request, registry, "llm"),
    );
    expect(e.code).toBe(ErrorCode.PLAN_UNKNOWN_REFERENCE);
    expect(e.message).toMatch(/"book_flight"/);
    expect(e.message).toMatch(/fetch_data, analyze_data, write_report/);
  });

  it("rejects a step without a description with MODEL_OUTPUT naming the field", () => {
    const e = thrown(() => toPlan({ steps: [{ id: "a", tools: ["fetch_data"] }] }, request, registry, "llm"));
    expect(e.code).toBe(ErrorCode.MODEL_OUTPUT);
    expect(e.message).toMatch(/steps\.0\.description/);
  });

  it("rejects paramsJson that is not an object", () => {
    const bad = { steps: [{ id: "a", description: "Fetch", tools: ["fetch_data"], paramsJson: "[1, 2]" }] };
    expect(thrown(() => toPlan(bad, request, registry, "llm")).message).toMatch(/paramsJson that is not a JSON object/);
  });

  it("enforces the request's constraints", () => {
    const tight = PlanningRequest.parse({ userIntent: "x", constraints: { maxSteps: 2 } });
    expect(thrown(() => toPlan(modelPlan, tight, registry, "llm")).code).toBe(ErrorCode.INSUFFICIENT_RESOURCES);
  });

  it("gives each plan its own id, also for the same request and steps (issue 8: repeated ids mixed runs up in `logs --plan`)", () => {
    const a = toPlan(modelPlan, request, registry, "llm");
    const b = toPlan(JSON.parse(modelPlanJson), request, registry, "llm");
    expect(a.planId).toMatch(/^plan-[0-9a-f]{12}$/);
    expect(b.planId).not.toBe(a.planId);
    const { planId: _a, createdAt: _ca, ...contentA } = a;
    const { planId: _b, createdAt: _cb, ...contentB } = b;
    expect(contentB).toEqual(contentA);
  });
});

describe("fallbackPlan", () => {
  it("is seed 004's linear plan: one general step carrying the request, confidence 0.3", () => {
    const plan = fallbackPlan(request, "the model said nothing useful");
    expect(plan).toMatchObject({
      createdBy: "fallback",
      confidence: 0.3,
      confidenceReasons: ["the model said nothing useful"],
      objective: request.userIntent,
    });
    expect(plan.steps).toHaveLength(1);
    expect(plan.steps[0]).toMatchObject({
      workerType: "general",
      tools: [],
      description: request.userIntent,
      dependsOn: [],
    });
  });
});

describe("planFromText", () => {
  it("repairs a fenced plan with trailing commas and says so", () => {
    const text =
      "Here you go:\n```json\n" +
      modelPlanJson.replace(/\]\n\s*\}$/, "],\n}").replace('"analyze"\n', '"analyze",\n') +
      "\n```";
    expect(text).toMatch(/,\s*\}/);
    const { plan, notes } = planFromText(text, request, registry);
    expect(plan.createdBy).toBe("llm");
    expect(plan.steps).toHaveLength(3);
    expect(notes.join(" ")).toMatch(/fence/);
    expect(notes.join(" ")).toMatch(/repaired/);
  });
});
