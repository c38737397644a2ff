import type { ToolCallDecision } from "../domain/approval.js";
import type { ExecutionFeedback } from "../domain/feedback.js";
import type { Notification } from "../domain/notification.js";
import type { TaskStep } from "../domain/plan.js";
import type { StepContext } from "../domain/step-context.js";
import { CandorError, ErrorCode } from "../errors.js";
import type { DecisionLog } from "../transparency/decision-log.js";
import {
  failureNotification,
  notification,
  retryNotification,
  successNotification,
  type RecordedCall,
} from "../transparency/notify.js";
import type { EffectLedger } from "../tools/effects.js";
import type { ToolRegistry } from "../tools/registry.js";
import { callNeedingApproval } from "../tools/pending-call.js";
import { deniedFeedback, runStep } from "./run-step.js";

export interface WorkerStepDeps {
  registry: ToolRegistry;
  decisionLog: DecisionLog;
  logFile: string | null;
  ledger?: EffectLedger;
}

export interface WorkerStepInput {
  step: TaskStep;
  /** Outputs of the step's dependencies, by output name. */
  inputs: Record<string, unknown>;
  planId: string;
  threadId: string | null;
  /** The approval gate's decision; null for a call that needs none (a call that does is refused without it). */
  toolDecision: ToolCallDecision | null;
  /** The values the understanding record says the step uses, and the request's lineage. */
  context?: StepContext;
  signal?: AbortSignal;
  /** Tells the user at once (a stream event); called for every notification, in order, as it is made. */
  emit: (notification: Notification) => void;
}

export interface WorkerStepOutcome {
  feedback: ExecutionFeedback;
  /** Everything the user was told about this step (retries, then the outcome), in order. */
  notifications: Notification[];
}

/**
 * What a worker does with one step, wherever it runs (a task inside EXECUTE, or the worker subgraph after the
 * approval gate): run it with its granted tools (or fail it without a call when a person denied it), announce
 * each retry and the outcome the moment they are known — a failure is announced here, before any replanning, so
 * nobody waits to hear about it — and log the result with why.
 */
export async function runWorkerStep(deps: WorkerStepDeps, input: WorkerStepInput): Promise<WorkerStepOutcome> {
  const { step, toolDecision, threadId } = input;
  const values = input.context?.values ?? [];
  if (!toolDecision && callNeedingApproval(step, deps.registry, values)) {
    throw new CandorError(
      `Step ${step.id} reached its worker without the gate's decision on a call that needs approval; the call was not made.`,
      ErrorCode.CONFIGURATION,
    );
  }
  const told: Notification[] = [];
  const tell = (n: Notification) => {
    told.push(n);
    input.emit(n);
  };
  // Set by the ledger's callback during runStep (an object, so the assignment is visible to the type checker).
  const ledger: { recorded: RecordedCall | null } = { recorded: null };
  const feedback =
    toolDecision?.decision === "deny"
      ? deniedFeedback(step, step.dispatches, toolDecision, toolDecision.comment)
      : await runStep({
          step,
          inputs: input.inputs,
          registry: deps.registry,
          dispatch: step.dispatches,
          ...(input.signal ? { signal: input.signal } : {}),
          ...(deps.ledger ? { ledger: deps.ledger, threadId } : {}),
          onRecordedResult: (info) => {
            ledger.recorded = info;
          },
          onAttemptFailed: (info) => tell(retryNotification(step, info, deps.logFile)),
          ...(input.context ? { context: input.context } : {}),
          approved: toolDecision?.decision === "approve",
          onValuesApplied: (applied) => tell(valuesNotification(step, applied)),
          onStaleRecord: (why) => tell(staleNotification(step, why)),
        });
  if (toolDecision && toolDecision.decision !== "recorded") {
    // Carried to the parent, which records it as the thread's latest approval.
    feedback.approval = {
      decision: toolDecision.decision,
      comment: toolDecision.comment,
      by: toolDecision.by,
      at: toolDecision.at ?? feedback.at,
    };
  }
  const ok = feedback.feedbackType === "SUCCESS" || feedback.feedbackType === "PARTIAL_SUCCESS";
  const recorded = ledger.recorded;
  tell(ok ? successNotification(step, feedback, recorded) : failureNotification(step, feedback, deps.logFile));
  const done = recorded
    ? `${recorded.tool} was not called again: the effect ledger holds the result of attempt ${recorded.attempt} (recorded ${recorded.at})`
    : `finished in ${Math.round(feedback.durationMs)} ms after ${feedback.attempt} attempt(s)`;
  deps.decisionLog.record({
    operation: "step_result",
    planId: input.planId,
    taskId: step.id,
    threadId,
    input: `${step.description} with ${feedback.tool ?? "no tool"} ${JSON.stringify(step.params)}`,
    decision: feedback.feedbackType,
    reasoning: ok ? done : `${feedback.failureClass}: ${feedback.errors.join(" | ")}`,
    cost: feedback.cost,
  });
  return { feedback, notifications: told };
}

/** Recorded values applied to a call (the plan or a model gave another value, or none): named before it runs. */
export function valuesNotification(step: TaskStep, applied: readonly string[]): Notification {
  return notification({
    severity: "WARNING",
    kind: "step_started",
    taskId: step.id,
    title: `${step.description} (${step.id}) uses the values the request's record gives: ${applied.join("; ")}`,
  });
}

/** A recorded call of this dispatch that belongs to another request or other arguments, and is not reused. */
function staleNotification(step: TaskStep, why: string): Notification {
  return notification({
    severity: "WARNING",
    kind: "step_started",
    taskId: step.id,
    title: `${step.description} (${step.id}): ${why} It is called again.`,
  });
}
