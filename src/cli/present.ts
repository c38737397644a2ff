import path from "node:path";
import { planOf } from "../domain/plan-state.js";
import type { CandorEvent } from "../domain/notification.js";
import type { Plan, TaskStep } from "../domain/plan.js";
import type { RunStatus } from "../domain/report.js";
import { DEFAULT_DB_PATH } from "../env.js";
import { describeDatabase, isPostgresUrl } from "../memory/persistence.js";
import { renderReport } from "../transparency/report.js";
import { Exit, type CliIo } from "./io.js";
import { EventPrinter, planLines, resumeCommands, shellArg, waitingLines } from "./render.js";
import { readOutcome, streamThread, type Session, type ThreadInput, type ThreadOutcome } from "./session.js";

/**
 * The --db argument to repeat in printed commands: only when the database is not the default one. A PostgreSQL
 * URL is repeated without its password (printed commands end up in logs; the password belongs in PGPASSWORD).
 */
export function dbArgFor(dbPath: string): string | null {
  if (isPostgresUrl(dbPath)) return describeDatabase(dbPath);
  return path.resolve(dbPath) === path.resolve(DEFAULT_DB_PATH) ? null : dbPath;
}

/** ` --db <path>` to append to a printed command, or "" for the default database. */
export function dbFlagFor(dbPath: string): string {
  const dbArg = dbArgFor(dbPath);
  return dbArg ? ` --db ${shellArg(dbArg)}` : "";
}

export function exitForStatus(status: RunStatus): Exit {
  return status === "completed" ? Exit.COMPLETED : Exit.NOT_COMPLETED;
}

function exitForOutcome(outcome: ThreadOutcome): Exit {
  if (outcome.waitingFor) return Exit.WAITING;
  if (!outcome.finished) return Exit.NOT_COMPLETED;
  return exitForStatus(outcome.status);
}

/**
 * Writes streamed events to stderr as they arrive, with two small holds that keep the log in reading order:
 * UNDERSTAND's notifications wait for the plan's steps (which come with its state update a moment later), and
 * a burst of progress events (one per step finished in the same superstep) prints only its last count.
 */
class LiveLog {
  private readonly printer: EventPrinter;
  private held: string[] | null = null;
  private progress: string[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly io: CliIo,
    scope = "",
    private readonly modelDriven?: (step: TaskStep) => boolean,
    /** Called before any line is written: ends a streamed answer's line first. */
    private readonly beforeWrite: () => void = () => undefined,
  ) {
    this.printer = new EventPrinter(io.invokedAs, scope);
  }

  event(event: CandorEvent): void {
    const lines = this.printer.lines(event);
    if (event.type === "progress") {
      if (lines.length === 0) return;
      this.progress = lines;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.flushProgress(), PROGRESS_BURST_MS);
      return;
    }
    this.flushProgress();
    if (this.held) this.held.push(...lines);
    else if (event.notification.kind === "plan") this.held = lines;
    else this.write(lines);
  }

  plan(plan: Plan): void {
    const [headline, ...rest] = this.held ?? [];
    this.held = null;
    this.write([...(headline ? [headline] : []), ...planLines(plan, undefined, this.modelDriven), ...rest]);
  }

  close(): void {
    this.flushProgress();
    this.write(this.held ?? []);
    this.held = null;
  }

  private flushProgress(): void {
    clearTimeout(this.timer);
    const lines = this.progress;
    this.progress = [];
    if (this.held) this.held.push(...lines);
    else this.write(lines);
  }

  private write(lines: readonly string[]): void {
    if (lines.length > 0) this.beforeWrite();
    for (const l of lines) this.io.err(l);
  }
}

const PROGRESS_BURST_MS = 50;

/**
 * Prints a model's answer on stdout as it is written, under the "Answer:" heading `presentOutcome` uses, and
 * keeps what it printed so that `presentOutcome` prints only the rest (the list of what is missing).
 */
class AnswerStream {
  printed = "";
  private open = false;

  constructor(private readonly write: (text: string) => void) {}

  token(text: string): void {
    if (this.printed.length === 0) this.write("\nAnswer:\n  ");
    this.write(text.replaceAll("\n", "\n  "));
    this.printed += text;
    this.open = true;
  }

  /** Ends the answer's line, so that what is printed next starts on its own. */
  endLine(): void {
    if (!this.open) return;
    this.write("\n");
    this.open = false;
  }
}

/**
 * Streams a thread, printing each event on stderr the moment it arrives, and returns where the thread stands.
 * Ctrl-C stops the stream; the checkpoints already written stay, so `resume` continues from there.
 * `checkpointId` starts from that checkpoint instead of the latest (replay, fork). `streamAnswer` prints a
 * model's answer on stdout as it is written (not with --json: stdout is then one JSON document).
 */
export async function executeThread(
  session: Session,
  threadId: string,
  input: ThreadInput,
  io: CliIo,
  checkpointId?: string,
  options: { streamAnswer?: boolean } = {},
): Promise<ThreadOutcome | "interrupted"> {
  const dbArg = dbArgFor(session.persistence.dbPath);
  const outPart = options.streamAnswer ? io.outPart?.bind(io) : undefined;
  const answer = outPart ? new AnswerStream(outPart) : null;
  const log = new LiveLog(
    io,
    ` --thread ${threadId}${dbArg ? ` --db ${shellArg(dbArg)}` : ""}`,
    session.modelDriven,
    () => answer?.endLine(),
  );
  try {
    await streamThread(
      session.graph,
      threadId,
      input,
      {
        onEvent: (e) => log.event(e),
        onPlan: (p) => log.plan(p),
        ...(answer ? { onAnswerToken: (t: string) => answer.token(t) } : {}),
      },
      io.signal,
      checkpointId,
    );
  } catch (e) {
    if (io.signal?.aborted) return "interrupted";
    throw e;
  } finally {
    log.close();
    answer?.endLine();
  }
  const outcome = await readOutcome(session.graph, threadId);
  return answer && answer.printed.length > 0 ? { ...outcome, streamedAnswer: answer.printed } : outcome;
}

export interface PresentContext {
  io: CliIo;
  json: boolean;
  dbPath: string;
  reasoner: string;
  /** Whether to end with where to look next (history, logs); the demo prints its own hints instead. */
  footer?: boolean;
}

/** Prints the result of run/resume (answer and report, or what the thread waits for) and returns the exit code. */
export function presentOutcome(outcome: ThreadOutcome | "interrupted", threadId: string, ctx: PresentContext): Exit {
  const { io } = ctx;
  const prefix = io.invokedAs;
  const dbArg = dbArgFor(ctx.dbPath);
  const dbFlag = dbArg ? ` --db ${shellArg(dbArg)}` : "";
  if (outcome === "interrupted") {
    io.err(`Stopped by Ctrl-C. Thread ${threadId} is saved; continue it with: ${prefix} resume ${threadId}${dbFlag}`);
    return Exit.INTERRUPTED;
  }
  const commands = outcome.waitingFor
    ? resumeCommands(threadId, outcome.waitingFor, { commandPrefix: prefix, dbArg })
    : [];
  const code = exitForOutcome(outcome);
  const v = outcome.values;

  if (ctx.json) {
    io.out(
      JSON.stringify(
        {
          threadId,
          db: describeDatabase(ctx.dbPath),
          reasoner: ctx.reasoner,
          status: v.status,
          finished: outcome.finished,
          answer: v.answer,
          plan: planOf(v),
          understanding: v.plan?.understanding ?? null,
          revisions: v.revisions,
          confidence: v.plan?.confidence ?? null,
          failureReason: v.failureReason,
          report: v.report,
          waitingFor: outcome.waitingFor,
          resumeCommands: commands.map((c) => c.command),
          exitCode: code,
        },
        null,
        2,
      ),
    );
    return code;
  }

  if (outcome.waitingFor) {
    io.out(waitingLines(outcome.waitingFor, commands).join("\n"));
    return code;
  }
  if (!outcome.finished) {
    io.err(
      `Thread ${threadId} stopped before finishing (status ${v.status}, next: ${outcome.next.join(", ")}). Continue it with: ${prefix} resume ${threadId}${dbFlag}`,
    );
    return code;
  }
  const streamed = outcome.streamedAnswer;
  if (v.answer && streamed && v.answer.startsWith(streamed)) {
    // Printed as the model wrote it; what Candor added after (what is missing) follows.
    const rest = v.answer.slice(streamed.length).replace(/^\n/, "");
    if (rest.trim().length > 0)
      io.out(
        rest
          .split("\n")
          .map((l) => `  ${l}`)
          .join("\n"),
      );
  } else if (v.answer) {
    if (streamed) io.err("The answer printed above as it was written is not the one kept; the kept answer follows.");
    io.out(["", "Answer:", ...v.answer.split("\n").map((l) => `  ${l}`)].join("\n"));
  }
  if (v.report) io.out(["", renderReport(v.report)].join("\n"));
  if (ctx.footer === false) return code;
  io.err(
    `\nThread ${threadId} ${v.status}. Checkpoints: ${prefix} history ${threadId}${dbFlag} · decisions: ${prefix} logs --thread ${threadId}${dbFlag}`,
  );
  return code;
}
