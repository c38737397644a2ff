import { z } from "zod";
import { ApprovalRecord } from "../../../domain/approval.js";
import { ExecutionFeedback } from "../../../domain/feedback.js";
import { Notification } from "../../../domain/notification.js";
import { Plan, PlanRuns } from "../../../domain/plan.js";
import { planView } from "../../../domain/plan-state.js";
import { RunStatus } from "../../../domain/report.js";
import { ConfidencePoint, PlanRevision } from "../../../domain/revision.js";
import { CandorError, ErrorCode } from "../../../errors.js";

/**
 * What the debugging tools read: the threads of one database, each thread's latest state (rebuilt from its
 * checkpoints, as `candor report` sees it) and its decisions. Read-only by construction: nothing here writes.
 * The CLI builds it over its open database (SQLite or PostgreSQL alike, see `persistenceArchive`); tests may too.
 */
export interface RunArchive {
  /** The database, as messages show it (a file path, or a URL without its password). */
  where: string;
  /** The threads the database knows, newest first. */
  threads(): Promise<ArchivedThread[]>;
  /**
   * The thread's latest state.
   * @throws CandorError UNKNOWN_THREAD, naming a few known threads, when the database has no such thread.
   */
  state(threadId: string): Promise<ArchivedState>;
  /** The thread's decisions, oldest first (empty when the log has none). */
  decisions(threadId: string): Promise<LoggedDecision[]>;
}

/** A thread as the database records it. */
export const ArchivedThread = z.object({
  threadId: z.string(),
  request: z.string(),
  createdAt: z.string(),
  /** A review's own thread (`candor review`): reviews do not review each other. */
  review: z.boolean().default(false),
});
export type ArchivedThread = z.infer<typeof ArchivedThread>;

/**
 * The parts of a thread's state the tools read, parsed with the domain's own schemas. A thread that stopped
 * before its first checkpoint has a record and no state: `started` is false and the lists are empty.
 */
export const ArchivedState = z.object({
  threadId: z.string(),
  started: z.boolean(),
  request: z.string().nullable(),
  status: RunStatus.nullable(),
  plan: Plan.nullable(),
  planNotes: z.array(z.string()),
  feedback: z.array(ExecutionFeedback),
  revisions: z.array(PlanRevision),
  confidenceHistory: z.array(ConfidencePoint),
  notifications: z.array(Notification),
  approval: ApprovalRecord.nullable(),
  answer: z.string().nullable(),
  failureReason: z.string().nullable(),
  startedAt: z.string().nullable(),
  /** The confidence below which a plan waits for a person in this run (its settings). */
  approvalThreshold: z.number().nullable(),
});
export type ArchivedState = z.infer<typeof ArchivedState>;

/** One decision-log line, read loosely: only what the tools show is required. */
export const LoggedDecision = z.looseObject({
  time: z.string().optional(),
  operation: z.string(),
  planId: z.string().nullable().optional(),
  taskId: z.string().nullable().optional(),
  threadId: z.string().nullable().optional(),
  input: z.string().optional(),
  decision: z.string().optional(),
  reasoning: z.string().optional(),
  confidenceBefore: z.number().nullable().optional(),
  confidenceAfter: z.number().nullable().optional(),
});
export type LoggedDecision = z.infer<typeof LoggedDecision>;

/** A checkpointed state's values, loosely: a field the schema cannot read is reported, not guessed. */
const StateValues = z.looseObject({
  request: z.looseObject({ userIntent: z.string() }).nullish(),
  status: RunStatus.nullish(),
  plan: Plan.nullish(),
  runs: PlanRuns.nullish(),
  planNotes: z.array(z.string()).default([]),
  feedback: z.array(ExecutionFeedback).default([]),
  revisions: z.array(PlanRevision).default([]),
  confidenceHistory: z.array(ConfidencePoint).default([]),
  notifications: z.array(Notification).default([]),
  approval: ApprovalRecord.nullish(),
  answer: z.string().nullish(),
  failureReason: z.string().nullish(),
  startedAt: z.string().nullish(),
  settings: z.looseObject({ approvalThreshold: z.number().optional() }).nullish(),
});

/**
 * Reads a thread's checkpointed values into an ArchivedState.
 * @throws CandorError STORAGE when the values do not have the state's shape (a database of another program).
 */
export function archivedState(threadId: string, values: unknown): ArchivedState {
  const parsed = StateValues.safeParse(values);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CandorError(
      `Thread "${threadId}" has a checkpoint whose state Candor cannot read (${issue?.path.join(".") || "state"}: ${issue?.message ?? "invalid"}). It was written by another program or version; review another thread.`,
      ErrorCode.STORAGE,
    );
  }
  const v = parsed.data;
  return {
    threadId,
    started: true,
    request: v.request?.userIntent ?? null,
    status: v.status ?? null,
    // The plan's definition joined with its steps' run-state (a plan stored before the two were apart has both).
    plan: v.plan ? planView(v.plan, v.runs) : null,
    planNotes: v.planNotes,
    feedback: v.feedback,
    revisions: v.revisions,
    confidenceHistory: v.confidenceHistory,
    notifications: v.notifications,
    approval: v.approval ?? null,
    answer: v.answer ?? null,
    failureReason: v.failureReason ?? null,
    startedAt: v.startedAt ?? null,
    approvalThreshold: v.settings?.approvalThreshold ?? null,
  };
}

/** The state of a thread that has a record and no checkpoint: nothing ran. */
export function unstartedState(thread: ArchivedThread): ArchivedState {
  return {
    threadId: thread.threadId,
    started: false,
    request: thread.request,
    status: null,
    plan: null,
    planNotes: [],
    feedback: [],
    revisions: [],
    confidenceHistory: [],
    notifications: [],
    approval: null,
    answer: null,
    failureReason: null,
    startedAt: null,
    approvalThreshold: null,
  };
}

/**
 * The decision-log lines of one thread, oldest first. A line cut short by a crash, or one that is not a
 * decision, is not one of its decisions.
 */
export function decisionsOf(lines: readonly string[] | null, threadId: string): LoggedDecision[] {
  const out: LoggedDecision[] = [];
  for (const raw of lines ?? []) {
    if (!raw.trim()) continue;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      continue;
    }
    const parsed = LoggedDecision.safeParse(json);
    if (parsed.success && parsed.data.threadId === threadId) out.push(parsed.data);
  }
  return out;
}

/** The error for a thread the archive does not know, with the threads it does know. */
export function unknownThread(threadId: string, where: string, known: readonly ArchivedThread[]): CandorError {
  const ids = known.slice(0, 5).map((t) => t.threadId);
  const hint = ids.length > 0 ? ` Recent threads: ${ids.join(", ")}.` : " The database has no threads yet.";
  return new CandorError(
    `There is no thread "${threadId}" in ${where}.${hint} Check the id (review_runs lists the threads).`,
    ErrorCode.UNKNOWN_THREAD,
    // Inside a run, an id the database does not know is a wrong parameter: replanning may fix it, retrying cannot.
    { details: { failureClass: "invalid_parameters", threadId } },
  );
}
