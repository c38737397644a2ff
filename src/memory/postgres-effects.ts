import type pg from "pg";
import { EFFECTS_TABLE, RowEffectLedger, type EffectKey, type EffectRowValues } from "../tools/effects.js";
import { postgresError } from "./postgres-url.js";

/**
 * The effect ledger in PostgreSQL: the same table and rows as in SQLite (`candor_effects`, made by
 * `candor db migrate`), so a call recorded by a process on one machine is seen by a resume on another.
 */
export class PostgresEffectLedger extends RowEffectLedger {
  constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
  ) {
    super();
  }

  protected async readRows(key: Omit<EffectKey, "attempt">, attempt: number | null): Promise<unknown[]> {
    const sql =
      attempt === null
        ? `SELECT * FROM ${EFFECTS_TABLE} WHERE thread_id = $1 AND step_id = $2 AND dispatch = $3 ORDER BY attempt`
        : `SELECT * FROM ${EFFECTS_TABLE} WHERE thread_id = $1 AND step_id = $2 AND dispatch = $3 AND attempt = $4`;
    const params = [key.threadId, key.stepId, key.dispatch, ...(attempt === null ? [] : [attempt])];
    try {
      return (await this.pool.query<Record<string, unknown>>(sql, params)).rows;
    } catch (e) {
      throw postgresError(this.url, e, "read the effect ledger");
    }
  }

  protected async writeRow(row: EffectRowValues): Promise<void> {
    try {
      await this.pool.query(
        `INSERT INTO ${EFFECTS_TABLE} (thread_id, step_id, dispatch, attempt, tool, args_hash, status, result, at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (thread_id, step_id, dispatch, attempt)
         DO UPDATE SET tool = excluded.tool, args_hash = excluded.args_hash, status = excluded.status,
                       result = excluded.result, at = excluded.at`,
        [row.threadId, row.stepId, row.dispatch, row.attempt, row.tool, row.argsHash, row.status, row.result, row.at],
      );
    } catch (e) {
      throw postgresError(this.url, e, `record a ${row.status} call of ${row.tool} in the effect ledger`);
    }
  }
}
