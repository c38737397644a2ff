import { type BaseStore, validateNamespace } from "@langchain/langgraph-checkpoint";
import type { z } from "zod";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";

const PAGE_SIZE = 100;

/**
 * [userId, leaf] as a store namespace. BaseStore.put rejects labels with "." or ":" (and a "langgraph" root) in
 * every store implementation, so an email-like user id would fail deep inside a node; check it here and say so
 * in the user's terms.
 */
export function userNamespace(userId: string, leaf: string): string[] {
  const namespace = [userId, leaf];
  try {
    validateNamespace(namespace);
  } catch (e) {
    throw new CandorError(
      `User id "${userId}" cannot name a memory namespace: ${errorMessage(e).replace(/\.$/, "")}. Use letters, digits, "-" or "_" (e.g. "ana_example_com").`,
      ErrorCode.INVALID_REQUEST,
      { cause: e },
    );
  }
  return namespace;
}

/**
 * The newest valid items of one namespace (keys sort chronologically), parsed with `schema`. Items that no longer
 * match (older versions, hand edits) are skipped rather than failing the run that wants its memory, and so are
 * items whose `expiresAt` has passed (nothing expired is read, whether or not the store has swept it yet). Reads
 * every item and sorts by key, because stores differ in search order (SqliteStore newest first, InMemoryStore oldest
 * first), and skips deeper namespaces, since search is a prefix match.
 */
export async function newestItems<T>(
  store: BaseStore,
  namespace: string[],
  schema: z.ZodType<T>,
  limit: number,
  now: number = Date.now(),
): Promise<T[]> {
  return (await newestEntries(store, namespace, schema, limit, now)).map((e) => e.value);
}

/** As `newestItems`, with each item's key (to write an item back, e.g. an episode with its evaluation). */
export async function newestEntries<T>(
  store: BaseStore,
  namespace: string[],
  schema: z.ZodType<T>,
  limit: number,
  now: number = Date.now(),
): Promise<{ key: string; value: T }[]> {
  const found: { key: string; value: T }[] = [];
  for (let offset = 0; ; offset += PAGE_SIZE) {
    const page = await store.search(namespace, { limit: PAGE_SIZE, offset });
    for (const item of page) {
      if (item.namespace.length !== namespace.length) continue;
      if (isExpired(item.value, now)) continue;
      const parsed = schema.safeParse(item.value);
      if (parsed.success) found.push({ key: item.key, value: parsed.data });
    }
    if (page.length < PAGE_SIZE) break;
  }
  found.sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
  return found.slice(0, Math.max(0, limit));
}

/** True when a stored value carries an `expiresAt` that has passed. */
function isExpired(value: unknown, now: number): boolean {
  const at = (value as { expiresAt?: unknown } | null)?.expiresAt;
  return typeof at === "string" && Date.parse(at) <= now;
}

/**
 * Stores an item that expires at `expiresAt` (ISO): on a store that keeps TTLs (SqliteStore) the store itself
 * forgets it and sweeps it; on any other store the value's own `expiresAt` keeps it from being read after then.
 */
export async function putExpiring(
  store: BaseStore,
  namespace: string[],
  key: string,
  value: Record<string, unknown> & { expiresAt?: string },
  now: number = Date.now(),
): Promise<void> {
  const at = value.expiresAt === undefined ? NaN : Date.parse(value.expiresAt);
  const ttl = Number.isNaN(at) ? null : Math.max(1 / 60, (at - now) / 60_000);
  if (ttl !== null && keepsTtl(store))
    await (store as unknown as TtlStore).put(namespace, key, value, undefined, { ttl });
  else await store.put(namespace, key, value);
}

/** The TTL contract's put: `ttl` in minutes. */
interface TtlStore {
  put(
    ns: string[],
    key: string,
    value: Record<string, unknown>,
    index?: false | string[],
    o?: { ttl?: number | null },
  ): Promise<void>;
}

/** A store that takes the TTL contract's per-put `ttl` (SqliteStore), told apart without instanceof. */
function keepsTtl(store: BaseStore): boolean {
  return typeof (store as { sweep?: unknown }).sweep === "function";
}
