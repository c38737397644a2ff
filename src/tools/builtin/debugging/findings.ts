import { z } from "zod";
import type { ExecutionFeedback } from "../../../domain/feedback.js";
import { TERMINAL_STATUSES } from "../../../domain/report.js";
import { resultOfFeedback } from "../../../domain/plan-state.js";
import { CandorError, ErrorCode } from "../../../errors.js";
import type { ArchivedState, ArchivedThread, LoggedDecision } from "./archive.js";

/*
 * What the debugging tools find in a thread, as pure functions over its archived state and decisions: the tools
 * only fetch and call these, so every rule is tested without a database.
 */

/** A step is slow when it took this many times its estimate … */
const SLOW_FACTOR = 3;
/** … and at least this long: a 10 ms step taking 40 ms is noise, not a finding. */
const SLOW_MIN_MS = 1000;
/** Confidence below which a run counts as unsure when its settings do not say (the default approval threshold). */
const LOW_CONFIDENCE = 0.5;

const AnomalyKind = z.enum(["failure", "escalation", "slow_step", "low_confidence", "outcome"]);
type AnomalyKind = z.infer<typeof AnomalyKind>;

/** One thing in a run worth a developer's look. */
export const Anomaly = z.object({
  kind: AnomalyKind,
  taskId: z.string().nullable(),
  /** One plain-language line: what happened. */
  detail: z.string(),
});
export type Anomaly = z.infer<typeof Anomaly>;

/** A thread as review_runs shows it. */
export const ReviewedThread = z.object({
  threadId: z.string(),
  request: z.string(),
  createdAt: z.string(),
  /** Null when the thread stopped before its first checkpoint. */
  status: z.string().nullable(),
  anomalies: z.array(Anomaly),
  /** How each failure was recovered, one line per plan revision ("flight → FIND_WORKAROUND"). */
  recoveries: z.array(z.string()),
});
export type ReviewedThread = z.infer<typeof ReviewedThread>;

/** What a status says about a run's end, when it ended badly. */
const BAD_OUTCOMES: Readonly<Record<string, string>> = {
  failed: "the run failed",
  partial: "the run finished with parts missing",
  aborted: "the run was aborted",
  rejected: "the plan was rejected",
};

/** Every anomaly of one thread, in the order the run met them. */
export function anomaliesOf(state: ArchivedState, decisions: readonly LoggedDecision[]): Anomaly[] {
  const found: Anomaly[] = [];
  const estimates = new Map((state.plan?.steps ?? []).map((s) => [s.id, s.estimates.durationMs]));
  for (const f of state.feedback) {
    if (f.feedbackType !== "SUCCESS") {
      const what = f.failureClass ? `${f.feedbackType} (${f.failureClass})` : f.feedbackType;
      found.push({
        kind: "failure",
        taskId: f.taskId,
        detail: `${f.taskId}${f.tool ? ` via ${f.tool}` : ""}: ${what}${f.errors[0] ? ` — ${f.errors[0]}` : ""}`,
      });
    }
    const estimate = estimates.get(f.taskId);
    if (estimate !== undefined && f.durationMs >= SLOW_MIN_MS && f.durationMs > estimate * SLOW_FACTOR)
      found.push({
        kind: "slow_step",
        taskId: f.taskId,
        detail: `${f.taskId} took ${f.durationMs} ms, over ${SLOW_FACTOR}× its estimate of ${estimate} ms`,
      });
  }
  const escalated = new Set<string>();
  for (const n of state.notifications.filter((n) => n.kind === "escalation")) {
    escalated.add(n.taskId ?? "");
    found.push({ kind: "escalation", taskId: n.taskId, detail: `${n.title}${n.message ? ` — ${n.message}` : ""}` });
  }
  // The decision log also has escalations whose notification a crash may have cut off.
  for (const d of decisions.filter((d) => d.operation === "escalation" && !escalated.has(d.taskId ?? ""))) {
    escalated.add(d.taskId ?? "");
    found.push({
      kind: "escalation",
      taskId: d.taskId ?? null,
      detail: `${d.decision ?? "escalated"}: ${d.reasoning ?? ""}`,
    });
  }
  const threshold = state.approvalThreshold ?? LOW_CONFIDENCE;
  const lowest = [...state.confidenceHistory].sort((a, b) => a.value - b.value)[0];
  if (lowest && lowest.value < threshold)
    found.push({
      kind: "low_confidence",
      taskId: null,
      detail: `confidence fell to ${lowest.value.toFixed(2)} (below ${threshold}): ${lowest.reason}`,
    });
  const bad = state.status ? BAD_OUTCOMES[state.status] : undefined;
  if (bad)
    found.push({
      kind: "outcome",
      taskId: null,
      detail: `${bad}${state.failureReason ? `: ${state.failureReason}` : ""}`,
    });
  return found;
}

/** A thread's row in review_runs. */
export function reviewThread(
  thread: ArchivedThread,
  state: ArchivedState,
  decisions: readonly LoggedDecision[],
): ReviewedThread {
  return {
    threadId: thread.threadId,
    request: thread.request,
    createdAt: thread.createdAt,
    status: state.status,
    anomalies: anomaliesOf(state, decisions),
    recoveries: state.revisions.map((r) => `${r.failedTaskId} (${r.failureClass}) → ${r.strategy}`),
  };
}

/** The thread most worth a closer look: the most anomalies, the newest first among equals; null when none has any. */
export function focusOf(threads: readonly ReviewedThread[]): string | null {
  const ranked = threads
    .filter((t) => t.anomalies.length > 0)
    .sort((a, b) => b.anomalies.length - a.anomalies.length || b.createdAt.localeCompare(a.createdAt));
  return ranked[0]?.threadId ?? null;
}

/** A human decision on a run: a plan approval or escalation answered, or a tool call approved or denied. */
const ApprovalEntry = z.object({
  at: z.string().nullable(),
  kind: z.string(),
  taskId: z.string().nullable(),
  decision: z.string(),
  detail: z.string(),
});
type ApprovalEntry = z.infer<typeof ApprovalEntry>;

/** Every human decision of a run, oldest first: from the decision log, else the state's own records. */
function approvalsOf(state: ArchivedState, decisions: readonly LoggedDecision[]): ApprovalEntry[] {
  const logged = decisions
    .filter((d) => d.operation === "human_decision")
    .map((d) => ({
      at: d.time ?? null,
      kind: (d.input ?? "decision").split(" ")[0]!,
      taskId: d.taskId ?? null,
      decision: d.decision ?? "?",
      detail: d.reasoning ?? "",
    }));
  if (logged.length > 0) return logged;
  // Without a decision log (a library run with a silent log) the state still holds tool approvals and the latest one.
  const tools = state.feedback.flatMap((f) =>
    f.approval
      ? [
          {
            at: f.approval.at,
            kind: "tool_approval",
            taskId: f.taskId,
            decision: f.approval.decision,
            detail: `${f.tool ?? "the call"}${f.approval.comment ? `: ${f.approval.comment}` : ""}`,
          },
        ]
      : [],
  );
  const latest = state.approval;
  const plan =
    latest && latest.kind !== "tool_approval"
      ? [{ at: latest.at, kind: latest.kind, taskId: null, decision: latest.decision, detail: latest.comment ?? "" }]
      : [];
  return [...plan, ...tools];
}

/** One step of the plan as get_run_context shows it. */
const ContextStep = z.object({
  id: z.string(),
  description: z.string(),
  workerType: z.string(),
  tools: z.array(z.string()),
  status: z.string(),
  dependsOn: z.array(z.string()),
  replaces: z.string().nullable(),
  dispatches: z.number(),
});

export const RunContext = z.object({
  threadId: z.string(),
  request: z.string().nullable(),
  status: z.string().nullable(),
  finished: z.boolean(),
  plan: z
    .object({ planId: z.string(), objective: z.string(), confidence: z.number(), steps: z.array(ContextStep) })
    .nullable(),
  planNotes: z.array(z.string()),
  revisions: z.array(
    z.object({
      strategy: z.string(),
      failedTaskId: z.string(),
      failureClass: z.string(),
      rationale: z.string(),
      changes: z.array(z.string()),
    }),
  ),
  confidenceHistory: z.array(z.object({ at: z.string(), value: z.number(), reason: z.string() })),
  approvals: z.array(ApprovalEntry),
  anomalies: z.array(Anomaly),
  answer: z.string().nullable(),
  failureReason: z.string().nullable(),
  decisions: z.number().int(),
  summary: z.string(),
});
export type RunContext = z.infer<typeof RunContext>;

/** One thread in depth: plan, revisions, confidence history, approvals and what looks wrong. */
export function runContext(state: ArchivedState, decisions: readonly LoggedDecision[]): RunContext {
  const anomalies = anomaliesOf(state, decisions);
  const approvals = approvalsOf(state, decisions);
  const plan = state.plan;
  const finished = state.status !== null && TERMINAL_STATUSES.includes(state.status);
  const summary = state.started
    ? `${state.threadId}: ${state.status ?? "?"}${plan ? `, ${plan.steps.length} steps` : ""}, ${state.revisions.length} revision(s), ${approvals.length} human decision(s), ${anomalies.length} anomal${anomalies.length === 1 ? "y" : "ies"}`
    : `${state.threadId}: stopped before its first checkpoint, nothing ran`;
  return {
    threadId: state.threadId,
    request: state.request,
    status: state.status,
    finished,
    plan: plan
      ? {
          planId: plan.planId,
          objective: plan.objective,
          confidence: plan.confidence,
          steps: plan.steps.map((s) => ({
            id: s.id,
            description: s.description,
            workerType: s.workerType,
            tools: s.tools,
            status: s.status,
            dependsOn: s.dependsOn,
            replaces: s.replaces ?? null,
            dispatches: s.dispatches,
          })),
        }
      : null,
    planNotes: state.planNotes,
    revisions: state.revisions.map((r) => ({
      strategy: r.strategy,
      failedTaskId: r.failedTaskId,
      failureClass: r.failureClass,
      rationale: r.rationale,
      changes: r.changes,
    })),
    confidenceHistory: state.confidenceHistory,
    approvals,
    anomalies,
    answer: state.answer,
    failureReason: state.failureReason,
    decisions: decisions.length,
    summary,
  };
}

const TranscriptLine = z.object({
  at: z.string(),
  severity: z.string(),
  kind: z.string(),
  taskId: z.string().nullable(),
  title: z.string(),
  message: z.string(),
});

export const Transcript = z.object({
  threadId: z.string(),
  lines: z.array(TranscriptLine),
  summary: z.string(),
});
export type Transcript = z.infer<typeof Transcript>;

/** What the person watching the run was told, in order. */
export function transcriptOf(state: ArchivedState): Transcript {
  const lines = state.notifications.map((n) => ({
    at: n.at,
    severity: n.severity,
    kind: n.kind,
    taskId: n.taskId,
    title: n.title,
    message: n.message,
  }));
  const warnings = lines.filter((l) => l.severity !== "INFO").length;
  return {
    threadId: state.threadId,
    lines,
    summary: `${state.threadId}: ${lines.length} notification(s), ${warnings} warning(s) or error(s)`,
  };
}

/** One dispatch of a step, whole: what it was called with and what came back. */
const Dispatch = z.object({
  dispatch: z.number(),
  feedbackType: z.string(),
  tool: z.string().nullable(),
  workerType: z.string().nullable(),
  params: z.record(z.string(), z.unknown()),
  outputs: z.record(z.string(), z.unknown()),
  errors: z.array(z.string()),
  failureClass: z.string().nullable(),
  errorType: z.string().nullable(),
  trace: z.string().nullable(),
  attempts: z.array(z.object({ attempt: z.number(), error: z.string().nullable(), durationMs: z.number() })),
  durationMs: z.number(),
  cost: z.number(),
  at: z.string(),
});

export const ToolOutput = z.object({
  threadId: z.string(),
  stepId: z.string(),
  description: z.string().nullable(),
  /** The step's parameters in the latest plan and what it produced last (null until it succeeds). */
  params: z.record(z.string(), z.unknown()).nullable(),
  result: z.unknown(),
  dispatches: z.array(Dispatch),
  summary: z.string(),
});
export type ToolOutput = z.infer<typeof ToolOutput>;

/**
 * Every dispatch of one step, input and output in full (or only dispatch `dispatch`).
 * @throws CandorError INVALID_REQUEST naming the run's steps when the step (or that dispatch) is not in it.
 */
export function toolOutputOf(state: ArchivedState, stepId: string, dispatch?: number): ToolOutput {
  const step = state.plan?.steps.find((s) => s.id === stepId) ?? null;
  const all = state.feedback.filter((f) => f.taskId === stepId);
  const chosen = dispatch === undefined ? all : all.filter((f) => f.dispatch === dispatch);
  if (!step && all.length === 0) {
    const ids = [...new Set([...(state.plan?.steps ?? []).map((s) => s.id), ...state.feedback.map((f) => f.taskId)])];
    throw new CandorError(
      `Thread ${state.threadId} has no step "${stepId}". Its steps: ${ids.join(", ") || "none (nothing ran)"}.`,
      ErrorCode.INVALID_REQUEST,
      { details: { failureClass: "invalid_parameters", stepId } },
    );
  }
  if (dispatch !== undefined && chosen.length === 0)
    throw new CandorError(
      `Step ${stepId} of thread ${state.threadId} has no dispatch ${dispatch}; it was dispatched ${all.map((f) => f.dispatch).join(", ") || "never"}.`,
      ErrorCode.INVALID_REQUEST,
      { details: { failureClass: "invalid_parameters", stepId } },
    );
  // A success's result is stored once, in the step's run-state: shown here with the dispatch that produced it.
  const outputsOf = (f: ExecutionFeedback) => {
    const result = resultOfFeedback(f, step ?? undefined);
    return result === undefined ? f.outputs : { ...f.outputs, result };
  };
  const dispatches = chosen.map((f) => ({
    dispatch: f.dispatch,
    feedbackType: f.feedbackType,
    tool: f.tool,
    workerType: f.workerType,
    params: f.params,
    outputs: outputsOf(f),
    errors: f.errors,
    failureClass: f.failureClass,
    errorType: f.errorType,
    trace: f.trace,
    attempts: f.attempts,
    durationMs: f.durationMs,
    cost: f.cost,
    at: f.at,
  }));
  const outcomes = dispatches.map((d) => `#${d.dispatch} ${d.feedbackType}`).join(", ");
  return {
    threadId: state.threadId,
    stepId,
    description: step?.description ?? null,
    params: step?.params ?? null,
    result: step?.result ?? null,
    dispatches,
    summary: `${stepId} of ${state.threadId}: ${dispatches.length} dispatch(es)${outcomes ? ` (${outcomes})` : ""}`,
  };
}
