import type { RunnableConfig } from "@langchain/core/runnables";
import type { StateSnapshot } from "@langchain/langgraph";
import { CandorError, ErrorCode, errorMessage } from "./errors.js";

/**
 * Replay and fork for users' tests: list a thread's checkpoints, run again from one, or branch from one with a
 * state update. Works on any compiled graph with a checkpointer (Candor's agent or your own).
 */
export interface ReplayableGraph<S = unknown> {
  getStateHistory(config: RunnableConfig): AsyncIterableIterator<StateSnapshot>;
  getState(config: RunnableConfig): Promise<StateSnapshot>;
  invoke(input: null, config: RunnableConfig): Promise<S>;
  updateState(config: RunnableConfig, values: Record<string, unknown>, asNode?: string): Promise<RunnableConfig>;
}

/** One checkpoint of a thread, as `listCheckpoints` returns it. */
export interface CheckpointInfo {
  id: string;
  /** The superstep number (-1 for the input checkpoint). */
  step: number | null;
  /** The nodes that run next from here; empty at the end of a run. */
  next: string[];
  /** The state's `status` field when it has one (Candor's run status). */
  status: string | null;
  createdAt: string | null;
  /** The checkpoint this one was written on top of; null for the first. */
  parent: string | null;
}

const idOf = (config: RunnableConfig | undefined): string | null => {
  const id: unknown = config?.configurable?.checkpoint_id;
  return typeof id === "string" ? id : null;
};

/** The RunnableConfig that addresses one checkpoint of a thread. */
export function checkpointConfig(threadId: string, checkpointId: string): RunnableConfig {
  return { configurable: { thread_id: threadId, checkpoint_id: checkpointId } };
}

/** A thread's checkpoints, newest first, across every branch (replays and forks included). */
export async function listCheckpoints(graph: ReplayableGraph, threadId: string): Promise<CheckpointInfo[]> {
  const out: CheckpointInfo[] = [];
  for await (const s of graph.getStateHistory({ configurable: { thread_id: threadId } })) {
    const status = (s.values as { status?: unknown } | undefined)?.status;
    out.push({
      id: idOf(s.config) ?? "?",
      step: s.metadata?.step ?? null,
      next: [...s.next],
      status: typeof status === "string" ? status : null,
      createdAt: s.createdAt ?? null,
      parent: idOf(s.parentConfig),
    });
  }
  return out;
}

/**
 * Reads one checkpoint. @throws CandorError UNKNOWN_THREAD when the thread has no checkpoint with that id.
 */
export async function checkpointAt(graph: ReplayableGraph, threadId: string, checkpointId: string): Promise<StateSnapshot> {
  const snapshot = await graph.getState(checkpointConfig(threadId, checkpointId));
  // An unknown id gives an empty snapshot that echoes the requested config back, with no metadata.
  if (snapshot.metadata === undefined || snapshot.createdAt === undefined || idOf(snapshot.config) !== checkpointId) {
    throw new CandorError(
      `Thread ${threadId} has no checkpoint "${checkpointId}". List its checkpoints (candor history ${threadId}, or listCheckpoints) and pass one of their ids.`,
      ErrorCode.UNKNOWN_THREAD,
    );
  }
  return snapshot;
}

/**
 * Runs the thread again from a checkpoint: the nodes after it really execute again (tools are called), on a new
 * branch; the original checkpoints stay. Returns the final values (or where the run stopped, e.g. an interrupt).
 */
export async function replayFrom<S>(graph: ReplayableGraph<S>, threadId: string, checkpointId: string): Promise<S> {
  await checkpointAt(graph, threadId, checkpointId);
  return graph.invoke(null, checkpointConfig(threadId, checkpointId));
}

/**
 * Writes `update` on top of a checkpoint as a new checkpoint (a fork), without running anything. `asNode` is
 * the node the update counts as coming from, which decides what runs next (default: the checkpoint's own
 * writer, so `next` is unchanged). A value the state schema refuses is INVALID_REQUEST, with the graph's reason.
 */
export async function forkCheckpoint(graph: ReplayableGraph, threadId: string, checkpointId: string, update: Record<string, unknown>, asNode?: string): Promise<RunnableConfig> {
  await checkpointAt(graph, threadId, checkpointId);
  try {
    return await graph.updateState(checkpointConfig(threadId, checkpointId), update, asNode);
  } catch (cause) {
    throw new CandorError(`The graph refused the state update (${Object.keys(update).join(", ")}): ${errorMessage(cause)}`, ErrorCode.INVALID_REQUEST, { cause });
  }
}

/** A fork's outcome: the final values of the new branch and the checkpoint the branch started from. */
export interface ForkResult<S> {
  values: S;
  checkpointId: string;
}

/** Forks a checkpoint with `update` (see `forkCheckpoint`) and runs the new branch to its end or next interrupt. */
export async function forkFrom<S>(graph: ReplayableGraph<S>, threadId: string, checkpointId: string, update: Record<string, unknown>, asNode?: string): Promise<ForkResult<S>> {
  const config = await forkCheckpoint(graph, threadId, checkpointId, update, asNode);
  const forkedId = idOf(config);
  if (!forkedId) throw new CandorError(`updateState returned no checkpoint id for thread ${threadId}.`, ErrorCode.STORAGE);
  const values = await graph.invoke(null, config);
  return { values, checkpointId: forkedId };
}

/**
 * Turns `key.path=value` assignments into a state update on top of `base` (the checkpoint's values): each
 * top-level key gets its whole new value, with only the named leaf changed. Values are JSON when they parse,
 * else plain strings (`request.userIntent=Rome` and `settings.maxRevisions=1` both work).
 * @throws CandorError INVALID_REQUEST for an assignment without `=` or with an empty path.
 */
export function updateFromAssignments(base: Record<string, unknown>, assignments: readonly string[]): Record<string, unknown> {
  const update: Record<string, unknown> = {};
  for (const a of assignments) {
    const eq = a.indexOf("=");
    const path = eq > 0 ? a.slice(0, eq).trim().split(".") : [];
    if (eq <= 0 || path.some((p) => p === "")) {
      throw new CandorError(`--set "${a}" is not key=value: give a dotted path into the state and a value, e.g. --set settings.maxRevisions=1.`, ErrorCode.INVALID_REQUEST);
    }
    const value = parseValue(a.slice(eq + 1));
    const [top, ...rest] = path as [string, ...string[]];
    update[top] = rest.length === 0 ? value : setPath(top in update ? update[top] : base[top], rest, value);
  }
  return update;
}

function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function setPath(target: unknown, path: readonly string[], value: unknown): unknown {
  const [head, ...rest] = path as [string, ...string[]];
  if (Array.isArray(target)) {
    const copy: unknown[] = target.slice();
    const i = Number(head);
    copy[i] = rest.length === 0 ? value : setPath(copy[i], rest, value);
    return copy;
  }
  const obj = target !== null && typeof target === "object" ? { ...(target as Record<string, unknown>) } : {};
  obj[head] = rest.length === 0 ? value : setPath(obj[head], rest, value);
  return obj;
}
