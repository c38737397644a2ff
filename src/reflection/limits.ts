import { z } from "zod";
import type { ModelUsage } from "../reasoning/types.js";

/**
 * What reflection may cost and take (seed 001 scenarios 12, 13): a daily model budget per user, priced from a
 * table of USD per million tokens, and a hard time limit after which nothing is learned from the run.
 */

/** USD per million input and output tokens. */
const TokenPrice = z.object({ input: z.number().min(0), output: z.number().min(0) });
type TokenPrice = z.infer<typeof TokenPrice>;

/** Model name → price; "*" prices any model not listed. Configure with CANDOR_MODEL_PRICES (JSON). */
export const PriceTable = z.record(z.string(), TokenPrice);
export type PriceTable = z.infer<typeof PriceTable>;

/** List prices when this was written; a model not listed is priced as the dearest listed, so a budget errs safe. */
export const DEFAULT_PRICES: PriceTable = {
  "gpt-4o-mini": { input: 0.15, output: 0.6 },
  "gpt-4o": { input: 2.5, output: 10 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6 },
  "gpt-4.1": { input: 2, output: 8 },
  "*": { input: 2.5, output: 10 },
};

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

/** The price of a model: its own entry, else a dated variant's base ("gpt-4o-mini-2024-07-18"), else "*". */
function priceOf(model: string, prices: PriceTable): TokenPrice {
  if (prices[model]) return prices[model];
  const base = Object.keys(prices)
    .filter((k) => k !== "*" && model.startsWith(`${k}-`))
    .sort((a, b) => b.length - a.length)[0];
  return (base ? prices[base] : prices["*"]) ?? { input: 0, output: 0 };
}

/** USD of one call. */
export function costOf(usage: ModelUsage, prices: PriceTable): number {
  const p = priceOf(usage.model, prices);
  return (usage.inputTokens * p.input + usage.outputTokens * p.output) / 1_000_000;
}

/** USD one more reflection call of `model` is expected to cost. */
export function estimatedCost(model: string, limits: ReflectionLimits): number {
  return costOf({ model, ...limits.estimate }, limits.prices);
}

/** "$5.01": money as the seed writes it, to the cent. */
export function usd(n: number): string {
  return `$${n.toFixed(2)}`;
}
