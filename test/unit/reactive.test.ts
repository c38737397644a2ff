import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defaultStateSettings, resolveRunSettings } from "../../src/domain/config.js";
import { checkReactive, RunFlags, settingsFromFlags } from "../../src/cli/options.js";
import { PlanningRequest, RunSettings } from "../../src/domain/request.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { fallbackPlan } from "../../src/planning/parse.js";
import { planWith } from "../fakes/graph-harness.js";
import { isReactive } from "../../src/domain/plan.js";
import { reactiveFallback, reactiveNotification, reactivePlan, reactiveReading } from "../../src/execution/reactive.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { defineTool } from "../../src/tools/types.js";

const request = PlanningRequest.parse({ userIntent: "summarise README.md", userContext: { userId: "u" } });
const failed = (code: ErrorCode) => ({ kind: "error" as const, error: new CandorError("it failed.", code) });

describe("reactiveFallback: when planning's outcome sends the run to reactive mode", () => {
  it("a planning failure with a worker model: reactive, with the planner's reason", () => {
    for (const code of [ErrorCode.NO_VALID_PLAN, ErrorCode.MODEL_OUTPUT, ErrorCode.PLAN_CYCLE]) {
      expect(reactiveFallback(failed(code), true)).toEqual({
        ok: true,
        value: { kind: "planning_failed", why: "it failed." },
      });
    }
  });

  it("a refusal is not a planning failure, so reactive mode does not get around it", () => {
    for (const code of [ErrorCode.INSUFFICIENT_RESOURCES, ErrorCode.INVALID_REQUEST, ErrorCode.CONFIGURATION]) {
      const r = reactiveFallback(failed(code), true);
      expect(r.ok).toBe(false);
      expect(!r.ok && r.reason).toContain(`${code} is a refusal`);
    }
  });

  it("seed 004's one-step fallback plan is a planning failure; a real plan is not", () => {
    const fallback = fallbackPlan(request, "The model's plan was rejected.");
    expect(reactiveFallback({ kind: "plan", plan: fallback }, true)).toEqual({
      ok: true,
      value: { kind: "planning_failed", why: "The model's plan was rejected." },
    });
    const real = planWith([{ id: "s1", description: "read it", workerType: "reader", tools: ["read_file"] }]);
    expect(reactiveFallback({ kind: "plan", plan: real }, true)).toEqual({
      ok: false,
      reason: "planning produced a plan",
    });
  });

  it("without a worker model nothing changes: neither a failure nor the fallback plan goes reactive", () => {
    expect(reactiveFallback(failed(ErrorCode.NO_VALID_PLAN), false).ok).toBe(false);
    expect(reactiveFallback({ kind: "plan", plan: fallbackPlan(request, "no plan") }, false).ok).toBe(false);
  });
});

describe("reactivePlan", () => {
  it("is one general step naming no tool (so its loop gets every tool), expecting the answer, marked reactive", () => {
    const plan = reactivePlan(request, { kind: "asked" });
    expect(isReactive(plan)).toBe(true);
    expect(plan.steps).toHaveLength(1);
    expect(plan.steps[0]).toMatchObject({
      id: "reactive",
      description: "summarise README.md",
      workerType: "general",
      tools: [],
      expectedOutputs: [],
    });
    expect(plan.contextSummary).toMatch(/^Reactive mode was asked for/);
  });
});

describe("settings.planner as a run setting", () => {
  it("comes from the assistant's context or configurable when the input leaves it out, and defaults to true", () => {
    expect(resolveRunSettings({ state: defaultStateSettings() }).settings.planner).toBe(true);
    const fromContext = resolveRunSettings({ state: defaultStateSettings(), context: { planner: false } });
    expect(fromContext.settings.planner).toBe(false);
    expect(fromContext.sources.planner).toBe("assistant");
    const fromConfigurable = resolveRunSettings({ state: defaultStateSettings(), configurable: { planner: false } });
    expect(fromConfigurable.settings.planner).toBe(false);
  });

  it("a value that is not a boolean is refused with a coded error naming it", () => {
    expect(() => resolveRunSettings({ state: defaultStateSettings(), context: { planner: "no" } })).toThrow(
      expect.objectContaining({ code: ErrorCode.CONFIGURATION, message: expect.stringContaining('planner is "no"') }),
    );
  });
});

describe("--reactive at the CLI boundary (run and submit)", () => {
  const flags = RunFlags.parse({ reactive: true });

  it("sets settings.planner false, and nothing else", () => {
    expect(settingsFromFlags(flags)).toEqual({ ...RunSettings.parse({}), planner: false });
    expect(settingsFromFlags(RunFlags.parse({})).planner).toBe(true);
  });

  it("is refused without a model, or with model-driven workers turned off, saying what to do", () => {
    const rules = { kind: "rules" as const, model: null };
    const llm = { kind: "llm" as const, model: "m" };
    expect(() => checkReactive(flags, rules, {})).toThrow(
      expect.objectContaining({ code: ErrorCode.CONFIGURATION, message: expect.stringContaining("Pass --model") }),
    );
    expect(() => checkReactive(flags, llm, { CANDOR_MAX_MODEL_CALLS: 0 })).toThrow(/CANDOR_MAX_MODEL_CALLS is 0/);
    expect(() => checkReactive(flags, llm, {})).not.toThrow();
    expect(() => checkReactive(RunFlags.parse({}), rules, {})).not.toThrow();
  });
});

/** Two tools the offline reader plans by keyword: rates, then a conversion built on them. */
function ratesRegistry(): ToolRegistry {
  const tool = (name: string, keywords: string[], consumes: string[], produces: string[]) =>
    defineTool({
      name,
      description: `${name} tool`,
      category: "money",
      keywords,
      consumes,
      produces,
      sideEffect: "none",
      needsApproval: false,
      schema: z.looseObject({}),
      estimates: { durationMs: 1, cost: 0 },
      run: async () => Promise.resolve({ ok: true }),
    });
  return ToolRegistry.create([
    {
      name: "money",
      tools: [
        tool("fetch_rates", ["rates"], [], ["rates"]),
        tool("convert_amount", ["convert"], ["rates"], ["conversion"]),
      ],
      workers: [{ name: "teller", description: "Converts money", categories: ["money"] }],
    },
  ]);
}

describe("reactiveReading: what a reactive run must produce before it is done", () => {
  const ask = (text: string) => PlanningRequest.parse({ userIntent: text });

  it("is what the offline reader's plan of the request ends in, not every step on the way", () => {
    expect(reactiveReading(ask("convert 10 EUR with today's rates"), ratesRegistry()).requires).toEqual(["conversion"]);
    expect(reactiveReading(ask("show today's rates"), ratesRegistry()).requires).toEqual(["rates"]);
  });

  it("is nothing when the reader finds no tool for the request: one successful call is then the evidence", () => {
    expect(reactiveReading(ask("what's the weather tomorrow"), ratesRegistry())).toEqual({
      requires: [],
      values: [],
      changes: [],
    });
  });

  it("becomes the reactive step's expected outputs, said in the notification before it runs", () => {
    const plan = reactivePlan(
      ask("convert 10 EUR"),
      { kind: "asked" },
      { requires: ["conversion"], values: [], changes: [] },
    );
    expect(plan.steps[0]!.expectedOutputs).toEqual(["conversion"]);
    const told = reactiveNotification(plan, { kind: "asked" }, 2);
    expect(told.message).toContain("It is done only when successful tool calls produce conversion");
    // Nothing read: said, not left out.
    const unread = reactiveNotification(
      reactivePlan(ask("what's the weather"), { kind: "asked" }),
      { kind: "asked" },
      2,
    );
    expect(unread.message).toContain("found no tool for the request, so what it asks for is not checked");
  });
});
