import { z } from "zod";

/*
 * Learning (DESIGN.md "Learning", seed 001): an evaluation of a finished run, a reflection on it (analysis with
 * the root cause, patterns, adjustments, learning), its quality scores, the patterns mined from a user's
 * episodes, and the typed adjustments that change that user's later runs.
 */

/**
 * How a finished run went, in the words of whoever judged it: the user (`candor feedback`), or the run itself
 * when it ended failed or partial.
 */
export const Evaluation = z.object({
  verdict: z.enum(["accepted", "rejected"]),
  source: z.enum(["user", "run"]),
  /** Why it was rejected, in the user's words (or the run's own errors); null for an acceptance. */
  reason: z.string().nullable(),
  /** A remark that came with the verdict. */
  comment: z.string().nullable(),
  at: z.string(),
  /**
   * What the reason was read to be about: the adjustable settings of the run's tools it points at (see
   * reflection/diagnose.ts). Patterns group episodes by these keys, so differently worded reasons count together.
   */
  blamed: z.array(z.string()).default([]),
  /**
   * The reflections whose adjustments the run ran under: an acceptance then counts as a success after reflection
   * (seed 001 scenario 19), a rejection as an adjustment that did not help.
   */
  appliedFrom: z.array(z.string()).default([]),
});
export type Evaluation = z.infer<typeof Evaluation>;

/** What a step chose, kept in the episode so a later reflection can say what was picked and with which settings. */
export const StepChoice = z.object({
  stepId: z.string(),
  tool: z.string(),
  /** The step's parameters, primitives and lists of primitives only. */
  params: z.record(z.string(), z.unknown()).default({}),
  /** The result's top-level primitive fields (its summary, price, rating …). */
  result: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).default({}),
});
export type StepChoice = z.infer<typeof StepChoice>;

/** The root-cause analysis of a reflection: what happened, why, and the strategy or assumption behind it. */
export const ReflectionAnalysis = z.object({
  whatHappened: z.string(),
  why: z.string(),
  /** The strategy or assumption that produced the outcome, not the symptom. */
  rootCause: z.string(),
});
export type ReflectionAnalysis = z.infer<typeof ReflectionAnalysis>;

/** A reflection as a reasoner writes it, before the quality gate scores it. */
export const ReflectionDraft = z.object({
  analysis: ReflectionAnalysis,
  /** Validated patterns only (≥ 3 occurrences, validity ≥ 0.75). */
  patternsIdentified: z.array(z.string()),
  /** Each in an actionable form: "Change X to Y", "Add constraint: Z", "Remove W", "Filter results where V". */
  strategyAdjustments: z.array(z.string()),
  /** How to apply it next time. */
  learning: z.string(),
});
export type ReflectionDraft = z.infer<typeof ReflectionDraft>;

/** The quality gate's scores (seed 001 scenario 5), each 0..1. */
export const ReflectionScores = z.object({
  quality: z.number().min(0).max(1),
  completeness: z.number().min(0).max(1),
  depth: z.number().min(0).max(1),
  actionability: z.number().min(0).max(1),
  relevance: z.number().min(0).max(1),
});
export type ReflectionScores = z.infer<typeof ReflectionScores>;

/** A reflection that passed the quality gate, as stored under [userId, "reflections"]. */
export const Reflection = ReflectionDraft.extend({
  id: z.string().min(1),
  threadId: z.string().nullable(),
  planId: z.string(),
  /** The request of the run reflected on. */
  task: z.string(),
  trigger: z.enum(["rejection", "failure"]),
  scores: ReflectionScores,
  /** Who wrote it: the rules, or the model (after `attempts` tries of the improvement loop). */
  source: z.enum(["rules", "llm"]),
  attempts: z.number().int().min(1),
  /** Ids of the adjustments it produced. */
  adjustmentIds: z.array(z.string()).default([]),
  createdAt: z.string(),
  /** When it is forgotten (90 days after it was written). */
  expiresAt: z.string(),
  simulated: z.boolean().optional(),
});
export type Reflection = z.infer<typeof Reflection>;

/** A recurring outcome mined from a user's episodes, with how well the episodes support it. */
export const Pattern = z.object({
  /** Stable key: what was done and what came of it (e.g. "rejected:search_hotels.priority=recommended:quality"). */
  key: z.string(),
  text: z.string(),
  /** Episodes that show it. */
  occurrences: z.number().int().min(0),
  /** Episodes in which it could have shown (the same tool run the same way, and judged). */
  total: z.number().int().min(0),
  /** occurrences / total, or 0 when there are too few occurrences to say. */
  validity: z.number().min(0).max(1),
  valid: z.boolean(),
  /** Why it is or is not used, e.g. "Insufficient data (1 < 3 min_occurrences)". */
  reason: z.string(),
  /** The adjustable setting it points at ("search_hotels.priority"), when there is one. */
  target: z.string().nullable(),
});
export type Pattern = z.infer<typeof Pattern>;

const Scalar = z.union([z.string(), z.number(), z.boolean()]);

/** A typed change to how a tool is called on a user's later runs, parsed from a reflection's adjustment. */
export const AdjustmentOp = z.discriminatedUnion("type", [
  /** "Change priority of search_hotels from 'recommended' to 'quality'". */
  z.object({
    type: z.literal("change_priority"),
    tool: z.string(),
    param: z.string(),
    from: z.string().nullable(),
    to: z.string(),
  }),
  /** "Add constraint: search_hotels.minRating >= 8". */
  z.object({
    type: z.literal("add_constraint"),
    tool: z.string(),
    param: z.string(),
    op: z.enum([">=", "<=", "="]),
    value: Scalar,
  }),
  /** "Filter search_flights results where airline != 'Iberia'": the tool's parameter that filters that field. */
  z.object({
    type: z.literal("filter"),
    tool: z.string(),
    param: z.string(),
    field: z.string(),
    op: z.enum([">=", "<=", "=", "!="]),
    value: Scalar,
  }),
  /** "Remove search_flights": plan another tool that produces the same thing. */
  z.object({ type: z.literal("remove_tool"), tool: z.string() }),
]);
export type AdjustmentOp = z.infer<typeof AdjustmentOp>;

/**
 * One adjustment in a user's config. `proposed` until a valid pattern backs it (the same reason three times);
 * `active` adjustments are applied by UNDERSTAND and announced; `revoked` ones stay for the record.
 */
export const Adjustment = z.object({
  id: z.string().min(1),
  op: AdjustmentOp,
  /** The reflection's own words for it. */
  text: z.string(),
  reflectionId: z.string(),
  /** `superseded`: a later reflection set the same setting again (its adjustment replaces this one). */
  status: z.enum(["proposed", "active", "revoked", "superseded"]),
  /** Why it has its status, e.g. "3 of 3 answers rejected for it (validity 1.00)". */
  why: z.string(),
  /** The pattern key behind it, when one is. */
  pattern: z.string().nullable().default(null),
  createdAt: z.string(),
  activatedAt: z.string().nullable().default(null),
  revokedAt: z.string().nullable().default(null),
  /** Learned from practice runs (`--fault`): applied only to practice runs. */
  simulated: z.boolean().optional(),
});
export type Adjustment = z.infer<typeof Adjustment>;

/**
 * A preference a user stated that no tool setting can express ("a window seat"): named to the user, kept so that it
 * is seen in `candor memory` and counted in `candor metrics`, and never silently dropped. Said again, it is counted.
 */
export const UnmetWish = z.object({
  id: z.string().min(1),
  /** What the user wants, in their words, as read from the reason ("a window seat"). */
  wish: z.string().min(1),
  /** The reasons it was read from, newest last (at most a few). */
  reasons: z.array(z.string()),
  /** The tools of the runs it was said about: none of their settings can choose it. */
  tools: z.array(z.string()),
  threadIds: z.array(z.string()).default([]),
  /** How many rejections said it. */
  times: z.number().int().min(1),
  firstAt: z.string(),
  lastAt: z.string(),
  simulated: z.boolean().optional(),
});
export type UnmetWish = z.infer<typeof UnmetWish>;

/** A user's learned settings under [userId, "config"], and the wishes no setting could meet. */
export const UserConfig = z.object({
  adjustments: z.array(Adjustment).default([]),
  wishes: z.array(UnmetWish).optional(),
});
export type UserConfig = z.infer<typeof UserConfig>;

/** An adjustment UNDERSTAND applied to a plan, kept on the plan so the episode and the report can say so. */
export const AppliedAdjustment = z.object({
  adjustmentId: z.string(),
  reflectionId: z.string(),
  stepIds: z.array(z.string()),
  /** What changed, e.g. "search_hotels priority 'quality'". */
  summary: z.string(),
});
export type AppliedAdjustment = z.infer<typeof AppliedAdjustment>;

/**
 * One reflection attempt as the metrics see it, under [userId, "reflection_runs"]: stored whether the reflection
 * passed the gate or not, so rejected reflections, improvement-loop iterations, fallbacks and cost are counted.
 */
export const ReflectionRun = z.object({
  at: z.string(),
  threadId: z.string().nullable(),
  trigger: z.enum(["rejection", "failure"]),
  /** Who wrote the reflection that was judged last (the rules after a model fallback). */
  source: z.enum(["rules", "llm"]),
  /** Model attempts of the improvement loop (0 with the rules alone). */
  iterations: z.number().int().min(0),
  /** The id of the stored reflection; null when none was stored. */
  reflectionId: z.string().nullable(),
  scores: ReflectionScores.nullable(),
  violations: z.array(z.string()).default([]),
  /** Why the model was not used or not listened to: over budget, too late, unusable answers. */
  degraded: z.enum(["budget", "timeout", "model"]).nullable().default(null),
  /** Model cost of the reflection in USD (tokens × the price table). */
  cost: z.number().min(0).default(0),
  tokens: z.number().int().min(0).default(0),
  adjustmentsActivated: z.number().int().min(0).default(0),
  expiresAt: z.string(),
  simulated: z.boolean().optional(),
});
export type ReflectionRun = z.infer<typeof ReflectionRun>;
