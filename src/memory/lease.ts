import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type Database from "better-sqlite3";

/**
 * One writer per thread. LangGraph does not lock a thread, and two processes that resume the same one both
 * read the same checkpoint and both write on top of it, so one update is lost. A lease row in the same SQLite
 * file says who may write; it expires, so a holder that crashed (kill -9) blocks the thread only until then —
 * and not even that long on the same machine, where a holder whose pid is gone is known to be dead.
 */
const LEASE_TABLE = "candor_leases";

/** How long a lease lasts without renewal; the CLI renews every LEASE_RENEW_MS while it streams. */
export const LEASE_TTL_MS = 30_000;
export const LEASE_RENEW_MS = 10_000;

/** A lease this process holds. */
export interface Lease {
  threadId: string;
  /** `<pid>-<random hex>`: unique per acquisition, so a renewal never extends someone else's lease. */
  holder: string;
  pid: number;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** Who holds a lease another process asked for. */
export interface LeaseHolder {
  holder: string;
  pid: number;
  /** The machine the holder runs on; its pid is only meaningful there. */
  host: string;
  expiresAt: number;
}

/** Options for tests and embedders; the defaults describe this process. */
export interface LeaseOptions {
  holder?: string;
  pid?: number;
  host?: string;
  now?: number;
  /** Whether a process on this host is alive (default: signal 0). A dead holder's lease is free at once. */
  isAlive?: (pid: number) => boolean;
}

export type LeaseResult = { acquired: true; lease: Lease } | { acquired: false; heldBy: LeaseHolder };

interface Row {
  holder: string;
  pid: number;
  host: string;
  expires_at: number;
}

function ensureTable(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS ${LEASE_TABLE} (thread_id TEXT PRIMARY KEY, holder TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, expires_at INTEGER NOT NULL)`);
}

/** Signal 0 checks that a process exists without touching it; EPERM means it exists but is someone else's. */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A row still binds when it has not expired and its holder is not known to be dead. */
function binding(row: Row | undefined, now: number, host: string, isAlive: (pid: number) => boolean): LeaseHolder | null {
  if (!row || row.expires_at <= now) return null;
  if (row.host === host && !isAlive(row.pid)) return null;
  return { holder: row.holder, pid: row.pid, host: row.host, expiresAt: row.expires_at };
}

/** A holder id for this process: the pid (shown to the user) and randomness (pids are reused). */
function newHolder(pid = process.pid): string {
  return `${pid}-${randomBytes(6).toString("hex")}`;
}

const SELECT = `SELECT holder, pid, host, expires_at FROM ${LEASE_TABLE} WHERE thread_id = ?`;

/**
 * Takes the thread's lease when it is free, expired, or held by a dead process on this host. Read and write
 * happen in one BEGIN IMMEDIATE transaction, so two processes racing for a free lease cannot both win.
 */
export function acquireLease(db: Database.Database, threadId: string, ttlMs = LEASE_TTL_MS, options: LeaseOptions = {}): LeaseResult {
  ensureTable(db);
  const pid = options.pid ?? process.pid;
  const host = options.host ?? hostname();
  const holder = options.holder ?? newHolder(pid);
  const take = db.transaction((now: number): LeaseResult => {
    const held = binding(db.prepare<[string], Row>(SELECT).get(threadId), now, host, options.isAlive ?? processAlive);
    if (held && held.holder !== holder) return { acquired: false, heldBy: held };
    const expiresAt = now + ttlMs;
    db.prepare(
      `INSERT INTO ${LEASE_TABLE} (thread_id, holder, pid, host, expires_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(thread_id) DO UPDATE SET holder = excluded.holder, pid = excluded.pid, host = excluded.host, expires_at = excluded.expires_at`,
    ).run(threadId, holder, pid, host, expiresAt);
    return { acquired: true, lease: { threadId, holder, pid, expiresAt } };
  });
  return take.immediate(options.now ?? Date.now());
}

/**
 * Extends a lease this process still holds. False when it was lost (it expired and another process took it):
 * the caller should stop writing.
 */
export function renewLease(db: Database.Database, lease: Lease, ttlMs = LEASE_TTL_MS, now = Date.now()): boolean {
  ensureTable(db);
  const expiresAt = now + ttlMs;
  const changed = db.prepare(`UPDATE ${LEASE_TABLE} SET expires_at = ? WHERE thread_id = ? AND holder = ?`).run(expiresAt, lease.threadId, lease.holder).changes;
  if (changed > 0) lease.expiresAt = expiresAt;
  return changed > 0;
}

/** Gives the lease back; a lease that another process has since taken is left alone. */
export function releaseLease(db: Database.Database, lease: Lease): void {
  if (!db.open) return;
  ensureTable(db);
  db.prepare(`DELETE FROM ${LEASE_TABLE} WHERE thread_id = ? AND holder = ?`).run(lease.threadId, lease.holder);
}

/** The current holder of a thread's lease (unexpired, not known to be dead), or null. */
export function leaseHolder(db: Database.Database, threadId: string, options: Pick<LeaseOptions, "host" | "now" | "isAlive"> = {}): LeaseHolder | null {
  ensureTable(db);
  return binding(db.prepare<[string], Row>(SELECT).get(threadId), options.now ?? Date.now(), options.host ?? hostname(), options.isAlive ?? processAlive);
}
