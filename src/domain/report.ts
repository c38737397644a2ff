import { z } from "zod";
import { FailureClass, FeedbackType } from "./feedback.js";
import { RevisionStrategy, ConfidencePoint } from "./revision.js";
import { AppliedAdjustment, Evaluation, StepChoice } from "./reflection.js";
import { CallSite } from "./usage.js";

/** Model tokens and their cost, added up (for the run, a step or a call site). */
export const TokenUsage = z.object({
  calls: z.number().int().min(0),
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  costUsd: z.number().min(0),
});
export type TokenUsage = z.infer<typeof TokenUsage>;

export const RunStatus = z.enum([
  "planning",
  "awaiting_approval",
  "executing",
  "replanning",
  "reflecting",
  "completed",
  /** Finished, but some steps were skipped: the answer is missing what they would have produced. */
  "partial",
  "failed",
  "rejected",
  "aborted",
]);
export type RunStatus = z.infer<typeof RunStatus>;

export const TERMINAL_STATUSES: readonly RunStatus[] = ["completed", "partial", "failed", "rejected", "aborted"];

/** Post-execution report (seed 000 scenario 20), saved in state and rendered by `candor report`. */
export const ExecutionReport = z.object({
  planId: z.string(),
  request: z.string(),
  summary: z.object({
    status: RunStatus,
    outcome: z.string(),
    totalDurationMs: z.number(),
    totalCost: z.number(),
    stepsSucceeded: z.number().int(),
    stepsFailed: z.number().int(),
    stepsSkipped: z.number().int(),
    revisionCount: z.number().int(),
    /** Why the run failed or stopped, when it did. */
    failureReason: z.string().nullable(),
    /**
     * The run's model calls, tokens and cost, with the same by call site; null when no model was called (and in
     * reports stored before they were counted).
     */
    tokens: TokenUsage.extend({ bySite: z.partialRecord(CallSite, TokenUsage) })
      .nullable()
      .default(null),
    /** The token budget the run ended with (after any raise), or null when it had none. */
    tokenBudget: z.number().nullable().default(null),
  }),
  tasks: z.array(
    z.object({
      id: z.string(),
      description: z.string(),
      workerType: z.string(),
      status: z.string(),
      attempts: z.number().int(),
      durationMs: z.number(),
      cost: z.number(),
      lastFeedback: FeedbackType.nullable(),
      errors: z.array(z.string()),
      replaces: z.string().nullable(),
      skipReason: z.string().nullable(),
      /** The step's own model calls (a model-driven step, a recovery for it); null when it made none. */
      tokens: TokenUsage.nullable().default(null),
    }),
  ),
  revisions: z.array(
    z.object({
      revisionId: z.string(),
      strategy: RevisionStrategy,
      failedTaskId: z.string(),
      failureClass: FailureClass,
      reason: z.string(),
      changes: z.array(z.string()),
      confidenceFrom: z.number(),
      confidenceTo: z.number(),
    }),
  ),
  confidenceEvolution: z.array(ConfidencePoint),
  /** Why the plan's confidence is what it is (the planner's reasons); empty in reports stored before it existed. */
  confidenceReasons: z.array(z.string()).default([]),
  /** Why the run was reactive (no plan made: one general worker loop ran the request), or null for a planned run. */
  reactive: z.string().nullable().default(null),
  lessonsLearned: z.array(z.string()),
  missing: z.array(z.string()),
  generatedAt: z.string(),
});
export type ExecutionReport = z.infer<typeof ExecutionReport>;

/** What REFLECT stores per run under [userId, "episodes"]. */
export const Episode = z.object({
  threadId: z.string().nullable(),
  planId: z.string(),
  request: z.string(),
  status: RunStatus,
  plan: z.object({ steps: z.array(z.object({ id: z.string(), workerType: z.string(), tools: z.array(z.string()) })) }),
  failures: z.array(
    z.object({
      taskId: z.string(),
      tool: z.string().nullable(),
      workerType: z.string().nullable(),
      failureClass: FailureClass,
      error: z.string(),
    }),
  ),
  strategiesUsed: z.array(RevisionStrategy),
  confidenceInitial: z.number(),
  confidenceFinal: z.number(),
  lessons: z.array(z.string()),
  durationMs: z.number(),
  cost: z.number(),
  at: z.string(),
  /**
   * Faults were injected into the run (`--fault`): only other simulated runs learn from it, so a practice run
   * never makes a real one avoid a tool that only failed on purpose. Absent in episodes stored before it existed.
   */
  simulated: z.boolean().optional(),
  /** What each step that succeeded chose; absent in episodes stored before it existed. */
  choices: z.array(StepChoice).optional(),
  /** How the run was judged (`candor feedback`, or the run's own failures); absent until it is. */
  evaluation: Evaluation.optional(),
  /** Learned adjustments UNDERSTAND applied to the run's plan. */
  applied: z.array(AppliedAdjustment).optional(),
  /** From the run's start to its plan (planning duration, seed 002); absent in episodes stored before it existed. */
  planningMs: z.number().min(0).optional(),
  /** When the episode is forgotten (90 days after the run); absent in episodes stored before TTLs existed. */
  expiresAt: z.string().optional(),
});
export type Episode = z.infer<typeof Episode>;
