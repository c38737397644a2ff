import type { BaseStore } from "@langchain/langgraph-checkpoint";
import { newestItems, userNamespace } from "../memory/user-items.js";
import { z } from "zod";
import { CandorError, ErrorCode } from "../errors.js";
import { clampConfidence } from "./update.js";

/** The store namespace leaf under which a user's plan outcomes live: [userId, "calibration"]. */
const CALIBRATION_NAMESPACE = "calibration";
/** Below this many outcomes the history says too little, so confidence is left as the planner gave it (seed 000). */
const MIN_OUTCOMES = 10;
/** How many of the user's most recent outcomes calibration looks at; older behaviour of the planner fades out. */
const DEFAULT_WINDOW = 50;
/** A plan scored above this is "high confidence"; one that then fails counts as over-confidence. */
const HIGH_CONFIDENCE = 0.8;
/** A plan scored below this is "low confidence"; one that then succeeds counts as under-confidence. */
const LOW_CONFIDENCE = 0.5;
/** Over- or under-confidence rates above this trigger an adjustment. */
const RATE_THRESHOLD = 0.15;
/** The adjustment is this fraction of the rate (seed 000: ±0.1 × rate). */
const ADJUSTMENT_FACTOR = 0.1;

/** One finished plan run, as the calibrator remembers it (seed 000 PlanOutcome). */
export const PlanOutcome = z.object({
  planId: z.string().min(1),
  /** The planner's own confidence in the plan when it was made, before calibration and before any revision. */
  confidence: z.number().min(0).max(1),
  /** The run completed: every needed step succeeded. */
  success: z.boolean(),
  executionMs: z.number().min(0),
  cost: z.number().min(0),
  /** ISO time the run finished. */
  at: z.string(),
  /**
   * Faults were injected into the run (`--fault`, withFaults): kept for the record, never used to calibrate,
   * because a failure put there on purpose says nothing about whether the planner's confidence was right.
   */
  simulated: z.boolean().optional(),
});
export type PlanOutcome = z.infer<typeof PlanOutcome>;

/** How well past confidence predicted success (seed 000 CalibrationMetrics, without the p-value). */
export interface CalibrationMetrics {
  /** Pearson correlation between confidence and success (0/1); null when it is undefined (see correlationNote). */
  correlation: number | null;
  /** Why correlation is null, in plain language; null when it was computed. */
  correlationNote: string | null;
  /** Share of outcomes scored above HIGH_CONFIDENCE that failed (0 when there were none). */
  overConfidenceRate: number;
  /** Share of outcomes scored below LOW_CONFIDENCE that succeeded (0 when there were none). */
  underConfidenceRate: number;
  /** Outcomes scored above HIGH_CONFIDENCE: the denominator of overConfidenceRate. */
  highConfidenceCount: number;
  /** Outcomes scored below LOW_CONFIDENCE: the denominator of underConfidenceRate. */
  lowConfidenceCount: number;
  sampleSize: number;
}

/** The result of calibrating one plan's confidence. */
export interface Calibration {
  raw: number;
  /** The calibrated confidence; equal to raw when nothing changed. */
  confidence: number;
  /** Why confidence changed, for plan.confidenceReasons and the confidence history; null when it did not. */
  reason: string | null;
  metrics: CalibrationMetrics;
}

/**
 * Pure. Calibration metrics over the given outcomes. Pearson's r is undefined when either series is constant
 * (its denominator is zero) — e.g. every plan scored 0.85, or every run succeeded — so it is null then, with a
 * note saying which, rather than NaN leaking into logs and reports.
 */
export function calculateCalibration(outcomes: readonly PlanOutcome[]): CalibrationMetrics {
  const xs = outcomes.map((o) => o.confidence);
  const ys = outcomes.map((o) => (o.success ? 1 : 0));
  const high = outcomes.filter((o) => o.confidence > HIGH_CONFIDENCE);
  const low = outcomes.filter((o) => o.confidence < LOW_CONFIDENCE);
  const { correlation, note } = pearson(xs, ys);
  return {
    correlation,
    correlationNote: note,
    overConfidenceRate: high.length === 0 ? 0 : high.filter((o) => !o.success).length / high.length,
    underConfidenceRate: low.length === 0 ? 0 : low.filter((o) => o.success).length / low.length,
    highConfidenceCount: high.length,
    lowConfidenceCount: low.length,
    sampleSize: outcomes.length,
  };
}

/**
 * Pure. The planner's raw confidence corrected by history (seed 000 `adjust_confidence`): unchanged with fewer
 * than MIN_OUTCOMES outcomes; a high score (> 0.8) lowered by 0.1 × the over-confidence rate when that rate is
 * above 0.15; else a low score (< 0.5) raised by 0.1 × the under-confidence rate when that rate is above 0.15.
 * An adjusted value is clamped to [0, 1] and rounded to 2 decimals; an unadjusted one is returned as given.
 */
export function adjustConfidence(raw: number, metrics: CalibrationMetrics): number {
  if (metrics.sampleSize < MIN_OUTCOMES) return raw;
  if (metrics.overConfidenceRate > RATE_THRESHOLD && raw > HIGH_CONFIDENCE) {
    return clampConfidence(raw - ADJUSTMENT_FACTOR * metrics.overConfidenceRate);
  }
  if (metrics.underConfidenceRate > RATE_THRESHOLD && raw < LOW_CONFIDENCE) {
    return clampConfidence(raw + ADJUSTMENT_FACTOR * metrics.underConfidenceRate);
  }
  return raw;
}

/** Pure. Calibrates `raw` against the outcomes and says why when the value changed. */
export function calibrate(raw: number, outcomes: readonly PlanOutcome[]): Calibration {
  const metrics = calculateCalibration(outcomes);
  const confidence = adjustConfidence(raw, metrics);
  if (confidence === raw) return { raw, confidence, reason: null, metrics };
  const lowered = confidence < raw;
  const rate = lowered ? metrics.overConfidenceRate : metrics.underConfidenceRate;
  const count = lowered ? metrics.highConfidenceCount : metrics.lowConfidenceCount;
  const what = lowered
    ? `over-confident in ${percent(rate)} of ${count} past runs scored above ${HIGH_CONFIDENCE}`
    : `under-confident in ${percent(rate)} of ${count} past runs scored below ${LOW_CONFIDENCE}`;
  const reason = `calibrated from ${raw.toFixed(2)} to ${confidence.toFixed(2)}: ${what} (${metrics.sampleSize} outcomes)`;
  return { raw, confidence, reason, metrics };
}

/**
 * Pure. The plan with its calibrated confidence and the reason appended to its confidence reasons (shown when a
 * human is asked to approve); the same plan when there was no calibration or it changed nothing.
 */
export function applyCalibration<P extends { confidence: number; confidenceReasons: string[] }>(
  plan: P,
  calibration: Calibration | null,
): P {
  if (!calibration?.reason) return plan;
  return {
    ...plan,
    confidence: calibration.confidence,
    confidenceReasons: [...plan.confidenceReasons, calibration.reason],
  };
}

/**
 * A user's plan outcomes in a LangGraph store, under [userId, "calibration"], one item per outcome. Keys start
 * with the outcome's ISO time so they sort chronologically, and end with the plan id so two runs finishing in
 * the same millisecond do not collide.
 */
export class ConfidenceCalibrator {
  private readonly namespace: string[];

  /**
   * @param window how many of the most recent outcomes `calibrate` uses.
   * @throws CandorError INVALID_REQUEST for a user id that cannot be a namespace label.
   */
  constructor(
    private readonly store: BaseStore,
    userId: string,
    private readonly window = DEFAULT_WINDOW,
  ) {
    this.namespace = userNamespace(userId, CALIBRATION_NAMESPACE);
  }

  /**
   * Stores one outcome.
   * @returns the key written.
   * @throws CandorError INVALID_REQUEST for an outcome that does not match PlanOutcome or has an unparseable `at`.
   */
  async record(outcome: PlanOutcome): Promise<string> {
    const parsed = PlanOutcome.safeParse(outcome);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new CandorError(
        `Cannot record the plan outcome: field "${issue?.path.join(".") ?? "?"}" is invalid (${issue?.message ?? "unknown issue"}).`,
        ErrorCode.INVALID_REQUEST,
        { cause: parsed.error },
      );
    }
    const at = new Date(parsed.data.at);
    if (Number.isNaN(at.getTime())) {
      throw new CandorError(
        `Cannot record the outcome of plan ${parsed.data.planId}: "at" is not a date (${parsed.data.at}).`,
        ErrorCode.INVALID_REQUEST,
      );
    }
    const key = `${at.toISOString()}_${parsed.data.planId}`;
    await this.store.put(this.namespace, key, { ...parsed.data, at: at.toISOString() });
    return key;
  }

  /**
   * The most recent valid outcomes, newest first. Items that no longer match PlanOutcome are skipped rather
   * than failing the run that wants calibrating. Reads every item and sorts by key, because stores differ in
   * search order (SqliteStore newest first, InMemoryStore oldest first).
   */
  async outcomes(limit = this.window): Promise<PlanOutcome[]> {
    return newestItems(this.store, this.namespace, PlanOutcome, limit);
  }

  /** Calibrates a new plan's raw confidence against the user's last `window` real (not simulated) outcomes. */
  async calibrate(raw: number): Promise<Calibration> {
    const real = (await this.outcomes(Number.MAX_SAFE_INTEGER)).filter((o) => !o.simulated);
    return calibrate(raw, real.slice(0, this.window));
  }
}

function pearson(xs: readonly number[], ys: readonly number[]): { correlation: number | null; note: string | null } {
  const n = xs.length;
  if (n < 2) return { correlation: null, note: `needs at least 2 outcomes, has ${n}` };
  // Compare values, not a computed variance: the mean of equal floats can differ from them in the last bit.
  if (xs.every((x) => x === xs[0]))
    return {
      correlation: null,
      note: `every plan had the same confidence (${xs[0]}), so confidence cannot explain success`,
    };
  if (ys.every((y) => y === ys[0]))
    return {
      correlation: null,
      note: `every run ${ys[0] === 1 ? "succeeded" : "failed"}, so success does not vary with confidence`,
    };
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i]! - mx;
    const dy = ys[i]! - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  // Rounding can push |r| a hair past 1 for perfectly correlated data.
  return { correlation: Math.max(-1, Math.min(1, sxy / Math.sqrt(sxx * syy))), note: null };
}

function percent(rate: number): string {
  return `${Math.round(rate * 100)}%`;
}
