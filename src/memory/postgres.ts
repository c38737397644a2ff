import { randomBytes } from "node:crypto";
import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointTuple,
  PendingWrite,
} from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { z } from "zod";
import { CandorError, ErrorCode } from "../errors.js";
import { EFFECTS_TABLE, type EffectLedger } from "../tools/effects.js";
import type { DecisionJournal } from "../transparency/decision-log.js";
import { DECISIONS_TABLE, postgresDecisionJournal } from "./postgres-decisions.js";
import { PostgresEffectLedger } from "./postgres-effects.js";
import { RunQueue, RUNS_TABLE_SQL } from "./postgres-queue.js";
import { postgresLeases } from "./postgres-lease.js";
import { CandorPostgresStore } from "./postgres-store.js";
import { LEASE_TABLE, type ThreadLeases } from "./lease.js";
import { hearConnectionErrors, postgresError, redactUrl } from "./postgres-url.js";
import { asStorageFault } from "./storage-faults.js";
import { boundedLedger } from "./bounds.js";
import { logLineLimit, storedValueLimit, toolResultLimit, type OpenOptions } from "./open-options.js";

/** An unreachable host fails the command after this long instead of hanging it. */
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * A query with no answer after this long fails as a lost connection, as a command may hang no longer than a connect
 * may (a server behind a network partition never closes the socket, so without it a command would wait forever).
 * Candor's queries are small; a lease's lock waits only on another worker's short transaction. Keep-alive probes
 * find a dead peer on idle connections too.
 */
const QUERY_TIMEOUT_MS = 10_000;
/** The settings every pool of Candor's shares. */
const POOL_SETTINGS = {
  connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  query_timeout: QUERY_TIMEOUT_MS,
  keepAlive: true,
  application_name: "candor",
} as const;

/**
 * Key of the advisory lock `candor db migrate` holds around schema setup. PostgresSaver's and PostgresStore's own
 * `setup()` read their version and then create tables, so two processes doing it at once can both try to create
 * the same table (a duplicate-key error on pg_type); holding one lock serialises them.
 */
const MIGRATE_LOCK_KEY = 0x43414e444f52n; // "CANDOR"

/**
 * Candor's own tables, as numbered migrations (the position is the version, as the LangGraph packages do it).
 * Columns match the SQLite tables so one row type serves both backends; add a migration, never edit one.
 */
const CANDOR_MIGRATIONS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS ${EFFECTS_TABLE} (
    thread_id TEXT NOT NULL,
    step_id TEXT NOT NULL,
    dispatch INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    tool TEXT NOT NULL,
    args_hash TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('started', 'done', 'failed')),
    result TEXT,
    at TEXT NOT NULL,
    PRIMARY KEY (thread_id, step_id, dispatch, attempt)
  )`,
  // expires_at is epoch milliseconds on the database server's clock, so machines whose clocks differ agree.
  `CREATE TABLE IF NOT EXISTS ${LEASE_TABLE} (
    thread_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    pid_start TEXT
  )`,
  // `line` is the JSON line the file log would hold, kept as text so `candor logs --json` prints it unchanged.
  `CREATE TABLE IF NOT EXISTS ${DECISIONS_TABLE} (
    id BIGSERIAL PRIMARY KEY,
    thread_id TEXT,
    plan_id TEXT,
    task_id TEXT,
    operation TEXT NOT NULL,
    line TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS ${DECISIONS_TABLE}_thread ON ${DECISIONS_TABLE} (thread_id, id)`,
  // The run queue `candor submit` fills and `candor worker`s take from.
  RUNS_TABLE_SQL,
];

const SCHEMA_TABLE = "candor_schema_migrations";

/** The schema version this Candor needs: the number of its migrations. */
export const CANDOR_SCHEMA_VERSION = CANDOR_MIGRATIONS.length;

/**
 * PostgresSaver with versions that never repeat across branches. PostgresSaver 1.0.5 keeps channel values in a
 * blob table keyed by (thread, channel, version), writes them with ON CONFLICT DO NOTHING, and numbers versions
 * 1, 2, 3 …: a replay or fork from an earlier checkpoint makes versions the original branch already used, so its
 * new values are silently dropped and the branch reads the original's (a fork to Rome reads the trip to Paris).
 * Versions here are `<zero-padded counter>.<random>`, as LangGraph's Python saver makes them: they still order
 * by counter (LangGraph compares versions with `>`; strings are versions it supports), and no two branches share one.
 */
class CandorPostgresSaver extends PostgresSaver {
  constructor(
    pool: pg.Pool,
    private readonly where: string,
  ) {
    super(pool);
  }

  // A connection lost under a read or a write ends the run as STORAGE_CONNECTION_LOST naming the database (exit 5):
  // what the run finished is in its checkpoints, and `candor resume` continues it once the server is back.
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

  override put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    return super
      .put(config, checkpoint, metadata, newVersions)
      .catch((e: unknown) => Promise.reject(asStorageFault(e, this.where)));
  }

  override putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    return super.putWrites(config, writes, taskId).catch((e: unknown) => Promise.reject(asStorageFault(e, this.where)));
  }

  override deleteThread(threadId: string): Promise<void> {
    return super.deleteThread(threadId).catch((e: unknown) => Promise.reject(asStorageFault(e, this.where)));
  }

  // The class is typed for numeric versions; LangGraph itself takes strings (its API server uses them).
  override getNextVersion(current: number | undefined): number {
    const counter =
      typeof current === "string" ? Number.parseInt(String(current).split(".")[0] ?? "0", 10) : (current ?? 0);
    return `${String(counter + 1).padStart(32, "0")}.${randomBytes(8).toString("hex")}` as unknown as number;
  }
}

/** Connections per process: the saver, ledger, leases and decision log share one pool; the store has its own. */
const POOL_SIZE = 10;
const STORE_POOL_SIZE = 5;

/** A pool with Candor's connection settings. */
function newPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, ...POOL_SETTINGS });
  hearConnectionErrors(pool);
  return pool;
}

/** What `candor db migrate` did. */
export interface MigrationOutcome {
  /** Candor's schema version before (null: no Candor tables yet) and after. */
  before: number | null;
  after: number;
  /** True when another process held the migration lock and this one waited for it. */
  waited: boolean;
}

const VersionRow = z.object({ v: z.number().int().nullable() });

async function schemaVersion(client: pg.ClientBase): Promise<number | null> {
  const exists = await client.query<{ t: string | null }>(`SELECT to_regclass('${SCHEMA_TABLE}')::text AS t`);
  if (!exists.rows[0]?.t) return null;
  const { rows } = await client.query(`SELECT max(v) + 1 AS v FROM ${SCHEMA_TABLE}`);
  return VersionRow.parse(rows[0]).v ?? 0;
}

/**
 * Creates or upgrades every table Candor uses in this database: LangGraph's checkpoint tables (PostgresSaver),
 * its store (PostgresStore) and Candor's effect ledger, leases and decision log. Idempotent, and safe when several
 * processes run it at once: each waits for an advisory lock, so the setups run one after another and the later
 * ones find nothing to do.
 *
 * @param onWait called once when another process holds the lock, before waiting for it.
 * @throws CandorError STORAGE naming the database when it cannot be reached or a statement fails.
 */
export async function migratePostgres(url: string, onWait?: () => void): Promise<MigrationOutcome> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on("error", () => undefined); // reported by the query that fails next (see newPool)
  try {
    await client.connect();
  } catch (e) {
    throw postgresError(url, e, "connect");
  }
  let locked = false;
  try {
    const { rows } = await client.query<{ got: boolean }>("SELECT pg_try_advisory_lock($1) AS got", [
      MIGRATE_LOCK_KEY.toString(),
    ]);
    const waited = rows[0]?.got !== true;
    if (waited) {
      onWait?.();
      await client.query("SELECT pg_advisory_lock($1)", [MIGRATE_LOCK_KEY.toString()]);
    }
    locked = true;
    const before = await schemaVersion(client);
    const pool = newPool(url, 1);
    try {
      await new PostgresSaver(pool).setup();
    } finally {
      await pool.end();
    }
    const store = new CandorPostgresStore({ connectionString: url, max: 1 });
    try {
      await store.setup();
    } finally {
      await store.stop();
    }
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${SCHEMA_TABLE} (v INTEGER PRIMARY KEY, at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
    for (let v = before ?? 0; v < CANDOR_MIGRATIONS.length; v++) {
      await client.query("BEGIN");
      await client.query(CANDOR_MIGRATIONS[v]!);
      await client.query(`INSERT INTO ${SCHEMA_TABLE} (v) VALUES ($1)`, [v]);
      await client.query("COMMIT");
    }
    return { before, after: CANDOR_MIGRATIONS.length, waited };
  } catch (e) {
    await client.query("ROLLBACK").catch(() => undefined); // the failure below is the one to report
    throw postgresError(url, e, "set up the Candor tables");
  } finally {
    if (locked)
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATE_LOCK_KEY.toString()]).catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}

/**
 * Everything Candor keeps about threads on a PostgreSQL database (made by `candor db migrate`), the decision log in
 * a table of it: the parts every backend has (persistence.ts checks it has them all), and the run queue.
 */
export interface PostgresPersistence {
  backend: "postgres";
  checkpointer: CandorPostgresSaver;
  /** Long-term memory (episodes, calibration, config, thread records). */
  store: CandorPostgresStore;
  /** Calls with side effects, so a resume or replay never repeats one. */
  ledger: EffectLedger;
  /** One writer per thread. */
  leases: ThreadLeases;
  /** Where decisions are logged and read back. */
  decisions: DecisionJournal;
  /** What messages show: the PostgreSQL URL without its password. */
  dbPath: string;
  /** The run queue `candor submit` fills and `candor worker`s take from. */
  queue: RunQueue;
  /** Ends the pools once pending writes are done; safe to call twice. */
  close(): Promise<void>;
}

/**
 * Opens a migrated PostgreSQL database: checkpoints (PostgresSaver), the store (PostgresStore, on its own pool: it
 * owns and ends the pool it is given), the effect ledger, leases and the decision log (on the saver's pool).
 * Nothing is created here: a database without Candor's tables, or with an older version of them, is refused with
 * the command that makes them.
 *
 * @throws CandorError STORAGE when the server cannot be reached or the schema is missing or newer than this Candor.
 */
export async function openPostgres(url: string, options: OpenOptions = {}): Promise<PostgresPersistence> {
  const where = redactUrl(url);
  const pool = newPool(url, POOL_SIZE);
  let version: number | null;
  try {
    const client = await pool.connect();
    try {
      version = await schemaVersion(client);
    } finally {
      client.release();
    }
  } catch (e) {
    await pool.end();
    throw postgresError(url, e, "connect");
  }
  if (version === null || version < CANDOR_SCHEMA_VERSION) {
    await pool.end();
    throw new CandorError(
      `The PostgreSQL database ${where} ${version === null ? "has no Candor tables yet" : `has Candor's schema version ${version}, older than this Candor's ${CANDOR_SCHEMA_VERSION}`}. Candor creates and upgrades tables only when asked: run \`candor db migrate --db ${where}\` once (safe to repeat, and from several machines at once), then try again.`,
      ErrorCode.STORAGE,
      { details: { dbPath: where } },
    );
  }
  if (version > CANDOR_SCHEMA_VERSION) {
    await pool.end();
    throw new CandorError(
      `The PostgreSQL database ${where} has Candor's schema version ${version}, newer than this Candor's ${CANDOR_SCHEMA_VERSION}: a newer Candor migrated it. Upgrade Candor on this machine to use it.`,
      ErrorCode.STORAGE,
      { details: { dbPath: where } },
    );
  }
  return connectPostgres(url, options, pool);
}

/**
 * The persistence of a PostgreSQL database without asking the server anything (pools connect on first use):
 * for callers that know the database is migrated (tests on a migrated template); `openPostgres` checks first.
 */
export function connectPostgres(
  url: string,
  options: OpenOptions = {},
  pool: pg.Pool = newPool(url, POOL_SIZE),
): PostgresPersistence {
  const where = redactUrl(url);
  const checkpointer = new CandorPostgresSaver(pool, where);
  const store = new CandorPostgresStore(
    { connectionString: url, max: STORE_POOL_SIZE, ...POOL_SETTINGS },
    { maxValueBytes: storedValueLimit(options) },
  );
  let closing: Promise<void> | null = null;
  return {
    backend: "postgres",
    checkpointer,
    store,
    dbPath: where,
    ledger: boundedLedger(new PostgresEffectLedger(pool, url), toolResultLimit(options)),
    leases: postgresLeases(pool, url),
    decisions: postgresDecisionJournal(pool, where, logLineLimit(options)),
    queue: new RunQueue(pool, url),
    close() {
      closing ??= (async () => {
        await store.stop();
        await pool.end();
      })();
      return closing;
    },
  };
}
