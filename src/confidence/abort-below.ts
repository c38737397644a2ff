import type { HumanApprovalRequest } from "../domain/approval.js";
import type { Plan } from "../domain/plan.js";
import type { Result } from "../result.js";
import type { Calibration } from "./calibrator.js";

/**
 * `--abort-below` checked the moment the plan's confidence changes, wherever it changes: a plan made (by the planner,
 * then calibrated on the user's past outcomes), a plan made again with a person's guidance, a person's skip or retry
 * with new parameters. A revision a strategy proposes is checked before it runs by select_strategy; these are the
 * other changes. Below the threshold the run stops and asks, saying what moved the confidence: nothing runs on a
 * confidence the user said is too low unless a person says so.
 */

/** One change of the plan's confidence, as its history records it. */
export interface ConfidenceChange {
  /** The confidence before; null for a plan just made. */
  from: number | null;
  to: number;
  /** What changed it, in a few words ("calibration on your past outcomes: …", "initial plan (rules)"). */
  why: string;
}

/** The confidence a plan starts with, as a change: the planner's score, then calibration's correction of it. */
export function plannedChange(
  raw: Pick<Plan, "confidence">,
  plan: Pick<Plan, "confidence" | "createdBy">,
  calibration: Pick<Calibration, "reason"> | null,
): ConfidenceChange {
  return calibration?.reason && raw.confidence !== plan.confidence
    ? { from: raw.confidence, to: plan.confidence, why: calibration.reason }
    : { from: null, to: plan.confidence, why: `initial plan (${plan.createdBy})` };
}

/** The decisions a run under way accepts when its confidence fell below the abort threshold: go on, or stop. */
const ABORT_BELOW_DECISIONS = ["approve", "reject"] as const;

/** Whether the run may go on at this confidence; if not, why, in a sentence a person reads. */
export function checkAbortBelow(change: ConfidenceChange, abortBelow: number): Result<null> {
  if (change.to >= abortBelow) return { ok: true, value: null };
  const moved =
    change.from === null || change.from === change.to
      ? `is ${change.to.toFixed(2)}`
      : `fell from ${change.from.toFixed(2)} to ${change.to.toFixed(2)}`;
  return {
    ok: false,
    reason: `The plan's confidence ${moved} (${change.why}), below the abort threshold ${abortBelow.toFixed(2)} (--abort-below).`,
  };
}

/**
 * A plan approval for a plan whose confidence is below the abort threshold, before anything runs: it waits for a
 * person even when the approval threshold would have let it run, and says why first.
 */
export function withAbortReason(request: HumanApprovalRequest, reason: string): HumanApprovalRequest {
  return {
    ...request,
    reasons: [reason, ...request.reasons],
    question: `${reason} It does not run unless you approve it. ${request.question}`,
  };
}

/**
 * The stop for a run under way whose confidence fell below the abort threshold through a person's decision or a
 * guided replan: the plan as it now stands, to approve (go on: a person's choice, as a low plan approved at the
 * start is) or reject (stop, nothing more runs).
 */
export function abortBelowApproval(plan: Plan, reason: string, abortBelow: number): HumanApprovalRequest {
  return {
    kind: "plan_approval",
    planId: plan.planId,
    confidence: plan.confidence,
    threshold: abortBelow,
    reasons: [reason, ...plan.confidenceReasons],
    recommendedAction: "REVIEW_AND_ADJUST",
    plan,
    decisions: [...ABORT_BELOW_DECISIONS],
    question: `${reason} The run is stopped: approve to go on at this confidence, or reject to end it here?`,
  };
}
