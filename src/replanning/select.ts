import type { ExecutionFeedback, FailureClass } from "../domain/feedback.js";
import type { FailureEscalationRequest } from "../domain/approval.js";
import type { Plan } from "../domain/plan.js";
import type { RunSettings } from "../domain/request.js";
import type { StrategyType } from "../domain/revision.js";
import type { ToolRegistry } from "../tools/registry.js";
import { buildFailureContext, type FailureContext } from "./context.js";
import { STRATEGIES, type StrategyInput } from "./strategies/index.js";

/** Strategies to try for each failure class, best first (seed 000 scenario 3, seed 003). SKIP always ends the list. */
export const STRATEGY_PREFERENCES: Record<FailureClass, readonly StrategyType[]> = {
  timeout: ["RETRY_DIFFERENT_AGENT", "SKIP"],
  agent_unavailable: ["RETRY_DIFFERENT_AGENT", "SKIP"],
  too_complex: ["DECOMPOSE", "SKIP"],
  constraint_violated: ["ADJUST_PARAMETERS", "SKIP"],
  dependency_failed: ["FIX_DEPENDENCIES", "SKIP"],
  resource_unavailable: ["FIND_WORKAROUND", "RETRY_DIFFERENT_AGENT", "SKIP"],
  invalid_parameters: ["RETRY_WITH_PARAMS", "SKIP"],
  wrong_tool: ["SWAP_TOOL", "RETRY_DIFFERENT_AGENT", "SKIP"],
  policy_blocked: ["SKIP"],
  unknown: ["RETRY_DIFFERENT_AGENT", "SKIP"],
};

export interface StrategyChoice {
  kind: "strategy";
  strategy: StrategyType;
  taskId: string;
  failureClass: FailureClass;
  /** Why this strategy, including the ones passed over and why. */
  reasoning: string;
}

export interface Escalation {
  kind: "escalate";
  request: FailureEscalationRequest;
}

export type Selection = StrategyChoice | Escalation;

/** The failed step replanning handles next: the earliest in plan order. */
export function nextFailedStep(plan: Plan) {
  return plan.steps.filter((s) => s.status === "failed").sort((a, b) => a.order - b.order)[0];
}

const ESCALATION_DECISIONS = ["skip", "retry", "abort"];

function escalate(kind: FailureEscalationRequest["kind"], plan: Plan, failure: FailureContext, revisionCount: number, reason: string, suggestions: string[]): Escalation {
  return {
    kind: "escalate",
    request: {
      kind,
      planId: plan.planId,
      taskId: failure.step.id,
      failureCount: failure.failureCount,
      revisionCount,
      confidence: plan.confidence,
      errors: failure.history.map((f) => f.errors[f.errors.length - 1] ?? "unknown error"),
      reason,
      suggestedActions: suggestions,
      decisions: ESCALATION_DECISIONS,
      question: `${reason} Skip ${failure.step.id} and finish the rest, retry once more, or abort the run?`,
    },
  };
}

/**
 * Decides what happens to the next failed step: escalate to a human when a cap is hit (revisions, failures of
 * the step, confidence), else the first strategy in the class's preference list that applies.
 */
export function selectStrategy(args: { plan: Plan; feedback: readonly ExecutionFeedback[]; settings: RunSettings; revisionCount: number; registry: ToolRegistry }): Selection | null {
  const { plan, feedback, settings, revisionCount, registry } = args;
  const step = nextFailedStep(plan);
  if (!step) return null;
  const failure = buildFailureContext(step, feedback);
  const errors = failure.history.map((f) => f.errors[f.errors.length - 1]).filter(Boolean).slice(-3).join("; ");

  if (revisionCount >= settings.maxRevisions) {
    return escalate(
      "max_revisions",
      plan,
      failure,
      revisionCount,
      `Plan ${plan.planId} exceeded ${settings.maxRevisions} revisions; latest errors: ${errors}.`,
      ["Manual intervention: fix the cause (service, parameters) and retry", "Change approach: skip this step or rephrase the request"],
    );
  }
  if (failure.failureCount >= settings.maxStepFailures) {
    return escalate(
      "step_failures",
      plan,
      failure,
      revisionCount,
      `${step.id} has failed ${failure.failureCount} times (${errors}).`,
      ["Manual intervention: check the service behind " + (failure.tool ?? "the tool"), "Change approach: skip the step or give it new parameters"],
    );
  }
  if (revisionCount > 0 && plan.confidence < settings.abortBelow) {
    return escalate(
      "low_confidence",
      plan,
      failure,
      revisionCount,
      `Plan confidence ${plan.confidence.toFixed(2)} too low after ${revisionCount} revisions. Aborting unless you decide otherwise.`,
      ["Relax constraints or change goal", "Skip the failing step if its result is optional"],
    );
  }

  const input: StrategyInput = { plan, failure, registry, feedback, revisionNumber: revisionCount + 1 };
  const passed: string[] = [];
  for (const strategy of STRATEGY_PREFERENCES[failure.failureClass]) {
    const outcome = STRATEGIES[strategy](input);
    if (outcome.applies) {
      const why = `${step.id} failed with ${failure.failureClass} ("${failure.error}"), which ${strategy} addresses.`;
      return {
        kind: "strategy",
        strategy,
        taskId: step.id,
        failureClass: failure.failureClass,
        reasoning: passed.length > 0 ? `${why} Passed over: ${passed.join("; ")}.` : why,
      };
    }
    passed.push(`${strategy} (${outcome.reason})`);
  }
  // SKIP always applies, so this is unreachable unless the preferences lose it.
  return { kind: "strategy", strategy: "SKIP", taskId: step.id, failureClass: failure.failureClass, reasoning: `No strategy applied: ${passed.join("; ")}` };
}

/** Applies a chosen strategy; if it no longer applies (the plan changed), skips the step and says why. */
export function applyStrategy(strategy: StrategyType, args: { plan: Plan; feedback: readonly ExecutionFeedback[]; revisionCount: number; registry: ToolRegistry; taskId: string }) {
  const step = args.plan.steps.find((s) => s.id === args.taskId && s.status === "failed");
  if (!step) throw new Error(`Step ${args.taskId} is not waiting for recovery`);
  const input: StrategyInput = { plan: args.plan, failure: buildFailureContext(step, args.feedback), registry: args.registry, feedback: args.feedback, revisionNumber: args.revisionCount + 1 };
  const outcome = STRATEGIES[strategy](input);
  if (outcome.applies) return outcome;
  const fallback = STRATEGIES.SKIP(input);
  if (!fallback.applies) throw new Error("SKIP must always apply");
  return fallback;
}
