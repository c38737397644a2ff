import { accessSync, closeSync, constants, existsSync, openSync, readFileSync, statSync, type Stats } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  BaseCheckpointSaver,
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointTuple,
  PendingWrite,
  SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import { openEffectLedger, type EffectLedger } from "../tools/effects.js";
import { fileDecisionLog, type DecisionJournal } from "../transparency/decision-log.js";
import { sqliteLeases, type ThreadLeases } from "./lease.js";
import { describeKind, ensureDirectory } from "../paths.js";
import type { PostgresPersistence } from "./postgres.js";
import type { CandorPostgresStore } from "./postgres-store.js";
import { isPostgresUrl, redactUrl } from "./postgres-url.js";
import { SqliteStore } from "./sqlite-store.js";
import { FastJsonPlusSerializer } from "./fast-serde.js";
import { withStatementCache } from "./statement-cache.js";
import { boundedLedger } from "./bounds.js";
import { asStorageFault, namedStorageFault, storageFault, translateFaults } from "./storage-faults.js";
import { storedValueLimit, type OpenOptions } from "./open-options.js";

export { isPostgresUrl } from "./postgres-url.js";
export type { OpenOptions } from "./open-options.js";

const BUSY_TIMEOUT_MS = 5000;
/** Appended to the database's file name: one decision log per database, never shared by a folder. */
const DECISION_LOG_SUFFIX = ".decisions.log";

/**
 * Everything Candor keeps about threads, in one database: the rest of the code uses these and does not care
 * which backend holds them. SQLite (a file, the default) or PostgreSQL (`--db postgres://…`, for many processes
 * and machines).
 */
interface PersistenceParts {
  checkpointer: BaseCheckpointSaver;
  /** Long-term memory (episodes, calibration, config, thread records). */
  store: SqliteStore | CandorPostgresStore;
  /** Calls with side effects, so a resume or replay never repeats one. */
  ledger: EffectLedger;
  /** One writer per thread. */
  leases: ThreadLeases;
  /** Where decisions are logged and read back. */
  decisions: DecisionJournal;
  /** What messages show: the database file's absolute path, or the PostgreSQL URL without its password. */
  dbPath: string;
}

/** Checkpoints, store, ledger and leases in one SQLite file, over one connection; the decision log beside it. */
export interface SqlitePersistence extends PersistenceParts {
  backend: "sqlite";
  checkpointer: SqliteSaver;
  store: SqliteStore;
  /** Closes the shared connection; safe to call twice. */
  close(): void;
}

/** A backend that has every part; PostgresPersistence is declared beside the code that opens it (postgres.ts). */
type EveryPart<T extends PersistenceParts> = T;

export type Persistence = EveryPart<SqlitePersistence | PostgresPersistence>;
export type { PostgresPersistence };

/**
 * Opens the database a `--db` value (or CANDOR_DB) names: a `postgres://` URL opens PostgreSQL (which must have
 * been migrated), anything else is a SQLite file path (created if needed, as `openPersistence` does).
 *
 * @throws CandorError STORAGE naming the database, the reason and the fix.
 */
export async function openDatabase(location: string, options: OpenOptions = {}): Promise<Persistence> {
  if (!isPostgresUrl(location)) return openPersistence(location, options);
  const { openPostgres } = await import("./postgres.js");
  return openPostgres(location, options);
}

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

/**
 * Opens (creating if needed) the SQLite file that holds both LangGraph checkpoints and Candor's store.
 * The saver and the store share one connection, in WAL mode with a 5 s busy timeout so a second process
 * (another `candor` command) can use the same file.
 *
 * @throws CandorError STORAGE, with a one-paragraph message naming the path, the reason and the fix, when the
 *   path cannot hold a database (its directory cannot be created or written, it is on a kernel filesystem such
 *   as /proc, it is not a regular file) or the file is not a SQLite database or is corrupt.
 */
export function openPersistence(dbPath: string, options: OpenOptions = {}): SqlitePersistence {
  const absolute = path.resolve(dbPath);
  ensureWritable(absolute);
  let db: Database.Database;
  try {
    db = new Database(absolute, { timeout: BUSY_TIMEOUT_MS });
  } catch (e) {
    throw unusable(absolute, e);
  }
  try {
    assertIntact(db, absolute);
    db.pragma("journal_mode = WAL");
    // NORMAL, not SQLite's default FULL: in WAL mode a commit then no longer waits for the disk. A process that
    // crashes loses nothing (what it committed is in the WAL file); only a power loss or an OS crash can take back
    // the last few commits, and a thread then resumes from an earlier checkpoint. The one write that must reach
    // the disk before anything happens, a side effect's ledger row, is made durable on its own (effects.ts).
    // Measured here: a commit took 0.13–0.17 ms with FULL and 0.03 ms with NORMAL; a 12-step run with tools that
    // answer at once makes about 30, and took ~26 ms instead of ~34.
    db.pragma("synchronous = NORMAL");
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Memory expires where it is written (episodes and reflections: 90 days after), never because it was read;
    // what expired since the last command is swept now.
    const store = new SqliteStore(db, { ttl: { refreshOnRead: false }, maxValueBytes: storedValueLimit(options) });
    store.sweep();
    const checkpointer = new CandorSqliteSaver(withStatementCache(db), new FastJsonPlusSerializer(), absolute);
    let ledger: EffectLedger | null = null;
    return {
      backend: "sqlite",
      checkpointer,
      store,
      // Made on first use: its table is created then, so opening a database to read it adds no table.
      get ledger() {
        try {
          ledger ??= boundedLedger(translateFaults(openEffectLedger(db), absolute));
        } catch (e) {
          throw asStorageFault(e, absolute);
        }
        return ledger;
      },
      leases: translateFaults(sqliteLeases(db), absolute),
      decisions: sqliteDecisionJournal(absolute),
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
 * SqliteSaver whose failures that are storage faults (a full disk, a read-only file, a damaged page) arrive as
 * coded errors naming the file: they end a run with exit 5 and a sentence, not as an internal error.
 */
class CandorSqliteSaver extends SqliteSaver {
  constructor(
    db: Database.Database,
    serde: SerializerProtocol,
    private readonly where: string,
  ) {
    super(db, serde);
  }

  override getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return super.getTuple(config).catch((e: unknown) => Promise.reject(asStorageFault(e, this.where)));
  }

  override async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    try {
      yield* super.list(config, options);
    } catch (e) {
      throw asStorageFault(e, this.where);
    }
  }

  override put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata): Promise<RunnableConfig> {
    return super.put(config, checkpoint, metadata).catch((e: unknown) => Promise.reject(asStorageFault(e, this.where)));
  }

  override putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    return super.putWrites(config, writes, taskId).catch((e: unknown) => Promise.reject(asStorageFault(e, this.where)));
  }

  override deleteThread(threadId: string): Promise<void> {
    return super.deleteThread(threadId).catch((e: unknown) => Promise.reject(asStorageFault(e, this.where)));
  }
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

/** The decision log of a SQLite database: JSON lines in a file beside it (see `decisionLogPath`). */
export function sqliteDecisionJournal(dbPath: string): DecisionJournal {
  const file = decisionLogPath(dbPath);
  return {
    where: file,
    open: (level) => {
      const log = fileDecisionLog(file, level);
      return {
        ...log,
        // A log line that cannot be written (a full disk) ends the command as the storage fault it is, not as an
        // internal error; it is written synchronously, so the step that made the decision has not gone further.
        record(d) {
          try {
            log.record(d);
          } catch (e) {
            throw storageFault(e, file, "decision log") ?? e;
          }
        },
        flush: async () => undefined,
      };
    },
    async read() {
      if (!existsSync(file)) return null;
      try {
        return readFileSync(file, "utf8").split("\n");
      } catch (e) {
        throw new CandorError(
          `Cannot read the decision log "${file}": ${errorMessage(e)}. It is the file beside the database, named after it, that run and resume write; move what is at that path away, or pass --db with the database your runs used.`,
          ErrorCode.STORAGE,
          { cause: e },
        );
      }
    },
  };
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

/** What `candor db migrate` did to a database. */
export interface MigrationReport {
  backend: Persistence["backend"];
  /** As messages show it (no password). */
  dbPath: string;
  /** Candor's schema version before (null: no Candor tables) and after; SQLite has none (its tables are made on open). */
  before: number | null;
  after: number | null;
  /** True when another process was migrating the same database and this one waited for it. */
  waited: boolean;
}

/**
 * Creates or upgrades the tables of the database a location names. PostgreSQL: every table (checkpoints, store,
 * ledger, leases, decisions) under an advisory lock, so several processes may run it at once. SQLite creates its
 * tables when it is opened; migrating opens it and makes the ledger's and leases' tables too.
 */
export async function migrateDatabase(location: string, onWait?: () => void): Promise<MigrationReport> {
  if (isPostgresUrl(location)) {
    const { migratePostgres } = await import("./postgres.js");
    const outcome = await migratePostgres(location, onWait);
    return { backend: "postgres", dbPath: describeDatabase(location), ...outcome };
  }
  const persistence = openPersistence(location);
  try {
    // Each part makes its tables on first use: one read of each makes them all.
    await persistence.checkpointer.getTuple({ configurable: { thread_id: "" } });
    await persistence.ledger.verdict({ threadId: "", stepId: "", dispatch: 0 });
    await persistence.leases.holder("");
  } finally {
    persistence.close();
  }
  return { backend: "sqlite", dbPath: persistence.dbPath, before: null, after: null, waited: false };
}
