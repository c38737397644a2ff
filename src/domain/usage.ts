import { z } from "zod";

/**
 * Where in a run a model was asked: what its tokens are spent on. `synthesis` writes the answer; `review` checks,
 * before it, whether the results answer each part of the request (both in the synthesize node).
 */
export const CallSite = z.enum([
  "planning",
  "recovery",
  "worker",
  "synthesis",
  "review",
  "reflection",
  "grading",
  "other",
]);
export type CallSite = z.infer<typeof CallSite>;

/** One model call: what it was for, which model, the tokens it used and what they cost. */
export const ModelCall = z.object({
  type: z.literal("call"),
  site: CallSite,
  /** The step it served (a model-driven step's loop, a recovery for a failed step); null for the run as a whole. */
  taskId: z.string().nullable(),
  model: z.string(),
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  /** USD, priced when the call was made, so a later change of prices does not rewrite history. */
  costUsd: z.number().min(0),
  at: z.string(),
});
export type ModelCall = z.infer<typeof ModelCall>;

/**
 * A person's answer to a `token_budget` question: the run's new token budget (it only ever grows), or `stopped`:
 * no more model calls in this run.
 */
export const BudgetChange = z.object({
  type: z.literal("budget"),
  tokenBudget: z.number().int().positive(),
  stopped: z.boolean(),
  by: z.string().nullable(),
  at: z.string(),
});
export type BudgetChange = z.infer<typeof BudgetChange>;

/** What the run's `tokens` list holds, in order: every model call, and every change of its token budget. */
export const TokenEvent = z.discriminatedUnion("type", [ModelCall, BudgetChange]);
export type TokenEvent = z.infer<typeof TokenEvent>;

/** Tokens and cost added up. */
export interface UsageTotals {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** The totals of the calls among `events`, optionally only those of one step. */
export function usageTotals(events: readonly TokenEvent[], taskId?: string): UsageTotals {
  const totals: UsageTotals = { calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
  for (const e of events) {
    if (e.type !== "call" || (taskId !== undefined && e.taskId !== taskId)) continue;
    totals.calls += 1;
    totals.inputTokens += e.inputTokens;
    totals.outputTokens += e.outputTokens;
    totals.costUsd += e.costUsd;
  }
  return totals;
}

/**
 * The run's token budget as it stands: the request's `constraints.tokenBudget`, unless a person raised it or
 * stopped spending since; null when the run has none. `used` counts every call so far.
 */
export interface TokenBudget {
  limit: number;
  used: number;
  /** A person chose to stop: no more model calls, whatever the limit. */
  stopped: boolean;
}
export const TokenBudgetState = z.object({ limit: z.number(), used: z.number(), stopped: z.boolean() });

export function tokenBudgetOf(tokenBudget: number | undefined, events: readonly TokenEvent[]): TokenBudget | null {
  return tokenBudgetAfter(tokenBudget === undefined ? null : { limit: tokenBudget, used: 0, stopped: false }, events);
}

/** A budget as it stood (null: none yet) after more events: their calls used, the last change's limit. */
export function tokenBudgetAfter(base: TokenBudget | null, events: readonly TokenEvent[]): TokenBudget | null {
  let limit = base?.limit;
  let stopped = base?.stopped ?? false;
  let used = base?.used ?? 0;
  for (const e of events) {
    if (e.type === "call") used += e.inputTokens + e.outputTokens;
    else {
      limit = e.tokenBudget;
      stopped = e.stopped;
    }
  }
  return limit === undefined ? null : { limit, used, stopped };
}

/** "1,234 tokens (1,000 in, 234 out) · $0.0012": what the report, progress and logs print. */
export function formatUsage(t: Pick<UsageTotals, "inputTokens" | "outputTokens" | "costUsd">): string {
  const n = (x: number) => x.toLocaleString("en-US");
  return `${n(t.inputTokens + t.outputTokens)} tokens (${n(t.inputTokens)} in, ${n(t.outputTokens)} out) · ${formatUsd(t.costUsd)}`;
}

/**
 * Model costs are fractions of a cent per call: two decimals from a dollar, four below, two significant digits
 * below a hundredth of a cent (a few tokens of a cheap model), so a cost is never shown as $0.0000.
 */
export function formatUsd(usd: number): string {
  if (usd >= 1) return `$${usd.toFixed(2)}`;
  if (usd === 0 || usd >= 0.0001) return `$${usd.toFixed(4)}`;
  return `$${usd.toPrecision(2)}`;
}
