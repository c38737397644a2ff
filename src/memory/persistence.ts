import { DEFAULT_STORAGE_BOUNDS } from "../domain/config.js";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
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
import { EFFECTS_TABLE, openEffectLedger, type EffectLedger } from "../tools/effects.js";
import { fileDecisionLog, type DecisionJournal } from "../transparency/decision-log.js";
import { LEASE_TABLE, sqliteLeases, type ThreadLeases } from "./lease.js";
import type { PostgresPersistence } from "./postgres.js";
import type { CandorPostgresStore } from "./postgres-store.js";
import { isPostgresUrl } from "./postgres-url.js";
import { SqliteStore } from "./sqlite-store.js";
import { FastJsonPlusSerializer } from "./fast-serde.js";
import { withStatementCache } from "./statement-cache.js";
import { boundedLedger } from "./bounds.js";
import { asStorageFault, namedStorageFault, storageFault, translateFaults } from "./storage-faults.js";
import { logLineLimit, storedValueLimit, toolResultLimit, type OpenOptions } from "./open-options.js";
import { describeDatabase, hasTable, openSqliteFile, unusable, type SqliteFile } from "./sqlite-file.js";

export { isPostgresUrl } from "./postgres-url.js";
export { databaseMayExist, describeDatabase } from "./sqlite-file.js";
export type { OpenOptions } from "./open-options.js";
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
  /** Opened for reading only (`OpenOptions.readOnly`): every write fails as STORAGE_READ_ONLY. */
  readOnly: boolean;
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
 * Opens (creating if needed) the SQLite file that holds both LangGraph checkpoints and Candor's store.
 * The saver and the store share one connection, in WAL mode with a 5 s busy timeout so a second process
 * (another `candor` command) can use the same file.
 *
 * With `readOnly`, the file must exist and nothing is written to it: no table is created or upgraded, expired
 * memory is not swept, a file or folder this process may not write is read all the same (see `openSqliteFile`),
 * and any write (a checkpoint, a store put, a lease) fails as STORAGE_READ_ONLY. Parts the file lacks read as
 * empty. What the commands that only read use.
 *
 * @throws CandorError STORAGE, with a one-paragraph message naming the path, the reason and the fix, when the
 *   path cannot hold a database (its directory cannot be created or written, it is on a kernel filesystem such
 *   as /proc, it is not a regular file) or the file is not a SQLite database or is corrupt.
 */
export function openPersistence(dbPath: string, options: OpenOptions = {}): SqlitePersistence {
  return persistenceOn(openSqliteFile(dbPath, options.readOnly === true), options);
}

/**
 * The persistence over a file `openSqliteFile` opened (records.ts opens one light, then builds this on the same
 * connection when a command needs the checkpoints too). Closes the file when the parts cannot be built.
 */
export function persistenceOn({ db, file, readOnly }: SqliteFile, options: OpenOptions = {}): SqlitePersistence {
  try {
    const store = new SqliteStore(db, {
      // Memory expires where it is written (episodes and reflections: 90 days after), never because it was read.
      ttl: { refreshOnRead: false },
      maxValueBytes: storedValueLimit(options),
      readOnly,
    });
    // What expired since the last command is swept now, by a command that may write.
    if (!readOnly) store.sweep();
    const checkpointer = new CandorSqliteSaver(withStatementCache(db), new FastJsonPlusSerializer(), file, readOnly);
    let ledger: EffectLedger | null = null;
    const openLedger = (): EffectLedger => {
      try {
        ledger ??= boundedLedger(
          translateFaults(openEffectLedger(readableDb(db, file, readOnly, EFFECTS_TABLE)), file),
          toolResultLimit(options),
        );
      } catch (e) {
        throw asStorageFault(e, file);
      }
      return ledger;
    };
    return {
      backend: "sqlite",
      readOnly,
      checkpointer,
      store,
      // Made on first use: its table is created then, so opening a database to read it adds no table. Read-only,
      // it is not even looked at until a method is called (compiling the agent hands it over without calling it).
      get ledger() {
        return readOnly ? deferred(openLedger) : openLedger();
      },
      leases: translateFaults(readOnly ? readOnlyLeases(db, file) : sqliteLeases(db), file),
      decisions: sqliteDecisionJournal(file, readOnly, logLineLimit(options)),
      dbPath: file,
      close() {
        if (db.open) db.close();
      },
    };
  } catch (e) {
    db.close();
    throw unusable(file, CandorError.isInstance(e) && e.cause !== undefined ? e.cause : e);
  }
}

/** The fault of a write to a database a reading command opened read-only. */
function openedReadOnly(file: string): CandorError {
  return namedStorageFault("read_only", "it was opened read-only, by a command that only reads", file);
}

/**
 * The connection, for a part whose table a read-only database lacks: refused as the read-only fault it is (that
 * part would have to create its table), rather than SQLite's "attempt to write a readonly database".
 */
function readableDb(db: Database.Database, file: string, readOnly: boolean, table: string): Database.Database {
  if (readOnly && !hasTable(db, table)) throw openedReadOnly(file);
  return db;
}

/** An object whose methods are looked up on `open()`'s result when first called. */
function deferred<T extends object>(open: () => T): T {
  return new Proxy({} as T, {
    get(_target, key) {
      const real = open();
      const value: unknown = Reflect.get(real, key, real);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(real) : value;
    },
  });
}

/**
 * Leases on a database opened read-only: who holds a thread is read (nobody, when the file has no lease table);
 * taking, renewing or giving one back would write, and fails as the read-only fault.
 */
function readOnlyLeases(db: Database.Database, file: string): ThreadLeases {
  const leases = sqliteLeases(db);
  return {
    acquire: () => Promise.reject(openedReadOnly(file)),
    renew: () => Promise.reject(openedReadOnly(file)),
    release: () => Promise.reject(openedReadOnly(file)),
    holder: async (threadId, options) => (hasTable(db, LEASE_TABLE) ? leases.holder(threadId, options) : null),
  };
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
    private readonly readOnly = false,
  ) {
    super(db, serde);
  }

  /**
   * False when the file, opened read-only, has no checkpoint tables: SqliteSaver would create them on first use, and
   * a file with none holds no checkpoint to read.
   */
  private readable(): boolean {
    return !this.readOnly || (hasTable(this.db, "checkpoints") && hasTable(this.db, "writes"));
  }

  override getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    if (!this.readable()) return Promise.resolve(undefined);
    return super.getTuple(config).catch((e: unknown) => Promise.reject(asStorageFault(e, this.where)));
  }

  override async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    if (!this.readable()) return;
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
 * The decision log of a SQLite database: JSON lines in a file beside it (see `decisionLogPath`). Read-only (a
 * database a reading command opened), opening it touches no file and recording a decision fails as the read-only
 * fault: the log file is created when opened for writing, which a read-only folder refuses.
 */
export function sqliteDecisionJournal(
  dbPath: string,
  readOnly = false,
  maxLineBytes: number = DEFAULT_STORAGE_BOUNDS.maxLogLineBytes,
): DecisionJournal {
  const file = decisionLogPath(dbPath);
  return {
    where: file,
    open: (level) => {
      if (readOnly)
        return {
          record: () => {
            throw namedStorageFault(
              "read_only",
              "it was opened read-only, by a command that only reads",
              file,
              undefined,
              "decision log",
            );
          },
          flush: async () => undefined,
        };
      const log = fileDecisionLog(file, level, maxLineBytes);
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
