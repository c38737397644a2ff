import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import type Database from "better-sqlite3";

/**
 * One writer per thread. LangGraph does not lock a thread, and two processes that resume the same one both
 * read the same checkpoint and both write on top of it, so one update is lost. A lease row in the same SQLite
 * file says who may write; it expires, so a holder that crashed (kill -9) blocks the thread only until then —
 * and not even that long on the same machine, where a holder whose process is gone is known to be dead (see
 * `holderAlive`: a zombie, or a pid now used by another process, counts as gone). The functions below work on a
 * SQLite connection; `ThreadLeases` is the same contract on either backend (PostgreSQL: postgres-lease.ts).
 */
export const LEASE_TABLE = "candor_leases";

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
  /**
   * The holder's process start time (field 22 of /proc/<pid>/stat), recorded with the lease so a pid reused by
   * another process is not mistaken for the holder. Default: read from /proc; null where there is none.
   */
  startTime?: string | null;
  /**
   * Whether the holder, a process on this host, is alive (default `holderAlive`). A dead holder's lease is free at
   * once. `startTime` is what the lease recorded, null when unknown.
   */
  isAlive?: (pid: number, startTime: string | null) => boolean;
}

export type LeaseResult = { acquired: true; lease: Lease } | { acquired: false; heldBy: LeaseHolder };

/** A lease row as both backends store it. */
export interface LeaseRow {
  holder: string;
  pid: number;
  host: string;
  expires_at: number;
  pid_start: string | null;
}

/** Connections whose lease table is known to have every column, so the check runs once per connection. */
const ready = new WeakSet<Database.Database>();

function ensureTable(db: Database.Database): void {
  if (ready.has(db)) return;
  db.exec(
    `CREATE TABLE IF NOT EXISTS ${LEASE_TABLE} (thread_id TEXT PRIMARY KEY, holder TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, expires_at INTEGER NOT NULL, pid_start TEXT)`,
  );
  // A database made before leases recorded the holder's start time: add the column (null: start time unknown).
  // Checked again inside a write transaction, so two processes upgrading the same file cannot both add it.
  const hasColumn = () =>
    db
      .prepare<[], { name: string }>(`PRAGMA table_info(${LEASE_TABLE})`)
      .all()
      .some((c) => c.name === "pid_start");
  if (!hasColumn()) {
    db.transaction(() => {
      if (!hasColumn()) db.exec(`ALTER TABLE ${LEASE_TABLE} ADD COLUMN pid_start TEXT`);
    }).immediate();
  }
  ready.add(db);
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

/** What /proc says of a pid: its state letter and start time, that no such process exists, or nothing (no /proc). */
export type ProcessStat = { kind: "found"; state: string; startTime: string } | { kind: "gone" } | { kind: "unknown" };

/**
 * Reads /proc/<pid>/stat. The command name (field 2) is in parentheses and may itself hold spaces and
 * parentheses, so the fields are counted after the last ")": state is field 3, starttime (clock ticks after
 * boot) field 22. "unknown" where /proc is absent (macOS, Windows) or hides other users' processes.
 */
export function readProcessStat(pid: number, procRoot = "/proc"): ProcessStat {
  let text: string;
  try {
    text = readFileSync(`${procRoot}/${pid}/stat`, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if ((code === "ENOENT" || code === "ESRCH") && existsSync(`${procRoot}/self/stat`)) return { kind: "gone" };
    return { kind: "unknown" };
  }
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  const startTime = fields[19];
  if (!state || !startTime || !/^\d+$/.test(startTime)) return { kind: "unknown" };
  return { kind: "found", state, startTime };
}

/** The start time of a process from /proc, or null where /proc cannot tell. */
export function processStartTime(pid: number): string | null {
  const stat = readProcessStat(pid);
  return stat.kind === "found" ? stat.startTime : null;
}

/**
 * Whether a lease's holder on this host still runs. Signal 0 is not enough: a killed process whose parent does
 * not wait for it (a container whose PID 1 does not reap) stays a zombie, and signal 0 calls it alive. Where
 * /proc tells, a zombie (state Z, or X while it goes) is dead, and so is a pid whose start time is not the one
 * recorded with the lease (the pid was reused by another process). Where it cannot (no /proc), signal 0 decides.
 */
export function holderAlive(pid: number, startTime: string | null): boolean {
  const stat = readProcessStat(pid);
  if (stat.kind === "unknown") return processAlive(pid);
  if (stat.kind === "gone") return false;
  if (stat.state === "Z" || stat.state === "X") return false;
  return startTime === null || stat.startTime === startTime;
}

/** A row still binds when it has not expired and its holder is not known to be dead. */
export function bindingHolder(
  row: LeaseRow | undefined,
  now: number,
  host: string,
  isAlive: NonNullable<LeaseOptions["isAlive"]>,
): LeaseHolder | null {
  if (!row || row.expires_at <= now) return null;
  if (row.host === host && !isAlive(row.pid, row.pid_start)) return null;
  return { holder: row.holder, pid: row.pid, host: row.host, expiresAt: row.expires_at };
}

/** A holder id for this process: the pid (shown to the user) and randomness (pids are reused). */
export function newHolder(pid = process.pid): string {
  return `${pid}-${randomBytes(6).toString("hex")}`;
}

const SELECT = `SELECT holder, pid, host, expires_at, pid_start FROM ${LEASE_TABLE} WHERE thread_id = ?`;

/**
 * Takes the thread's lease when it is free, expired, or held by a dead process on this host. Read and write
 * happen in one BEGIN IMMEDIATE transaction, so two processes racing for a free lease cannot both win.
 */
export function acquireLease(
  db: Database.Database,
  threadId: string,
  ttlMs = LEASE_TTL_MS,
  options: LeaseOptions = {},
): LeaseResult {
  ensureTable(db);
  const pid = options.pid ?? process.pid;
  const host = options.host ?? hostname();
  const holder = options.holder ?? newHolder(pid);
  const startTime = options.startTime !== undefined ? options.startTime : processStartTime(pid);
  const take = db.transaction((now: number): LeaseResult => {
    const held = bindingHolder(
      db.prepare<[string], LeaseRow>(SELECT).get(threadId),
      now,
      host,
      options.isAlive ?? holderAlive,
    );
    if (held && held.holder !== holder) return { acquired: false, heldBy: held };
    const expiresAt = now + ttlMs;
    db.prepare(
      `INSERT INTO ${LEASE_TABLE} (thread_id, holder, pid, host, expires_at, pid_start) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(thread_id) DO UPDATE SET holder = excluded.holder, pid = excluded.pid, host = excluded.host, expires_at = excluded.expires_at, pid_start = excluded.pid_start`,
    ).run(threadId, holder, pid, host, expiresAt, startTime);
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
  const changed = db
    .prepare(`UPDATE ${LEASE_TABLE} SET expires_at = ? WHERE thread_id = ? AND holder = ?`)
    .run(expiresAt, lease.threadId, lease.holder).changes;
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
export function leaseHolder(
  db: Database.Database,
  threadId: string,
  options: Pick<LeaseOptions, "host" | "now" | "isAlive"> = {},
): LeaseHolder | null {
  ensureTable(db);
  return bindingHolder(
    db.prepare<[string], LeaseRow>(SELECT).get(threadId),
    options.now ?? Date.now(),
    options.host ?? hostname(),
    options.isAlive ?? holderAlive,
  );
}

/**
 * One writer per thread on whichever database holds the thread: what `candor` commands use, so they do not care
 * whether the thread lives in SQLite or PostgreSQL. The semantics are those of the functions above.
 */
export interface ThreadLeases {
  acquire(threadId: string, ttlMs?: number, options?: LeaseOptions): Promise<LeaseResult>;
  /** False when the lease was lost: the caller should stop writing. */
  renew(lease: Lease, ttlMs?: number, now?: number): Promise<boolean>;
  release(lease: Lease): Promise<void>;
  holder(threadId: string, options?: Pick<LeaseOptions, "host" | "now" | "isAlive">): Promise<LeaseHolder | null>;
}

/** The leases of a SQLite file, on its connection; after the connection closes, renew and release do nothing. */
export function sqliteLeases(db: Database.Database): ThreadLeases {
  return {
    acquire: async (threadId, ttlMs, options) => acquireLease(db, threadId, ttlMs, options),
    renew: async (lease, ttlMs, now) => !db.open || renewLease(db, lease, ttlMs, now),
    release: async (lease) => releaseLease(db, lease),
    holder: async (threadId, options) => leaseHolder(db, threadId, options),
  };
}
