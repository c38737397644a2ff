import { MemorySaver } from "@langchain/langgraph";
import { buildAgentGraph, RECURSION_LIMIT } from "../graphs/agent.js";
import type { ExecutionFeedback, FailureClass } from "../src/domain/feedback.js";
import type { Plan, PlanDefinition, PlanRuns } from "../src/domain/plan.js";
import { planOf } from "../src/domain/plan-state.js";
import type { RunSettings } from "../src/domain/request.js";
import type { StrategyType } from "../src/domain/revision.js";
import { LlmReasoner } from "../src/reasoning/llm.js";
import { createChatModel } from "../src/reasoning/model.js";
import { RulesReasoner } from "../src/reasoning/rules.js";
import type { PlanResult } from "../src/reasoning/types.js";
import { buildFailureContext } from "../src/replanning/context.js";
import { recoverOrSkip } from "../src/replanning/recover.js";
import { nextFailedStep, selectStrategy } from "../src/replanning/select.js";
import type { ToolRegistry } from "../src/tools/registry.js";
import { FixedPlanReasoner } from "./fixtures.js";
import { CountingOpenAIServer } from "./fake-openai.js";
import { registryFor, SCENARIOS, type Scenario } from "./scenarios.js";
import { summarize, type Summary } from "./stats.js";

/** The graph state at the moment select_strategy is about to run: the exact input of the rules path. */
export interface Snapshot {
  scenario: Scenario;
  cls: FailureClass;
  taskId: string;
  plan: Plan;
  feedback: ExecutionFeedback[];
  settings: RunSettings;
  revisionCount: number;
  registry: ToolRegistry;
}

/**
 * Runs a scenario through the real graph (rules reasoner, fixed plan), pausing before every select_strategy, and
 * keeps each paused state: realistic failures, with the plan, feedback history and registry the graph really had.
 */
export async function captureSnapshots(scenario: Scenario): Promise<Snapshot[]> {
  const toolkits = scenario.toolkits();
  const registry = registryFor(toolkits);
  const plan = scenario.plan(registry);
  const app = buildAgentGraph({ toolkits, reasoner: new FixedPlanReasoner(plan) })
    .compile({ checkpointer: new MemorySaver(), interruptBefore: ["select_strategy"] })
    .withConfig({ recursionLimit: RECURSION_LIMIT });
  const config = { configurable: { thread_id: `snap-${scenario.cls}-${Math.random().toString(16).slice(2)}` } };
  const out: Snapshot[] = [];
  await app.invoke({ request: { userIntent: scenario.request } }, config);
  for (let i = 0; i < 10; i++) {
    const state = await app.getState(config);
    if (!state.next.includes("select_strategy")) break;
    const values = state.values as {
      plan: PlanDefinition;
      runs: PlanRuns | null;
      feedback: ExecutionFeedback[];
      settings: RunSettings;
      revisionCount: number;
    };
    const v = { ...values, plan: planOf(values)! };
    const failed = nextFailedStep(v.plan);
    if (failed) {
      const ctx = buildFailureContext(failed, v.feedback);
      out.push({
        scenario,
        cls: ctx.failureClass,
        taskId: failed.id,
        plan: v.plan,
        feedback: v.feedback,
        settings: v.settings,
        revisionCount: v.revisionCount,
        registry,
      });
    }
    await app.invoke(null, config);
  }
  return out;
}

export interface SelectionTiming {
  cls: FailureClass;
  scenario: string;
  taskId: string;
  /** What selectStrategy picked, and the strategy of the revision recoverOrSkip built. */
  chosen: StrategyType | "escalate";
  applied: StrategyType | "escalate";
  summary: Summary;
}

/** Times selectStrategy + recoverOrSkip (both pure) on one snapshot, `iterations` times after a short warm-up. */
export function timeSelection(s: Snapshot, iterations: number): SelectionTiming {
  const args = {
    plan: s.plan,
    feedback: s.feedback,
    settings: s.settings,
    revisionCount: s.revisionCount,
    registry: s.registry,
  };
  let chosen: StrategyType | "escalate" = "escalate";
  let applied: StrategyType | "escalate" = "escalate";
  const once = () => {
    const sel = selectStrategy(args);
    if (!sel) throw new Error(`no failed step in snapshot of ${s.cls}`);
    if (sel.kind === "strategy") {
      const outcome = recoverOrSkip(sel.strategy, { ...args, taskId: sel.taskId });
      chosen = sel.strategy;
      applied = outcome.applies ? outcome.revision.strategy : "SKIP";
    }
  };
  for (let i = 0; i < 20; i++) once();
  const xs: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    once();
    xs.push(performance.now() - t0);
  }
  return { cls: s.cls, scenario: s.scenario.what, taskId: s.taskId, chosen, applied, summary: summarize(xs) };
}

/** The first snapshot of each scenario whose failure has the scenario's class (the failure it is about). */
export async function selectionBench(iterations: number): Promise<SelectionTiming[]> {
  const rows: SelectionTiming[] = [];
  for (const scenario of SCENARIOS) {
    const snaps = await captureSnapshots(scenario);
    const snap = snaps.find((s) => s.cls === scenario.cls);
    if (!snap)
      throw new Error(
        `scenario ${scenario.cls} produced no ${scenario.cls} failure (got ${snaps.map((s) => s.cls).join(", ") || "none"})`,
      );
    rows.push(timeSelection(snap, iterations));
  }
  return rows;
}

/**
 * The LlmReasoner with a model behind the counting fake server, except that plan() returns the scenario's fixed
 * plan: a model plan would carry default step limits (30 s, two attempts) and could not make each class fail on
 * cue. Every other judgement (recovery proposals, the final answer) goes through the LlmReasoner as in production.
 */
class FixedPlanLlmReasoner extends LlmReasoner {
  constructor(
    private readonly fixed: Plan,
    opts: ConstructorParameters<typeof LlmReasoner>[0],
  ) {
    super(opts);
  }
  override async plan(): Promise<PlanResult> {
    return { plan: this.fixed, notes: [] };
  }
}

export interface ModelCallRow {
  cls: FailureClass;
  what: string;
  /** Failures replanning handled in the run (one revision each), with their class and strategy. */
  handled: { cls: FailureClass; strategy: StrategyType; recovered: boolean }[];
  /** Requests per kind across all runs of the scenario. */
  plan: number;
  synthesis: number;
  other: number;
  runs: number;
  status: string;
  /** Who made the plan the run executed ("llm" when the fake's plan was accepted). */
  planBy: string;
}

/** The scenario's plan as a model would send it (ModelPlan: params as a JSON string). */
export function asModelPlan(plan: Plan): unknown {
  return {
    objective: plan.objective,
    contextSummary: null,
    confidence: plan.confidence,
    steps: plan.steps.map((s) => ({
      id: s.id,
      description: s.description,
      workerType: s.workerType,
      tools: s.tools,
      paramsJson: JSON.stringify(s.params),
      dependsOn: s.dependsOn,
      expectedOutputs: s.expectedOutputs,
    })),
    // The model's understanding record (strict mode: values as text): the scenario plan's own, or, for a plan made
    // without one, the whole request as one part its steps serve, as a model answering a one-line task would say.
    understanding:
      plan.understanding.parts.length === 0
        ? {
            parts: [
              {
                text: plan.objective,
                description: plan.objective,
                kind: "task",
                status: "served",
                stepIds: plan.steps.map((s) => s.id),
                why: null,
              },
            ],
            values: [],
            assumptions: [],
            changes: [],
          }
        : {
            parts: plan.understanding.parts.map((p) => ({
              text: p.text,
              description: p.description,
              kind: p.kind,
              status: p.status,
              stepIds: p.stepIds,
              why: p.why,
            })),
            values: plan.understanding.values.map((v) => ({ name: v.name, value: String(v.value), source: v.source })),
            assumptions: plan.understanding.assumptions.map((a) => ({
              name: a.name,
              value: String(a.value),
              why: a.why,
            })),
            changes: plan.understanding.changes.map((c) => ({
              name: c.name,
              from: String(c.from),
              to: String(c.to),
              why: c.why,
            })),
          },
  };
}

/**
 * `fixed-plan`: FixedPlanLlmReasoner (plan() returns the scenario's plan; everything else through the model).
 * `llm-plan`: the plain LlmReasoner, with the fake answering the planning request with the scenario's plan; the
 * plan then carries the model path's default step limits (30 s, two attempts), so the hanging-call timeout
 * scenario is left out of this mode.
 */
export async function modelCallBench(runs: number, mode: "fixed-plan" | "llm-plan"): Promise<ModelCallRow[]> {
  const fake = new CountingOpenAIServer();
  const server = await fake.start();
  const rows: ModelCallRow[] = [];
  try {
    for (const scenario of SCENARIOS) {
      if (mode === "llm-plan" && scenario.cls === "timeout") continue;
      fake.reset();
      let planBy = "";
      let handled: ModelCallRow["handled"] = [];
      let status = "";
      for (let r = 0; r < runs; r++) {
        const toolkits = scenario.toolkits();
        const registry = registryFor(toolkits);
        const plan = scenario.plan(registry);
        const model = createChatModel({
          apiKey: "bench-key",
          baseUrl: server.baseUrl,
          model: "bench-model",
          maxRetries: 0,
        });
        fake.planJson = asModelPlan(plan);
        const opts = { model, fallback: new RulesReasoner(), timeoutMs: 5_000 };
        const reasoner = mode === "fixed-plan" ? new FixedPlanLlmReasoner(plan, opts) : new LlmReasoner(opts);
        const app = buildAgentGraph({ toolkits, reasoner })
          .compile({ checkpointer: new MemorySaver() })
          .withConfig({ recursionLimit: RECURSION_LIMIT });
        const final = await app.invoke(
          { request: { userIntent: scenario.request } },
          { configurable: { thread_id: `calls-${scenario.cls}-${r}` } },
        );
        const finalPlan = planOf(final)!;
        const done = (id: string) => finalPlan.steps.find((s) => s.id === id)?.status === "done";
        handled = (
          final.revisions as {
            strategy: StrategyType;
            failureClass: FailureClass;
            newStepIds: string[];
            modifiedStepIds: string[];
          }[]
        ).map((rev) => {
          const touched = [...rev.newStepIds, ...rev.modifiedStepIds];
          return {
            cls: rev.failureClass,
            strategy: rev.strategy,
            recovered: rev.strategy !== "SKIP" && touched.length > 0 && touched.every(done),
          };
        });
        status = String(final.status);
        planBy = mode === "fixed-plan" ? "fixed" : String((final.plan as Plan).createdBy);
      }
      rows.push({
        cls: scenario.cls,
        what: scenario.what,
        handled,
        plan: fake.counts.plan,
        synthesis: fake.counts.synthesis,
        other: fake.counts.other,
        runs,
        status,
        planBy,
      });
    }
  } finally {
    await server.close();
  }
  return rows;
}
