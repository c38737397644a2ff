import type { ExecutionFeedback } from "../domain/feedback.js";
import type { Plan } from "../domain/plan.js";
import type { PlanningRequest } from "../domain/request.js";
import type { StrategyType } from "../domain/revision.js";
import type { ToolRegistry } from "../tools/registry.js";
import { requiredInputs } from "../tools/types.js";
import { buildFailureContext } from "./context.js";
import { canonical } from "./strategies/hint.js";
import { STRATEGIES, type StrategyHint, type StrategyInput, type StrategyOutcome } from "./strategies/index.js";

/*
 * The one builder of a strategy's revision (issue 22 item 8). Whoever chooses the strategy — the rules, a model's
 * validated proposal, a person answering an escalation with retry or skip — the revision is built here, by the
 * strategy's one implementation, and passes the same guards: a model's or a person's input is a hint to it,
 * never a second way to edit a plan.
 */

/** A plan and the failed step to recover, as the callers outside selection know them. */
export interface RecoverArgs {
  plan: Plan;
  feedback: readonly ExecutionFeedback[];
  revisionCount: number;
  registry: ToolRegistry;
  taskId: string;
  request?: PlanningRequest;
}

/**
 * Builds `strategy`'s revision for the failure in `input`, from the hint when one is given (a model's proposal, a
 * person's parameters or reason), and refuses one that would only fail again: the same call as one that failed,
 * or a tool without the inputs it needs. Pure: the caller applies the outcome.
 */
export function recover(strategy: StrategyType, input: StrategyInput, hint?: StrategyHint): StrategyOutcome {
  const outcome = STRATEGIES[strategy](hint ? { ...input, hint } : input);
  if (!outcome.applies) return outcome;
  const refused = repeatsFailedCall(outcome, input.feedback) ?? lacksInputs(outcome, input.registry);
  return refused === null ? outcome : { applies: false, reason: refused };
}

/**
 * `recover` for a step named by id (a strategy node, a person's answer), skipping the step and saying why when
 * the strategy no longer applies (the plan changed since it was chosen). Throws when the step is not failed: the
 * caller asked to recover something that is not waiting for it.
 */
export function recoverOrSkip(
  strategy: StrategyType,
  args: RecoverArgs,
  hint?: StrategyHint,
): Extract<StrategyOutcome, { applies: true }> {
  const input = recoveryInput(args);
  const outcome = recover(strategy, input, hint);
  if (outcome.applies) return outcome;
  const skipped = STRATEGIES.SKIP(input);
  if (!skipped.applies) throw new Error("SKIP must always apply");
  return skipped;
}

/** The strategies' input for the failed step `args.taskId`. */
function recoveryInput(args: RecoverArgs): StrategyInput {
  const step = args.plan.steps.find((s) => s.id === args.taskId && s.status === "failed");
  if (!step) throw new Error(`Step ${args.taskId} is not waiting for recovery`);
  return {
    plan: args.plan,
    failure: buildFailureContext(step, args.feedback),
    registry: args.registry,
    feedback: args.feedback,
    revisionNumber: args.revisionCount + 1,
    ...(args.request ? { request: args.request } : {}),
  };
}

/** A hint that carries only a reason (a SKIP the rules or a person chose, with why). */
export function reasonHint(by: StrategyHint["by"], rationale: string): StrategyHint {
  return { by, rationale, params: null, tool: null, workerType: null, substeps: null };
}

/**
 * The loop guard (issue 3 item 4): a revision whose new step is the same call — worker, tool and parameters — as
 * one that already failed would only fail again. Compared with the run's FAILURE feedback; DEPENDENCY_FAILURE
 * records never ran, and a CONSTRAINT_VIOLATION depends on upstream results the revision changes.
 */
export function repeatsFailedCall(
  outcome: Extract<StrategyOutcome, { applies: true }>,
  feedback: readonly ExecutionFeedback[],
): string | null {
  for (const id of outcome.revision.newStepIds) {
    const step = outcome.plan.steps.find((s) => s.id === id);
    if (!step) continue;
    const key = canonical(step.params);
    const same = feedback.find(
      (f) =>
        f.feedbackType === "FAILURE" &&
        f.workerType === step.workerType &&
        f.tool === (step.tools[0] ?? null) &&
        canonical(f.params) === key,
    );
    if (same)
      return `${step.id} would repeat the call that failed as ${same.taskId} (${step.workerType}, ${step.tools[0] ?? "no tool"}, same parameters)`;
  }
  return null;
}

/**
 * The input guard: a revision whose new step calls a tool without an input that tool requires would only fail.
 * A tool producing the same output is no drop-in replacement when it needs something the step does not receive
 * (a tool that plans days from a list of attractions, after one that lists them: how DECOMPOSE chains them), and
 * the worker ranking offers such tools by what they produce alone. Checked on the revised plan: the step's
 * dependencies, by id or expected output, must provide every input its tool requires (an optional one it may
 * lack: it runs without it and says so).
 */
export function lacksInputs(
  outcome: Extract<StrategyOutcome, { applies: true }>,
  registry: ToolRegistry,
): string | null {
  for (const id of outcome.revision.newStepIds) {
    const step = outcome.plan.steps.find((s) => s.id === id);
    const tool = step ? registry.tool(step.tools[0] ?? "") : undefined;
    if (!step || !tool) continue;
    const deps = outcome.plan.steps.filter((s) => step.dependsOn.includes(s.id));
    const available = new Set([...deps.map((s) => s.id), ...deps.flatMap((s) => s.expectedOutputs)]);
    const missing = requiredInputs(tool).filter((c) => !available.has(c));
    if (missing.length > 0)
      return `${step.id} would call ${tool.name} without the ${missing.join(", ")} it needs, which none of its dependencies produce`;
  }
  return null;
}
