import { statfsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";

/**
 * Storage faults Candor can name: what the database engine or driver said, turned into one coded error with a
 * sentence saying what is wrong, what was kept and what to do. Both backends' errors come from outside Candor, so
 * they are recognised here by the engine's own codes (SQLite's extended result codes, PostgreSQL's SQLSTATE) and,
 * for a dropped connection that has no code, by the pg driver's fixed wording.
 */
export const StorageFaultKind = z.enum(["damaged", "full", "read_only", "io_error", "busy", "connection_lost"]);
export type StorageFaultKind = z.infer<typeof StorageFaultKind>;

/** What each fault is called and how the user gets out of it; `db` names the database ("the database …"). */
const FAULTS: Record<StorageFaultKind, { code: ErrorCode; message: (db: string, said: string) => string }> = {
  damaged: {
    code: ErrorCode.STORAGE_DAMAGED,
    message: (db, said) =>
      `${db} is damaged (${said}). Restore it from a backup, or save what SQLite can still read with \`sqlite3 <file> .recover | sqlite3 recovered.db\` and pass --db recovered.db; --db with a new path starts afresh.`,
  },
  full: {
    code: ErrorCode.STORAGE_FULL,
    message: (db, said) =>
      `${db} cannot grow: the disk is full (${said}). What was saved before stays; free space on that disk, then continue an unfinished thread with \`candor resume <thread>\` (\`candor threads\` lists them).`,
  },
  read_only: {
    code: ErrorCode.STORAGE_READ_ONLY,
    message: (db, said) =>
      `${db} is read-only for this process (${said}), so Candor cannot record anything in it. Make the file, its folder and the -wal and -shm files beside it writable by this user, or pass --db with a path you can write.`,
  },
  io_error: {
    code: ErrorCode.STORAGE_IO_ERROR,
    message: (db, said) =>
      `${db} could not be read or written: the disk reported an error (${said}). Check the disk and its filesystem (the system log says more); what was saved before stays, and \`candor resume <thread>\` continues an unfinished thread once it works again.`,
  },
  busy: {
    code: ErrorCode.STORAGE_BUSY,
    message: (db, said) =>
      `${db} stayed locked by another process for longer than Candor waits (${said}). Try again once the other command is done; an unfinished thread continues with \`candor resume <thread>\`.`,
  },
  connection_lost: {
    code: ErrorCode.STORAGE_CONNECTION_LOST,
    message: (db, said) =>
      `The connection to ${db} was lost (${said}); what the run had finished is in its checkpoints. Once the server is back, continue with \`candor resume <thread>\` (\`candor threads\` lists it).`,
  },
};

/** Every code a storage fault carries: the CLI exits 5 on these. */
const STORAGE_FAULT_CODES: ReadonlySet<ErrorCode> = new Set(Object.values(FAULTS).map((f) => f.code));

/** SQLite's primary result codes (the extended ones, e.g. SQLITE_READONLY_DBMOVED, start with these). */
const SQLITE_KINDS: readonly [prefix: string, kind: StorageFaultKind][] = [
  // Not SQLITE_NOTADB: a file that is not a database at all is more often the wrong --db than a damaged one, and
  // openPersistence says so in its own words.
  ["SQLITE_CORRUPT", "damaged"],
  ["SQLITE_FULL", "full"],
  ["SQLITE_READONLY", "read_only"],
  // Before SQLITE_IOERR: the first prefix that matches decides.
  ["SQLITE_IOERR_NOSPC", "full"],
  ["SQLITE_IOERR", "io_error"],
  // The operating system refused the access the file was opened for.
  ["SQLITE_PERM", "read_only"],
  ["SQLITE_BUSY", "busy"],
];

/**
 * PostgreSQL's SQLSTATEs for a server that went away (class 08: connection exception; 57P01-03: shut down or
 * terminated; 53100: disk full; 25006: a read-only transaction), and Node's socket and file-system errors.
 */
const OTHER_KINDS: ReadonlyMap<string, StorageFaultKind> = new Map([
  ["ENOSPC", "full"],
  ["EDQUOT", "full"],
  ["EROFS", "read_only"],
  ["EACCES", "read_only"],
  ["EPERM", "read_only"],
  ["57P01", "connection_lost"],
  ["57P02", "connection_lost"],
  ["57P03", "connection_lost"],
  ["08000", "connection_lost"],
  ["08003", "connection_lost"],
  ["08006", "connection_lost"],
  ["08001", "connection_lost"],
  ["ECONNRESET", "connection_lost"],
  ["ECONNREFUSED", "connection_lost"],
  ["EPIPE", "connection_lost"],
  ["53100", "full"],
  ["58030", "io_error"],
  ["25006", "read_only"],
]);

/**
 * The pg driver's own errors for a socket that closed, or that stopped answering (a query past the pool's
 * query_timeout: the server gone without closing the connection, as behind a network partition); they carry no code.
 */
const PG_DROPPED =
  /^Connection terminated( unexpectedly)?$|^Client has encountered a connection error|^timeout exceeded when trying to connect$|^Query read timeout$/;

/**
 * The fault a single error (not its causes) is, if any. An OS error code (ENOSPC, EACCES, ECONNRESET …) says
 * nothing about which file or socket failed, so it counts only at a database call (`atDatabase`).
 */
function kindOf(e: unknown, atDatabase: boolean): StorageFaultKind | null {
  if (typeof e !== "object" || e === null) return null;
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string") {
    const sqlite = SQLITE_KINDS.find(([prefix]) => code === prefix || code.startsWith(`${prefix}_`));
    if (sqlite) return sqlite[1];
    const other = OTHER_KINDS.get(code);
    if (other && (atDatabase || !code.startsWith("E"))) return other;
  }
  return e instanceof Error && PG_DROPPED.test(e.message) ? "connection_lost" : null;
}

/**
 * The first error along `e`'s cause chain that is a storage fault, and which. A CandorError with another code was
 * named already (a tool's, a configuration file's): its causes are not looked into.
 */
function findFault(e: unknown, atDatabase: boolean): { kind: StorageFaultKind; error: unknown } | null {
  const seen = new Set<unknown>();
  for (let current = e; current !== undefined && current !== null && !seen.has(current);) {
    seen.add(current);
    if (CandorError.isInstance(current)) {
      const { code } = current;
      const known = StorageFaultKind.options.find((k) => FAULTS[k].code === code);
      if (known) return { kind: known, error: current };
      if (code !== ErrorCode.STORAGE) return null;
    }
    const kind = kindOf(current, atDatabase);
    if (kind) return { kind, error: current };
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * The coded error a storage failure is, or null when `e` is not one Candor can name. A CandorError that already
 * is a storage fault is returned as it is. `where` names the database (a path, a redacted URL); without it the
 * message says "the database". `noun` names a file beside it instead (the decision log).
 */
export function storageFault(e: unknown, where?: string, noun = "database"): CandorError | null {
  const found = findFault(e, where !== undefined);
  if (!found) return null;
  if (CandorError.isInstance(found.error) && STORAGE_FAULT_CODES.has(found.error.code)) return found.error;
  if (found.kind === "io_error" && where !== undefined && !isUrl(where)) {
    const free = freeBytes(where);
    // SQLite says only "disk I/O error" when its shared-memory file cannot grow on a full disk.
    if (free !== null && free < NEARLY_FULL_BYTES)
      return namedStorageFault(
        "full",
        `${errorMessage(found.error)}, with ${free} bytes free on its disk`,
        where,
        e,
        noun,
      );
  }
  return namedStorageFault(found.kind, errorMessage(found.error), where, e, noun);
}

/** Below this much free space, an I/O error on a database file is taken to be the full disk it most likely is. */
const NEARLY_FULL_BYTES = 64 * 1024;

/** The bytes an unprivileged writer may still use on the disk holding `file`, or null when that cannot be read. */
function freeBytes(file: string): number | null {
  try {
    const fs = statfsSync(path.dirname(file));
    return fs.bavail * fs.bsize;
  } catch {
    return null; // no answer about the disk: the I/O error is reported as it is
  }
}

/** The coded error of a fault Candor found itself (a failed integrity check), in the same words as `storageFault`. */
export function namedStorageFault(
  kind: StorageFaultKind,
  said: string,
  where?: string,
  cause?: unknown,
  noun = "database",
): CandorError {
  const fault = FAULTS[kind];
  const db =
    where === undefined ? `the ${noun}` : isUrl(where) ? `the PostgreSQL database ${where}` : `the ${noun} "${where}"`;
  const what = said.replace(/\.$/, "") || kind;
  const message = fault.message(db, what);
  return new CandorError(message.charAt(0).toUpperCase() + message.slice(1), fault.code, {
    ...(cause === undefined ? {} : { cause }),
    details: { kind, said: what, ...(where === undefined ? {} : { dbPath: where }) },
  });
}

/** `storageFault`, or the error itself when it is not one: for a `catch` that rethrows. */
export function asStorageFault(e: unknown, where: string): unknown {
  return storageFault(e, where) ?? e;
}

const isUrl = (where: string) => /^postgres(ql)?:\/\//i.test(where);

/**
 * `parts` (a ledger, leases: objects of async methods) with every method's storage faults turned into coded errors
 * naming `where`; other errors pass unchanged.
 */
export function translateFaults<T extends object>(parts: T, where: string): T {
  return new Proxy(parts, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        try {
          const out: unknown = Reflect.apply(value, target, args);
          return out instanceof Promise ? out.catch((e: unknown) => Promise.reject(asStorageFault(e, where))) : out;
        } catch (e) {
          throw asStorageFault(e, where);
        }
      };
    },
  });
}
