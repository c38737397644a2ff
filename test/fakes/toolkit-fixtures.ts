import { z } from "zod";
import { applyFeedback } from "../../src/execution/evidence.js";
import { ExecutionFeedback, type ExecutionFeedbackInput } from "../../src/domain/feedback.js";
import { Plan, TaskStep, type PlanInput, type TaskStepInput } from "../../src/domain/plan.js";
import { PlanningRequest, type PlanningRequestInput } from "../../src/domain/request.js";
import { planWithRules } from "../../src/planning/rules-planner.js";
import { dependencyInputs, markDispatched, readySteps, settleBlockedSteps } from "../../src/planning/schedule.js";
import type { FailureContext } from "../../src/domain/feedback.js";
import { buildFailureContext } from "../../src/replanning/context.js";
import { retryDifferentAgent, skip } from "../../src/replanning/strategies/index.js";
import type { StrategyInput, StrategyOutcome } from "../../src/replanning/strategies/types.js";
import type { ConfidencePoint, PlanRevision } from "../../src/domain/revision.js";
import { parseFaultSpecs, withFaults } from "../../src/tools/faults.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { runStep } from "../../src/execution/run-step.js";
import type { ToolContext, ToolSpec, Toolkit, WorkerType } from "../../src/tools/types.js";
import { DEMO_REQUEST, travelToolkit } from "../../examples/travel/index.js";

/**
 * Small builders for unit tests of the pure planning/replanning/transparency code. Nothing here replaces the code
 * under test: plans and feedback are parsed through the real zod schemas, registries are built by the real
 * ToolRegistry, and the travel helpers run the real travel tools.
 */

/** The value a function threw (or a failure if it did not throw), for asserting on codes and messages. */
export function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error("expected the call to throw, but it returned");
}

export function request(userIntent: string, constraints: PlanningRequestInput["constraints"] = {}): PlanningRequest {
  return PlanningRequest.parse({ userIntent, constraints });
}

export function step(input: Partial<TaskStepInput> & { id: string }): TaskStep {
  return TaskStep.parse({ description: `step ${input.id}`, workerType: "worker", ...input });
}

export function plan(
  steps: readonly (Partial<TaskStepInput> & { id: string })[],
  overrides: Partial<PlanInput> = {},
): Plan {
  return Plan.parse({
    planId: "plan-test",
    objective: "test objective",
    confidence: 0.85,
    ...overrides,
    steps: steps.map(step),
  });
}

/**
 * A dispatch's feedback. A success carries evidence (the tool whose call it was), as every worker's success does
 * (src/execution/evidence.ts); pass `evidence: null` for one that claims success without it.
 */
export function feedback(input: Partial<ExecutionFeedbackInput> & { taskId: string }): ExecutionFeedback {
  const type = input.feedbackType ?? "SUCCESS";
  const succeeded = type === "SUCCESS" || type === "PARTIAL_SUCCESS";
  const evidence = succeeded ? { tool: input.tool ?? "fixture_tool" } : null;
  return ExecutionFeedback.parse({
    feedbackType: "SUCCESS",
    durationMs: 10,
    at: "2025-01-01T00:00:00.000Z",
    evidence,
    ...input,
  });
}

/** A failed feedback record whose class and type follow from the message the way a worker would record them. */
export function failure(taskId: string, error: string, extra: Partial<ExecutionFeedbackInput> = {}): ExecutionFeedback {
  return feedback({ taskId, feedbackType: "FAILURE", errors: [error], failureClass: "unknown", ...extra });
}

/** A tool whose behaviour the test chooses, counting its calls and keeping what each call received. */
export interface CountingTool {
  spec: ToolSpec;
  calls: { args: unknown; ctx: ToolContext }[];
}

export function countingTool(
  name: string,
  options: Partial<Omit<ToolSpec, "name" | "run">> & {
    run?: (args: unknown, ctx: ToolContext, call: number) => Promise<unknown>;
  } = {},
): CountingTool {
  const calls: CountingTool["calls"] = [];
  const { run, ...rest } = options;
  const spec: ToolSpec = {
    name,
    description: `${name} tool`,
    category: "general",
    keywords: [],
    consumes: [],
    produces: [name],
    sideEffect: "none",
    needsApproval: false,
    schema: z.looseObject({}),
    estimates: { durationMs: 10, cost: 0.5 },
    ...rest,
    run: async (args, ctx) => {
      calls.push({ args, ctx });
      return run ? run(args, ctx, calls.length) : { ok: true, from: name };
    },
  };
  return { spec, calls };
}

export function registryOf(tools: readonly ToolSpec[], workers: readonly WorkerType[]): ToolRegistry {
  return ToolRegistry.create([{ name: "test", tools: [...tools], workers: [...workers] }]);
}

/** The travel demo's tools with no latency, optionally with injected faults (`tool=kind[*N]`). */
export function travelKit(faults: readonly string[] = []): Toolkit {
  const kit = travelToolkit({ latencyMs: 0 });
  return faults.length === 0 ? kit : (withFaults([kit], parseFaultSpecs(faults))[0] as Toolkit);
}

export function travelRegistry(faults: readonly string[] = []): ToolRegistry {
  return ToolRegistry.create([travelKit(faults)]);
}

/** The rules plan for a travel request (the demo request by default). */
export function travelPlan(text: string = DEMO_REQUEST, registry: ToolRegistry = travelRegistry()): Plan {
  return planWithRules(request(text), registry);
}

/** Sets step fields by id (e.g. statuses), leaving the others untouched. */
export function withSteps(p: Plan, changes: Record<string, Partial<TaskStep>>): Plan {
  for (const id of Object.keys(changes))
    if (!p.steps.some((s) => s.id === id)) throw new Error(`plan has no step ${id}`);
  return { ...p, steps: p.steps.map((s) => (changes[s.id] ? { ...s, ...changes[s.id] } : s)) };
}

/** Marks a step as failed on its first dispatch and returns the plan with the matching feedback record. */
export function failStep(
  p: Plan,
  id: string,
  error: string,
  extra: Partial<ExecutionFeedbackInput> = {},
): { plan: Plan; feedback: ExecutionFeedback } {
  const s = p.steps.find((x) => x.id === id);
  if (!s) throw new Error(`plan has no step ${id}`);
  const dispatch = Math.max(1, s.dispatches);
  return {
    plan: withSteps(p, { [id]: { status: "failed", dispatches: dispatch, attempts: 1 } }),
    feedback: failure(id, error, {
      dispatch,
      tool: s.tools[0] ?? null,
      workerType: s.workerType,
      params: s.params,
      ...extra,
    }),
  };
}

export function strategyInput(
  p: Plan,
  failedId: string,
  all: readonly ExecutionFeedback[],
  registry: ToolRegistry,
  revisionNumber = 1,
): StrategyInput {
  const s = p.steps.find((x) => x.id === failedId);
  if (!s) throw new Error(`plan has no step ${failedId}`);
  const ctx: FailureContext = buildFailureContext(s, all);
  return { plan: p, failure: ctx, registry, feedback: all, revisionNumber };
}

/**
 * Runs a plan's ready steps wave by wave with the real runStep and the real scheduling functions, until nothing is
 * ready: a tiny executor without the graph, so strategy tests can check that a revised plan really works.
 */
export async function runWaves(
  p: Plan,
  registry: ToolRegistry,
  history: ExecutionFeedback[] = [],
): Promise<{ plan: Plan; feedback: ExecutionFeedback[] }> {
  let current = p;
  const all = [...history];
  const inputsOf = (s: TaskStep) => registry.inputsOf(s);
  for (let wave = 0; wave < 20; wave++) {
    const settled = settleBlockedSteps(current, inputsOf);
    current = settled.plan;
    // As execute does: a step skipped because a dependency failed is recorded as DEPENDENCY_FAILURE feedback.
    for (const { step: s, reason, dependencyFailure } of settled.skipped) {
      if (!dependencyFailure) continue;
      all.push(
        feedback({
          taskId: s.id,
          feedbackType: "DEPENDENCY_FAILURE",
          errors: [reason],
          failureClass: "dependency_failed",
          durationMs: 0,
          attempt: 0,
          dispatch: s.dispatches,
          workerType: s.workerType,
          tool: s.tools[0] ?? null,
        }),
      );
    }
    const ready = readySteps(current, inputsOf);
    if (ready.length === 0) return { plan: current, feedback: all };
    current = markDispatched(
      current,
      ready.map((s) => s.id),
      inputsOf,
    );
    const running = current.steps.filter((s) => ready.some((r) => r.id === s.id));
    const results = await Promise.all(
      running.map((s) => runStep({ step: s, inputs: dependencyInputs(current, s), registry, dispatch: s.dispatches })),
    );
    all.push(...results);
    current = applyFeedback(current, all);
  }
  throw new Error("runWaves did not settle in 20 waves");
}

/** A trip request without a budget, so the demo's searches fit and the only failures are the injected ones. */
export const NO_BUDGET_REQUEST = "Plan a 3-day trip from Madrid to Paris for 2 people";

export interface RunRecord {
  plan: Plan;
  feedback: ExecutionFeedback[];
  revisions: PlanRevision[];
  confidenceHistory: ConfidencePoint[];
}

/**
 * A real run of the travel plan in which the primary flight search hangs: the flight step times out, the chosen
 * recovery (RETRY_DIFFERENT_AGENT, or SKIP when `recover` is false) is applied, and the plan runs to the end.
 */
export async function flightTimeoutRun(recover: boolean): Promise<RunRecord> {
  const faulty = travelRegistry(["search_flights=timeout"]);
  const start = withSteps(travelPlan(NO_BUDGET_REQUEST, faulty), {
    flight: { timeoutMs: 30, retry: { maxAttempts: 1, backoffMs: [0] } },
  });
  const first = await runWaves(start, faulty);
  const strategy = recover ? retryDifferentAgent : skip;
  const outcome = strategy(strategyInput(first.plan, "flight", first.feedback, faulty));
  if (!outcome.applies) throw new Error(`expected the strategy to apply: ${outcome.reason}`);
  const second = await runWaves(outcome.plan, faulty, first.feedback);
  return {
    plan: second.plan,
    feedback: second.feedback,
    revisions: [outcome.revision],
    confidenceHistory: [
      { at: "2025-01-01T00:00:00.000Z", value: start.confidence, reason: "initial plan (rules)" },
      {
        at: "2025-01-01T00:00:01.000Z",
        value: outcome.revision.confidenceAfter,
        reason: `rev_1 ${outcome.revision.strategy} for flight`,
      },
    ],
  };
}

/** The outcome of a strategy that must apply; fails the test with the strategy's own reason when it does not. */
export function applied(outcome: StrategyOutcome) {
  if (!outcome.applies) throw new Error(`expected the strategy to apply, but: ${outcome.reason}`);
  return outcome;
}

/** The reason a strategy gave for not applying; fails the test when it applied. */
export function refused(outcome: StrategyOutcome): string {
  if (outcome.applies)
    throw new Error(`expected the strategy not to apply, but it made ${outcome.revision.changes.join("; ")}`);
  return outcome.reason;
}

/** A step by id, failing with the ids the plan has. */
export function stepOf(p: Plan, id: string): TaskStep {
  const found = p.steps.find((s) => s.id === id);
  if (!found) throw new Error(`plan has no step ${id}; it has ${p.steps.map((s) => s.id).join(", ")}`);
  return found;
}
