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
  // Independent steps run in parallel, so time left follows the longest remaining chain, not the sum.
  const remainingMs = criticalPathMs(plan.steps, (s) => s.status !== "done" && s.status !== "skipped");
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
