import { createHash } from "node:crypto";
import type Database from "better-sqlite3";
import { z } from "zod";
import { CandorError, ErrorCode } from "../errors.js";

const TABLE = "candor_effects";

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
 * The effect ledger (issue 4 item 4): every call of a tool with a side effect is written down before it is made
 * and again when it returns, so a crash or a replay can tell "done, here is the result" from "may have happened"
 * and never calls the tool a second time blindly. It lives in the same SQLite file (and connection) as the
 * checkpoints, so it survives exactly what they survive.
 */
export class EffectLedger {
  private readonly stmts: {
    get: Database.Statement;
    forDispatch: Database.Statement;
    upsert: Database.Statement;
  };

  constructor(private readonly db: Database.Database) {
    try {
      db.exec(`
        CREATE TABLE IF NOT EXISTS ${TABLE} (
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
        `Cannot create the effect ledger table ${TABLE}: the database is not writable or not SQLite. Check --db.`,
        ErrorCode.STORAGE,
        { cause: e },
      );
    }
    this.stmts = {
      get: db.prepare(`SELECT * FROM ${TABLE} WHERE thread_id = ? AND step_id = ? AND dispatch = ? AND attempt = ?`),
      forDispatch: db.prepare(
        `SELECT * FROM ${TABLE} WHERE thread_id = ? AND step_id = ? AND dispatch = ? ORDER BY attempt`,
      ),
      upsert: db.prepare(`
        INSERT INTO ${TABLE} (thread_id, step_id, dispatch, attempt, tool, args_hash, status, result, at)
        VALUES (@threadId, @stepId, @dispatch, @attempt, @tool, @argsHash, @status, @result, @at)
        ON CONFLICT (thread_id, step_id, dispatch, attempt)
        DO UPDATE SET tool = excluded.tool, args_hash = excluded.args_hash, status = excluded.status, result = excluded.result, at = excluded.at`),
    };
  }

  /** The record of one call, or null when it was never attempted. */
  lookup(key: EffectKey): EffectRecord | null {
    const row = this.stmts.get.get(key.threadId, key.stepId, key.dispatch, key.attempt);
    return row === undefined ? null : fromRow(row);
  }

  /** Every recorded call of one dispatch of a step, by attempt. */
  recordsFor(key: Omit<EffectKey, "attempt">): EffectRecord[] {
    return this.stmts.forDispatch.all(key.threadId, key.stepId, key.dispatch).map(fromRow);
  }

  /**
   * What the records of a dispatch say about calling the tool now: a completed call is reused, a call that was
   * started but never finished may have happened (a crash mid-call), otherwise the tool may be called.
   */
  verdict(key: Omit<EffectKey, "attempt">): EffectVerdict {
    const records = this.recordsFor(key);
    const done = records.find((r) => r.status === "done");
    if (done) return { kind: "done", record: done };
    const started = records.find((r) => r.status === "started");
    if (started) return { kind: "unknown", record: started };
    return { kind: "call" };
  }

  /** Written before the call: if the process dies now, the outcome is unknown and a human must check. */
  recordStarted(key: EffectKey, tool: string, args: unknown): void {
    this.write(key, tool, args, "started", null);
  }

  recordDone(key: EffectKey, tool: string, args: unknown, result: unknown): void {
    this.write(key, tool, args, "done", JSON.stringify(result));
  }

  /** The tool threw: it reported that nothing was done, so the step's retry policy may call it again. */
  recordFailed(key: EffectKey, tool: string, args: unknown, error: string): void {
    this.write(key, tool, args, "failed", JSON.stringify(error));
  }

  private write(key: EffectKey, tool: string, args: unknown, status: EffectStatus, result: string | null): void {
    this.stmts.upsert.run({ ...key, tool, argsHash: argsHash(args), status, result, at: new Date().toISOString() });
  }
}

/** Opens the ledger on the connection the store already uses (`persistence.store.db`), creating its table. */
export function openEffectLedger(db: Database.Database): EffectLedger {
  return new EffectLedger(db);
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

function fromRow(raw: unknown): EffectRecord {
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
