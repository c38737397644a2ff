import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import { z } from "zod";
import { CandorError, ErrorCode } from "../errors.js";

/** The ledger's table, the same in SQLite and PostgreSQL. */
export const EFFECTS_TABLE = "candor_effects";

/** Where a call stands: `started` before the tool is called, `done` with its result, `failed` when it threw. */
export const EffectStatus = z.enum(["started", "done", "failed"]);
export type EffectStatus = z.infer<typeof EffectStatus>;

/** Which call of which step: one row per (thread, step, dispatch, attempt). */
export interface EffectKey {
  threadId: string;
  stepId: string;
  dispatch: number;
  attempt: number;
}

export const EffectRecord = z.object({
  threadId: z.string(),
  stepId: z.string(),
  dispatch: z.number().int(),
  attempt: z.number().int(),
  tool: z.string(),
  argsHash: z.string(),
  status: EffectStatus,
  /** The tool's result when done, the error message when failed, null while started. */
  result: z.unknown(),
  at: z.string(),
});
export type EffectRecord = z.infer<typeof EffectRecord>;

const Row = z.object({
  thread_id: z.string(),
  step_id: z.string(),
  dispatch: z.number(),
  attempt: z.number(),
  tool: z.string(),
  args_hash: z.string(),
  status: EffectStatus,
  result: z.string().nullable(),
  at: z.string(),
});

export type EffectVerdict =
  { kind: "done"; record: EffectRecord } | { kind: "unknown"; record: EffectRecord } | { kind: "call" };

/**
 * The effect ledger: every call of a tool with a side effect is written down before it is made and again when it
 * returns, so a crash or a replay can tell "done, here is the result" from "may have happened" and never calls
 * the tool a second time blindly. It lives in the same database as the checkpoints (SQLite or PostgreSQL), so it
 * survives exactly what they survive. Every method waits for the database: a call is made only after its
 * `started` row is written.
 */
export interface EffectLedger {
  /** The record of one call, or null when it was never attempted. */
  lookup(key: EffectKey): Promise<EffectRecord | null>;
  /** Every recorded call of one dispatch of a step, by attempt. */
  recordsFor(key: Omit<EffectKey, "attempt">): Promise<EffectRecord[]>;
  /** What the records of a dispatch say about calling the tool now (see `verdictOf`). */
  verdict(key: Omit<EffectKey, "attempt">): Promise<EffectVerdict>;
  /** Written before the call: if the process dies now, the outcome is unknown and a human must check. */
  recordStarted(key: EffectKey, tool: string, args: unknown): Promise<void>;
  recordDone(key: EffectKey, tool: string, args: unknown, result: unknown): Promise<void>;
  /** The tool threw: it reported that nothing was done, so the step's retry policy may call it again. */
  recordFailed(key: EffectKey, tool: string, args: unknown, error: string): Promise<void>;
}

/** One row as both backends store it (same columns, same text encodings). */
export interface EffectRowValues extends EffectKey {
  tool: string;
  argsHash: string;
  status: EffectStatus;
  /** JSON text of the result or error; null while started. */
  result: string | null;
  at: string;
}

/**
 * The ledger's logic over any table with the `candor_effects` columns: a backend supplies reading a dispatch's
 * rows and writing one row; what they mean is decided here once.
 */
export abstract class RowEffectLedger implements EffectLedger {
  protected abstract readRows(key: Omit<EffectKey, "attempt">, attempt: number | null): Promise<unknown[]>;
  protected abstract writeRow(row: EffectRowValues): Promise<void>;

  async lookup(key: EffectKey): Promise<EffectRecord | null> {
    const [row] = await this.readRows(key, key.attempt);
    return row === undefined ? null : effectFromRow(row);
  }

  async recordsFor(key: Omit<EffectKey, "attempt">): Promise<EffectRecord[]> {
    return (await this.readRows(key, null)).map(effectFromRow);
  }

  async verdict(key: Omit<EffectKey, "attempt">): Promise<EffectVerdict> {
    return verdictOf(await this.recordsFor(key));
  }

  recordStarted(key: EffectKey, tool: string, args: unknown): Promise<void> {
    return this.write(key, tool, args, "started", null);
  }

  recordDone(key: EffectKey, tool: string, args: unknown, result: unknown): Promise<void> {
    return this.write(key, tool, args, "done", JSON.stringify(result));
  }

  recordFailed(key: EffectKey, tool: string, args: unknown, error: string): Promise<void> {
    return this.write(key, tool, args, "failed", JSON.stringify(error));
  }

  private write(key: EffectKey, tool: string, args: unknown, status: EffectStatus, result: string | null) {
    return this.writeRow({ ...key, tool, argsHash: argsHash(args), status, result, at: new Date().toISOString() });
  }
}

/**
 * What the records of a dispatch say about calling the tool now: a completed call is reused, a call that was
 * started but never finished may have happened (a crash mid-call), otherwise the tool may be called.
 */
function verdictOf(records: readonly EffectRecord[]): EffectVerdict {
  const done = records.find((r) => r.status === "done");
  if (done) return { kind: "done", record: done };
  const started = records.find((r) => r.status === "started");
  if (started) return { kind: "unknown", record: started };
  return { kind: "call" };
}

/** The ledger in a SQLite file, on the connection the checkpoints use. */
class SqliteEffectLedger extends RowEffectLedger {
  private readonly stmts: {
    get: Database.Statement;
    forDispatch: Database.Statement;
    upsert: Database.Statement;
  };

  constructor(private readonly db: Database.Database) {
    super();
    try {
      db.exec(`
        CREATE TABLE IF NOT EXISTS ${EFFECTS_TABLE} (
          thread_id TEXT NOT NULL,
          step_id TEXT NOT NULL,
          dispatch INTEGER NOT NULL,
          attempt INTEGER NOT NULL,
          tool TEXT NOT NULL,
          args_hash TEXT NOT NULL,
          status TEXT NOT NULL CHECK (status IN ('started', 'done', 'failed')),
          result TEXT,
          at TEXT NOT NULL,
          PRIMARY KEY (thread_id, step_id, dispatch, attempt)
        )`);
    } catch (e) {
      throw new CandorError(
        `Cannot create the effect ledger table ${EFFECTS_TABLE}: the database is not writable or not SQLite. Check --db.`,
        ErrorCode.STORAGE,
        { cause: e },
      );
    }
    this.stmts = {
      get: db.prepare(
        `SELECT * FROM ${EFFECTS_TABLE} WHERE thread_id = ? AND step_id = ? AND dispatch = ? AND attempt = ?`,
      ),
      forDispatch: db.prepare(
        `SELECT * FROM ${EFFECTS_TABLE} WHERE thread_id = ? AND step_id = ? AND dispatch = ? ORDER BY attempt`,
      ),
      upsert: db.prepare(`
        INSERT INTO ${EFFECTS_TABLE} (thread_id, step_id, dispatch, attempt, tool, args_hash, status, result, at)
        VALUES (@threadId, @stepId, @dispatch, @attempt, @tool, @argsHash, @status, @result, @at)
        ON CONFLICT (thread_id, step_id, dispatch, attempt)
        DO UPDATE SET tool = excluded.tool, args_hash = excluded.args_hash, status = excluded.status, result = excluded.result, at = excluded.at`),
    };
  }

  protected async readRows(key: Omit<EffectKey, "attempt">, attempt: number | null): Promise<unknown[]> {
    if (attempt === null) return this.stmts.forDispatch.all(key.threadId, key.stepId, key.dispatch);
    const row = this.stmts.get.get(key.threadId, key.stepId, key.dispatch, attempt);
    return row === undefined ? [] : [row];
  }

  protected async writeRow(row: EffectRowValues): Promise<void> {
    // A `started` row must survive a power loss too, or the call it announces could be made again after one;
    // the connection commits with synchronous = NORMAL (openPersistence), which only a process crash survives.
    // FULL for this commit alone: it also makes every earlier commit durable. Side-effect calls are few.
    const setting = this.db.pragma("synchronous", { simple: true }) as number;
    if (setting >= SYNCHRONOUS_FULL) {
      this.stmts.upsert.run(row);
      return;
    }
    this.db.pragma(`synchronous = ${SYNCHRONOUS_FULL}`);
    try {
      this.stmts.upsert.run(row);
    } finally {
      this.db.pragma(`synchronous = ${setting}`);
    }
  }
}

/** SQLite's `PRAGMA synchronous` levels are OFF 0, NORMAL 1, FULL 2, EXTRA 3. */
const SYNCHRONOUS_FULL = 2;

/** Opens the ledger on the SQLite connection the store already uses (`persistence.db`), creating its table. */
export function openEffectLedger(db: Database.Database): EffectLedger {
  return new SqliteEffectLedger(db);
}

/** A stable hash of a call's arguments (keys sorted), so a record can be matched to the call it was for. */
export function argsHash(args: unknown): string {
  return createHash("sha256").update(stableJson(args)).digest("hex").slice(0, 16);
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** A row of either backend as a record; a row that does not fit the table's shape is an error, not a guess. */
function effectFromRow(raw: unknown): EffectRecord {
  const row = Row.parse(raw);
  return {
    threadId: row.thread_id,
    stepId: row.step_id,
    dispatch: row.dispatch,
    attempt: row.attempt,
    tool: row.tool,
    argsHash: row.args_hash,
    status: row.status,
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
    at: row.at,
  };
}
