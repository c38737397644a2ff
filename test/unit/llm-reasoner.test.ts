import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { CandorError, ErrorCode } from "../../src/errors.js";
import type { ModelPlan, Plan } from "../../src/domain/plan.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { toPlan } from "../../src/planning/parse.js";
import { LlmReasoner, type LlmReasonerOptions } from "../../src/reasoning/llm.js";
import { createChatModel } from "../../src/reasoning/model.js";
import type { PlanResult, PlanningContext, Reasoner, SynthesisInput } from "../../src/reasoning/types.js";
import {
  FakeOpenAIServer,
  scriptedServersPerTest,
  strictSchemaProblem,
  type ScriptedResponse,
} from "../fakes/fake-openai-server.js";
import { pipelineRegistry } from "../fakes/toolkit.js";

// The real ChatOpenAI talks to a scripted server on 127.0.0.1; nothing leaves the machine.

const registry = pipelineRegistry();
const request = PlanningRequest.parse({ userIntent: "Fetch the sales data, analyse it and write a report" });

const validPlan: ModelPlan = {
  objective: "A sales report",
  contextSummary: "The user wants a report on sales",
  confidence: 0.85,
  understanding: null,
  steps: [
    {
      id: "fetch",
      description: "Fetch sales data",
      workerType: "reader",
      tools: ["fetch_data"],
      paramsJson: '{"topic":"sales"}',
      dependsOn: [],
      expectedOutputs: ["data"],
    },
    {
      id: "analyze",
      description: "Analyse the data",
      workerType: "analyzer",
      tools: ["analyze_data"],
      paramsJson: null,
      dependsOn: ["fetch"],
      expectedOutputs: ["analysis"],
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

/** What a model that ignores the schema tends to send: a fence, prose and trailing commas. */
const sloppyPlanText = [
  "Here is the plan:",
  "```json",
  "{",
  '  "objective": "A sales report",',
  '  "steps": [',
  '    {"id": "fetch", "description": "Fetch sales data", "workerType": "reader", "tools": ["fetch_data"], "dependsOn": [],},',
  '    {"id": "analyze", "description": "Analyse the data", "workerType": "analyzer", "tools": ["analyze_data"], "dependsOn": ["fetch"],},',
  "  ],",
  "}",
  "```",
].join("\n");

const cyclicPlan: ModelPlan = {
  objective: "Loops",
  contextSummary: null,
  confidence: 0.9,
  understanding: null,
  steps: [
    {
      id: "a",
      description: "Fetch",
      workerType: "reader",
      tools: ["fetch_data"],
      paramsJson: null,
      dependsOn: ["b"],
      expectedOutputs: null,
    },
    {
      id: "b",
      description: "Analyse",
      workerType: "analyzer",
      tools: ["analyze_data"],
      paramsJson: null,
      dependsOn: ["a"],
      expectedOutputs: null,
    },
  ],
};

const rulesPlan: Plan = toPlan(
  { steps: [{ id: "r1", description: "Fetch by rules", tools: ["fetch_data"] }] },
  request,
  registry,
  "rules",
);

/** Stands in for the rules reasoner (not under test): records that it was asked, and can refuse to plan. */
class StubFallback implements Reasoner {
  readonly kind = "rules" as const;
  planCalls = 0;
  synthesizeCalls = 0;
  constructor(private readonly noPlan = false) {}

  async plan(): Promise<PlanResult> {
    this.planCalls++;
    if (this.noPlan) throw new CandorError("No registered tool matches the request.", ErrorCode.NO_VALID_PLAN);
    return { plan: rulesPlan, notes: ["stub: planned by rules"] };
  }

  async synthesize(): Promise<string> {
    this.synthesizeCalls++;
    return "template answer";
  }

  async proposeRecovery(): Promise<null> {
    return null;
  }
}

// Every test must consume exactly its script: a leftover or surprise request is a failure.
const { serve } = scriptedServersPerTest();

async function setUp(
  script: ScriptedResponse[],
  opts: { maxRetries?: number; fallback?: StubFallback } & Partial<Omit<LlmReasonerOptions, "model" | "fallback">> = {},
): Promise<{ fake: FakeOpenAIServer; reasoner: LlmReasoner; fallback: StubFallback; model: BaseChatModel }> {
  const { fake, baseUrl } = await serve(script);
  const model = createChatModel({
    apiKey: "test-key",
    baseUrl,
    model: "gpt-4o-mini",
    maxRetries: opts.maxRetries ?? 0,
  });
  const fallback = opts.fallback ?? new StubFallback();
  const { maxRetries: _ignored, fallback: _f, ...rest } = opts;
  const reasoner = new LlmReasoner({ model, fallback, ...rest });
  return { fake, reasoner, fallback, model };
}

function context(extra: Partial<PlanningContext> = {}): PlanningContext {
  return { registry, lessons: [], unreliableTools: {}, ...extra };
}

describe("LlmReasoner.plan against a real ChatOpenAI", () => {
  it("(a) turns a valid structured answer into a plan, and shows the model the tools, workers and lessons", async () => {
    const { fake, reasoner, fallback } = await setUp([{ json: validPlan }]);
    const result = await reasoner.plan(
      request,
      context({ lessons: ["write_report is slow on Mondays"], unreliableTools: { fetch_data: 2 } }),
    );

    expect(result.notes).toEqual([]);
    expect(result.plan.createdBy).toBe("llm");
    expect(result.plan.confidence).toBe(0.85);
    expect(result.plan.steps.map((s) => s.id)).toEqual(["fetch", "analyze", "report"]);
    expect(result.plan.steps[0]?.params).toEqual({ topic: "sales" });
    expect(fallback.planCalls).toBe(0);

    // ChatOpenAI asks through response_format json_schema in strict mode; the fake rejects schemas strict mode would.
    const body = fake.requests[0]?.body;
    expect(body?.response_format?.type).toBe("json_schema");
    expect(body?.response_format?.json_schema).toMatchObject({ name: "plan", strict: true });
    expect(body?.tools).toBeUndefined();
    expect(body?.stream).toBe(false);

    const prompt = fake.promptOf(1);
    for (const section of ["<request>", "<tools>", "<workers>", "<lessons>", "<output_format>"])
      expect(prompt).toContain(section);
    for (const tool of ["fetch_data", "analyze_data", "write_report"]) expect(prompt).toContain(tool);
    expect(prompt).toMatch(/- general: .*Tools: fetch_data, analyze_data, write_report/);
    expect(prompt).toContain("write_report is slow on Mondays");
    expect(prompt).toContain("fetch_data failed in 2 recent runs");
    expect(prompt).toContain(request.userIntent);
  });

  it("(b) repairs malformed JSON: ChatOpenAI throws on it, so the reasoner asks again without a schema", async () => {
    const { fake, reasoner, fallback } = await setUp([sloppyPlanText, sloppyPlanText]);
    const result = await reasoner.plan(request, context());

    expect(result.plan.createdBy).toBe("llm");
    expect(result.plan.steps.map((s) => [s.id, s.dependsOn])).toEqual([
      ["fetch", []],
      ["analyze", ["fetch"]],
    ]);
    expect(fallback.planCalls).toBe(0);
    const notes = result.notes.join(" ");
    expect(notes).toMatch(/structured answer could not be parsed/);
    expect(notes).toMatch(/Asked the model again without a schema/);
    expect(notes).toMatch(/fence/);
    expect(notes).toMatch(/repaired/);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]?.body.response_format).toBeUndefined();
  });

  it("(b) reads a valid-JSON answer in another shape (seed 004's tasks/worker_type) on the second, schema-less ask", async () => {
    const seedStyle = {
      objective: "A sales report",
      tasks: [
        { id: 1, description: "Fetch sales data", worker_type: "reader", tools: ["fetch_data"], depends_on: [] },
        { id: 2, description: "Analyse the data", worker_type: "analyzer", tools: ["analyze_data"], depends_on: [1] },
      ],
    };
    const { reasoner, fallback } = await setUp([{ json: seedStyle }, { json: seedStyle }]);
    const result = await reasoner.plan(request, context());

    expect(fallback.planCalls).toBe(0);
    expect(result.plan.steps.map((s) => [s.id, s.workerType, s.dependsOn])).toEqual([
      ["1", "reader", []],
      ["2", "analyzer", ["1"]],
    ]);
    expect(result.notes[0]).toMatch(
      /could not be parsed \(it does not match the plan schema: .*steps: Invalid input.*\)\. Asked the model again/,
    );
  });

  it("(b) with function calling, repairs broken tool-call arguments from a single request", async () => {
    const brokenArgs = JSON.stringify(validPlan)
      .replace(/\]\}$/, "],}")
      .replace('"expectedOutputs":["data"]}', '"expectedOutputs":["data"],}');
    expect(() => JSON.parse(brokenArgs)).toThrow();
    const { fake, reasoner } = await setUp([{ toolCall: { name: "plan", arguments: brokenArgs } }], {
      method: "functionCalling",
    });
    const result = await reasoner.plan(request, context());

    expect(result.plan.createdBy).toBe("llm");
    expect(result.plan.steps).toHaveLength(3);
    expect(result.notes.join(" ")).toMatch(/did not match the plan schema.*repaired/);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.body.tools?.[0]?.function.name).toBe("plan");
  });

  it("(c) falls back to the rules reasoner for garbage and says why", async () => {
    const { fake, reasoner, fallback } = await setUp(["I'm sorry, I can't make plans.", "Really, no plan."]);
    const result = await reasoner.plan(request, context());

    expect(fallback.planCalls).toBe(1);
    expect(result.plan).toBe(rulesPlan);
    expect(result.notes[0]).toMatch(/could not be parsed/);
    expect(result.notes[0]).toMatch(/no JSON object: "Really, no plan\."/);
    expect(result.notes[0]).toMatch(/Used the rules planner instead\.$/);
    expect(result.notes).toContain("stub: planned by rules");
    expect(fake.requests).toHaveLength(2);
  });

  it("(d) rejects a plan with a cycle, naming the cycle, and uses the rules planner", async () => {
    const { reasoner, fallback } = await setUp([{ json: cyclicPlan }]);
    const result = await reasoner.plan(request, context());

    expect(fallback.planCalls).toBe(1);
    expect(result.plan).toBe(rulesPlan);
    expect(result.notes[0]).toMatch(
      /^The model's plan was rejected: Plan has a dependency cycle: (a → b → a|b → a → b)\..* Used the rules planner instead\.$/,
    );
  });

  it("(d) refuses a model's 5,000-step plan at once, naming the bound on steps per plan, and uses the rules planner", async () => {
    // Regression: such a plan ran for 250 s in 3.5 GB and left a database `candor threads` could no longer read.
    const huge: ModelPlan = {
      ...validPlan,
      steps: Array.from({ length: 5000 }, (_, i) => ({
        ...validPlan.steps[0]!,
        id: `s${i}`,
        dependsOn: i === 0 ? [] : [`s${i - 1}`],
      })),
    };
    const { reasoner, fallback } = await setUp([{ json: huge }]);
    const result = await reasoner.plan(request, context());

    expect(fallback.planCalls).toBe(1);
    expect(result.plan).toBe(rulesPlan);
    expect(result.notes[0]).toMatch(
      /^The model's plan was rejected: The plan has 5000 steps, more than the 1,000 steps a plan may have \(maxPlanSteps, the bound on steps per plan when the request's constraints\.maxSteps sets none; set by CANDOR_MAX_PLAN_STEPS for the CLI, buildAgentGraph's bounds\.maxPlanSteps in an app\)\..* Used the rules planner instead\.$/,
    );
  });

  it("(d) uses seed 004's one-step plan, with both reasons, when the rules planner has no plan either", async () => {
    const { reasoner, fallback } = await setUp([{ json: cyclicPlan }], { fallback: new StubFallback(true) });
    const result = await reasoner.plan(request, context());

    expect(fallback.planCalls).toBe(1);
    expect(result.plan.createdBy).toBe("fallback");
    expect(result.plan.steps).toHaveLength(1);
    expect(result.plan.confidenceReasons[0]).toMatch(/dependency cycle.*No registered tool matches the request/);
    expect(result.notes[0]).toMatch(
      /The rules planner found no plan either: No registered tool matches the request\. Using a one-step plan on the general worker\./,
    );
  });

  it("falls back when the server fails, quoting the error", async () => {
    const { reasoner, fallback } = await setUp([{ status: 500, error: "model overloaded" }]);
    const result = await reasoner.plan(request, context());

    expect(fallback.planCalls).toBe(1);
    expect(result.notes[0]).toMatch(
      /^The model could not be asked for a plan: .*model overloaded.* Used the rules planner instead\.$/,
    );
  });

  it("falls back when the model is slower than its time limit", async () => {
    const { reasoner, fallback } = await setUp([{ json: validPlan, delayMs: 10_000 }], { timeoutMs: 1000 });
    const started = Date.now();
    const result = await reasoner.plan(request, context());

    expect(Date.now() - started).toBeLessThan(5000);
    expect(fallback.planCalls).toBe(1);
    expect(result.notes[0]).toMatch(/did not answer within 1000 ms/);
  });

  it("propagates cancellation by the caller instead of falling back", async () => {
    const { fake, reasoner, fallback } = await setUp([{ json: validPlan, delayMs: 5000 }]);
    const controller = new AbortController();
    // Fire and forget: cancel once the model call is under way; the assertion below awaits the outcome.
    void fake.received(1).then(() => controller.abort());

    await expect(reasoner.plan(request, context({ signal: controller.signal }))).rejects.toThrow(/abort/i);
    expect(fallback.planCalls).toBe(0);
  });
});

describe("LlmReasoner.synthesize against a real ChatOpenAI", () => {
  const input: SynthesisInput = {
    request,
    plan: toPlan(validPlan, request, registry, "llm"),
    results: { fetch: { summary: "120 rows" }, analyze: "sales grew 4%" },
    missing: [{ id: "report", description: "Write the report", reason: "write_report timed out twice" }],
  };

  it("(e) returns the model's answer, having shown it the results and what is missing", async () => {
    const { fake, reasoner, fallback } = await setUp([
      "Sales grew 4%. The written report is missing because the tool timed out.",
    ]);
    const answer = await reasoner.synthesize(input);

    expect(answer).toBe("Sales grew 4%. The written report is missing because the tool timed out.");
    expect(fallback.synthesizeCalls).toBe(0);
    const prompt = fake.promptOf(1);
    expect(prompt).toContain("<results>");
    expect(prompt).toContain("sales grew 4%");
    expect(prompt).toContain('{"summary":"120 rows"}');
    expect(prompt).toMatch(/<missing>\n- Write the report \(report\): write_report timed out twice/);
    expect(fake.requests[0]?.body.response_format).toBeUndefined();
  });

  it("(e) falls back to the template after a server error, retrying once with createChatModel's default", async () => {
    const notes: string[] = [];
    const { fake, reasoner, fallback } = await setUp(
      [
        { status: 500, error: "internal error" },
        { status: 500, error: "internal error" },
      ],
      { maxRetries: 1, onFallback: (n) => notes.push(n) },
    );
    const answer = await reasoner.synthesize(input);

    expect(answer).toBe("template answer");
    expect(fallback.synthesizeCalls).toBe(1);
    expect(fake.requests).toHaveLength(2);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /could not write the answer \(the model call failed: .*internal error.*\); used the rules template instead/,
    );
  });
});

describe("createChatModel", () => {
  it("refuses to build a model without an API key, saying what to do", () => {
    expect(() => createChatModel({ model: "gpt-4o-mini" })).toThrow(
      /set OPENAI_API_KEY, or omit --model to use the offline rules reasoner/,
    );
    let error: unknown;
    try {
      createChatModel({ model: "gpt-4o-mini", apiKey: "" });
    } catch (e) {
      error = e;
    }
    expect(CandorError.hasCode(error, ErrorCode.CONFIGURATION)).toBe(true);
  });

  it("rejects a base URL that is not a URL", () => {
    expect(() => createChatModel({ model: "m", apiKey: "k", baseUrl: "localhost 11434" })).toThrow(/not a URL/);
  });
});

describe("the fake OpenAI server", () => {
  it("streams server-sent events that ChatOpenAI reassembles", async () => {
    const { fake, model } = await setUp(["streamed answer text"]);
    let text = "";
    for await (const chunk of await model.stream("hi")) text += chunk.text;

    expect(text).toBe("streamed answer text");
    expect(fake.requests[0]?.body.stream).toBe(true);
  });

  it("rejects schemas that json_schema strict mode would reject", () => {
    const asked = (schema: z.ZodType) => ({
      response_format: { type: "json_schema", json_schema: { strict: true, schema: z.toJSONSchema(schema) } },
    });
    expect(strictSchemaProblem(asked(z.object({ a: z.string().nullable() })))).toBeNull();
    expect(strictSchemaProblem(asked(z.object({ a: z.string().optional() })))).toMatch(/not in "required"/);
    expect(strictSchemaProblem(asked(z.object({ a: z.record(z.string(), z.string()) })))).toMatch(/free-form object/);
  });

  it("answers 500 naming the request when its script runs out", async () => {
    const fake = new FakeOpenAIServer([]);
    const { baseUrl, close } = await fake.start();
    try {
      const res = await fetch(`${baseUrl}/chat/completions`, {
        method: "POST",
        body: JSON.stringify({ model: "m", messages: [] }),
      });
      expect(res.status).toBe(500);
      expect(await res.text()).toContain("fake server: unexpected request #1");
      expect(() => fake.assertConsumed()).toThrow(/unexpected request #1/);
    } finally {
      await close();
    }
  });
});
