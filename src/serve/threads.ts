import type { BaseStore } from "@langchain/langgraph-checkpoint";
import type { ThreadSaver } from "@langchain/langgraph-api/experimental/embed";
import { z } from "zod";

/** Where the API keeps the threads it created (their metadata), in Candor's own store: one database, one copy. */
export const API_THREADS_NAMESPACE = ["candor", "api_threads"];

/** The graph every thread of this server runs: the API's `graph_id` and the built-in assistant's id. */
export const GRAPH_ID = "candor";

const Metadata = z.record(z.string(), z.unknown());

/** A thread created through the API, as stored. */
const StoredThread = z.object({
  thread_id: z.string(),
  metadata: Metadata,
  created_at: z.string(),
  updated_at: z.string(),
});
type StoredThread = z.infer<typeof StoredThread>;

/** A thread the API did not create (started by `candor run`, `submit` or a worker): read-only metadata. */
export interface ForeignThread {
  threadId: string;
  createdAt: string;
  metadata: Record<string, unknown>;
}

/** Where a thread stands, read from its latest checkpoint; null when it has none yet. */
export interface ThreadView {
  status: "idle" | "busy" | "interrupted" | "error";
  values: Record<string, unknown>;
  /** Pending interrupts by task id, as LangGraph's server shows them. */
  interrupts: Record<string, unknown[]>;
  /** When its latest checkpoint was written (ISO), if known. */
  updatedAt: string | null;
}

/** What the thread routes answer: the Agent Protocol's Thread. */
interface ApiThread {
  thread_id: string;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  status: ThreadView["status"];
  values: Record<string, unknown> | null;
  interrupts: Record<string, unknown[]>;
  config: Record<string, unknown>;
}

export interface ThreadSources {
  /** Candor's store (SQLite or PostgreSQL), where API threads are kept. */
  store: Pick<BaseStore, "get" | "put" | "delete" | "search">;
  /** The threads started outside the API, newest or oldest first (sorted here). */
  foreign(): Promise<ForeignThread[]>;
  /** A thread's state, or null when it has no checkpoint. */
  view(threadId: string): Promise<ThreadView | null>;
}

/** The embed server's ThreadSaver, answering whole Agent Protocol threads, with a search. */
export interface ApiThreadSaver extends ThreadSaver {
  get(id: string): Promise<ApiThread>;
  search: NonNullable<ThreadSaver["search"]>;
}

/** A 404 the embed server's error handler turns into a response (it answers any error that has `getResponse`). */
class NotFound extends Error {
  constructor(what: string) {
    super(what);
  }
  getResponse(): Response {
    return Response.json({ error: this.message }, { status: 404 });
  }
}

/** Whether every key of `filter` has the same JSON value in `metadata` (LangGraph's metadata filter). */
export function metadataMatches(
  metadata: Record<string, unknown>,
  filter: Record<string, unknown> | undefined,
): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([k, v]) => JSON.stringify(metadata[k]) === JSON.stringify(v));
}

/**
 * The embed server's thread storage over Candor's database. Threads created through the API are kept in the store;
 * threads started by the CLI or a worker are listed and read too (their metadata says `source`), so
 * `threads.search` shows every thread of the database. Status and values come from the thread's checkpoints.
 */
export function threadSaver(sources: ThreadSources): ApiThreadSaver {
  const stored = async (id: string): Promise<StoredThread | null> => {
    const item = await sources.store.get(API_THREADS_NAMESPACE, id);
    const parsed = StoredThread.safeParse(item?.value);
    return parsed.success ? parsed.data : null;
  };
  const foreign = async (id: string): Promise<StoredThread | null> => {
    const found = (await sources.foreign()).find((t) => t.threadId === id);
    return found ? fromForeign(found) : null;
  };
  const withView = async (t: StoredThread): Promise<ApiThread> => {
    const view = await sources.view(t.thread_id);
    return {
      ...t,
      metadata: withGraph(t.metadata),
      updated_at: view?.updatedAt ?? t.updated_at,
      status: view?.status ?? "idle",
      values: view?.values ?? null,
      interrupts: view?.interrupts ?? {},
      config: {},
    };
  };
  return {
    async get(id) {
      const t = (await stored(id)) ?? (await foreign(id));
      if (!t) throw new NotFound(`Thread ${id} not found`);
      return withView(t);
    },
    async set(id, { kind, metadata }) {
      const now = new Date().toISOString();
      const before = (await stored(id)) ?? (await foreign(id));
      if (kind === "patch" && !before) throw new NotFound(`Thread ${id} not found`);
      const next: StoredThread = {
        thread_id: id,
        metadata: { ...before?.metadata, ...metadata },
        created_at: before?.created_at ?? now,
        updated_at: now,
      };
      await sources.store.put(API_THREADS_NAMESPACE, id, next);
      return withView(next);
    },
    async delete(id) {
      await sources.store.delete(API_THREADS_NAMESPACE, id);
    },
    async *search({ metadata, limit, offset, sortBy, sortOrder }) {
      const all = await everyThread(sources);
      // As shown: agent-chat-ui lists a graph's threads with the filter {graph_id}.
      const matching = all.filter((t) => metadataMatches(withGraph(t.metadata), metadata));
      const key = sortBy === "updated_at" ? "updated_at" : "created_at";
      matching.sort((a, b) => a[key].localeCompare(b[key]) * (sortOrder === "asc" ? 1 : -1));
      for (const t of matching.slice(offset, offset + limit))
        yield { thread: await withView(t), total: matching.length };
    },
  };
}

/**
 * A thread's metadata as the API shows it: one graph serves every thread, and the embed server reads a thread's
 * state only when its metadata names its graph.
 */
function withGraph(metadata: Record<string, unknown>): Record<string, unknown> {
  return { graph_id: GRAPH_ID, assistant_id: GRAPH_ID, ...metadata };
}

function fromForeign(t: ForeignThread): StoredThread {
  return {
    thread_id: t.threadId,
    metadata: withGraph(t.metadata),
    created_at: t.createdAt,
    updated_at: t.createdAt,
  };
}

/** The API's threads and the others, each once (an API thread a worker runs is also recorded as the CLI's). */
async function everyThread(sources: ThreadSources): Promise<StoredThread[]> {
  const items = await sources.store.search(API_THREADS_NAMESPACE, { limit: 100_000 });
  const own = items.flatMap((item) => {
    const parsed = StoredThread.safeParse(item.value);
    return parsed.success ? [parsed.data] : [];
  });
  const ids = new Set(own.map((t) => t.thread_id));
  const others = (await sources.foreign()).filter((t) => !ids.has(t.threadId)).map(fromForeign);
  return [...own, ...others];
}
