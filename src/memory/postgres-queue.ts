import { hostname } from "node:os";
import pg from "pg";
import { z } from "zod";
import { LEASE_TABLE, type ThreadLeases } from "./lease.js";
import { postgresError } from "./postgres-url.js";

/** The run queue's table (made by `candor db migrate`). */
const RUNS_TABLE = "candor_runs";
/** The channel `submit` and `resume` notify, so idle workers wake at once instead of at their next poll. */
const CHANNEL = "candor_runs";
/** How long the listener waits to connect (again) before the worker falls back on its poll. */
const LISTEN_CONNECT_TIMEOUT_MS = 5_000;

/**
 * Where a submitted thread stands: `queued` (a worker may take it), `running` (a worker holds its lease),
 * `waiting` (for a person's decision, which queues it again), `done` (finished; `note` holds its status),
 * `failed` (a worker could not run it; `note` says why, the thread itself is untouched).
 */
export const RunState = z.enum(["queued", "running", "waiting", "done", "failed"]);
export type RunState = z.infer<typeof RunState>;

/** The table, as the migration makes it. */
export const RUNS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS ${RUNS_TABLE} (
    thread_id TEXT PRIMARY KEY,
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'waiting', 'done', 'failed')),
    input TEXT NOT NULL,
    worker TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    note TEXT,
    submitted_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    available_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
  );
  CREATE INDEX IF NOT EXISTS ${RUNS_TABLE}_ready ON ${RUNS_TABLE} (state, available_at)`;

const Row = z.object({
  thread_id: z.string(),
  state: RunState,
  input: z.string(),
  worker: z.string().nullable(),
  attempts: z.coerce.number().int(),
  note: z.string().nullable(),
});

/** A thread on the queue. `input` is what the worker sends the graph (JSON chosen by the CLI). */
export interface QueuedRun {
  threadId: string;
  state: RunState;
  input: unknown;
  worker: string | null;
  /** How many times a worker has taken it (more than once: a worker died or let it go). */
  attempts: number;
  note: string | null;
}

function toRun(raw: unknown): QueuedRun {
  const r = Row.parse(raw);
  return {
    threadId: r.thread_id,
    state: r.state,
    input: JSON.parse(r.input) as unknown,
    worker: r.worker,
    attempts: r.attempts,
    note: r.note,
  };
}

/** How a reclaimed run continues: from its last checkpoint (new input would start the thread over). */
export const CONTINUE = { kind: "continue" } as const;

/**
 * The run queue on PostgreSQL: a table of submitted threads that any number of `candor worker`s take from with
 * `SELECT … FOR UPDATE SKIP LOCKED` (no two take the same row), woken by LISTEN/NOTIFY. A worker holds the thread's
 * lease while it runs it, as every writer does; a thread left `running` by a worker that died is taken again once
 * its lease is free (at once on the dead worker's machine, within the lease's expiry from elsewhere) and continues
 * from its last checkpoint, so its side effects stay at most once (the effect ledger).
 */
export class RunQueue {
  constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
  ) {}

  /** Puts a thread on the queue (a new thread, or one whose decision was just given), and wakes a worker. */
  async enqueue(threadId: string, input: unknown, delayMs = 0): Promise<void> {
    await this.query(
      `INSERT INTO ${RUNS_TABLE} (thread_id, state, input, available_at) VALUES ($1, 'queued', $2, now() + $3 * interval '1 millisecond')
       ON CONFLICT (thread_id) DO UPDATE SET state = 'queued', input = excluded.input, worker = NULL, note = NULL,
         available_at = excluded.available_at, updated_at = now()`,
      [threadId, JSON.stringify(input), delayMs],
      `queue thread ${threadId}`,
    );
    await this.query(`SELECT pg_notify('${CHANNEL}', $1)`, [threadId], "wake the workers");
  }

  /** The thread's row, or null when it was never submitted (started with `run`, or elsewhere). */
  async get(threadId: string): Promise<QueuedRun | null> {
    const { rows } = await this.query(`SELECT * FROM ${RUNS_TABLE} WHERE thread_id = $1`, [threadId], "read the queue");
    return rows[0] === undefined ? null : toRun(rows[0]);
  }

  /** Every submitted thread, oldest first. */
  async list(): Promise<QueuedRun[]> {
    const { rows } = await this.query(`SELECT * FROM ${RUNS_TABLE} ORDER BY submitted_at`, [], "read the queue");
    return rows.map(toRun);
  }

  /**
   * Takes the next thread for `worker`: the oldest queued one, or one left running whose lease is free (its
   * worker died; it continues from its checkpoint). Rows another worker is taking are skipped, not waited for.
   * `graceMs` keeps a just-taken thread, whose worker is about to take its lease, from looking abandoned.
   */
  async claim(worker: string, leases: ThreadLeases, graceMs: number): Promise<QueuedRun | null> {
    const client = await this.pool.connect().catch((e: unknown) => {
      throw postgresError(this.url, e, "take a thread from the queue");
    });
    try {
      await client.query("BEGIN");
      const { rows } = await client.query(
        `SELECT * FROM ${RUNS_TABLE}
         WHERE (state = 'queued' AND available_at <= now())
            OR (state = 'running' AND updated_at < now() - $1 * interval '1 millisecond')
         ORDER BY (state = 'queued') DESC, available_at, submitted_at
         LIMIT 10 FOR UPDATE SKIP LOCKED`,
        [graceMs],
      );
      let chosen: QueuedRun | null = null;
      for (const raw of rows) {
        const run = toRun(raw);
        if (run.state === "running" && (await leases.holder(run.threadId)) !== null) continue;
        chosen = run.state === "running" ? { ...run, input: CONTINUE } : run;
        break;
      }
      if (chosen) {
        await client.query(
          `UPDATE ${RUNS_TABLE} SET state = 'running', worker = $2, input = $3, attempts = attempts + 1,
             note = NULL, updated_at = now() WHERE thread_id = $1`,
          [chosen.threadId, worker, JSON.stringify(chosen.input)],
        );
        chosen = { ...chosen, state: "running", worker, attempts: chosen.attempts + 1 };
      }
      await client.query("COMMIT");
      return chosen;
    } catch (e) {
      await client.query("ROLLBACK").catch(() => undefined); // the error below is the one to report
      throw postgresError(this.url, e, "take a thread from the queue");
    } finally {
      client.release();
    }
  }

  /**
   * Records where a thread stands after `worker` ran it. A row another worker has since taken (this one stalled
   * past its lease) is left alone: false.
   */
  async settle(
    threadId: string,
    worker: string,
    state: RunState,
    note: string | null,
    { input, delayMs = 0 }: { input?: unknown; delayMs?: number } = {},
  ): Promise<boolean> {
    const { rowCount } = await this.query(
      `UPDATE ${RUNS_TABLE} SET state = $3, note = $4, input = COALESCE($5, input), updated_at = now(),
         available_at = now() + $6 * interval '1 millisecond',
         worker = CASE WHEN $3 = 'queued' THEN NULL ELSE worker END
       WHERE thread_id = $1 AND worker = $2 AND state = 'running'`,
      [threadId, worker, state, note, input === undefined ? null : JSON.stringify(input), delayMs],
      `record where thread ${threadId} stands`,
    );
    if (state === "queued") await this.query(`SELECT pg_notify('${CHANNEL}', $1)`, [threadId], "wake the workers");
    return (rowCount ?? 0) > 0;
  }

  /**
   * Puts back on the queue a thread whose run `worker` lost when its connection to the database dropped, and gives
   * back the lease that run held (this process's, on this host): the run is over, but its lease could not be
   * released while the server was away, and would otherwise keep every worker off the thread until it expired.
   * Continues from its last checkpoint. False when another worker has the row by now.
   */
  async giveBack(threadId: string, worker: string, pid = process.pid, host = hostname()): Promise<boolean> {
    const client = await this.pool.connect().catch((e: unknown) => {
      throw postgresError(this.url, e, `put thread ${threadId} back on the queue`);
    });
    try {
      await client.query("BEGIN");
      const { rowCount } = await client.query(
        `UPDATE ${RUNS_TABLE} SET state = 'queued', input = $3, worker = NULL, updated_at = now(), available_at = now(),
           note = 'its worker lost the connection to the database; it continues from its checkpoint'
         WHERE thread_id = $1 AND worker = $2 AND state = 'running'`,
        [threadId, worker, JSON.stringify(CONTINUE)],
      );
      if ((rowCount ?? 0) > 0) {
        await client.query(`DELETE FROM ${LEASE_TABLE} WHERE thread_id = $1 AND pid = $2 AND host = $3`, [
          threadId,
          pid,
          host,
        ]);
        await client.query(`SELECT pg_notify('${CHANNEL}', $1)`, [threadId]);
      }
      await client.query("COMMIT");
      return (rowCount ?? 0) > 0;
    } catch (e) {
      await client.query("ROLLBACK").catch(() => undefined); // the error below is the one to report
      throw postgresError(this.url, e, `put thread ${threadId} back on the queue`);
    } finally {
      client.release();
    }
  }

  /** True when nothing is queued or running: what `candor worker --exit-when-idle` waits for. */
  async idle(): Promise<boolean> {
    const { rows } = await this.query(
      `SELECT count(*) AS n FROM ${RUNS_TABLE} WHERE state IN ('queued', 'running')`,
      [],
      "read the queue",
    );
    return Number((rows[0] as { n: string }).n) === 0;
  }

  /**
   * A listener that resolves `next(ms)` when a thread is queued, or after `ms` at the latest (a notification sent
   * while the listener was reconnecting is caught by the next poll). A connection the server drops (a restart) is
   * made again at the next `next`; while the server is away, `next` just waits out its `ms`. Close it when done.
   */
  async listen(): Promise<{ next(ms: number, signal: AbortSignal): Promise<void>; close(): Promise<void> }> {
    let wake: (() => void) | null = null;
    let client: pg.Client | null = null;
    let closed = false;
    const connect = async (): Promise<pg.Client> => {
      // A host that does not answer must not hold the worker past its poll for the operating system's TCP timeout.
      const c = new pg.Client({
        connectionString: this.url,
        application_name: "candor",
        connectionTimeoutMillis: LISTEN_CONNECT_TIMEOUT_MS,
      });
      c.on("error", () => undefined); // a dropped listener only delays workers until their next poll
      c.on("end", () => {
        if (client === c) client = null;
      });
      c.on("notification", () => wake?.());
      await c.connect();
      try {
        await c.query(`LISTEN ${CHANNEL}`);
      } catch (e) {
        await c.end().catch(() => undefined);
        throw e;
      }
      return c;
    };
    client = await connect().catch((e: unknown) => {
      throw postgresError(this.url, e, "listen for queued threads");
    });
    return {
      next: async (ms, signal) => {
        if (!client && !closed) client = await connect().catch(() => null); // the poll below covers the gap
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            signal.removeEventListener("abort", done);
            wake = null;
            resolve();
          };
          const timer = setTimeout(done, ms);
          signal.addEventListener("abort", done, { once: true });
          wake = done;
        });
      },
      close: async () => {
        closed = true;
        await client?.end().catch(() => undefined);
      },
    };
  }

  private async query(sql: string, params: unknown[], doing: string): Promise<pg.QueryResult> {
    try {
      return await this.pool.query(sql, params);
    } catch (e) {
      throw postgresError(this.url, e, doing);
    }
  }
}
