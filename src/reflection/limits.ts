import { costOf, DEFAULT_PRICES, type PriceTable } from "../reasoning/prices.js";

// The price table is the run's (src/reasoning/prices.ts); reflection prices its calls with the same one.
export { costOf };

/**
 * What reflection may cost and take (seed 001 scenarios 12, 13): a daily model budget per user, priced from a
 * table of USD per million tokens, and a hard time limit after which nothing is learned from the run.
 */

export interface ReflectionLimits {
  /** USD a user's reflections may cost per UTC day (default 5.00). */
  dailyBudgetUsd: number;
  /** The whole reflection, every attempt included (default 10 000 ms); past it, nothing is learned from the run. */
  timeoutMs: number;
  prices: PriceTable;
  /** Tokens one reflection call is expected to use, for the check before it is made. */
  estimate: { inputTokens: number; outputTokens: number };
}

export const DEFAULT_LIMITS: ReflectionLimits = {
  dailyBudgetUsd: 5,
  timeoutMs: 10_000,
  prices: DEFAULT_PRICES,
  estimate: { inputTokens: 2500, outputTokens: 700 },
};

/** USD one more reflection call of `model` is expected to cost. */
export function estimatedCost(model: string, limits: ReflectionLimits): number {
  return costOf({ model, ...limits.estimate }, limits.prices);
}

/** "$5.01": money as the seed writes it, to the cent. */
export function usd(n: number): string {
  return `$${n.toFixed(2)}`;
}
