import { hostname } from "node:os";
import type pg from "pg";
import { z } from "zod";
import {
  bindingHolder,
  holderAlive,
  LEASE_TABLE,
  LEASE_TTL_MS,
  newHolder,
  processStartTime,
  type LeaseRow,
  type ThreadLeases,
} from "./lease.js";
import { postgresError } from "./postgres-url.js";

/**
 * Leases in PostgreSQL: one writer per thread across machines. The same rows and rules as in SQLite (a lease
 * expires; a holder known dead on this host frees it at once), with two differences that matter across machines:
 * time is the database server's clock (`clock_timestamp()`), so machines whose clocks disagree still agree on
 * expiry, and the read-decide-write of an acquisition runs under a transaction-scoped advisory lock on the thread,
 * so two processes racing for one thread are served one after the other. A holder on another machine that died
 * frees the thread when its lease expires (LEASE_TTL_MS after its last renewal).
 */

/** The first key of the two-key advisory locks on threads (the second is the thread id's hash). */
const LEASE_LOCK_CLASS = 0x43414e44; // "CAND"

/** The server's clock in epoch milliseconds, or the caller's `now` (tests). */
const NOW = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

const Row = z.object({
  holder: z.string(),
  pid: z.coerce.number().int(),
  host: z.string(),
  // BIGINT arrives as a string (it may exceed 2^53; epoch milliseconds do not).
  expires_at: z.coerce.number(),
  pid_start: z.string().nullable(),
});
const NowRow = z.object({ now: z.coerce.number() });

function leaseRow(raw: unknown): LeaseRow | undefined {
  return raw === undefined ? undefined : Row.parse(raw);
}

const SELECT = `SELECT holder, pid, host, expires_at, pid_start FROM ${LEASE_TABLE} WHERE thread_id = $1`;

/** The leases of a PostgreSQL database, on the given pool. */
export function postgresLeases(pool: pg.Pool, url: string): ThreadLeases {
  const fail = (doing: string) => (e: unknown) => {
    throw postgresError(url, e, doing);
  };
  return {
    async acquire(threadId, ttlMs = LEASE_TTL_MS, options = {}) {
      const pid = options.pid ?? process.pid;
      const host = options.host ?? hostname();
      const holder = options.holder ?? newHolder(pid);
      const startTime = options.startTime !== undefined ? options.startTime : processStartTime(pid);
      const isAlive = options.isAlive ?? holderAlive;
      const client = await pool.connect().catch(fail("take a thread's lease"));
      try {
        await client.query("BEGIN");
        await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [LEASE_LOCK_CLASS, threadId]);
        const now = options.now ?? NowRow.parse((await client.query(`SELECT ${NOW} AS now`)).rows[0]).now;
        const held = bindingHolder(leaseRow((await client.query(SELECT, [threadId])).rows[0]), now, host, isAlive);
        if (held && held.holder !== holder) {
          await client.query("COMMIT");
          return { acquired: false, heldBy: held };
        }
        const expiresAt = now + ttlMs;
        await client.query(
          `INSERT INTO ${LEASE_TABLE} (thread_id, holder, pid, host, expires_at, pid_start) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (thread_id) DO UPDATE SET holder = excluded.holder, pid = excluded.pid, host = excluded.host,
             expires_at = excluded.expires_at, pid_start = excluded.pid_start`,
          [threadId, holder, pid, host, expiresAt, startTime],
        );
        await client.query("COMMIT");
        return { acquired: true, lease: { threadId, holder, pid, expiresAt } };
      } catch (e) {
        await client.query("ROLLBACK").catch(() => undefined); // the error below is the one to report
        throw postgresError(url, e, `take the lease of thread ${threadId}`);
      } finally {
        client.release();
      }
    },

    async renew(lease, ttlMs = LEASE_TTL_MS, now) {
      const { rows } = await pool
        .query(
          `UPDATE ${LEASE_TABLE} SET expires_at = COALESCE($3::bigint, ${NOW}) + $4::bigint
           WHERE thread_id = $1 AND holder = $2 RETURNING expires_at`,
          [lease.threadId, lease.holder, now ?? null, ttlMs],
        )
        .catch(fail(`renew the lease of thread ${lease.threadId}`));
      const row = rows[0] as { expires_at: string } | undefined;
      if (row) lease.expiresAt = Number(row.expires_at);
      return row !== undefined;
    },

    async release(lease) {
      await pool
        .query(`DELETE FROM ${LEASE_TABLE} WHERE thread_id = $1 AND holder = $2`, [lease.threadId, lease.holder])
        .catch(fail(`give back the lease of thread ${lease.threadId}`));
    },

    async holder(threadId, options = {}) {
      const { rows } = await pool
        .query(
          `SELECT holder, pid, host, expires_at, pid_start, ${NOW} AS now FROM ${LEASE_TABLE} WHERE thread_id = $1`,
          [threadId],
        )
        .catch(fail(`read the lease of thread ${threadId}`));
      const raw = rows[0] as Record<string, unknown> | undefined;
      if (!raw) return null;
      const now = options.now ?? NowRow.parse(raw).now;
      return bindingHolder(leaseRow(raw), now, options.host ?? hostname(), options.isAlive ?? holderAlive);
    },
  };
}
