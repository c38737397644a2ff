import {
  validateNamespace,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from "@langchain/langgraph-checkpoint";
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import type pg from "pg";
import { DEFAULT_STORAGE_BOUNDS } from "../domain/config.js";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import { storableJson } from "./bounds.js";
import { hearConnectionErrors, redactUrl } from "./postgres-url.js";
import { storageFault } from "./storage-faults.js";
import { compareNamespaces, matchesCondition } from "./sqlite-store.js";

/** Ends every encoded label, so a prefix search stops at a label boundary ("bob!" never matches "bobby!"). */
const TERMINATOR = "!";
const ESCAPE = "~";
/**
 * Characters a label may hold but the stored path may not: PostgresStore 1.0.5 refuses LIKE's wildcards and its
 * escape (`%`, `_`, `\`) in labels, and the encoding's own two characters must be escaped too.
 */
const ESCAPED = /[~!%_\\]/g;

/** One label as stored: escaped as ~XX (hex) where needed, then terminated. Injective, so decoding is exact. */
export function encodeLabel(label: string): string {
  const escaped = label.replace(
    ESCAPED,
    (c) => `${ESCAPE}${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`,
  );
  return `${escaped}${TERMINATOR}`;
}

/** A stored label back to the caller's; a label written by another program (no terminator) is returned as it is. */
export function decodeLabel(stored: string): string {
  if (!stored.endsWith(TERMINATOR)) return stored;
  return stored.slice(0, -1).replace(/~([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

const encode = (namespace: string[]) => namespace.map(encodeLabel);
const decode = (namespace: string[]) => namespace.map(decodeLabel);

/**
 * PostgresStore with Candor's namespace rules, so code written against SqliteStore behaves the same here:
 *
 * - Any label BaseStore accepts works. PostgresStore 1.0.5 refuses `_` in labels (user ids such as `ana_example_com`
 *   are common); labels are stored escaped (`encodeLabel`) and read back decoded.
 * - A namespace prefix matches whole labels: PostgresStore matches `prefix%`, so `["bob"]` would also return
 *   `["bobby", …]`'s items; every encoded label ends with a terminator, so the same LIKE stops at the boundary.
 * - `listNamespaces` applies prefix, suffix, wildcard and `maxDepth` as SqliteStore does (PostgresStore drops
 *   deeper namespaces instead of truncating them).
 *
 * Filters and text queries are PostgresStore's own (`value ->> field = text`; full-text search for `query`);
 * Candor uses neither. Tables are created by `candor db migrate`, never on first use (`ensureTables: false`):
 * PostgresStore's own setup is not safe when several processes start at once.
 */
export class CandorPostgresStore extends PostgresStore {
  /** The database as messages name it (the URL without its password). */
  private readonly where: string;
  /** Most bytes of one stored value's JSON (StorageBounds.maxStoredValueBytes); a larger put is refused. */
  private readonly maxValueBytes: number;

  constructor(connection: pg.PoolConfig, options: { maxValueBytes?: number } = {}) {
    super({ connectionOptions: connection, ensureTables: false });
    this.where = redactUrl(connection.connectionString ?? "postgres://");
    this.maxValueBytes = options.maxValueBytes ?? DEFAULT_STORAGE_BOUNDS.maxStoredValueBytes;
    // PostgresStore makes its own pool and adds no "error" listener to it or its connections: a connection the
    // server drops (a restart, pg_terminate_backend) would then be an unheard "error" event, which kills the process.
    const pool = (this as unknown as { core?: { pool?: unknown } }).core?.pool;
    if (pool && typeof (pool as pg.Pool).on === "function") hearConnectionErrors(pool as pg.Pool);
  }

  override async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    // One at a time, in order, so a get after a put in the same batch sees the put (as SqliteStore promises).
    for (const op of operations as Operation[]) {
      if (isListNamespaces(op)) {
        results.push(await this.listAll(op));
      } else if (isSearch(op)) {
        validateNamespace(op.namespacePrefix);
        const [found = []] = await storeCall(this.where, () =>
          super.batch([{ ...op, namespacePrefix: encode(op.namespacePrefix) }]),
        );
        results.push(found.map(decodeItem));
      } else if (isPut(op)) {
        validateNamespace(op.namespace);
        if (op.value !== null) storableJson(op.namespace, op.key, op.value, this.maxValueBytes);
        await storeCall(this.where, () => super.batch([{ ...op, namespace: encode(op.namespace) }]));
        results.push(undefined);
      } else {
        validateNamespace(op.namespace);
        const [found] = await storeCall(this.where, () => super.batch([{ ...op, namespace: encode(op.namespace) }]));
        results.push(found ? decodeItem(found) : null);
      }
    }
    return results as OperationResults<Op>;
  }

  override async get(namespace: string[], key: string): Promise<Item | null> {
    validateNamespace(namespace);
    const item = await storeCall(this.where, () => super.get(encode(namespace), key));
    return item ? decodeItem(item) : null;
  }

  override async put(
    namespace: string[],
    key: string,
    value: Record<string, unknown>,
    index?: false | string[],
    options?: { ttl?: number },
  ): Promise<void> {
    validateNamespace(namespace);
    storableJson(namespace, key, value, this.maxValueBytes);
    await storeCall(this.where, () => super.put(encode(namespace), key, value, index, options));
  }

  override async delete(namespace: string[], key: string): Promise<void> {
    validateNamespace(namespace);
    await storeCall(this.where, () => super.delete(encode(namespace), key));
  }

  override async search(
    namespacePrefix: string[],
    options: Parameters<PostgresStore["search"]>[1] = {},
  ): Promise<SearchItem[]> {
    validateNamespace(namespacePrefix);
    return (await storeCall(this.where, () => super.search(encode(namespacePrefix), options))).map(decodeItem);
  }

  override async listNamespaces(
    options: { prefix?: string[]; suffix?: string[]; maxDepth?: number; limit?: number; offset?: number } = {},
  ): Promise<string[][]> {
    return this.listAll({
      matchConditions: [
        ...(options.prefix ? [{ matchType: "prefix" as const, path: options.prefix }] : []),
        ...(options.suffix ? [{ matchType: "suffix" as const, path: options.suffix }] : []),
      ],
      ...(options.maxDepth === undefined ? {} : { maxDepth: options.maxDepth }),
      limit: options.limit ?? 100,
      offset: options.offset ?? 0,
    });
  }

  /** Every namespace, decoded, then matched as SqliteStore matches (namespaces are few next to items). */
  private async listAll(op: ListNamespacesOperation): Promise<string[][]> {
    const all: string[][] = [];
    const page = 1000;
    for (let offset = 0; ; offset += page) {
      const [found = []] = await storeCall(this.where, () =>
        super.batch([{ matchConditions: [], limit: page, offset }]),
      );
      all.push(...found.map(decode));
      if (found.length < page) break;
    }
    let namespaces = all.filter((ns) => (op.matchConditions ?? []).every((c) => matchesCondition(c, ns)));
    if (op.maxDepth !== undefined) {
      const seen = new Map<string, string[]>();
      for (const ns of namespaces) {
        const cut = ns.slice(0, op.maxDepth);
        seen.set(JSON.stringify(cut), cut);
      }
      namespaces = [...seen.values()];
    }
    namespaces.sort(compareNamespaces);
    return namespaces.slice(op.offset, op.offset + op.limit);
  }
}

function isListNamespaces(op: Operation): op is ListNamespacesOperation {
  return "matchConditions" in op;
}
function isSearch(op: Operation): op is SearchOperation {
  return "namespacePrefix" in op;
}
function isPut(op: Operation): op is PutOperation {
  return "namespace" in op && "value" in op;
}

function decodeItem<T extends Item>(item: T): T {
  return { ...item, namespace: decode(item.namespace) };
}

/** A failing query becomes a STORAGE error naming the store; a missing table means the schema was never made. */
async function storeCall<T>(where: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (CandorError.isInstance(e)) throw e;
    // A lost connection or a full disk is said as such (storage-faults.ts), not as a store failure.
    const fault = storageFault(e, where);
    if (fault) throw fault;
    const code = (e as { code?: unknown } | null)?.code;
    const hint =
      code === "42P01"
        ? " Its tables do not exist: run `candor db migrate --db <the same URL>` once, then try again."
        : " Check that the PostgreSQL server is reachable and that --db (or CANDOR_DB) names the right database.";
    throw new CandorError(`The memory store in PostgreSQL failed: ${errorMessage(e)}.${hint}`, ErrorCode.STORAGE, {
      cause: e,
    });
  }
}
