import { randomUUID } from "node:crypto";
import { Notification, type NotificationInput, type Progress } from "../domain/notification.js";
import type { ExecutionFeedback, FailureClass } from "../domain/feedback.js";
import type { Plan, TaskStep } from "../domain/plan.js";
import type { RevisionStrategy } from "../domain/revision.js";

/** Builds a notification with id and timestamp; every notification in Candor goes through here. */
export function notification(input: Omit<NotificationInput, "id" | "at">): Notification {
  return Notification.parse({ ...input, id: randomUUID(), at: new Date().toISOString() });
}

/** Where a developer finds the full story of a step: the decision log, filtered (see `candor logs`). */
export function detailsPointer(taskId: string | null, logFile: string | null): string {
  const where = logFile ? ` (log file: ${logFile})` : "";
  return taskId ? `candor logs --step ${taskId}${where}` : `candor logs${where}`;
}

const CLASS_WORDS: Record<FailureClass, string> = {
  timeout: "it did not answer in time",
  agent_unavailable: "the agent was unavailable or misbehaved",
  too_complex: "the task was too complex to do in one step",
  constraint_violated: "the result broke a constraint of the request",
  dependency_failed: "a step it needs failed",
  resource_unavailable: "what it looked for is not available",
  invalid_parameters: "it was given invalid parameters",
  wrong_tool: "it tried to use a tool it is not allowed to use",
  policy_blocked: "a policy blocked it",
  incomplete_result: "its result does not answer the part of the request it serves",
  no_result: "its worker's model stopped without producing what the step must produce",
  no_tool_call: "its worker's model answered without a successful tool call, and words are not evidence",
  claimed_without_evidence: "its worker's model claimed a result that no successful tool call shows",
  unknown: "of an unexpected error",
};

export function describeFailureClass(cls: FailureClass): string {
  return CLASS_WORDS[cls];
}

/** Expected extra time per strategy, in words (seed 000 scenario 2's estimated_delay). */
export function estimatedDelay(
  strategy: RevisionStrategy | null,
  step: Pick<TaskStep, "estimates"> | undefined,
): string {
  if (!strategy) return "to be decided";
  const ms = step?.estimates.durationMs ?? 1000;
  const seconds = (factor: number) => Math.max(1, Math.round((ms * factor) / 1000));
  // Short steps round both ends to the same second: say "about 1 s", not "about 1-1 s".
  const about = (lo: number, hi: number) =>
    seconds(lo) === seconds(hi) ? `about ${seconds(lo)} s` : `about ${seconds(lo)}-${seconds(hi)} s`;
  switch (strategy) {
    case "SKIP":
      return "none (the step is dropped)";
    case "ADJUST_PARAMETERS":
      return `${about(2, 3)} (affected steps run again)`;
    case "DECOMPOSE":
      return about(2, 4);
    case "REPLAN_WITH_GUIDANCE":
      return `${about(1, 3)} (the unfinished steps are planned again)`;
    default:
      return about(1, 2);
  }
}

/** Seed 000 scenario 2: the failure, announced the moment the worker detects it. */
export function failureNotification(step: TaskStep, feedback: ExecutionFeedback, logFile: string | null): Notification {
  const error = feedback.errors[feedback.errors.length - 1] ?? "unknown error";
  const severity = feedback.feedbackType === "CONSTRAINT_VIOLATION" ? "WARNING" : "ERROR";
  return notification({
    severity,
    kind: "step_failed",
    taskId: step.id,
    title: `${step.description} (${step.id}) failed: ${error}`,
    message: `It failed after ${feedback.attempt} attempt(s) because ${describeFailureClass(feedback.failureClass ?? "unknown")}. Choosing a recovery strategy next.`,
    errorSummary: `${step.description}: ${error}`,
    recoveryStrategy: "Analyzing: a recovery strategy is chosen next",
    estimatedDelay: "to be decided",
    details: detailsPointer(step.id, logFile),
  });
}

export function retryNotification(
  step: TaskStep,
  info: { attempt: number; error: string; nextInMs: number },
  logFile: string | null,
): Notification {
  return notification({
    severity: "WARNING",
    kind: "step_failed",
    taskId: step.id,
    title: `${step.description} (${step.id}) attempt ${info.attempt} failed: ${info.error}`,
    message: `Retrying the same call in ${info.nextInMs} ms (attempt ${info.attempt + 1} of ${step.retry.maxAttempts}).`,
    errorSummary: info.error,
    recoveryStrategy: "Retrying with the step's own retry policy",
    estimatedDelay: `${Math.max(1, Math.round(info.nextInMs / 1000))} s or less`,
    details: detailsPointer(step.id, logFile),
  });
}

/** A call the effect ledger answered: made before (by this thread, in another process or branch), not made again. */
export interface RecordedCall {
  tool: string;
  attempt: number;
  at: string;
}

/**
 * A step that succeeded. When the effect ledger answered (a resume or replay reached a call already made), the
 * title says so: the result shown is the recorded one and the tool did nothing this time.
 */
export function successNotification(
  step: TaskStep,
  feedback: ExecutionFeedback,
  recorded: RecordedCall | null = null,
): Notification {
  const title = recorded
    ? `${step.description} (${step.id}) answered from the effect ledger: ${recorded.tool} was not called again (its result was recorded at ${recorded.at}, attempt ${recorded.attempt})`
    : `${step.description} (${step.id}) done in ${Math.round(feedback.durationMs)} ms`;
  // A result that is not whole (cut at a bound, a file read in part) is said where the step is said done, not only
  // in the report: the steps after it, and the person, work from what was kept.
  const limited = feedback.limits.length > 0;
  return notification({
    severity: limited ? "WARNING" : "INFO",
    kind: "step_succeeded",
    taskId: step.id,
    title: limited ? `${title}, but its result is not whole: ${feedback.limits.join("; ")}` : title,
  });
}

/** The plan, announced: `notes` (fallbacks, assumptions, changes, open questions) make it a warning, `info` does not. */
export function planNotification(plan: Plan, notes: readonly string[], info: readonly string[] = []): Notification {
  const steps = plan.steps
    .map((s) => `${s.order}. ${s.id} [${s.workerType}${s.dependsOn.length ? ` after ${s.dependsOn.join(", ")}` : ""}]`)
    .join("; ");
  return notification({
    severity: notes.length > 0 ? "WARNING" : "INFO",
    kind: "plan",
    title: `Plan ${plan.planId}: ${plan.steps.length} step(s), confidence ${plan.confidence.toFixed(2)}`,
    message: [steps, ...info, ...notes].join("\n"),
  });
}

/** Seed 000 scenario 17: percent done and time left after each finished step. */
export function progressNotification(progress: Progress): Notification {
  const eta = progress.etaMs > 0 ? `, about ${(progress.etaMs / 1000).toFixed(1)} s left` : "";
  return notification({
    severity: "INFO",
    kind: "progress",
    taskId: progress.taskId,
    title: `Progress: ${progress.done}/${progress.total} steps (${Math.round(progress.percent)}%)${progress.skipped > 0 ? `, ${progress.skipped} of them skipped` : ""}${eta}`,
  });
}
