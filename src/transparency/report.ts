import type { ExecutionFeedback } from "../domain/feedback.js";
import type { Plan } from "../domain/plan.js";
import { missingSteps, whyMissing } from "../planning/schedule.js";
import { isReactive } from "../domain/plan.js";
import { unansweredByUnderstanding } from "../planning/coverage.js";
import type { ExecutionReport, RunStatus } from "../domain/report.js";
import type { ConfidencePoint, PlanRevision } from "../domain/revision.js";
import { formatUsage, tokenBudgetOf, usageTotals, type CallSite, type TokenEvent } from "../domain/usage.js";
import type { TokenUsage } from "../domain/report.js";

export interface ReportFacts {
  request: string;
  plan: Plan | null;
  feedback: readonly ExecutionFeedback[];
  revisions: readonly PlanRevision[];
  confidenceHistory: readonly ConfidencePoint[];
  status: RunStatus;
  failureReason: string | null;
  lessons: readonly string[];
  startedAt: string;
  /** The run's model calls and budget changes (state `tokens`); absent or empty without a model. */
  tokens?: readonly TokenEvent[];
  /** The request's token budget (`constraints.tokenBudget`). */
  tokenBudget?: number;
}

/** A step's or the run's usage, or null when no call was made: a run without a model shows no token figures. */
function usageOrNull(events: readonly TokenEvent[], taskId?: string): TokenUsage | null {
  const t = usageTotals(events, taskId);
  return t.calls > 0 ? { ...t, costUsd: round(t.costUsd) } : null;
}

function round(usd: number): number {
  return Math.round(usd * 1_000_000) / 1_000_000;
}

function runTokens(events: readonly TokenEvent[]) {
  const total = usageOrNull(events);
  if (!total) return null;
  const bySite: Partial<Record<CallSite, TokenUsage>> = {};
  for (const e of events) {
    if (e.type !== "call") continue;
    const t = (bySite[e.site] ??= { calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 });
    t.calls += 1;
    t.inputTokens += e.inputTokens;
    t.outputTokens += e.outputTokens;
    t.costUsd = round(t.costUsd + e.costUsd);
  }
  return { ...total, bySite };
}

const OUTCOME: Record<RunStatus, string> = {
  completed: "Completed: every step succeeded.",
  partial: "Partly completed: some steps were skipped and their results are missing.",
  failed: "Failed.",
  rejected: "Rejected by a human before any step ran.",
  aborted: "Aborted.",
  planning: "Still planning.",
  awaiting_approval: "Waiting for a human.",
  executing: "Still executing.",
  replanning: "Still replanning.",
  reflecting: "Reflecting.",
};

function outcomeText(facts: ReportFacts, failedSteps: number): string {
  const undone =
    facts.plan && facts.status === "partial" && missingSteps(facts.plan).length === 0
      ? unansweredByUnderstanding(facts.plan)
      : [];
  if (undone.length > 0) {
    const what = undone.map((m) => `"${m.text}" (${m.why})`).join("; ");
    return `Partly completed: every step succeeded, but part of the request was not done: ${what}.${facts.failureReason ? ` ${facts.failureReason}` : ""}`;
  }
  if (facts.status === "completed" && facts.revisions.length > 0) {
    return `Completed: every step succeeded after recovering from ${failedSteps} failed step(s) with ${facts.revisions.length} revision(s).`;
  }
  return facts.failureReason ? `${OUTCOME[facts.status]} ${facts.failureReason}` : OUTCOME[facts.status];
}

/** The post-execution report (seed 000 scenario 20): summary, task breakdown, revisions, confidence, lessons. */
export function buildReport(facts: ReportFacts): ExecutionReport {
  const steps = facts.plan?.steps ?? [];
  const events = facts.tokens ?? [];
  const byTask = new Map<string, ExecutionFeedback[]>();
  for (const f of facts.feedback) byTask.set(f.taskId, [...(byTask.get(f.taskId) ?? []), f]);
  // Every step that ever ran is listed, including those a revision replaced: hiding them would hide failures.
  const replacedIds = [...new Set(facts.revisions.flatMap((r) => r.removedStepIds))].filter(
    (id) => !steps.some((s) => s.id === id),
  );
  const tasks = [
    ...replacedIds.map((id) => {
      const fb = byTask.get(id) ?? [];
      return {
        id,
        description: `(replaced) ${id}`,
        workerType: fb[0]?.workerType ?? "",
        status: "replaced",
        attempts: fb.reduce((n, f) => n + f.attempt, 0),
        durationMs: fb.reduce((n, f) => n + f.durationMs, 0),
        cost: fb.reduce((n, f) => n + f.cost, 0),
        lastFeedback: fb[fb.length - 1]?.feedbackType ?? null,
        errors: fb.flatMap((f) => f.errors),
        replaces: null,
        skipReason: null,
        tokens: usageOrNull(events, id),
      };
    }),
    ...steps.map((s) => {
      const fb = byTask.get(s.id) ?? [];
      return {
        id: s.id,
        description: s.description,
        workerType: s.workerType,
        status: s.status,
        attempts: fb.reduce((n, f) => n + f.attempt, 0),
        durationMs: fb.reduce((n, f) => n + f.durationMs, 0),
        cost: fb.reduce((n, f) => n + f.cost, 0),
        lastFeedback: fb[fb.length - 1]?.feedbackType ?? null,
        errors: fb.flatMap((f) => f.errors),
        replaces: s.replaces,
        skipReason: s.skipReason,
        tokens: usageOrNull(events, s.id),
      };
    }),
  ];
  const missing = facts.plan
    ? [
        ...missingSteps(facts.plan).map(
          (s) => `${s.description} (${s.id}): ${s.status === "done" ? whyMissing(s) : (s.skipReason ?? "failed")}`,
        ),
        ...unansweredByUnderstanding(facts.plan).map((m) => `"${m.text}": ${m.why}`),
      ]
    : [];
  const ended = Date.now();
  // DEPENDENCY_FAILURE steps never ran: they are counted as skipped, not failed (as reflection does).
  const failedIds = new Set(
    facts.feedback
      .filter(
        (f) =>
          f.feedbackType !== "SUCCESS" &&
          f.feedbackType !== "PARTIAL_SUCCESS" &&
          f.feedbackType !== "DEPENDENCY_FAILURE",
      )
      .map((f) => f.taskId),
  );
  return {
    planId: facts.plan?.planId ?? "(no plan)",
    request: facts.request,
    summary: {
      status: facts.status,
      outcome: outcomeText(facts, failedIds.size),
      totalDurationMs: Math.max(1, ended - Date.parse(facts.startedAt)),
      totalCost: Math.round(facts.feedback.reduce((n, f) => n + f.cost, 0) * 10000) / 10000,
      stepsSucceeded: steps.filter((s) => s.status === "done").length,
      stepsFailed: failedIds.size,
      stepsSkipped: steps.filter((s) => s.status === "skipped").length,
      revisionCount: facts.revisions.length,
      failureReason: facts.failureReason,
      tokens: runTokens(events),
      tokenBudget: tokenBudgetOf(facts.tokenBudget, events)?.limit ?? null,
    },
    tasks,
    revisions: facts.revisions.map((r) => ({
      revisionId: r.revisionId,
      strategy: r.strategy,
      failedTaskId: r.failedTaskId,
      failureClass: r.failureClass,
      reason: r.rationale,
      changes: r.changes,
      confidenceFrom: r.confidenceBefore,
      confidenceTo: r.confidenceAfter,
    })),
    confidenceEvolution: [...facts.confidenceHistory],
    // The reasons a person was shown at approval time, kept with the report so `report --json` can say why.
    confidenceReasons: [...(facts.plan?.confidenceReasons ?? [])],
    reactive: facts.plan && isReactive(facts.plan) ? facts.plan.contextSummary : null,
    lessonsLearned: facts.lessons.length > 0 ? [...facts.lessons] : ["No lessons recorded."],
    missing,
    generatedAt: new Date(ended).toISOString(),
  };
}

/** The report as text for people (`candor report`, the end of `candor run`). */
export function renderReport(report: ExecutionReport): string {
  const s = report.summary;
  const out: string[] = [];
  out.push(report.reactive ? `Report for reactive run ${report.planId}` : `Report for plan ${report.planId}`);
  // One line each: the request (and an error quoting it) cannot print lines that read as the report's own.
  out.push(`  Request: ${report.request.replace(/\r\n|\r|\n/g, "␤")}`);
  if (report.reactive) out.push(`  Mode: reactive mode, no plan — ${report.reactive}`);
  out.push(`  Outcome: ${s.outcome.replace(/\r\n|\r|\n/g, "␤")}`);
  out.push(
    `  Status: ${s.status} · ${s.stepsSucceeded} done, ${s.stepsFailed} failed, ${s.stepsSkipped} skipped · ${s.revisionCount} revision(s) · ${(s.totalDurationMs / 1000).toFixed(2)} s · cost ${s.totalCost}`,
  );
  if (s.tokens) {
    const sites = Object.entries(s.tokens.bySite)
      .map(
        ([site, t]) => `${site} ${t.calls} call(s), ${(t.inputTokens + t.outputTokens).toLocaleString("en-US")} tokens`,
      )
      .join("; ");
    const budget = s.tokenBudget !== null ? ` of a ${s.tokenBudget.toLocaleString("en-US")}-token budget` : "";
    out.push(`  Model: ${s.tokens.calls} call(s) · ${formatUsage(s.tokens)}${budget} — ${sites}`);
  }
  out.push("", "Tasks:");
  for (const t of report.tasks) {
    const extra = [
      t.replaces ? `replaces ${t.replaces}` : "",
      t.skipReason ?? "",
      t.errors.length ? `errors: ${t.errors.join(" | ")}` : "",
    ]
      .filter(Boolean)
      .join("; ");
    out.push(
      `  - ${t.id} [${t.workerType}] ${t.status}, ${t.attempts} attempt(s), ${Math.round(t.durationMs)} ms${t.tokens ? `, ${t.tokens.calls} model call(s), ${formatUsage(t.tokens)}` : ""}${extra ? ` — ${extra}` : ""}`,
    );
  }
  if (report.revisions.length > 0) {
    out.push("", "Revisions:");
    for (const r of report.revisions) {
      out.push(
        `  - ${r.revisionId} ${r.strategy} for ${r.failedTaskId} (${r.failureClass}), confidence ${r.confidenceFrom.toFixed(2)} → ${r.confidenceTo.toFixed(2)}`,
      );
      out.push(`      why: ${r.reason}`);
      for (const c of r.changes) out.push(`      · ${c}`);
    }
  }
  out.push("", "Confidence:");
  out.push(`  ${report.confidenceEvolution.map((p) => `${p.value.toFixed(2)} (${p.reason})`).join(" → ") || "n/a"}`);
  if (report.confidenceReasons.length > 0) out.push(`  Why: ${report.confidenceReasons.join("; ")}`);
  if (report.missing.length > 0) {
    out.push("", "Missing:");
    for (const m of report.missing) out.push(`  - ${m}`);
  }
  out.push("", "Lessons learned:");
  for (const l of report.lessonsLearned) out.push(`  - ${l}`);
  return out.join("\n");
}
