import type { ConfidencePoint, StrategyType } from "../domain/revision.js";

/** Confidence change per strategy (seed 000 scenarios 4–7; SKIP loses part of the answer). */
export const STRATEGY_DELTAS: Record<StrategyType, number> = {
  RETRY_DIFFERENT_AGENT: -0.1,
  RETRY_WITH_PARAMS: -0.05,
  SWAP_TOOL: -0.08,
  DECOMPOSE: -0.05,
  ADJUST_PARAMETERS: -0.08,
  FIX_DEPENDENCIES: -0.1,
  FIND_WORKAROUND: -0.15,
  SKIP: -0.05,
};

/** Rounds to 2 decimals so 0.85 − 0.10 is 0.75, not 0.7499999. */
export function clampConfidence(value: number): number {
  return Math.round(Math.max(0, Math.min(1, value)) * 100) / 100;
}

export function confidencePoint(value: number, reason: string): ConfidencePoint {
  return { at: new Date().toISOString(), value: clampConfidence(value), reason };
}

/**
 * The adjustment after a run (seed 000 scenarios 9–10): +0.05 when every step succeeded, −0.10 / −0.20 / −0.35
 * for 1 / 2 / 3+ steps that failed and stayed failed.
 */
export function outcomeDelta(failedSteps: number): number {
  if (failedSteps <= 0) return 0.05;
  if (failedSteps === 1) return -0.1;
  if (failedSteps === 2) return -0.2;
  return -0.35;
}
