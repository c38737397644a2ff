import type { FailureEscalationRequest, HumanApprovalRequest } from "../domain/approval.js";
import type { Notification } from "../domain/notification.js";
import type { TaskStep } from "../domain/plan.js";
import type { PlanRevision, RevisionStrategy } from "../domain/revision.js";
import { describeFailureClass, detailsPointer, estimatedDelay, notification } from "./notify.js";

const WHAT_WE_DO: Record<RevisionStrategy, string> = {
  RETRY_DIFFERENT_AGENT: "Retrying with a different agent",
  RETRY_WITH_PARAMS: "Retrying with corrected parameters",
  SWAP_TOOL: "Switching to another tool with the same purpose",
  DECOMPOSE: "Breaking the step into smaller steps",
  ADJUST_PARAMETERS: "Adjusting parameters and re-running the affected steps",
  FIX_DEPENDENCIES: "Repairing the step it depends on first",
  FIND_WORKAROUND: "Looking for a workaround",
  SKIP: "Skipping the step and finishing the rest",
  REPLAN_WITH_GUIDANCE: "Planning the unfinished work again with a person's guidance",
};

/**
 * Seed 000 scenario 18: a revision in plain language — what failed, why, what happens now, the expected impact,
 * and confidence from → to, with where the details are. No stack traces, no exception names.
 */
export function explainRevision(
  revision: PlanRevision,
  failedStep: Pick<TaskStep, "id" | "description" | "estimates">,
  error: string,
  logFile: string | null,
): Notification {
  const impact = estimatedDelay(revision.strategy, failedStep);
  const details = detailsPointer(failedStep.id, logFile);
  const lines = [
    `What failed: ${failedStep.description} (${failedStep.id}).`,
    `Why: ${error} — ${describeFailureClass(revision.failureClass)}.`,
    `What we're doing: ${WHAT_WE_DO[revision.strategy]}. ${revision.changes.join(". ")}.`,
    `Expected impact: additional delay ${impact}${revision.strategy === "SKIP" ? "; the answer will be incomplete" : ""}.`,
    confidenceChange(revision.confidenceBefore, revision.confidenceAfter),
    // Seed 000 scenario 18: the explanation itself points developers to the technical details.
    `Details: ${details}`,
  ];
  return notification({
    severity: revision.strategy === "SKIP" ? "WARNING" : "INFO",
    kind: "strategy",
    taskId: failedStep.id,
    title: `Recovery for ${failedStep.id}: ${WHAT_WE_DO[revision.strategy]} (${revision.strategy})`,
    message: lines.join("\n"),
    errorSummary: error,
    recoveryStrategy: `${WHAT_WE_DO[revision.strategy]}: ${revision.changes[0] ?? ""}`,
    estimatedDelay: impact,
    details,
  });
}

/**
 * How a revision moved the plan's confidence, as shown (two decimals): a revision whose delta is zero (a person's
 * retry) or that rounds to nothing must not read "reduced from 0.85 to 0.85", and a replan with a person's
 * guidance can raise it.
 */
export function confidenceChange(before: number, after: number): string {
  const [from, to] = [before.toFixed(2), after.toFixed(2)];
  if (from === to) return `Plan confidence stays at ${from}.`;
  return `Plan confidence ${after < before ? "reduced" : "raised"} from ${from} to ${to}.`;
}

export function escalationNotification(request: FailureEscalationRequest, logFile: string | null): Notification {
  return notification({
    severity: "ERROR",
    kind: "escalation",
    taskId: request.taskId,
    title: `Needs a human: ${request.reason}`,
    message: [
      `Errors so far: ${request.errors.join(" | ")}`,
      `Suggested: ${request.suggestedActions.join("; ")}`,
      `Decisions: ${request.decisions.join(", ")}`,
    ].join("\n"),
    errorSummary: request.errors[request.errors.length - 1] ?? null,
    recoveryStrategy: "Paused for human guidance",
    estimatedDelay: "until a human decides",
    details: detailsPointer(request.taskId, logFile),
  });
}

export function approvalNotification(request: HumanApprovalRequest): Notification {
  return notification({
    severity: "WARNING",
    kind: "approval",
    title:
      (request.openQuestions?.length ?? 0) > 0
        ? `Plan ${request.planId} needs approval: ${request.openQuestions?.length ?? 0} thing(s) in the request will not be done as asked`
        : `Plan ${request.planId} needs approval: confidence ${request.confidence.toFixed(2)} is below ${request.threshold.toFixed(2)}`,
    message: [
      `Reasons: ${request.reasons.join("; ")}`,
      `Recommended: ${request.recommendedAction}`,
      `Decisions: ${request.decisions.join(", ")}`,
    ].join("\n"),
    recoveryStrategy: "Paused until a human approves or rejects the plan",
    estimatedDelay: "until a human decides",
  });
}
