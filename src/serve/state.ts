import type { RunnableConfig } from "@langchain/core/runnables";
import type { StateSnapshot } from "@langchain/langgraph";
import type { ThreadLeases } from "../memory/lease.js";
import { interruptsOf } from "../interrupts.js";
import type { ThreadView } from "./threads.js";

/** The part of the compiled agent the server reads state with. */
export interface StateReader {
  getState(config: RunnableConfig, options?: { subgraphs?: boolean }): Promise<StateSnapshot>;
  getStateHistory(config: RunnableConfig, options?: { limit?: number }): AsyncIterableIterator<StateSnapshot>;
}

/**
 * A thread's status as LangGraph's server names it: `busy` while a process holds its lease (a worker, `candor
 * run`, this server), `interrupted` while a person's answer is awaited (a worker's tool approval included: it waits
 * inside the worker subgraph), else `idle`. Null when the thread has no checkpoint and nobody holds it.
 */
export async function viewThread(
  graph: StateReader,
  leases: ThreadLeases,
  threadId: string,
): Promise<ThreadView | null> {
  const snapshot = await graph.getState({ configurable: { thread_id: threadId } }, { subgraphs: true });
  const values = (snapshot.values ?? {}) as Record<string, unknown>;
  const held = (await leases.holder(threadId)) !== null;
  if (snapshot.createdAt === undefined && Object.keys(values).length === 0)
    return held ? { status: "busy", values, interrupts: {}, updatedAt: null } : null;
  const pending = interruptsOf(snapshot);
  const interrupts: Record<string, unknown[]> = {};
  for (const task of snapshot.tasks) {
    const own = pending.filter((p) => subtreeHas(task, p.id));
    if (own.length > 0) interrupts[task.id] = own;
  }
  return {
    status: held ? "busy" : pending.length > 0 ? "interrupted" : "idle",
    values,
    interrupts,
    updatedAt: snapshot.createdAt ?? null,
  };
}

/** Whether interrupt `id` belongs to `task` or to a task of its subgraph. */
function subtreeHas(task: StateSnapshot["tasks"][number], id: string | undefined): boolean {
  if ((task.interrupts ?? []).some((i) => i.id === id)) return true;
  const state = task.state;
  return state !== undefined && "tasks" in state && state.tasks.some((t) => subtreeHas(t, id));
}

/** `stateSnapshotToThreadState` of the API (not exported by it): a snapshot as the Agent Protocol's ThreadState. */
export function toThreadState(s: StateSnapshot): Record<string, unknown> {
  return {
    values: s.values,
    next: s.next,
    tasks: s.tasks.map((t) => ({
      id: t.id,
      name: t.name,
      error: t.error == null ? null : t.error instanceof Error ? t.error.message : JSON.stringify(t.error),
      interrupts: t.interrupts,
      path: t.path,
      checkpoint: t.state && "configurable" in t.state ? (t.state.configurable ?? null) : null,
      state: t.state && "values" in t.state ? toThreadState(t.state) : null,
      result: t.result ?? null,
    })),
    metadata: s.metadata,
    created_at: s.createdAt ?? null,
    checkpoint: checkpointOf(s.config),
    parent_checkpoint: s.parentConfig ? checkpointOf(s.parentConfig) : null,
  };
}

function checkpointOf(config: RunnableConfig | undefined): Record<string, unknown> | null {
  const c = config?.configurable;
  if (!c?.thread_id) return null;
  return {
    thread_id: c.thread_id,
    checkpoint_ns: c.checkpoint_ns ?? "",
    checkpoint_id: c.checkpoint_id ?? null,
    checkpoint_map: c.checkpoint_map ?? null,
  };
}
