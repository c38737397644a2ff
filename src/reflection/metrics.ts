import type { Episode } from "../domain/report.js";
import type { Reflection, ReflectionRun, UnmetWish } from "../domain/reflection.js";
import { calculateCalibration, type PlanOutcome } from "../confidence/calibrator.js";

/** Seed 000's target for the correlation between a plan's confidence and its success. */
const CALIBRATION_TARGET = 0.7;
/** Seed 001's target for the share of runs under a learned adjustment that the user accepts. */
const SUCCESS_AFTER_REFLECTION_TARGET = 0.78;

/** What `candor metrics` reports (seed 001 scenario 20, seed 002's plan metrics, seed 000's calibration). */
export interface LearningMetrics {
  scope: { users: string[]; practiceRunsLeftOut: number };
  planning: {
    plansCreated: number;
    planningMsP50: number | null;
    planningMsP95: number | null;
    /** Runs that completed, of those that reached an end (rejected plans left out: nothing ran). */
    planSuccessRate: number | null;
    averageSteps: number | null;
    averageConfidence: number | null;
  };
  reflection: {
    reflections: number;
    qualityAverage: number | null;
    qualityP95: number | null;
    depthAverage: number | null;
    actionabilityAverage: number | null;
    /** Reflections the quality gate refused (nothing stored). */
    rejected: number;
    /** Model attempts per reflection that asked a model. */
    improvementIterationsAverage: number | null;
    timeouts: number;
    overBudget: number;
    costUsd: number;
  };
  adjustments: {
    /** Adjustments applied to runs (one per adjustment per run). */
    applied: number;
    /** Runs under a learned adjustment that the user judged. */
    judgedAfterReflection: number;
    successAfterReflectionRate: number | null;
    target: number;
  };
  /** Preferences users stated that no tool setting can express: distinct wishes, and the rejections that said them. */
  wishes: { unmet: number; said: number };
  revisions: {
    /** Revisions made, and those in runs that still finished (completed or partial). */
    total: number;
    successRate: number | null;
  };
  calibration: { correlation: number | null; note: string | null; target: number; outcomes: number };
}

/** What the metrics are computed from: one or more users' memory, real runs only. */
export interface MetricsInput {
  users: string[];
  episodes: readonly Episode[];
  reflections: readonly Reflection[];
  runs: readonly ReflectionRun[];
  outcomes: readonly PlanOutcome[];
  /** Plans the decision log recorded for these users' threads (including ones that never finished); null: no log. */
  plansLogged: number | null;
  /** The users' unmet wishes (see wishes.ts); absent: none. */
  wishes?: readonly UnmetWish[];
}

/** Pure. The figures; a rate or average over nothing is null, never 0 or NaN. */
export function learningMetrics(input: MetricsInput): LearningMetrics {
  const real = input.episodes.filter((e) => !e.simulated);
  const ran = real.filter((e) => e.status !== "rejected");
  const planning = real.flatMap((e) => (e.planningMs === undefined ? [] : [e.planningMs]));
  const reflections = input.reflections.filter((r) => !r.simulated);
  const runs = input.runs.filter((r) => !r.simulated);
  const modelRuns = runs.filter((r) => r.iterations > 0);
  const underAdjustment = real.filter((e) => (e.applied ?? []).length > 0);
  const judged = underAdjustment.filter((e) => e.evaluation?.source === "user");
  const revisions = real.flatMap((e) => e.strategiesUsed.map(() => e.status === "completed" || e.status === "partial"));
  const calibration = calculateCalibration(input.outcomes.filter((o) => !o.simulated));
  const wishes = (input.wishes ?? []).filter((w) => !w.simulated);
  return {
    scope: { users: input.users, practiceRunsLeftOut: input.episodes.length - real.length },
    planning: {
      plansCreated: Math.max(input.plansLogged ?? 0, real.length),
      planningMsP50: percentile(planning, 0.5),
      planningMsP95: percentile(planning, 0.95),
      planSuccessRate: rate(ran.filter((e) => e.status === "completed").length, ran.length),
      averageSteps: average(real.map((e) => e.plan.steps.length)),
      averageConfidence: average(real.map((e) => e.confidenceInitial)),
    },
    reflection: {
      reflections: reflections.length,
      qualityAverage: average(reflections.map((r) => r.scores.quality)),
      qualityP95: percentile(
        reflections.map((r) => r.scores.quality),
        0.95,
      ),
      depthAverage: average(reflections.map((r) => r.scores.depth)),
      actionabilityAverage: average(reflections.map((r) => r.scores.actionability)),
      rejected: runs.filter((r) => r.reflectionId === null && r.degraded !== "timeout").length,
      improvementIterationsAverage: average(modelRuns.map((r) => r.iterations)),
      timeouts: runs.filter((r) => r.degraded === "timeout").length,
      overBudget: runs.filter((r) => r.degraded === "budget").length,
      costUsd: runs.reduce((sum, r) => sum + r.cost, 0),
    },
    adjustments: {
      applied: underAdjustment.reduce((sum, e) => sum + (e.applied ?? []).length, 0),
      judgedAfterReflection: judged.length,
      successAfterReflectionRate: rate(
        judged.filter((e) => e.evaluation?.verdict === "accepted").length,
        judged.length,
      ),
      target: SUCCESS_AFTER_REFLECTION_TARGET,
    },
    wishes: { unmet: wishes.length, said: wishes.reduce((sum, w) => sum + w.times, 0) },
    revisions: { total: revisions.length, successRate: rate(revisions.filter(Boolean).length, revisions.length) },
    calibration: {
      correlation: calibration.correlation,
      note: calibration.correlationNote,
      target: CALIBRATION_TARGET,
      outcomes: calibration.sampleSize,
    },
  };
}

/** The metrics as lines for a person. */
export function metricsLines(m: LearningMetrics): string[] {
  const n = (v: number | null, digits = 2) => (v === null ? "n/a" : v.toFixed(digits));
  const pct = (v: number | null) => (v === null ? "n/a" : `${Math.round(v * 100)}%`);
  const ms = (v: number | null) => (v === null ? "n/a" : `${Math.round(v)} ms`);
  const p = m.planning;
  const r = m.reflection;
  const a = m.adjustments;
  return [
    `Metrics for ${m.scope.users.length === 1 ? `user ${m.scope.users[0]}` : `${m.scope.users.length} users`}${m.scope.practiceRunsLeftOut > 0 ? ` (${m.scope.practiceRunsLeftOut} practice runs left out)` : ""}:`,
    `Planning:    ${p.plansCreated} plans · planning p50 ${ms(p.planningMsP50)}, p95 ${ms(p.planningMsP95)} · success ${pct(p.planSuccessRate)} · ${n(p.averageSteps, 1)} steps per plan · confidence ${n(p.averageConfidence)}`,
    `Reflection:  ${r.reflections} stored · quality avg ${n(r.qualityAverage)}, p95 ${n(r.qualityP95)} · depth ${n(r.depthAverage)} · actionability ${n(r.actionabilityAverage)} · ${r.rejected} rejected by the gate · ${n(r.improvementIterationsAverage, 1)} model attempts per model reflection · ${r.timeouts} timed out · ${r.overBudget} over budget · $${r.costUsd.toFixed(4)}`,
    `Adjustments: ${a.applied} applied · success after reflection ${pct(a.successAfterReflectionRate)} of ${a.judgedAfterReflection} judged (target ${pct(a.target)})`,
    `Wishes:      ${m.wishes.unmet} no tool setting can choose (said in ${m.wishes.said} rejection${m.wishes.said === 1 ? "" : "s"}; see candor memory)`,
    `Revisions:   ${m.revisions.total} · in runs that finished ${pct(m.revisions.successRate)}`,
    `Calibration: r = ${n(m.calibration.correlation)} over ${m.calibration.outcomes} outcomes (target ${m.calibration.target})${m.calibration.note ? ` — ${m.calibration.note}` : ""}`,
  ];
}

function average(xs: readonly number[]): number | null {
  return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
}

function rate(part: number, whole: number): number | null {
  return whole === 0 ? null : part / whole;
}

/** Nearest-rank percentile. */
function percentile(xs: readonly number[], q: number): number | null {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
