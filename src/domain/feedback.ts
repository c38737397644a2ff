import { z } from "zod";
import type { TaskStep } from "./plan.js";

export const FeedbackType = z.enum([
  "SUCCESS",
  "FAILURE",
  "PARTIAL_SUCCESS",
  "CONSTRAINT_VIOLATION",
  "DEPENDENCY_FAILURE",
]);
export type FeedbackType = z.infer<typeof FeedbackType>;

/** Failure classes (issue 3 / seed 000): decided by rules for every known wording, by a model only when unknown. */
export const FailureClass = z.enum([
  "timeout",
  "agent_unavailable",
  "too_complex",
  "constraint_violated",
  "dependency_failed",
  "resource_unavailable",
  "invalid_parameters",
  "wrong_tool",
  "policy_blocked",
  /** The step succeeded, yet a review of the answer found its result does not answer the part it serves. */
  "incomplete_result",
  /**
   * A model-driven step's tool loop ended (the model stopped, or its model calls per step ran out) without
   * producing what the step must produce.
   */
  "no_result",
  /** A model-driven step's model answered without any successful tool call: its words are not evidence. */
  "no_tool_call",
  /** A model answered as if the step were done, yet no successful call produced what the step must produce. */
  "claimed_without_evidence",
  "unknown",
]);
export type FailureClass = z.infer<typeof FailureClass>;

/** One attempt of a step inside the worker, kept so replanning sees every previous error (seed 003). */
export const AttemptRecord = z.object({
  attempt: z.number().int().min(1),
  error: z.string().nullable(),
  durationMs: z.number().min(0),
});
export type AttemptRecord = z.infer<typeof AttemptRecord>;

/**
 * The errorType of a failure whose call may have taken effect (stopped before it answered, or started before a
 * crash): replanning puts it to a person (an `unknown_outcome` escalation) instead of deciding for them.
 */
export const OUTCOME_UNKNOWN = "OUTCOME_UNKNOWN";

/** The outcome of one dispatch of one step (seed 000 ExecutionFeedback). Append-only in state. */
export const ExecutionFeedback = z.object({
  taskId: z.string(),
  feedbackType: FeedbackType,
  /** What the step produced (for a constraint violation: the violation's facts, e.g. total, budget, breakdown). */
  outputs: z.record(z.string(), z.unknown()).default({}),
  errors: z.array(z.string()).default([]),
  failureClass: FailureClass.nullable().default(null),
  durationMs: z.number().min(0),
  cost: z.number().min(0).default(0),
  at: z.string(),
  /** Worker attempts made in this dispatch. */
  attempt: z.number().int().min(0).default(1),
  /** Which dispatch of the step this answers (matches TaskStep.dispatches). */
  dispatch: z.number().int().min(0).default(1),
  workerType: z.string().nullable().default(null),
  tool: z.string().nullable().default(null),
  params: z.record(z.string(), z.unknown()).default({}),
  attempts: z.array(AttemptRecord).default([]),
  /** What kind of error it was: a Candor error code, or the thrown error's name (seed 003's error_type). */
  errorType: z.string().nullable().default(null),
  /**
   * The first lines of the error's stack, for replanning and the decision log. Never shown in user-facing
   * notifications or explanations.
   */
  trace: z.string().nullable().default(null),
  /**
   * A person's answer to this dispatch's tool approval, when the call needed one. The parent graph records it
   * as the thread's latest `approval`, as it does for plan approvals and escalations.
   */
  /**
   * The evidence of a success: the tool whose successful call the result is (evidence.ts's `feedbackOf`). A success
   * without it is not taken: `settleStep` fails the step.
   */
  evidence: z.object({ tool: z.string() }).nullable().default(null),
  /** What a successful result does not cover (a cut read, a listing cut short), each named; empty when whole. */
  limits: z.array(z.string()).default([]),
  approval: z
    .object({
      decision: z.enum(["approve", "deny"]),
      comment: z.string().nullable(),
      by: z.string().nullable(),
      at: z.string(),
    })
    .optional(),
});
export type ExecutionFeedback = z.infer<typeof ExecutionFeedback>;
export type ExecutionFeedbackInput = z.input<typeof ExecutionFeedback>;

/** Everything replanning knows about one failure (seed 003's failure context). */
export interface FailureContext {
  step: TaskStep;
  /** The latest feedback of the step (its last dispatch). */
  feedback: ExecutionFeedback;
  failureClass: FailureClass;
  /** The latest error message. */
  error: string;
  tool: string | null;
  params: Record<string, unknown>;
  /** What the tool reported with its failure (e.g. a budget breakdown). */
  outputs: Record<string, unknown>;
  /** The error's code or name (seed 003's error_type), when it threw. */
  errorType: string | null;
  /** The first lines of the error's stack, when there is one: for the model and developers, never the user. */
  trace: string | null;
  /** Every failed dispatch of this step and of the steps it replaced, oldest first. */
  history: ExecutionFeedback[];
  /** Failed dispatches in the lineage (the step and what it replaced). */
  failureCount: number;
}
