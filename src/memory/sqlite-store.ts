import Database from "better-sqlite3";
import {
  BaseStore,
  validateNamespace,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from "@langchain/langgraph-checkpoint";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import { DEFAULT_STORAGE_BOUNDS } from "../domain/config.js";
import { storableJson } from "./bounds.js";
import { namedStorageFault, storageFault } from "./storage-faults.js";
import { NAMESPACE_SEPARATOR, STORE_TABLE } from "./store-layout.js";

export { STORE_TABLE };

const BUSY_TIMEOUT_MS = 5000;
const DEFAULT_SEARCH_LIMIT = 10;

type Row = {
  namespace: string;
  key: string;
  value: string;
  created_at: number;
  updated_at: number;
  expires_at: number | null;
  ttl_minutes: number | null;
};

/**
 * LangGraph's store TTL contract (TTLConfig of the Postgres store and of Python's BaseStore): minutes, a default for
 * new items, whether reads push expiry back, and how often expired items are swept.
 */
export interface TTLConfig {
  /** Minutes a new item lives when its put gives no `ttl`; absent: items without a ttl never expire. */
  defaultTtl?: number;
  /** Whether a get or search that returns an item restarts its ttl (default true, as in the contract). */
  refreshOnRead?: boolean;
  /** Minutes between sweeps of expired items once `start()` is called; absent: sweep only when `sweep()` is called. */
  sweepIntervalMinutes?: number;
}

export interface SqliteStoreOptions {
  ttl?: TTLConfig;
  /** The clock in ms (default Date.now); injected so expiry can be tested. */
  now?: () => number;
  /** Most bytes of one item's JSON value; a larger put is refused (default: the bound on stored values). */
  maxValueBytes?: number;
  /**
   * The connection was opened read-only: the table is not created or upgraded (a file without it reads as empty),
   * and a put or delete fails as STORAGE_READ_ONLY.
   */
  readOnly?: boolean;
}

/** Per-put options, as the contract's `PutOptions`: `ttl` in minutes, null for an item that never expires. */
export interface PutOptions {
  ttl?: number | null;
}

const MINUTE_MS = 60_000;
/** The table's columns as they are today, for the stand-in a read-only file without the table reads through. */
const STORE_COLUMNS =
  "namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, seq INTEGER NOT NULL, expires_at INTEGER, ttl_minutes REAL, PRIMARY KEY (namespace, key)";
const ROW_COLUMNS = "s.namespace, s.key, s.value, s.created_at, s.updated_at, s.expires_at, s.ttl_minutes";
type Primitive = string | number | boolean | null;

/**
 * A LangGraph `BaseStore` on SQLite (better-sqlite3), for long-term memory that outlives a process.
 *
 * - Items keep `createdAt` across updates; search returns the most recently written items first.
 * - `search` filters on top-level value fields by equality (`{ status: "done" }` or `{ status: { $eq: "done" } }`)
 *   with string, number, boolean or null values. `query` is ignored: there is no vector index, so a query
 *   never ranks results, and `PutOperation.index` is ignored for the same reason.
 * - Operations in one `batch` run in order inside one transaction, so a get after a put in the same batch
 *   sees the put.
 * - Pass an open Database to share one file (and one connection) with `SqliteSaver`; the store then never
 *   closes it. WAL mode lets several processes read and write the same file.
 * - Items may expire (`put(…, { ttl })` in minutes, or `ttl.defaultTtl`): an expired item is never returned, and
 *   `sweep()` (or the sweeper `start()` runs) deletes it.
 */
export class SqliteStore extends BaseStore {
  /** The connection, exposed so callers can share it (e.g. with SqliteSaver). */
  readonly db: Database.Database;
  private readonly ownsDb: boolean;
  private readonly ttl: TTLConfig;
  private readonly now: () => number;
  private readonly maxValueBytes: number;
  private readonly readOnly: boolean;
  private sweeper: ReturnType<typeof setInterval> | null = null;
  private readonly stmt: {
    get: Database.Statement<[string, string, number], Row>;
    upsert: Database.Statement<[string, string, string, number, number, number | null, number | null]>;
    remove: Database.Statement<[string, string]>;
    namespaces: Database.Statement<[number], { namespace: string }>;
    refresh: Database.Statement<[number, number, string, string]>;
    sweep: Database.Statement<[number]>;
  };

  /**
   * @param source a file path (the store opens and owns the connection) or an open better-sqlite3 Database
   *   (shared; `close()` leaves it open).
   * @throws CandorError STORAGE when the file cannot be opened or the table cannot be created.
   */
  constructor(source: string | Database.Database, options: SqliteStoreOptions = {}) {
    super();
    this.ttl = options.ttl ?? {};
    this.now = options.now ?? Date.now;
    this.maxValueBytes = options.maxValueBytes ?? DEFAULT_STORAGE_BOUNDS.maxStoredValueBytes;
    this.readOnly = options.readOnly === true;
    if (typeof source === "string") {
      try {
        this.db = new Database(source, { timeout: BUSY_TIMEOUT_MS });
      } catch (e) {
        throw storageError(`Cannot open the memory store at "${source}": ${errorMessage(e)}.`, e);
      }
      this.ownsDb = true;
    } else {
      this.db = source;
      this.ownsDb = false;
    }
    try {
      if (this.readOnly) this.prepareReadOnly();
      else this.prepareTable();
      this.stmt = {
        get: this.db.prepare(
          `SELECT ${ROW_COLUMNS} FROM ${STORE_TABLE} AS s WHERE s.namespace = ? AND s.key = ? AND ${LIVE}`,
        ),
        upsert: this.db.prepare(`
INSERT INTO ${STORE_TABLE} (namespace, key, value, created_at, updated_at, seq, expires_at, ttl_minutes)
VALUES (?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM ${STORE_TABLE}), ?, ?)
ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at, seq = excluded.seq,
  expires_at = excluded.expires_at, ttl_minutes = excluded.ttl_minutes`),
        remove: this.db.prepare(`DELETE FROM ${STORE_TABLE} WHERE namespace = ? AND key = ?`),
        namespaces: this.db.prepare(`SELECT DISTINCT s.namespace FROM ${STORE_TABLE} AS s WHERE ${LIVE}`),
        refresh: this.db.prepare(
          `UPDATE ${STORE_TABLE} SET expires_at = ? + ttl_minutes * ? WHERE namespace = ? AND key = ? AND ttl_minutes IS NOT NULL`,
        ),
        sweep: this.db.prepare(`DELETE FROM ${STORE_TABLE} WHERE expires_at IS NOT NULL AND expires_at <= ?`),
      };
    } catch (e) {
      if (this.ownsDb) this.db.close();
      throw storageError(`Cannot prepare the memory store in "${this.db.name}": ${errorMessage(e)}.`, e, this.db.name);
    }
  }

  /** Creates the table, or brings a file written by an earlier Candor up to date (WAL mode, the expiry columns). */
  private prepareTable(): void {
    this.db.pragma("journal_mode = WAL");
    if (this.ownsDb) this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // seq orders items by write; timestamps alone tie when two puts land in the same millisecond.
    this.db.exec(`
CREATE TABLE IF NOT EXISTS ${STORE_TABLE} (
  namespace TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (namespace, key)
);
CREATE INDEX IF NOT EXISTS ${STORE_TABLE}_seq ON ${STORE_TABLE} (seq);`);
    // Files written before items could expire lack the two columns; adding them keeps every item, none expiring.
    const columns = new Set(
      this.db
        .prepare<[], { name: string }>(`PRAGMA table_info(${STORE_TABLE})`)
        .all()
        .map((c) => c.name),
    );
    if (!columns.has("expires_at")) this.db.exec(`ALTER TABLE ${STORE_TABLE} ADD COLUMN expires_at INTEGER`);
    if (!columns.has("ttl_minutes")) this.db.exec(`ALTER TABLE ${STORE_TABLE} ADD COLUMN ttl_minutes REAL`);
    this.db.exec(`CREATE INDEX IF NOT EXISTS ${STORE_TABLE}_expires ON ${STORE_TABLE} (expires_at)`);
  }

  /**
   * A read-only connection changes nothing in the file: its table is used as it is, and a file without one reads as
   * an empty store (a temporary table of the same shape stands in, on this connection only).
   */
  private prepareReadOnly(): void {
    const exists = this.db
      .prepare<[string], { n: number }>("SELECT count(*) AS n FROM main.sqlite_master WHERE name = ?")
      .get(STORE_TABLE);
    if (exists?.n !== 0) return;
    this.db.exec(`CREATE TEMP TABLE ${STORE_TABLE} (${STORE_COLUMNS})`);
  }

  /**
   * Runs the operations in order in one transaction and returns one result per operation.
   * @throws CandorError STORAGE for an invalid namespace label, an unsupported filter or a SQLite failure.
   */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const hasWrite = operations.some(isPut);
    // Checked here, not left to SQLite: a file without the table reads through a temporary one, which would take it.
    if (hasWrite && this.readOnly)
      throw namedStorageFault("read_only", "it was opened read-only, by a command that only reads", this.db.name);
    const run = this.db.transaction(() => operations.map((op) => this.runOne(op)));
    try {
      // A deferred transaction that later writes cannot wait out another writer (SQLITE_BUSY at once); taking
      // the write lock up front lets busy_timeout do its job when two processes share the file.
      const results = hasWrite ? run.immediate() : run.deferred();
      return results as OperationResults<Op>;
    } catch (e) {
      if (CandorError.isInstance(e)) throw e;
      throw storageError(`The memory store in "${this.db.name}" failed: ${errorMessage(e)}.`, e, this.db.name);
    }
  }

  /**
   * Stores an item, as BaseStore.put, with the contract's `ttl` (minutes; null: never expires; absent: the
   * store's `defaultTtl`).
   */
  override async put(
    namespace: string[],
    key: string,
    value: Record<string, unknown>,
    index?: false | string[],
    options?: PutOptions,
  ): Promise<void> {
    validateNamespace(namespace);
    const op: PutOperation & PutOptions = { namespace, key, value, index };
    if (options?.ttl !== undefined) op.ttl = options.ttl;
    await this.batch([op]);
  }

  /** Deletes every expired item now. @returns how many were deleted. */
  sweep(): number {
    if (this.readOnly) return 0;
    return this.stmt.sweep.run(this.now()).changes;
  }

  /** Sweeps every `ttl.sweepIntervalMinutes` (if set) without keeping the process alive for it. */
  override start(): void {
    const minutes = this.ttl.sweepIntervalMinutes;
    if (this.sweeper || minutes === undefined || minutes <= 0) return;
    this.sweeper = setInterval(() => {
      if (this.db.open) this.sweep();
    }, minutes * MINUTE_MS);
    this.sweeper.unref();
  }

  override stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  /** Closes the connection if this store opened it; a shared connection belongs to whoever passed it in. */
  close(): void {
    this.stop();
    if (this.ownsDb && this.db.open) this.db.close();
  }

  /** The contract's refresh on read: a returned item with a ttl lives another ttl from now. */
  private refreshed<R extends Row>(rows: R[]): R[] {
    if (this.ttl.refreshOnRead === false) return rows;
    const now = this.now();
    for (const r of rows)
      if (r.ttl_minutes !== null) {
        this.stmt.refresh.run(now, MINUTE_MS, r.namespace, r.key);
        r.expires_at = now + r.ttl_minutes * MINUTE_MS;
      }
    return rows;
  }

  private runOne(op: Operation): Item | SearchItem[] | string[][] | null | undefined {
    if (isSearch(op)) return this.runSearch(op);
    if (isPut(op)) return this.runPut(op);
    if (isGet(op)) return this.runGet(op);
    return this.runListNamespaces(op);
  }

  private runGet(op: GetOperation): Item | null {
    const row = this.stmt.get.get(joinNamespace(op.namespace, { allowEmpty: true }), op.key, this.now());
    return row === undefined ? null : toItem(this.refreshed([row])[0]!);
  }

  private runPut(op: PutOperation & PutOptions): undefined {
    const ns = joinNamespace(op.namespace, { allowEmpty: false });
    if (op.value === null) {
      this.stmt.remove.run(ns, op.key);
      return undefined;
    }
    const now = this.now();
    const ttl = op.ttl === undefined ? (this.ttl.defaultTtl ?? null) : op.ttl;
    if (ttl !== null && !(Number.isFinite(ttl) && ttl > 0))
      throw storageError(`A ttl is a positive number of minutes (or null for no expiry); got ${String(ttl)}.`);
    this.stmt.upsert.run(
      ns,
      op.key,
      storableJson(op.namespace, op.key, op.value, this.maxValueBytes),
      now,
      now,
      ttl === null ? null : now + ttl * MINUTE_MS,
      ttl,
    );
    return undefined;
  }

  private runSearch(op: SearchOperation): SearchItem[] {
    const limit = nonNegativeInt(op.limit ?? DEFAULT_SEARCH_LIMIT, "search limit");
    const offset = nonNegativeInt(op.offset ?? 0, "search offset");
    const where: string[] = [LIVE];
    const params: (string | number)[] = [this.now()];
    if (op.namespacePrefix.length > 0) {
      const prefix = joinNamespace(op.namespacePrefix, { allowEmpty: false });
      // A byte range rather than LIKE: labels may contain % and _, and the range uses the primary key index.
      // Every namespace strictly under `prefix` starts with prefix + "." and sorts before prefix + "/".
      where.push(`(s.namespace = ? OR (s.namespace >= ? AND s.namespace < ?))`);
      params.push(prefix, prefix + NAMESPACE_SEPARATOR, prefix + nextChar(NAMESPACE_SEPARATOR));
    }
    for (const [field, expected] of Object.entries(op.filter ?? {})) {
      const { clause, args } = filterClause(field, expected);
      where.push(clause);
      params.push(...args);
    }
    const sql = `SELECT ${ROW_COLUMNS} FROM ${STORE_TABLE} AS s
WHERE ${where.join(" AND ")}
ORDER BY s.seq DESC LIMIT ? OFFSET ?`;
    const rows = this.db.prepare<(string | number)[], Row>(sql).all(...params, limit, offset);
    return this.refreshed(rows).map(toItem);
  }

  private runListNamespaces(op: ListNamespacesOperation): string[][] {
    const limit = nonNegativeInt(op.limit, "listNamespaces limit");
    const offset = nonNegativeInt(op.offset, "listNamespaces offset");
    const conditions = op.matchConditions ?? [];
    // Wildcards and suffixes do not map onto an index, and namespaces are few next to items: match in JS.
    let namespaces = this.stmt.namespaces
      .all(this.now())
      .map((r) => r.namespace.split(NAMESPACE_SEPARATOR))
      .filter((ns) => conditions.every((c) => matchesCondition(c, ns)));
    if (op.maxDepth !== undefined) {
      const depth = nonNegativeInt(op.maxDepth, "listNamespaces maxDepth");
      const seen = new Map<string, string[]>();
      for (const ns of namespaces) {
        const cut = ns.slice(0, depth);
        seen.set(cut.join(NAMESPACE_SEPARATOR), cut);
      }
      namespaces = [...seen.values()];
    }
    namespaces.sort(compareNamespaces);
    return namespaces.slice(offset, offset + limit);
  }
}

/** An item that has not expired; its parameter is the current time in ms. */
const LIVE = "(s.expires_at IS NULL OR s.expires_at > ?)";

function isSearch(op: Operation): op is SearchOperation {
  return "namespacePrefix" in op;
}
function isPut(op: Operation): op is PutOperation {
  return "namespace" in op && "value" in op;
}
function isGet(op: Operation): op is GetOperation {
  return "namespace" in op && "key" in op && !("value" in op);
}

function toItem(row: Row): Item {
  return {
    namespace: row.namespace.split(NAMESPACE_SEPARATOR),
    key: row.key,
    value: JSON.parse(row.value) as Record<string, unknown>,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

function joinNamespace(namespace: string[], opts: { allowEmpty: boolean }): string {
  if (!Array.isArray(namespace))
    throw storageError(`A store namespace must be an array of labels; got ${typeof namespace}.`);
  if (namespace.length === 0 && !opts.allowEmpty) {
    throw storageError('A store namespace cannot be empty: give at least one label, e.g. [userId, "episodes"].');
  }
  for (const label of namespace) {
    if (typeof label !== "string" || label === "") {
      throw storageError(
        `Namespace [${namespace.map(String).join(", ")}] has an empty or non-string label; every label must be a non-empty string.`,
      );
    }
    if (label.includes(NAMESPACE_SEPARATOR)) {
      throw storageError(
        `Namespace label "${label}" contains "${NAMESPACE_SEPARATOR}", which the store uses to join labels; remove or replace it (e.g. with "_").`,
      );
    }
  }
  return namespace.join(NAMESPACE_SEPARATOR);
}

/**
 * One SQL condition matching items whose top-level `field` equals `expected` with the same JSON type, so that
 * `true` does not match `1` and a missing field does not match `null` (the semantics of InMemoryStore's `===`).
 */
function filterClause(field: string, expected: unknown): { clause: string; args: (string | number)[] } {
  const value = unwrapEq(field, expected);
  // json_each has its own `key` and `value` columns: the outer row must be named to be reached.
  const base = `EXISTS (SELECT 1 FROM json_each(s.value) AS j WHERE j.key = ? AND `;
  if (value === null) return { clause: `${base}j.type = 'null')`, args: [field] };
  if (typeof value === "boolean") return { clause: `${base}j.type = '${value ? "true" : "false"}')`, args: [field] };
  if (typeof value === "number")
    return { clause: `${base}j.type IN ('integer', 'real') AND j.atom = ?)`, args: [field, value] };
  return { clause: `${base}j.type = 'text' AND j.atom = ?)`, args: [field, value] };
}

function unwrapEq(field: string, expected: unknown): Primitive {
  const candidate =
    typeof expected === "object" &&
    expected !== null &&
    !Array.isArray(expected) &&
    Object.keys(expected).length === 1 &&
    "$eq" in expected
      ? expected.$eq
      : expected;
  if (candidate === null || typeof candidate === "string" || typeof candidate === "boolean") return candidate;
  if (typeof candidate === "number" && Number.isFinite(candidate)) return candidate;
  throw storageError(
    `SqliteStore filters only by equality on a string, finite number, boolean or null; the filter on "${field}" is ${JSON.stringify(expected)}. Filter on a top-level primitive field, or filter the results yourself.`,
  );
}

/** Whether a namespace meets one listNamespaces condition (`*` matches any label); PostgreSQL's store uses it too. */
export function matchesCondition(condition: MatchCondition, ns: string[]): boolean {
  const { path, matchType } = condition;
  if (path.length > ns.length) return false;
  const start = matchType === "prefix" ? 0 : ns.length - path.length;
  return path.every((label, i) => label === "*" || ns[start + i] === label);
}

/** Namespaces in label order, shorter first on a tie. */
export function compareNamespaces(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    const x = a[i] as string;
    const y = b[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

function nextChar(c: string): string {
  return String.fromCharCode(c.charCodeAt(0) + 1);
}

function nonNegativeInt(n: number, what: string): number {
  if (!Number.isInteger(n) || n < 0)
    throw storageError(`The ${what} must be a non-negative integer; got ${String(n)}.`);
  return n;
}

function storageError(message: string, cause?: unknown, where?: string): CandorError {
  // A full disk, a read-only file or a damaged page is said as such (storage-faults.ts), not as a store failure.
  const fault = cause === undefined ? null : storageFault(cause, where);
  return fault ?? new CandorError(message, ErrorCode.STORAGE, cause === undefined ? {} : { cause });
}
