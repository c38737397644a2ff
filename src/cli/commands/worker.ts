import { storageBoundsOf } from "../../env.js";
import { hostname } from "node:os";
import { z } from "zod";
import { PlanAdjustment } from "../../domain/approval.js";
import { CandorError, ErrorCode, errorMessage } from "../../errors.js";
import { describeDatabase, isPostgresUrl, openDatabase, type PostgresPersistence } from "../../memory/persistence.js";
import { CONTINUE, type QueuedRun } from "../../memory/postgres-queue.js";
import { storageFault } from "../../memory/storage-faults.js";
import { lastRefusal } from "../interactive.js";
import { closing } from "../closing.js";
import { Exit, type CliIo } from "../io.js";
import { parseFlags, resolveDbPath, WorkerFlags, withDocs, type ThreadRecord } from "../options.js";
import { executeThread } from "../present.js";
import { kindTitle, shellArg } from "../render.js";
import {
  loadThreadRecord,
  sessionSharing,
  startInput,
  threadExists,
  type Session,
  type ThreadInput,
  type ThreadOutcome,
} from "../session.js";
import { whileHolding } from "../thread-lease.js";

/** What a queued thread is sent: its start, a person's decision (from `resume`), or a continuation. */
const QueuedInput = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("start") }),
  z.object({ kind: z.literal("continue") }),
  z.object({
    kind: z.literal("decision"),
    decision: z.string(),
    comment: z.string().nullable(),
    adjustments: z.array(PlanAdjustment).optional(),
    extra: z.record(z.string(), z.unknown()).optional(),
    interruptIds: z.array(z.string()).optional(),
  }),
]);

/** A thread just taken is not taken again for this long: its worker takes the thread's lease well within it. */
const CLAIM_GRACE_MS = 5_000;
/** An idle worker looks at the queue at least this often (a notification may be missed while reconnecting). */
const POLL_MS = 1_000;
/** A thread whose lease another process holds (a person resuming it here) is tried again after this long. */
const BUSY_RETRY_MS = 2_000;

/**
 * `candor worker`: takes submitted threads from the run queue in PostgreSQL, one at a time, and runs each to its
 * end or to a person's question; run as many as you like, on as many machines. A worker killed mid-run is
 * replaced: its thread is taken by another worker once its lease is free and continues from its last checkpoint.
 * Ctrl-C or SIGTERM stops it at the next step boundary; its thread goes back on the queue.
 */
export async function workerCommand(rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(WorkerFlags, rawFlags);
  const location = resolveDbPath(flags.db, io.env);
  if (!isPostgresUrl(location)) {
    throw new CandorError(
      `A worker takes threads from a run queue in PostgreSQL, and ${describeDatabase(location)} is a SQLite file. Pass --db postgres://… (or set CANDOR_DB), the database \`candor submit\` queues threads in.`,
      ErrorCode.INVALID_REQUEST,
    );
  }
  const persistence = await openDatabase(location, { bounds: storageBoundsOf(io.env) });
  if (persistence.backend !== "postgres") throw new Error("a postgres:// URL opened something else");
  const stop = new AbortController();
  const onStop = () => stop.abort();
  io.signal?.addEventListener("abort", onStop, { once: true });
  process.once("SIGTERM", onStop);
  return closing(
    persistence,
    async () => {
      try {
        await workLoop(persistence, { io, signal: stop.signal, exitWhenIdle: flags.exitWhenIdle });
      } finally {
        process.off("SIGTERM", onStop);
        io.signal?.removeEventListener("abort", onStop);
      }
      return Exit.COMPLETED;
    },
    { where: persistence.dbPath },
  );
}

/** What a worker runs a thread with: by default the agent as the thread was submitted (its faults, its reasoner). */
export type SessionFor = (persistence: PostgresPersistence, record: ThreadRecord, io: CliIo) => Promise<Session>;

const sessionAsSubmitted: SessionFor = (persistence, record, io) =>
  sessionSharing(persistence, {
    reasoner: { kind: record.reasoner, model: record.model },
    faults: record.faults,
    mcp: record.mcp,
    env: withDocs(io.env, record.docs),
    onNote: (note) => io.err(note),
  });

/**
 * The worker's loop, for `candor worker` and for embedders (a benchmark with its own tools): takes threads one at
 * a time until `signal` is aborted (or, with `exitWhenIdle`, until nothing is queued or running). Returns how
 * many runs it made.
 */
export async function workLoop(
  persistence: PostgresPersistence,
  options: { io: CliIo; signal: AbortSignal; exitWhenIdle?: boolean; sessionFor?: SessionFor; name?: string },
): Promise<number> {
  const name = options.name ?? `${hostname()}:${process.pid}`;
  const say = (text: string) => options.io.err(`[worker ${name}] ${text}`);
  const listener = await persistence.queue.listen();
  say(
    `taking threads from ${persistence.dbPath}${options.exitWhenIdle ? " until none is queued or running" : ""}; Ctrl-C or SIGTERM stops it after the current step.`,
  );
  let runs = 0;
  // A thread whose run the lost connection ended, to put back on the queue once the database answers again.
  let orphan: string | null = null;
  let failures = 0;
  return closing(
    listener,
    async () => {
      while (!options.signal.aborted) {
        let current: string | null = null;
        try {
          if (orphan !== null) {
            if (await persistence.queue.giveBack(orphan, name))
              say(`thread ${orphan} put back on the queue: it continues from its checkpoint`);
            orphan = null;
          }
          const run = await persistence.queue.claim(name, persistence.leases, CLAIM_GRACE_MS);
          if (failures > 0) say(`connected to ${persistence.dbPath} again; taking threads`);
          failures = 0;
          if (!run) {
            if (options.exitWhenIdle && (await persistence.queue.idle())) break;
            await listener.next(POLL_MS, options.signal);
            continue;
          }
          runs += 1;
          current = run.threadId;
          await runClaimed(persistence, run, name, options.sessionFor ?? sessionAsSubmitted, {
            ...options.io,
            err: say,
            signal: options.signal,
          });
        } catch (e) {
          // A server restart or a dropped network is waited out; anything else ends the worker as before.
          const fault = storageFault(e, persistence.dbPath);
          if (fault?.code !== ErrorCode.STORAGE_CONNECTION_LOST) throw e;
          orphan ??= current;
          failures += 1;
          const delay = reconnectDelayMs(failures);
          say(
            `lost the connection to ${persistence.dbPath} (${String(fault.details.said)})${current ? `, running thread ${current}` : ""}; trying again in ${(delay / 1000).toFixed(1)} s (attempt ${failures}).`,
          );
          await sleep(delay, options.signal);
        }
      }
      say(`stopped after ${runs} run(s).`);
      return runs;
    },
    { what: "the run queue's listener", where: persistence.dbPath },
  );
}

/**
 * How long a worker waits before its next try after `failures` failed tries in a row to reach the database: 0.5 s,
 * doubling up to 30 s, so a restart of a few seconds costs little and a long outage is not hammered.
 */
function reconnectDelayMs(failures: number): number {
  return Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** Math.max(0, failures - 1));
}

const RECONNECT_FIRST_MS = 500;
const RECONNECT_MAX_MS = 30_000;

/** Resolves after `ms`, or at once when `signal` is aborted. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Runs one taken thread under its lease and records on the queue where it stands after. */
async function runClaimed(
  persistence: PostgresPersistence,
  run: QueuedRun,
  name: string,
  sessionFor: SessionFor,
  io: CliIo,
): Promise<void> {
  const { queue } = persistence;
  const id = run.threadId;
  let session: Session | null = null;
  // The session is made part-way; whatever ends the run, closing it never hides what ended it (closing.ts).
  const opened = { close: () => session?.close() };
  return closing(
    opened,
    async () => {
      try {
        const { record } = await loadThreadRecord(persistence, id);
        if (!record) {
          await queue.settle(id, name, "failed", "no thread record: it was not submitted with candor submit");
          return;
        }
        if (record.reasoner === "llm" && !io.env.OPENAI_API_KEY) {
          const why = `started with the llm reasoner (model ${record.model}): this worker needs OPENAI_API_KEY`;
          io.err(`thread ${id} not run: ${why}`);
          await queue.settle(id, name, "failed", why);
          return;
        }
        session = await sessionFor(persistence, record, io);
        const queued = QueuedInput.parse(run.input);
        const open = session;
        const outcome = await whileHolding<ThreadOutcome | "interrupted" | "busy">(
          open,
          id,
          io,
          () => "busy" as const,
          async (signal) => {
            // A thread whose worker died before its first checkpoint starts again; one with checkpoints continues.
            const started = await threadExists(persistence, id);
            const input: ThreadInput = !started ? startInput(record) : queued.kind === "start" ? CONTINUE : queued;
            const again = run.attempts > 1 ? ` (taken ${run.attempts} times: a worker before this one stopped)` : "";
            io.err(
              `running thread ${id}: ${input.kind === "decision" ? `decision --${input.decision}` : input.kind}${again}`,
            );
            return executeThread(open, id, input, { ...io, signal });
          },
        );
        if (outcome === "busy") {
          await queue.settle(id, name, "queued", "another process held its lease", { delayMs: BUSY_RETRY_MS });
        } else if (outcome === "interrupted") {
          await queue.settle(id, name, "queued", "its worker stopped; it continues from its checkpoint", {
            input: CONTINUE,
          });
          io.err(`thread ${id} put back on the queue: it continues from its checkpoint`);
        } else if (outcome.waitingFor) {
          const refused = queued.kind === "decision" ? await lastRefusal(open.graph, id) : null;
          const note = `${kindTitle(outcome.waitingFor.kind)}${refused ? ` (the decision was not applied: ${refused})` : ""}`;
          await queue.settle(id, name, "waiting", note);
          io.err(
            `thread ${id} waits for a person: ${note}. Answer with: candor resume ${id} --${outcome.waitingFor.decisions[0] ?? "approve"} --db ${shellArg(persistence.dbPath)}`,
          );
        } else if (!outcome.finished) {
          await queue.settle(id, name, "queued", "stopped part-way; it continues from its checkpoint", {
            input: CONTINUE,
          });
        } else {
          await queue.settle(id, name, "done", outcome.status);
          io.err(`thread ${id} ${outcome.status}`);
        }
      } catch (e) {
        // The thread did not fail: the database went away under it. The worker loop waits for the server and puts the
        // thread back on the queue (nothing can be recorded on it meanwhile).
        if (storageFault(e, persistence.dbPath)?.code === ErrorCode.STORAGE_CONNECTION_LOST) throw e;
        const why = errorMessage(e);
        io.err(`thread ${id} could not be run: ${why}`);
        await queue.settle(id, name, "failed", why);
      }
    },
    { what: `the session of thread ${id}`, where: persistence.dbPath },
  );
}
