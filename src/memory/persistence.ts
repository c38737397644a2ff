import { accessSync, closeSync, constants, mkdirSync, openSync, statSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import { SqliteStore } from "./sqlite-store.js";

const BUSY_TIMEOUT_MS = 5000;
const DECISION_LOG_FILE = "decisions.log";

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
 * @throws CandorError STORAGE, with a one-paragraph message naming the path, the OS error and the fix, when
 *   the directory cannot be created, the file cannot be written, or the file is not a SQLite database.
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
    const store = new SqliteStore(db);
    const checkpointer = new SqliteSaver(db);
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

/** The decision log lives beside the database, so `--db` moves both together. */
export function decisionLogPath(dbPath: string): string {
  return path.join(path.dirname(path.resolve(dbPath)), DECISION_LOG_FILE);
}

/**
 * Fails early with the OS's own reason. SQLite reports every one of these cases as "unable to open database
 * file", and opens a read-only file without complaint until the first write.
 */
function ensureWritable(file: string): void {
  const dir = path.dirname(file);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw unusable(file, explainMkdirFailure(e));
  }
  try {
    // WAL needs to create -wal and -shm files next to the database.
    accessSync(dir, constants.W_OK);
    // Appending nothing creates a missing file (an empty file is a valid database) and proves we can write it.
    closeSync(openSync(file, "a"));
  } catch (e) {
    throw unusable(file, e);
  }
}

/**
 * Recursive mkdir reports a regular file in the way as "EEXIST: file already exists", which reads as if the
 * database were already there; name the file that is not a directory instead.
 */
function explainMkdirFailure(e: unknown): unknown {
  const err = e as NodeJS.ErrnoException;
  if (err.code !== "EEXIST" || typeof err.path !== "string") return e;
  try {
    if (statSync(err.path).isDirectory()) return e;
  } catch {
    return e;
  }
  return new Error(`"${err.path}" is a file, not a directory (mkdir failed with EEXIST)`, { cause: e });
}

function unusable(file: string, cause: unknown): CandorError {
  return new CandorError(
    `Cannot use "${file}" as the Candor database: ${errorMessage(cause)}. ` +
      `Pass --db with a path in a directory you can write to, or set CANDOR_DB to such a path.`,
    ErrorCode.STORAGE,
    { cause, details: { dbPath: file } },
  );
}
