import type { Progress } from "../domain/notification.js";
import type { Plan } from "../domain/plan.js";
import { criticalPathMs } from "../planning/validate.js";
import { usageTotals, type TokenEvent } from "../domain/usage.js";

/** Progress with the run's model tokens and cost so far; unchanged when no model was called (no "0 tokens"). */
export function withTokens(p: Progress, events: readonly TokenEvent[]): Progress {
  const t = usageTotals(events);
  return t.calls > 0 ? { ...p, tokens: t } : p;
}

/**
 * Percent done and time left (seed 000 scenario 17). Settled steps (done or skipped) count as done; time left
 * is the remaining steps' estimates scaled by how the run has compared with its estimates so far.
 */
export function computeProgress(
  plan: Plan,
  elapsedMs: number,
  last: { taskId: string | null; status: Progress["status"] },
  /** The remaining steps' longest chain of estimates (a meter passes the one it keeps; see progressMeter). */
  remaining: (plan: Plan, settled: number) => number = remainingChainMs,
): Progress {
  const total = plan.steps.length;
  // One pass and no copies: it runs after every step, so on a 1,000-step plan it must stay linear.
  let settled = 0;
  let skipped = 0;
  let estimatedSoFar = 0;
  for (const s of plan.steps) {
    if (s.status !== "done" && s.status !== "skipped") continue;
    settled++;
    if (s.status === "skipped") skipped++;
    estimatedSoFar += s.estimates.durationMs;
  }
  const pace = estimatedSoFar > 0 && elapsedMs > 0 ? Math.min(10, Math.max(0.1, elapsedMs / estimatedSoFar)) : 1;
  const remainingMs = remaining(plan, settled);
  return {
    at: new Date().toISOString(),
    taskId: last.taskId,
    status: last.status,
    done: settled,
    skipped,
    total,
    percent: total === 0 ? 100 : Math.round((settled / total) * 1000) / 10,
    etaMs: Math.round(remainingMs * pace),
  };
}

/** Independent steps run in parallel, so time left follows the longest remaining chain, not the sum. */
function remainingChainMs(plan: Plan): number {
  return criticalPathMs(plan.steps, (s) => s.status !== "done" && s.status !== "skipped");
}

/**
 * Progress for one run's steps as they settle. The longest remaining chain is linear in the plan, so computing it
 * after every step made a run's progress quadratic in its plan (a sixth of a 1,000-step run's time). The meter
 * computes it again once at least 1% of the plan has settled since it last did (so at most ~100 times a run, and
 * after every step of a plan under 100 steps); in between, the time left keeps that chain, scaled by the pace as
 * it changes. Percent, counts and the step named are exact every time.
 */
export function progressMeter(): (
  plan: Plan,
  elapsedMs: number,
  last: { taskId: string | null; status: Progress["status"] },
) => Progress {
  let kept: { settled: number; ms: number } | null = null;
  const remaining = (plan: Plan, settled: number) => {
    const every = Math.max(1, Math.floor(plan.steps.length / 100));
    if (!kept || Math.abs(settled - kept.settled) >= every) kept = { settled, ms: remainingChainMs(plan) };
    return kept.ms;
  };
  return (plan, elapsedMs, last) => computeProgress(plan, elapsedMs, last, remaining);
}
