import { z } from "zod";
import { Plan } from "./plan.js";

/** Why a run is waiting for a person. */
export const InterruptKind = z.enum(["plan_approval", "max_revisions", "step_failures", "low_confidence"]);
export type InterruptKind = z.infer<typeof InterruptKind>;

/** Seed 000 scenario 14: asked before any step runs when the plan's confidence is below the threshold. */
export const HumanApprovalRequest = z.object({
  kind: z.literal("plan_approval"),
  planId: z.string(),
  confidence: z.number(),
  threshold: z.number(),
  reasons: z.array(z.string()),
  recommendedAction: z.literal("REVIEW_AND_ADJUST"),
  plan: Plan,
  /** The decisions this request accepts (e.g. ["approve", "reject"]). */
  decisions: z.array(z.string()),
  question: z.string(),
});
export type HumanApprovalRequest = z.infer<typeof HumanApprovalRequest>;

/** Seed 000 scenarios 11, 12, 16: the run cannot continue on its own. */
export const FailureEscalationRequest = z.object({
  kind: z.enum(["max_revisions", "step_failures", "low_confidence"]),
  planId: z.string(),
  taskId: z.string(),
  failureCount: z.number().int(),
  revisionCount: z.number().int(),
  confidence: z.number(),
  errors: z.array(z.string()),
  reason: z.string(),
  suggestedActions: z.array(z.string()),
  decisions: z.array(z.string()),
  question: z.string(),
});
export type FailureEscalationRequest = z.infer<typeof FailureEscalationRequest>;

export const InterruptRequest = z.discriminatedUnion("kind", [
  HumanApprovalRequest,
  FailureEscalationRequest.extend({ kind: z.literal("max_revisions") }),
  FailureEscalationRequest.extend({ kind: z.literal("step_failures") }),
  FailureEscalationRequest.extend({ kind: z.literal("low_confidence") }),
]);
export type InterruptRequest = z.infer<typeof InterruptRequest>;

/**
 * A person's answer, given as the resume value. `approve`/`reject` answer a plan approval; `skip` (give up on the
 * failed step, finish the rest), `retry` (one more revision beyond the cap) and `abort` answer an escalation.
 */
export const HumanDecision = z.object({
  decision: z.enum(["approve", "reject", "skip", "retry", "abort"]),
  comment: z.string().nullable().default(null),
  by: z.string().nullable().default(null),
});
export type HumanDecision = z.infer<typeof HumanDecision>;

/** What the thread recorded about the latest human decision. */
export const ApprovalRecord = z.object({
  kind: InterruptKind,
  decision: HumanDecision.shape.decision,
  comment: z.string().nullable(),
  by: z.string().nullable(),
  at: z.string(),
  confidence: z.number(),
});
export type ApprovalRecord = z.infer<typeof ApprovalRecord>;
