import { DEFAULT_STORAGE_BOUNDS } from "../domain/config.js";
import type pg from "pg";
import { z } from "zod";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import { storageFault } from "./storage-faults.js";
import {
  decisionLine,
  recordsDecisions,
  type DecisionJournal,
  type FlushableDecisionLog,
} from "../transparency/decision-log.js";

/** The decision log's table in PostgreSQL (made by `candor db migrate`). */
export const DECISIONS_TABLE = "candor_decisions";

const LineRow = z.object({ line: z.string() });

/**
 * The decision log in PostgreSQL, one row per decision holding the same JSON line the file log writes. Nodes
 * record decisions synchronously, so each insert is queued behind the previous one (order is kept); `flush`
 * waits for all of them, and a session flushes before it closes. A write that fails is not retried and not
 * dropped silently: `flush` fails with the count and the first reason. A crash can lose the decisions of the
 * last few milliseconds, which the file log (written synchronously) cannot.
 */
export function postgresDecisionJournal(
  pool: pg.Pool,
  where: string,
  maxLineBytes: number = DEFAULT_STORAGE_BOUNDS.maxLogLineBytes,
): DecisionJournal {
  return {
    where: `table ${DECISIONS_TABLE} in ${where}`,
    open(level: string): FlushableDecisionLog {
      const enabled = recordsDecisions(level);
      let queue: Promise<void> = Promise.resolve();
      const failures: unknown[] = [];
      return {
        record(d) {
          if (!enabled) return;
          const line = decisionLine(d, new Date(), maxLineBytes);
          queue = queue.then(async () => {
            try {
              await pool.query(
                `INSERT INTO ${DECISIONS_TABLE} (thread_id, plan_id, task_id, operation, line) VALUES ($1, $2, $3, $4, $5)`,
                [d.threadId ?? null, d.planId, d.taskId ?? null, d.operation, line],
              );
            } catch (e) {
              failures.push(e);
            }
          });
        },
        async flush() {
          await queue;
          if (failures.length === 0) return;
          const first = failures[0];
          const lost = failures.length;
          failures.length = 0;
          // A lost connection is the run's failure, not the log's: said as such (exit 5, resumable).
          const fault = storageFault(first, where);
          if (fault) throw fault;
          throw new CandorError(
            `${lost} decision${lost === 1 ? "" : "s"} could not be written to the decision log (table ${DECISIONS_TABLE} in ${where}): ${errorMessage(first)}. The run itself is checkpointed; \`candor logs\` will lack ${lost === 1 ? "that decision" : "those decisions"}. Check that the database is reachable and migrated (\`candor db migrate\`).`,
            ErrorCode.STORAGE,
            { cause: first },
          );
        },
      };
    },
    async read() {
      let rows: unknown[];
      try {
        rows = (await pool.query(`SELECT line FROM ${DECISIONS_TABLE} ORDER BY id`)).rows;
      } catch (e) {
        throw new CandorError(
          `Cannot read the decision log (table ${DECISIONS_TABLE} in ${where}): ${errorMessage(e)}. Check that the database is reachable and migrated (\`candor db migrate\`).`,
          ErrorCode.STORAGE,
          { cause: e },
        );
      }
      return rows.length === 0 ? null : rows.map((r) => LineRow.parse(r).line);
    },
  };
}
