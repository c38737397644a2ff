import type Database from "better-sqlite3";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import type { OpenOptions } from "./open-options.js";
import type { Persistence } from "./persistence.js";
import { isPostgresUrl } from "./postgres-url.js";
import { hasTable, openSqliteFile, type SqliteFile } from "./sqlite-file.js";
import { asStorageFault } from "./storage-faults.js";
import { NAMESPACE_SEPARATOR, STORE_TABLE } from "./store-layout.js";

/** One item of the long-term store, as a reader that needs only its key and value sees it. */
interface StoredRecord {
  key: string;
  value: unknown;
}

/**
 * A database opened light: the long-term store's items (thread records) can be read without the checkpoint
 * packages, which load LangChain and cost most of a reading command's start-up (issue 25: `candor threads` on an
 * empty database went from 0.7 s to what opening SQLite costs). `persistence()` brings the rest in when a command
 * needs checkpoints after all.
 */
export interface RecordReader {
  /** What messages show: the database file's absolute path, or the PostgreSQL URL without its password. */
  dbPath: string;
  /** The live items of exactly this namespace (not the ones under it), most recently written first. */
  items(namespace: readonly string[], limit: number): Promise<StoredRecord[]>;
  /**
   * The whole persistence of the same database, on the same SQLite connection. Once called, the persistence owns
   * the connection: close it, not this reader (whose `close` then does nothing).
   */
  persistence(): Promise<Persistence>;
  close(): Promise<void>;
}

/**
 * Opens a database to read its records: SQLite through better-sqlite3 alone; PostgreSQL through its whole
 * persistence (its store is LangGraph's PostgresStore, and a server round trip dwarfs the module loading).
 *
 * @throws CandorError STORAGE (or a storage fault) as `openDatabase` does.
 */
export async function openRecords(location: string, options: OpenOptions = {}): Promise<RecordReader> {
  if (isPostgresUrl(location)) {
    const { openDatabase } = await import("./persistence.js");
    const persistence = await openDatabase(location, options);
    return {
      dbPath: persistence.dbPath,
      async items(namespace, limit) {
        const found = await persistence.store.search([...namespace], { limit });
        return found.filter((item) => sameNamespace(item.namespace, namespace));
      },
      persistence: async () => persistence,
      close: async () => {
        await persistence.close();
      },
    };
  }
  const file = openSqliteFile(location, options.readOnly === true);
  let handedOver = false;
  return {
    dbPath: file.file,
    items: async (namespace, limit) => sqliteItems(file, namespace, limit),
    async persistence() {
      const { persistenceOn } = await import("./persistence.js");
      handedOver = true;
      return persistenceOn(file, options);
    },
    async close() {
      if (!handedOver && file.db.open) file.db.close();
    },
  };
}

const sameNamespace = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((label, i) => label === b[i]);

interface Row {
  key: string;
  value: string;
}

/** The query SqliteStore's search makes for one namespace, without its filters; a file without the table has none. */
function sqliteItems({ db, file }: SqliteFile, namespace: readonly string[], limit: number): StoredRecord[] {
  try {
    if (!hasTable(db, STORE_TABLE)) return [];
    // A file written before items could expire has no expiry column: every item in it is live.
    const expires = expiryColumn(db);
    const live = expires ? "AND (expires_at IS NULL OR expires_at > ?)" : "";
    const params = [namespace.join(NAMESPACE_SEPARATOR), ...(expires ? [Date.now()] : []), limit];
    const rows = db
      .prepare<(string | number)[], Row>(
        `SELECT key, value FROM main.${STORE_TABLE} WHERE namespace = ? ${live} ORDER BY seq DESC LIMIT ?`,
      )
      .all(...params);
    return rows.map((r) => ({ key: r.key, value: parsed(r, namespace, file) }));
  } catch (e) {
    if (CandorError.isInstance(e)) throw e;
    throw asStorageFault(e, file);
  }
}

function expiryColumn(db: Database.Database): boolean {
  return db
    .prepare<[], { name: string }>(`PRAGMA main.table_info(${STORE_TABLE})`)
    .all()
    .some((c) => c.name === "expires_at");
}

function parsed(row: Row, namespace: readonly string[], file: string): unknown {
  try {
    return JSON.parse(row.value);
  } catch (e) {
    throw new CandorError(
      `The item "${row.key}" in [${namespace.join(", ")}] of "${file}" is not JSON (${errorMessage(e)}): something other than Candor wrote it. Remove it with the sqlite3 shell, or pass --db with another database.`,
      ErrorCode.STORAGE,
      { cause: e, details: { dbPath: file } },
    );
  }
}
