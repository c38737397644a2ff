import { z } from "zod";
import { FailureClass } from "./feedback.js";

export const StrategyType = z.enum([
  "RETRY_DIFFERENT_AGENT",
  "RETRY_WITH_PARAMS",
  "SWAP_TOOL",
  "DECOMPOSE",
  "ADJUST_PARAMETERS",
  "FIX_DEPENDENCIES",
  "FIND_WORKAROUND",
  "SKIP",
]);
export type StrategyType = z.infer<typeof StrategyType>;

/**
 * What made a revision: one of the strategies, or a person's guidance on an escalation (`candor resume --replan
 * "<guidance>"`), which plans the unfinished work again. Kept apart from StrategyType because no rule and no model
 * may choose it: only a person can.
 */
export const RevisionStrategy = z.union([StrategyType, z.literal("REPLAN_WITH_GUIDANCE")]);
export type RevisionStrategy = z.infer<typeof RevisionStrategy>;

/** A change to the plan made in response to a failure (seed 000 PlanRevision). Append-only in state. */
export const PlanRevision = z.object({
  revisionId: z.string(),
  planId: z.string(),
  /** What caused it, e.g. "1 failures, 0 violations" (seed 000 scenario 4). */
  trigger: z.string(),
  strategy: RevisionStrategy,
  failedTaskId: z.string(),
  failureClass: FailureClass,
  /** Why this strategy, in plain language. */
  rationale: z.string(),
  /** One line per change, in plain language. */
  changes: z.array(z.string()).min(1),
  newStepIds: z.array(z.string()).default([]),
  removedStepIds: z.array(z.string()).default([]),
  modifiedStepIds: z.array(z.string()).default([]),
  confidenceDelta: z.number(),
  confidenceBefore: z.number(),
  confidenceAfter: z.number(),
  at: z.string(),
});
export type PlanRevision = z.infer<typeof PlanRevision>;

/** A confidence change with its reason (seed 000 confidence evolution). */
export const ConfidencePoint = z.object({
  at: z.string(),
  value: z.number().min(0).max(1),
  reason: z.string(),
});
export type ConfidencePoint = z.infer<typeof ConfidencePoint>;
