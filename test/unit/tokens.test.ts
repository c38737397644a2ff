import { z } from "zod";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PlanningRequest } from "../../src/domain/request.js";
import { formatUsd, tokenBudgetOf, type ModelCall, type TokenEvent } from "../../src/domain/usage.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { assertPlanFitsTokenBudget, estimatePlanTokens } from "../../src/planning/token-budget.js";
import { LlmReasoner } from "../../src/reasoning/llm.js";
import { createChatModel } from "../../src/reasoning/model.js";
import { costOf, DEFAULT_PRICES, parsePriceTable, pricesFrom } from "../../src/reasoning/prices.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { callEstimate, withUsageScope } from "../../src/reasoning/usage.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { buildReport, renderReport } from "../../src/transparency/report.js";
import { computeProgress, withTokens } from "../../src/transparency/progress.js";
import { EventPrinter } from "../../src/cli/render.js";
import { scriptedServersPerTest } from "../fakes/fake-openai-server.js";
import { planWith } from "../fakes/graph-harness.js";
import { notesToolkit } from "../fakes/notes-toolkit.js";
import { ScriptedChatModel } from "../fakes/scripted-chat-model.js";
import type { Reasoner } from "../../src/reasoning/types.js";
import { workerPrompt } from "../../prompts/worker.js";

const tmp = { dir: mkdtempSync(join(tmpdir(), "candor-tokens-")) };
afterAll(() => rmSync(tmp.dir, { recursive: true, force: true }));
const { serve } = scriptedServersPerTest();

const request = PlanningRequest.parse({ userIntent: "say hello" });
const plan = planWith([{ id: "s1", description: "Say hello", workerType: "writer", tools: ["read_note"] }]);
const synthesisInput = { request, plan, results: { s1: "hello" }, missing: [] };

function call(site: "worker" | "synthesis", input: number, output: number, taskId: string | null = null): ModelCall {
  return {
    type: "call",
    site,
    taskId,
    model: "gpt-4o-mini",
    inputTokens: input,
    outputTokens: output,
    costUsd: 0,
    at: "",
  };
}

/** A model reasoner whose worker steps are model-driven; it is never asked to plan or answer here. */
function modelReasoner(): Reasoner {
  return {
    kind: "llm",
    workerModel: { model: new ScriptedChatModel([]), maxModelCalls: 6, prompt: workerPrompt },
    plan: () => Promise.reject(new Error("not asked")),
    synthesize: () => Promise.reject(new Error("not asked")),
    proposeRecovery: () => Promise.resolve(null),
  };
}

function expectConfigurationError(f: () => unknown, message: RegExp): void {
  try {
    f();
  } catch (e) {
    expect(CandorError.hasCode(e, ErrorCode.CONFIGURATION)).toBe(true);
    expect((e as Error).message).toMatch(message);
    return;
  }
  throw new Error("expected a CONFIGURATION error");
}

describe("the price table", () => {
  it("prices a call per million tokens, a dated variant as its base model, an unknown model as '*'", () => {
    expect(costOf({ model: "gpt-4o-mini", inputTokens: 1_000_000, outputTokens: 1_000_000 }, DEFAULT_PRICES)).toBe(
      0.75,
    );
    expect(costOf({ model: "gpt-4o-mini-2024-07-18", inputTokens: 1_000_000, outputTokens: 0 }, DEFAULT_PRICES)).toBe(
      0.15,
    );
    expect(costOf({ model: "my-local-llama", inputTokens: 1_000_000, outputTokens: 0 }, DEFAULT_PRICES)).toBe(2.5);
  });

  it("reads a price file named by CANDOR_PRICES_FILE over the defaults, and CANDOR_MODEL_PRICES over both", () => {
    const file = join(tmp.dir, "prices.json");
    writeFileSync(
      file,
      JSON.stringify({ "my-local-llama": { input: 0, output: 0 }, "gpt-4o": { input: 5, output: 20 } }),
    );
    const prices = pricesFrom({
      CANDOR_PRICES_FILE: file,
      CANDOR_MODEL_PRICES: '{"gpt-4o": {"input": 3, "output": 12}}',
    });
    expect(prices["my-local-llama"]).toEqual({ input: 0, output: 0 });
    expect(prices["gpt-4o"]).toEqual({ input: 3, output: 12 });
    expect(prices["gpt-4o-mini"]).toEqual(DEFAULT_PRICES["gpt-4o-mini"]);
  });

  it("refuses a bad price file with a coded error that says where, what is wrong and how to write it", () => {
    const file = join(tmp.dir, "bad.json");
    writeFileSync(file, JSON.stringify({ "gpt-4o": { input: -1, output: 10 } }));
    expectConfigurationError(
      () => pricesFrom({ CANDOR_PRICES_FILE: file }),
      /price file ".*bad\.json" \(CANDOR_PRICES_FILE\) is not a price table: at gpt-4o\.input: a price cannot be negative\. Each model needs \{"input": n, "output": n\} in USD per million tokens/,
    );
    writeFileSync(file, "{ not json");
    expectConfigurationError(() => pricesFrom({ CANDOR_PRICES_FILE: file }), /is not JSON .*e\.g\. \{"gpt-4o-mini"/);
    expectConfigurationError(
      () => parsePriceTable('{"gpt-4o": {"input": 1, "output": 2, "cached": 0.5}}', "CANDOR_MODEL_PRICES"),
      /CANDOR_MODEL_PRICES is not a price table: at gpt-4o: /,
    );
    expectConfigurationError(
      () => pricesFrom({ CANDOR_PRICES_FILE: join(tmp.dir, "missing.json") }),
      /CANDOR_PRICES_FILE .*names ".*missing\.json", which cannot be read: it does not exist/,
    );
  });
});

describe("the usage meter on a real ChatOpenAI (the fake server reports 10 input and 10 output tokens)", () => {
  it("records the call in the scope it was made in, priced by the reasoner's table", async () => {
    const { baseUrl } = await serve(["Hello."]);
    const model = createChatModel({ apiKey: "test-key", baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
    const reasoner = new LlmReasoner({
      model,
      fallback: new RulesReasoner(),
      prices: { "gpt-4o-mini": { input: 100, output: 200 } },
    });
    const { value, calls } = await withUsageScope({ site: "synthesis", taskId: null, budget: null, history: [] }, () =>
      reasoner.synthesize(synthesisInput),
    );
    expect(value).toBe("Hello.");
    expect(calls).toEqual([
      expect.objectContaining({
        site: "synthesis",
        model: "gpt-4o-mini",
        inputTokens: 10,
        outputTokens: 10,
        costUsd: 0.003,
      }),
    ]);
  });

  it("records tool-calling and structured calls too (ChatOpenAI rebuilds the model for those)", async () => {
    // Regression: bindTools and withStructuredOutput built a new ChatOpenAI from its constructor fields, without the
    // meter, so a CLI run with a model recorded only the answer's call (1 of 5 requests).
    const { baseUrl } = await serve(["Bound.", '{"answer": "structured"}']);
    const model = createChatModel({ apiKey: "test-key", baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
    new LlmReasoner({ model, fallback: new RulesReasoner() });
    const tool = {
      type: "function" as const,
      function: { name: "noop", description: "does nothing", parameters: { type: "object", properties: {} } },
    };
    const { calls } = await withUsageScope({ site: "worker", taskId: "s1", budget: null, history: [] }, async () => {
      await model.bindTools!([tool]).invoke("go");
      await model.withStructuredOutput(z.object({ answer: z.string() }), { method: "jsonMode" }).invoke("answer");
    });
    expect(calls.map((c) => [c.site, c.taskId, c.inputTokens, c.outputTokens])).toEqual([
      ["worker", "s1", 10, 10],
      ["worker", "s1", 10, 10],
    ]);
  });

  it("does not ask the model when the call would exceed the token budget: the rules answer and say why", async () => {
    const { fake, baseUrl } = await serve([]);
    const model = createChatModel({ apiKey: "test-key", baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
    const notes: string[] = [];
    const reasoner = new LlmReasoner({ model, fallback: new RulesReasoner(), onFallback: (n) => notes.push(n) });
    const budget = { limit: 5000, used: 4000, stopped: false };
    const { calls } = await withUsageScope({ site: "synthesis", taskId: null, budget, history: [] }, () =>
      reasoner.synthesize(synthesisInput),
    );
    expect(calls).toEqual([]);
    expect(fake.requests).toHaveLength(0);
    expect(notes[0]).toMatch(
      /not asked to write the answer \(a synthesis call takes about 3500 tokens and 4000 of the 5000-token budget are used/,
    );
  });
});

describe("token estimates and the budget", () => {
  it("estimates a call from the run's calls at the same site, else from the default", () => {
    expect(callEstimate("worker", [])).toBe(1800);
    expect(
      callEstimate("worker", [call("worker", 1000, 200), call("worker", 2000, 400), call("synthesis", 1, 1)]),
    ).toBe(1800);
  });

  it("estimates nothing for a plan without a model, and model-driven steps and the answer with one", () => {
    const registry = ToolRegistry.create([notesToolkit()]);
    const driven = planWith([{ id: "count", description: "Count words", workerType: "writer", tools: [] }]);
    expect(estimatePlanTokens(driven, new RulesReasoner(), registry, []).total).toBe(0);
    const llm = modelReasoner();
    const estimate = estimatePlanTokens(driven, llm, registry, [call("synthesis", 900, 100)]);
    // 1,000 already used + 1 step × 3 calls × 1,800 + the answer as the last synthesis call took (1,000).
    expect(estimate.total).toBe(1000 + 5400 + 1000);
    // A model that reviews the answer before writing it adds that call: the default 1,500 for a review.
    const reviewing: Reasoner = { ...llm, reviewAnswer: () => Promise.resolve(null) };
    const reviewed = estimatePlanTokens(driven, reviewing, registry, [call("synthesis", 900, 100)]);
    expect(reviewed.total).toBe(1000 + 5400 + 1000 + 1500);
    expect(reviewed.parts.at(-1)).toBe("~1500 to review it");
  });

  it("counts only the steps left to run, against the limit as a person last set it", () => {
    // A plan made again mid-run keeps finished steps; a person may have raised the budget since the run began.
    const registry = ToolRegistry.create([notesToolkit()]);
    const llm = modelReasoner();
    const two = planWith([
      { id: "a", description: "Count words", workerType: "writer", tools: [], status: "done", result: "5 words" },
      { id: "b", description: "Count words again", workerType: "writer", tools: [] },
    ]);
    // 1 step left × 3 calls × 1,800 + 3,500 for the answer.
    expect(estimatePlanTokens(two, llm, registry, []).total).toBe(5400 + 3500);
    const request = PlanningRequest.parse({ userIntent: "count words", constraints: { tokenBudget: 5000 } });
    expect(() => assertPlanFitsTokenBudget(two, request, llm, registry, [])).toThrow(/token budget is 5000/);
    const raised: TokenEvent = {
      type: "budget",
      tokenBudget: 9000,
      stopped: false,
      by: "cli",
      at: "2026-01-01T00:00:00Z",
    };
    expect(() => assertPlanFitsTokenBudget(two, request, llm, registry, [raised])).not.toThrow();
  });

  it("takes the latest budget change: a raise replaces the limit, a stop stops", () => {
    const events: TokenEvent[] = [
      call("worker", 3000, 0),
      { type: "budget", tokenBudget: 9000, stopped: false, by: null, at: "" },
      call("worker", 1000, 0),
    ];
    expect(tokenBudgetOf(4000, events)).toEqual({ limit: 9000, used: 4000, stopped: false });
    expect(tokenBudgetOf(undefined, [])).toBeNull();
  });
});

describe("figures shown to people", () => {
  it("shows a tiny cost with two significant digits, never as $0.0000", () => {
    expect(formatUsd(0.0000075)).toBe("$0.0000075");
    expect(formatUsd(0.0042)).toBe("$0.0042");
    expect(formatUsd(12.345)).toBe("$12.35");
  });

  it("progress carries the tokens so far and the CLI prints them; without calls it says nothing of tokens", () => {
    const done = planWith([{ id: "s1", description: "x", workerType: "writer", tools: [], status: "done" }]);
    const p = computeProgress(done, 10, { taskId: "s1", status: "SUCCESS" });
    expect(withTokens(p, [])).toEqual(p);
    const withCalls = withTokens(p, [{ ...call("worker", 1200, 300), costUsd: 0.0012 }]);
    const [line] = new EventPrinter("candor").lines({ type: "progress", progress: withCalls });
    expect(line).toMatch(
      /Progress: 1\/1 steps \(100%\) · model so far: 1,500 tokens \(1,200 in, 300 out\) · \$0\.0012/,
    );
    expect(new EventPrinter("candor").lines({ type: "progress", progress: p })[0]).not.toMatch(/token/);
  });

  it("the report totals by call site and per step", () => {
    const report = buildReport({
      request: "x",
      plan,
      feedback: [],
      revisions: [],
      confidenceHistory: [],
      status: "completed",
      failureReason: null,
      lessons: [],
      startedAt: new Date().toISOString(),
      tokens: [
        { ...call("worker", 1000, 100, "s1"), costUsd: 0.001 },
        { ...call("synthesis", 2000, 500), costUsd: 0.002 },
      ],
      tokenBudget: 10000,
    });
    expect(report.tasks[0]!.tokens).toEqual({ calls: 1, inputTokens: 1000, outputTokens: 100, costUsd: 0.001 });
    expect(renderReport(report)).toContain(
      "Model: 2 call(s) · 3,600 tokens (3,000 in, 600 out) · $0.0030 of a 10,000-token budget — worker 1 call(s), 1,100 tokens; synthesis 1 call(s), 2,500 tokens",
    );
  });
});
