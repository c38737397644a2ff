import type { Persistence } from "../memory/persistence.js";
import {
  archivedState,
  decisionsOf,
  unknownThread,
  unstartedState,
  type ArchivedThread,
  type RunArchive,
} from "../tools/builtin/debugging/archive.js";
import { THREADS_NAMESPACE, ThreadRecord } from "./options.js";

/** The most thread records an archive lists (as `candor threads` does). */
const MAX_THREADS = 10_000;

/**
 * A RunArchive over an open database, SQLite or PostgreSQL alike: thread records from the store (what `candor
 * threads` lists), decisions from the database's journal (what `candor logs` reads), and each thread's state from
 * `readState` — a compiled graph's `getState`, because list fields are rebuilt from the thread's history and a raw
 * checkpoint holds only their last additions.
 */
export function persistenceArchive(
  persistence: Pick<Persistence, "store" | "checkpointer" | "decisions" | "dbPath">,
  readState: (threadId: string) => Promise<unknown>,
): RunArchive {
  const threads = async (): Promise<ArchivedThread[]> => {
    const items = await persistence.store.search(THREADS_NAMESPACE, { limit: MAX_THREADS });
    const records = items.flatMap((item) => {
      const parsed = ThreadRecord.safeParse(item.value);
      return parsed.success ? [parsed.data] : [];
    });
    records.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    return records.map((r) => ({
      threadId: r.threadId,
      request: r.request,
      createdAt: r.createdAt,
      review: r.debugTools === "alone",
    }));
  };
  return {
    where: persistence.dbPath,
    threads,
    async state(threadId) {
      const started =
        (await persistence.checkpointer.getTuple({ configurable: { thread_id: threadId } })) !== undefined;
      if (started) return archivedState(threadId, await readState(threadId));
      const known = await threads();
      const record = known.find((t) => t.threadId === threadId);
      if (!record) throw unknownThread(threadId, persistence.dbPath, known);
      return unstartedState(record);
    },
    async decisions(threadId) {
      return decisionsOf(await persistence.decisions.read(), threadId);
    },
  };
}
