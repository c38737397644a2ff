import { statSync } from "node:fs";
import { dirname } from "node:path";
import pino, { type Logger } from "pino";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import { DEFAULT_STORAGE_BOUNDS, howToSetBound } from "../domain/config.js";
import { ensureDirectory } from "../paths.js";

/** One planning decision (seed 000 scenario 19): what was decided, why, and what it did to confidence. */
export interface Decision {
  operation:
    | "plan"
    | "approval"
    | "route"
    | "dispatch"
    | "step_result"
    | "classify"
    | "strategy"
    | "revision"
    | "escalation"
    | "human_decision"
    | "synthesize"
    | "reflect"
    | "report"
    | "model_call";
  planId: string | null;
  taskId?: string | null;
  threadId?: string | null;
  /** A short summary of what the decision was made on (goal, step, error). */
  input: string;
  decision: string;
  reasoning: string;
  confidenceBefore?: number | null;
  confidenceAfter?: number | null;
  /** Cost of the operation itself (a tool's cost; a model call's USD). */
  cost?: number;
  /** The model tokens the operation used (a model call; a step's or the run's total). */
  tokens?: { input: number; output: number; costUsd: number };
  /** For a plan: what the planner understood of the request (domain/understanding.ts), recorded whole. */
  understanding?: unknown;
}

export interface DecisionLog {
  record(decision: Decision): void;
}

/**
 * A decision log whose writes may still be on their way (PostgreSQL). `flush` waits for every write so far and
 * fails, naming how many decisions were lost and why, when one could not be written; a file log is always flushed.
 */
export interface FlushableDecisionLog extends DecisionLog {
  flush(): Promise<void>;
}

/**
 * Where a database keeps its decisions: a file beside a SQLite database, a table in PostgreSQL. `candor logs`
 * reads them back from the same place.
 */
export interface DecisionJournal {
  /** What notifications and headers say: the log file, or the table and database. */
  where: string;
  /** A log that records decisions at `level` (pino's names; decisions are `info`). */
  open(level: string): FlushableDecisionLog;
  /** Every recorded decision as the JSON line `candor logs --json` prints, oldest first; null when none was ever written. */
  read(): Promise<string[] | null>;
}

/** pino's level numbers: a decision is written when the log level is `info` or lower. */
const LEVELS: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };
const INFO = 30;

/** Whether decisions (recorded at `info`) are written at this log level; `silent` and unknown names write none. */
export function recordsDecisions(level: string): boolean {
  return (LEVELS[level] ?? Number.POSITIVE_INFINITY) <= INFO;
}

/**
 * The JSON line of a decision, as the file log writes it (pino's fields first, then the decision, then `msg`), its
 * text cut so that the line is within `maxLineBytes` (see `boundedDecision`).
 */
export function decisionLine(
  d: Decision,
  at: Date = new Date(),
  maxLineBytes: number = DEFAULT_STORAGE_BOUNDS.maxLogLineBytes,
): string {
  return lineOf(boundedDecision(d, maxLineBytes), at);
}

/** The line of a decision as it is, uncut. pino writes the same fields (in its own order, so the same length). */
function lineOf(d: Decision, at: Date): string {
  return JSON.stringify({
    level: INFO,
    time: at.toISOString(),
    app: "candor",
    ...d,
    taskId: d.taskId ?? null,
    cost: d.cost ?? 0,
    msg: `${d.operation}: ${d.decision}`,
  });
}

/**
 * Writes decisions as JSON lines with pino (timestamp ISO 8601, level INFO), synchronously so a crash loses
 * nothing already decided. `candor logs` reads the same file back and filters it by plan, step and operation. Each
 * line is held to `maxLineBytes` (StorageBounds.maxLogLineBytes; see `boundedDecision`).
 *
 * @throws CandorError STORAGE, naming the file and what to do, when the log cannot be written (its path is a
 *   directory or a named pipe, its folder cannot be created, no permission).
 */
export function fileDecisionLog(
  file: string,
  level: string = "info",
  maxLineBytes: number = DEFAULT_STORAGE_BOUNDS.maxLogLineBytes,
): DecisionLog & { logger: Logger } {
  let destination: ReturnType<typeof pino.destination>;
  try {
    ensureDirectory(dirname(file));
    refuseNonFile(file);
    destination = pino.destination({ dest: file, sync: true });
  } catch (e) {
    throw new CandorError(
      `Cannot write the decision log "${file}": ${errorMessage(e)}. Candor keeps one decision log beside each database, named after it: move what is at that path away, or pass --db with another database path.`,
      ErrorCode.STORAGE,
      { cause: e, details: { logFile: file } },
    );
  }
  const logger = pino(
    { level, base: { app: "candor" }, timestamp: pino.stdTimeFunctions.isoTime, messageKey: "msg" },
    destination,
  );
  return {
    logger,
    record(d) {
      d = boundedDecision(d, maxLineBytes);
      logger.info({ ...d, taskId: d.taskId ?? null, cost: d.cost ?? 0 }, `${d.operation}: ${d.decision}`);
    },
  };
}

/** A directory would fail with a bare EISDIR, and opening a named pipe would wait for a reader forever. */
function refuseNonFile(file: string): void {
  let stats;
  try {
    stats = statSync(file);
  } catch (e) {
    // Missing: pino creates it, and says why if it cannot.
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
    throw e;
  }
  if (stats.isDirectory()) throw new Error("it is a directory (EISDIR), not a file");
  if (stats.isFIFO() || stats.isSocket()) throw new Error("it is a named pipe or socket, not a file");
}

/** Any instant: every ISO time has the same length, which is all a line's size needs of it. */
const SOME_TIME = new Date(0);

const bytesOf = (text: string) => Buffer.byteLength(text, "utf8");

/** The longest prefix of `text` within `max` UTF-8 bytes that does not split a character. */
function headOf(text: string, max: number): string {
  if (bytesOf(text) <= max) return text;
  return Buffer.from(text, "utf8")
    .subarray(0, max)
    .toString("utf8")
    .replace(/\uFFFD+$/, "");
}

/**
 * `d` with its text cut so that its log line is within the bound on a decision-log line (StorageBounds.
 * maxLogLineBytes, default 64 KiB): a decision made on a 10 MB value wrote 10 MB lines, twice over (its input and
 * its message). Strings longer than a share of the bound are cut to it and say so, naming the bound and how it is
 * set; the share halves until the line fits. A decision whose shape alone is over the bound (a record of thousands of
 * short strings) keeps only what names it: operation, ids, and the head of its decision. Within the bound, `d` is
 * returned as it is.
 */
function boundedDecision(d: Decision, maxLineBytes: number): Decision {
  const fits = (x: Decision) => bytesOf(lineOf(x, SOME_TIME)) <= maxLineBytes;
  if (fits(d)) return d;
  const bound = `over the bound on a decision-log line of ${maxLineBytes.toLocaleString("en-US")} bytes (maxLogLineBytes; set by ${howToSetBound("maxLogLineBytes")})`;
  const marked = (text: string, share: number) =>
    `${headOf(text, share)}… [cut: ${bytesOf(text).toLocaleString("en-US")} bytes, ${bound}]`;
  const cut = (value: unknown, depth: number, share: number): unknown => {
    if (typeof value === "string") return bytesOf(value) <= share ? value : marked(value, share);
    // Deeper than a few levels a value is summarised, not logged (and a pathological nesting cannot recurse far).
    if (depth > 8 || value === null || typeof value !== "object") return depth > 8 ? "[cut: nested too deep]" : value;
    if (Array.isArray(value)) return value.map((v) => cut(v, depth + 1, share));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v, depth + 1, share)]));
  };
  for (let share = Math.floor(maxLineBytes / 4); share >= 32; share = Math.floor(share / 2)) {
    const shorter = cut(d, 0, share) as Decision;
    if (fits(shorter)) return shorter;
  }
  const id = (v: string | null | undefined) => (v ? headOf(v, 64) : (v ?? null));
  return {
    operation: d.operation,
    planId: id(d.planId),
    taskId: id(d.taskId),
    threadId: id(d.threadId),
    input: `[cut: the whole decision was ${bytesOf(lineOf(d, SOME_TIME)).toLocaleString("en-US")} bytes, ${bound}]`,
    decision: bytesOf(d.decision) <= 64 ? d.decision : marked(d.decision, 64),
    reasoning: "",
  };
}

/**
 * `log` with every decision held to `maxLineBytes` before it gets there (see `boundedDecision`): how the graph applies
 * its bound on a log line to whatever log an app gave it (a file, memory, its own sink). A log that bounds its lines
 * itself (`fileDecisionLog`) still applies its own bound as well, so the smaller of the two holds.
 */
export function boundedDecisionLog(log: DecisionLog, maxLineBytes: number): DecisionLog {
  return { record: (d) => log.record(boundedDecision(d, maxLineBytes)) };
}

/** Keeps decisions in memory: for tests and for apps that read them back through their own sink. */
export function memoryDecisionLog(): DecisionLog & { entries: Decision[] } {
  const entries: Decision[] = [];
  return { entries, record: (d) => void entries.push(d) };
}

export const silentDecisionLog: DecisionLog = { record: () => undefined };
