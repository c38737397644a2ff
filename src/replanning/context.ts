import type { ExecutionFeedback, FailureContext } from "../domain/feedback.js";
import type { Plan, TaskStep } from "../domain/plan.js";

const isFailure = (f: ExecutionFeedback) => f.feedbackType !== "SUCCESS" && f.feedbackType !== "PARTIAL_SUCCESS";

export function buildFailureContext(step: TaskStep, feedback: readonly ExecutionFeedback[]): FailureContext {
  const ids = new Set([...step.lineage, step.id]);
  const history = feedback.filter((f) => ids.has(f.taskId) && isFailure(f));
  const latest =
    [...feedback].reverse().find((f) => f.taskId === step.id && f.dispatch === step.dispatches) ??
    history[history.length - 1];
  if (!latest) throw new Error(`No feedback recorded for failed step ${step.id}`);
  return {
    step,
    feedback: latest,
    failureClass: latest.failureClass ?? "unknown",
    error: latest.errors[latest.errors.length - 1] ?? "unknown error",
    tool: latest.tool,
    params: latest.params,
    outputs: latest.outputs,
    errorType: latest.errorType,
    trace: latest.trace,
    history,
    failureCount: history.length,
  };
}

/** How many failed steps a revision trigger reports, in seed 000's wording ("1 failures, 0 violations"). */
export function triggerText(plan: Plan, feedback: readonly ExecutionFeedback[]): string {
  const failedIds = new Set(plan.steps.filter((s) => s.status === "failed").map((s) => s.id));
  const latest = new Map<string, ExecutionFeedback>();
  for (const f of feedback) if (failedIds.has(f.taskId)) latest.set(f.taskId, f);
  const violations = [...latest.values()].filter((f) => f.feedbackType === "CONSTRAINT_VIOLATION").length;
  return `${latest.size - violations} failures, ${violations} violations`;
}
