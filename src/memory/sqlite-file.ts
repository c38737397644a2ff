import { accessSync, closeSync, constants, existsSync, openSync, readFileSync, statSync, type Stats } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import { describeKind, ensureDirectory } from "../paths.js";
import { isPostgresUrl, redactUrl } from "./postgres-url.js";
import { namedStorageFault, storageFault } from "./storage-faults.js";

/*
 * Opening the SQLite file itself, apart from the parts built on it (persistence.ts): this module loads
 * better-sqlite3 and nothing of LangChain, so a command that only lists thread records (records.ts) starts fast.
 */

const BUSY_TIMEOUT_MS = 5000;

/**
 * Whether the database a location names may hold threads already: a SQLite file that exists, or any PostgreSQL
 * URL (a server is asked when opened, and says what is wrong). Reading commands never create a database.
 */
export function databaseMayExist(location: string): boolean {
  return isPostgresUrl(location) || existsSync(path.resolve(location));
}

/** A location as messages and JSON show it: the absolute file path, or the URL without its password. */
export function describeDatabase(location: string): string {
  return isPostgresUrl(location) ? redactUrl(location.trim()) : path.resolve(location);
}

/** An open SQLite database file, as `openSqliteFile` opened it. */
export interface SqliteFile {
  db: Database.Database;
  /** The file's absolute path: what messages name. */
  file: string;
  /** Opened for reading only: nothing may be created, upgraded, swept or written. */
  readOnly: boolean;
}

/**
 * Opens a Candor SQLite file and checks it is intact before anything is written to it.
 *
 * Read-write (the default): the file is created if needed, with its folder, in WAL mode with a 5 s busy timeout so
 * a second process can use the same file. Read-only (`readOnly`): the file must exist and nothing in it changes
 * (SQLite may make its -wal and -shm files beside it, where the folder lets it); a file or folder this process may
 * not write is read all the same. SQLite reads a WAL database through
 * its -shm file, which a read-only folder cannot hold: there, when no -wal file holds unmerged commits, the file is
 * read into memory and opened from there (a snapshot of it, never written back).
 *
 * @throws CandorError STORAGE (or a storage fault: damaged, read-only …) with a one-paragraph message naming the
 *   path, the reason and the fix.
 */
export function openSqliteFile(file: string, readOnly = false): SqliteFile {
  const absolute = path.resolve(file);
  if (readOnly) ensureReadable(absolute);
  else ensureWritable(absolute);
  let db: Database.Database;
  try {
    db = new Database(absolute, { timeout: BUSY_TIMEOUT_MS, readonly: readOnly, fileMustExist: readOnly });
  } catch (e) {
    throw unusable(absolute, e);
  }
  try {
    assertIntact(db, absolute);
  } catch (e) {
    db.close();
    const snapshot = readOnly && cannotOpenShm(e) ? inMemorySnapshot(absolute) : null;
    if (!snapshot) throw unusable(absolute, CandorError.isInstance(e) && e.cause !== undefined ? e.cause : e);
    db = snapshot;
  }
  try {
    if (!readOnly) {
      db.pragma("journal_mode = WAL");
      // NORMAL, not SQLite's default FULL: in WAL mode a commit then no longer waits for the disk. A process that
      // crashes loses nothing (what it committed is in the WAL file); only a power loss or an OS crash can take back
      // the last few commits, and a thread then resumes from an earlier checkpoint. The one write that must reach
      // the disk before anything happens, a side effect's ledger row, is made durable on its own (effects.ts).
      // Measured here: a commit took 0.13–0.17 ms with FULL and 0.03 ms with NORMAL; a 12-step run with tools that
      // answer at once makes about 30, and took ~26 ms instead of ~34.
      db.pragma("synchronous = NORMAL");
    }
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  } catch (e) {
    db.close();
    throw unusable(absolute, e);
  }
  return { db, file: absolute, readOnly };
}

/** Whether a table (or view) exists in the file itself (`main`), not only as a temporary one on this connection. */
export function hasTable(db: Database.Database, table: string): boolean {
  return (
    db.prepare<[string], { n: number }>("SELECT count(*) AS n FROM main.sqlite_master WHERE name = ?").get(table)?.n !==
    0
  );
}

/**
 * Refuses a damaged file before anything is written to it: SQLite itself only notices a bad page when a statement
 * reaches it, and a write into a damaged b-tree can spread the damage. `quick_check` reads every page but skips
 * the index-to-table cross-checks of `integrity_check`; measured here, cold in SQLite's cache, ~7 ms for a 1 MB
 * file, ~55 ms for 10 MB, ~240 ms for 50 MB and ~760 ms for 200 MB (the database of a busy user is a few MB).
 */
function assertIntact(db: Database.Database, file: string): void {
  const problems = (db.pragma("quick_check(3)") as { quick_check: string }[]).map((r) => r.quick_check);
  if (problems.length === 1 && problems[0] === "ok") return;
  throw namedStorageFault(
    "damaged",
    `SQLite's quick_check found this when it was opened, before Candor wrote anything to it: ${problems.join("; ")}`,
    file,
  );
}

/** SQLite's answers when a WAL database's -shm file can be neither opened nor created (a read-only folder). */
function cannotOpenShm(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === "SQLITE_READONLY_DIRECTORY" || code === "SQLITE_CANTOPEN" || code === "SQLITE_READONLY_CANTINIT";
}

/** Bytes 18 and 19 of a SQLite file: its read and write format, 2 for WAL and 1 for a rollback journal. */
const FORMAT_BYTES = [18, 19] as const;

/**
 * The file read into memory and opened read-only there, or null when that would not show every commit: a -wal file
 * with content holds commits the main file lacks. A WAL database in memory cannot be opened as WAL (it has no -shm);
 * marked as a rollback-journal file, the same pages read the same, and the copy is never written anywhere.
 */
function inMemorySnapshot(file: string): Database.Database | null {
  const wal = statSync(`${file}-wal`, { throwIfNoEntry: false });
  if (wal && wal.size > 0) return null;
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw unusable(file, e);
  }
  for (const at of FORMAT_BYTES) if (bytes.length > at && bytes[at] === 2) bytes[at] = 1;
  try {
    const db = new Database(bytes, { readonly: true });
    assertIntact(db, file);
    return db;
  } catch (e) {
    throw unusable(file, CandorError.isInstance(e) && e.cause !== undefined ? e.cause : e);
  }
}

/** The checks of a read-only open: the file must be there and be a regular file; its folder need not be writable. */
function ensureReadable(file: string): void {
  let existing: Stats;
  try {
    existing = statSync(file);
  } catch (e) {
    throw unusable(file, e);
  }
  if (existing.isDirectory()) {
    throw unusable(
      file,
      new Error(`"${file}" is a directory (EISDIR); name a file inside it, e.g. ${path.join(file, "candor.db")}`),
    );
  }
  if (!existing.isFile())
    throw unusable(file, new Error(`"${file}" is a ${describeKind(existing)}, not a regular file`));
}

/**
 * Fails early with the OS's own reason. SQLite reports every one of these cases as "unable to open database
 * file", opens a read-only file without complaint until the first write, and would block on a named pipe.
 */
function ensureWritable(file: string): void {
  const dir = path.dirname(file);
  try {
    ensureDirectory(dir);
  } catch (e) {
    throw unusable(file, e);
  }
  let existing: Stats | null = null;
  try {
    existing = statSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw unusable(file, e);
  }
  if (existing?.isDirectory()) {
    throw unusable(
      file,
      new Error(`"${file}" is a directory (EISDIR); name a file inside it, e.g. ${path.join(file, "candor.db")}`),
    );
  }
  if (existing && !existing.isFile())
    throw unusable(file, new Error(`"${file}" is a ${describeKind(existing)}, not a regular file`));
  try {
    // WAL needs to create -wal and -shm files next to the database.
    accessSync(dir, constants.W_OK);
    // Appending nothing creates a missing file (an empty file is a valid database) and proves we can write it;
    // O_NONBLOCK makes a named pipe swapped in since the check fail instead of waiting for a reader.
    closeSync(
      openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | (constants.O_NONBLOCK ?? 0)),
    );
  } catch (e) {
    throw unusable(file, e);
  }
}

/** SQLite's codes for a file that is not a database, or one whose pages do not make sense. */
const NOT_A_DATABASE: ReadonlySet<string> = new Set(["SQLITE_NOTADB", "SQLITE_CORRUPT"]);

/** The coded error for a file that cannot be opened as a Candor database, naming the path, the reason and the fix. */
export function unusable(file: string, cause: unknown): CandorError {
  const fault = storageFault(cause, file);
  if (fault) return fault;
  const code = (cause as { code?: unknown } | null)?.code;
  if (typeof code === "string" && NOT_A_DATABASE.has(code)) {
    return new CandorError(
      `"${file}" is not a usable Candor database: SQLite says "${errorMessage(cause)}", so it is not a SQLite file or it is corrupt. ` +
        `Candor left it as it is. Pass --db (or set CANDOR_DB) with another path, where a new database is created, or move this file away; if it held your threads, restore it from a backup.`,
      ErrorCode.STORAGE,
      { cause, details: { dbPath: file } },
    );
  }
  return new CandorError(
    `Cannot use "${file}" as the Candor database: ${errorMessage(cause)}. ` +
      `Pass --db with a file path (a new file, or a Candor database) in a directory you can write to, or set CANDOR_DB to such a path.`,
    ErrorCode.STORAGE,
    { cause, details: { dbPath: file } },
  );
}
