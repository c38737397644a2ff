import type { Progress } from "../domain/notification.js";
import type { Plan } from "../domain/plan.js";
import { criticalPathMs } from "../planning/validate.js";

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
  const settled = plan.steps.filter((s) => s.status === "done" || s.status === "skipped");
  const remaining = plan.steps.filter((s) => s.status !== "done" && s.status !== "skipped");
  const estimatedSoFar = settled.reduce((sum, s) => sum + s.estimates.durationMs, 0);
  const pace = estimatedSoFar > 0 && elapsedMs > 0 ? Math.min(10, Math.max(0.1, elapsedMs / estimatedSoFar)) : 1;
  // Independent steps run in parallel, so time left follows the longest remaining chain, not the sum.
  const remainingIds = new Set(remaining.map((s) => s.id));
  const remainingMs = criticalPathMs(
    remaining.map((s) => ({ ...s, dependsOn: s.dependsOn.filter((d) => remainingIds.has(d)) })),
  );
  return {
    at: new Date().toISOString(),
    taskId: last.taskId,
    status: last.status,
    done: settled.length,
    skipped: settled.filter((s) => s.status === "skipped").length,
    total,
    percent: total === 0 ? 100 : Math.round((settled.length / total) * 1000) / 10,
    etaMs: Math.round(remainingMs * pace),
  };
}
