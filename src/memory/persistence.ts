import { accessSync, closeSync, constants, openSync, statSync, type Stats } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import { describeKind, ensureDirectory } from "./paths.js";
import { SqliteStore } from "./sqlite-store.js";
import { withStatementCache } from "./statement-cache.js";

const BUSY_TIMEOUT_MS = 5000;
/** Appended to the database's file name: one decision log per database, never shared by a folder. */
const DECISION_LOG_SUFFIX = ".decisions.log";

/** Checkpoints and long-term memory in one SQLite file, over one connection. */
export interface Persistence {
  checkpointer: SqliteSaver;
  store: SqliteStore;
  /** The absolute path of the database file. */
  dbPath: string;
  /** Closes the shared connection; safe to call twice. */
  close(): void;
}

/**
 * Opens (creating if needed) the SQLite file that holds both LangGraph checkpoints and Candor's store.
 * The saver and the store share one connection, in WAL mode with a 5 s busy timeout so a second process
 * (another `candor` command) can use the same file.
 *
 * @throws CandorError STORAGE, with a one-paragraph message naming the path, the reason and the fix, when the
 *   path cannot hold a database (its directory cannot be created or written, it is on a kernel filesystem such
 *   as /proc, it is not a regular file) or the file is not a SQLite database or is corrupt.
 */
export function openPersistence(dbPath: string): Persistence {
  const absolute = path.resolve(dbPath);
  ensureWritable(absolute);
  let db: Database.Database;
  try {
    db = new Database(absolute, { timeout: BUSY_TIMEOUT_MS });
  } catch (e) {
    throw unusable(absolute, e);
  }
  try {
    db.pragma("journal_mode = WAL");
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Memory expires where it is written (episodes and reflections: 90 days after), never because it was read;
    // what expired since the last command is swept now.
    const store = new SqliteStore(db, { ttl: { refreshOnRead: false } });
    store.sweep();
    const checkpointer = new SqliteSaver(withStatementCache(db));
    return {
      checkpointer,
      store,
      dbPath: absolute,
      close() {
        if (db.open) db.close();
      },
    };
  } catch (e) {
    db.close();
    throw unusable(absolute, CandorError.isInstance(e) && e.cause !== undefined ? e.cause : e);
  }
}

/**
 * The decision log of a database: beside it and named after it (`candor.db` → `candor.db.decisions.log`), so
 * `--db` moves both together and two databases in one folder never mix their decisions. The whole file name is
 * kept, so `a.db` and `a.sqlite` get two logs too.
 */
export function decisionLogPath(dbPath: string): string {
  return `${path.resolve(dbPath)}${DECISION_LOG_SUFFIX}`;
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

function unusable(file: string, cause: unknown): CandorError {
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
