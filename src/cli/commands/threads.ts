import { hostname } from "node:os";
import { databaseMayExist, describeDatabase } from "../../memory/sqlite-file.js";
import { openRecords, type RecordReader } from "../../memory/records.js";
import type { QueuedRun } from "../../memory/postgres-queue.js";
import { closeAfterFailure, closing } from "../closing.js";
import { Exit, type CliIo } from "../io.js";
import { parseFlags, resolveDbPath, THREADS_NAMESPACE, ThreadRecord, ThreadsFlags } from "../options.js";
import { stamp } from "../render.js";
import type { WaitingRequest } from "../session.js";

/** One row of `candor threads`. */
export interface ThreadRow {
  threadId: string;
  createdAt: string;
  request: string;
  /** The run status, or null when the thread has no checkpoint yet (it crashed before its first superstep). */
  status: string | null;
  finished: boolean;
  /** What it waits for; a tool approval names its step and tool (a worker waits, the run's status stays executing). */
  waitingFor: { kind: string; decisions: string[]; taskId?: string; tool?: string } | null;
  next: string[];
  /** The pid of the process that runs the thread now (it holds the lease), else null. */
  runningIn: number | null;
  /** The machine that process runs on (its pid means something only there), else null. */
  runningOn: string | null;
  /** For a submitted thread (PostgreSQL): where it stands on the run queue and which worker took it last. */
  queue: { state: string; worker: string | null; attempts: number; note: string | null } | null;
}

/** `candor threads`: the threads the CLI started in this database, newest first, with what each waits for. */
export async function threadsCommand(rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(ThreadsFlags, rawFlags);
  const dbPath = resolveDbPath(flags.db, io.env);
  if (!databaseMayExist(dbPath)) {
    io.err(
      `No threads yet: there is no Candor database at ${dbPath}. Start one with: ${io.invokedAs} run "<request>" (or pass --db with the database your runs used).`,
    );
    if (flags.json) io.out(JSON.stringify({ db: describeDatabase(dbPath), threads: [] }, null, 2));
    return Exit.COMPLETED;
  }
  // Opened light and read-only: the thread records are read without the checkpoint packages, so an empty list
  // costs little more than opening SQLite (issue 25), and a database this user may not write is listed all the same.
  const reader = await openRecords(dbPath, { readOnly: true });
  const records = await readRecords(reader);
  if (records.length === 0) {
    await closing(reader, async () => undefined, { where: reader.dbPath });
    if (flags.json) io.out(JSON.stringify({ db: reader.dbPath, threads: [] }, null, 2));
    else io.out(`No threads in ${reader.dbPath} yet. Start one with: ${io.invokedAs} run "<request>"`);
    return Exit.COMPLETED;
  }
  records.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  // The agent is compiled only to read each thread's state, so an empty list loads neither the graph nor the
  // toolkits it is built with (the travel gazetteer among them): that is most of the command's start-up time.
  const { readOutcome, sessionOn, threadExists } = await import("../session.js");
  const session = await sessionOn(await reader.persistence(), {
    reasoner: { kind: "rules", model: null },
    faults: [],
    env: io.env,
  });
  return closing(
    session,
    async () => {
      const runs =
        session.persistence.backend === "postgres"
          ? new Map((await session.persistence.queue.list()).map((q) => [q.threadId, q]))
          : new Map<string, QueuedRun>();
      const rows: ThreadRow[] = [];
      for (const r of flags.limit ? records.slice(0, flags.limit) : records) {
        const holder = await session.persistence.leases.holder(r.threadId);
        const base = {
          threadId: r.threadId,
          createdAt: r.createdAt,
          request: r.request,
          runningIn: holder?.pid ?? null,
          runningOn: holder?.host ?? null,
          queue: queueOf(runs.get(r.threadId)),
        };
        if (!(await threadExists(session.persistence, r.threadId))) {
          rows.push({ ...base, status: null, finished: false, waitingFor: null, next: [] });
          continue;
        }
        const o = await readOutcome(session.graph, r.threadId);
        rows.push({
          ...base,
          status: o.status,
          finished: o.finished,
          waitingFor: o.waitingFor ? waitingSummary(o.waitingFor) : null,
          next: o.next,
        });
      }
      if (flags.json) {
        io.out(JSON.stringify({ db: session.persistence.dbPath, threads: rows }, null, 2));
        return Exit.COMPLETED;
      }
      io.out(`Threads in ${session.persistence.dbPath}, newest first (${rows.length}):`);
      io.out(`  ${"started".padEnd(19)}  ${"thread".padEnd(14)}  ${"status".padEnd(17)}  waiting for / request`);
      for (const r of rows)
        io.out(`  ${stamp(r.createdAt)}  ${r.threadId.padEnd(14)}  ${shownStatus(r).padEnd(17)}  ${describeRow(r)}`);
      return Exit.COMPLETED;
    },
    { where: session.persistence.dbPath },
  );
}

/** The thread records the CLI stored, those that parse; the reader is closed when reading fails. */
async function readRecords(reader: RecordReader): Promise<ThreadRecord[]> {
  try {
    const items = await reader.items(THREADS_NAMESPACE, 10_000);
    return items.flatMap((item) => {
      const parsed = ThreadRecord.safeParse(item.value);
      return parsed.success ? [parsed.data] : [];
    });
  } catch (e) {
    // The read's failure is the one to report; a close failure after it rides along (closing.ts).
    return closeAfterFailure(reader, e, { where: reader.dbPath });
  }
}

function queueOf(run: QueuedRun | undefined): ThreadRow["queue"] {
  return run ? { state: run.state, worker: run.worker, attempts: run.attempts, note: run.note } : null;
}

function waitingSummary(w: WaitingRequest): NonNullable<ThreadRow["waitingFor"]> {
  const where =
    w.kind === "tool_approval"
      ? { ...(w.taskId ? { taskId: w.taskId } : {}), ...(w.tool ? { tool: w.tool } : {}) }
      : {};
  return { kind: w.kind, decisions: [...w.decisions], ...where };
}

/**
 * The status column. A worker waiting for a tool approval leaves the run's own status at `executing`, which
 * reads as if it were running: a thread that waits for a person says so, whatever the state's status.
 */
function shownStatus(r: ThreadRow): string {
  if (r.queue?.state === "queued" && r.runningIn === null) return "queued";
  if (r.queue?.state === "failed") return "worker failed";
  if (r.status === null) return "not started";
  if (r.waitingFor && r.runningIn === null && !r.status.startsWith("awaiting")) return "waiting";
  return r.status;
}

function describeRow(r: ThreadRow): string {
  if (r.runningIn !== null) {
    const on = r.runningOn && r.runningOn !== hostname() ? ` on ${r.runningOn}` : "";
    const worker = r.queue?.state === "running" ? "worker " : "";
    return `running now in ${worker}pid ${r.runningIn}${on} · ${r.request}`;
  }
  if (r.queue?.state === "failed") return `a worker could not run it: ${r.queue.note ?? "?"}`;
  if (r.queue?.state === "queued")
    return `queued for a worker${r.queue.note ? ` (${r.queue.note})` : ""} · ${r.request}`;
  if (r.waitingFor) {
    const call = r.waitingFor.tool ? ` (${[r.waitingFor.taskId, r.waitingFor.tool].filter(Boolean).join(": ")})` : "";
    return `${r.waitingFor.kind}${call}: ${r.waitingFor.decisions.map((d) => `--${d}`).join(" | ")}`;
  }
  if (r.status === null) return `stopped before its first checkpoint: resume to start it · ${r.request}`;
  if (!r.finished) return `stopped part-way (next: ${r.next.join(", ") || "none"}): resume to continue`;
  return r.request;
}
