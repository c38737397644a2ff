import { isDeepStrictEqual } from "node:util";
import type { RunnableConfig } from "@langchain/core/runnables";
import { DeltaValue, ReducedValue, type StateSnapshot } from "@langchain/langgraph";
import { z } from "zod";
import { CandorError, ErrorCode, errorMessage } from "./errors.js";
import { jsonLimitProblem, preview } from "./json-limits.js";
import type { Result } from "./result.js";

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
export async function checkpointAt(
  graph: ReplayableGraph,
  threadId: string,
  checkpointId: string,
): Promise<StateSnapshot> {
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
 * The nearest checkpoint at or before `checkpointId`, on its own branch, from which `node` runs next; null when
 * the branch has none. A fork whose edit only `node` reads (a request the plan was made from) starts there.
 */
export async function checkpointBefore(
  graph: ReplayableGraph,
  threadId: string,
  checkpointId: string,
  node: string,
): Promise<StateSnapshot | null> {
  let snapshot: StateSnapshot | null = await checkpointAt(graph, threadId, checkpointId);
  for (let hops = 0; snapshot && hops < 100_000; hops++) {
    if (snapshot.next.includes(node)) return snapshot;
    const parent = idOf(snapshot.parentConfig);
    snapshot = parent ? await graph.getState(checkpointConfig(threadId, parent)) : null;
  }
  return null;
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
export async function forkCheckpoint(
  graph: ReplayableGraph,
  threadId: string,
  checkpointId: string,
  update: Record<string, unknown>,
  asNode?: string,
): Promise<RunnableConfig> {
  await checkpointAt(graph, threadId, checkpointId);
  try {
    return await graph.updateState(checkpointConfig(threadId, checkpointId), update, asNode);
  } catch (cause) {
    throw new CandorError(
      `The graph refused the state update, nothing was changed: ${plainRefusal(errorMessage(cause))}.`,
      ErrorCode.INVALID_REQUEST,
      { cause },
    );
  }
}

const GraphIssues = z.array(
  z.object({ path: z.array(z.union([z.string(), z.number()])).default([]), message: z.string() }),
);

/** LangGraph's "Validation failed for field "x": [zod issues as JSON]" in plain words: `x.path: message; ...`. */
function plainRefusal(message: string): string {
  const m = /^Validation failed for field "([^"]+)": (\[[\s\S]*\])\s*$/.exec(message.trim());
  if (!m) return message.replace(/[.\s]+$/, "");
  let json: unknown;
  try {
    json = JSON.parse(m[2]!);
  } catch {
    return message; // Not the JSON LangGraph writes: shown as it came.
  }
  const issues = GraphIssues.safeParse(json);
  if (!issues.success) return message;
  return issues.data.map((i) => `${[m[1]!, ...i.path.map(String)].join(".")}: ${i.message}`).join("; ");
}

/** A fork's outcome: the final values of the new branch and the checkpoint the branch started from. */
export interface ForkResult<S> {
  values: S;
  checkpointId: string;
  /** Where the fork started when it was not the checkpoint asked for, and why (see `forkBase`). */
  notes: string[];
}

/**
 * The node that makes a field from another (Candor's UNDERSTAND reads `request` and writes `plan`). A fork that
 * changes the input of a checkpoint that already has the output would run an output made for the old input.
 */
export interface DerivedField {
  node: string;
  input: string;
  output: string;
}

/** Candor's plan is made from its request by UNDERSTAND. */
const PLANNING: DerivedField = { node: "understand", input: "request", output: "plan" };

/**
 * Where a fork must start for its update to take effect. An update that changes `derived.input` at a checkpoint
 * that already has `derived.output` starts from the nearest earlier checkpoint on its branch from which
 * `derived.node` runs next, so the output is made again from the new input — unless `asNode` names another node,
 * which says on purpose that the update comes after the output (the old output is kept, and a note says so).
 * @throws CandorError INVALID_REQUEST when the update changes both the input and the output there (the output is
 * about to be made again, so the edit would be lost), or when no earlier checkpoint runs `derived.node`.
 */
export async function forkBase(
  graph: ReplayableGraph,
  threadId: string,
  checkpointId: string,
  update: Record<string, unknown>,
  asNode?: string,
  derived: DerivedField = PLANNING,
): Promise<{ checkpointId: string; asNode: string | undefined; notes: string[] }> {
  const at = await checkpointAt(graph, threadId, checkpointId);
  const values = (at.values ?? {}) as Record<string, unknown>;
  const changed = derived.input in update && !isDeepStrictEqual(update[derived.input], values[derived.input]);
  const made = values[derived.output] !== undefined && values[derived.output] !== null;
  if (!changed || !made) return { checkpointId, asNode, notes: [] };
  if (asNode !== undefined && asNode !== derived.node)
    return {
      checkpointId,
      asNode,
      notes: [
        `the ${derived.output} at checkpoint ${checkpointId} was made for the old ${derived.input} and asNode ${asNode} keeps it: the change shows in the state, not in what runs`,
      ],
    };
  if (derived.output in update)
    throw new CandorError(
      `The update changes the ${derived.input} and the ${derived.output} together, but checkpoint ${checkpointId} already has its ${derived.output}: it will be made again for the new ${derived.input}, so edits to the old one would be lost. Fork with the ${derived.input} change alone, then edit the new ${derived.output} in a second fork.`,
      ErrorCode.INVALID_REQUEST,
    );
  const before = await checkpointBefore(graph, threadId, checkpointId, derived.node);
  const beforeId = before ? idOf(before.config) : null;
  if (!beforeId)
    throw new CandorError(
      `Checkpoint ${checkpointId} has its ${derived.output} and no earlier checkpoint on its branch runs ${derived.node}, so a new ${derived.input} would run the old ${derived.output}. Start a new run with the new ${derived.input} instead.`,
      ErrorCode.INVALID_REQUEST,
    );
  return {
    checkpointId: beforeId,
    // The earlier checkpoint keeps its own writer, so `derived.node` runs next on the new branch.
    asNode: undefined,
    notes: [
      `the ${derived.output} at checkpoint ${checkpointId} was made for the old ${derived.input}, so the fork starts from checkpoint ${beforeId}, before ${derived.node}, and makes it again for the new ${derived.input}`,
    ],
  };
}

/**
 * Forks a checkpoint with `update` (see `forkCheckpoint`) and runs the new branch to its end or next interrupt. A
 * changed request at a checkpoint that already has its plan is planned again (see `forkBase`, and `notes`).
 */
export async function forkFrom<S>(
  graph: ReplayableGraph<S>,
  threadId: string,
  checkpointId: string,
  update: Record<string, unknown>,
  asNode?: string,
  derived: DerivedField = PLANNING,
): Promise<ForkResult<S>> {
  const base = await forkBase(graph, threadId, checkpointId, update, asNode, derived);
  const config = await forkCheckpoint(graph, threadId, base.checkpointId, update, base.asNode);
  const forkedId = idOf(config);
  if (!forkedId)
    throw new CandorError(`updateState returned no checkpoint id for thread ${threadId}.`, ErrorCode.STORAGE);
  const values = await graph.invoke(null, config);
  return { values, checkpointId: forkedId, notes: base.notes };
}

/**
 * The top-level fields of a graph's state, for checking `--set` paths and values: each field's zod schema, or
 * "appended" for a field the graph only appends to through a reducer (a fork cannot replace its history). A
 * DeltaValue that is not append-only (the plan: each update replaces it) is checked against its value schema.
 */
export type StateFields = Readonly<Record<string, z.ZodType | "appended">>;

/** The fields of a LangGraph `StateSchema` (e.g. Candor's AgentState); a field that is not zod accepts anything. */
export function stateFieldsOf(schema: { fields: Record<string, unknown> }): StateFields {
  return Object.fromEntries(
    Object.entries(schema.fields).map(([key, field]) => [
      key,
      ReducedValue.isInstance(field) || (DeltaValue.isInstance(field) && field.jsonSchemaExtra?.appendOnly === true)
        ? "appended"
        : DeltaValue.isInstance(field) && field.valueSchema instanceof z.ZodType
          ? field.valueSchema
          : field instanceof z.ZodType
            ? field
            : z.unknown(),
    ]),
  );
}

/** Path segments that would reach an object's prototype: never a state field, whatever the schema says. */
const FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/** One `key.path=value` assignment, read but not yet checked against any state. */
export interface Assignment {
  text: string;
  path: [string, ...string[]];
  value: unknown;
}

/**
 * Reads `key.path=value` assignments: values are JSON when they parse, else plain strings. Checks only their
 * form, so a typo fails before a database is opened.
 * @throws CandorError INVALID_REQUEST for an assignment without `=`, with an empty path segment, or with a
 * segment that would reach an object's prototype (`__proto__`, `constructor`, `prototype`).
 */
export function parseAssignments(assignments: readonly string[]): Assignment[] {
  return assignments.map((a) => {
    const eq = a.indexOf("=");
    const path = eq > 0 ? a.slice(0, eq).trim().split(".") : [];
    if (eq <= 0 || path.some((p) => p === "")) {
      throw new CandorError(
        `--set "${preview(a)}" is not key=value: give a dotted path into the state and a value, e.g. --set settings.maxRevisions=1.`,
        ErrorCode.INVALID_REQUEST,
      );
    }
    const forbidden = path.find((p) => FORBIDDEN_SEGMENTS.has(p));
    if (forbidden !== undefined) {
      throw new CandorError(
        `--set "${preview(a)}": ${path.join(".")}: "${forbidden}" reaches an object's prototype, never a field; name a field instead.`,
        ErrorCode.INVALID_REQUEST,
      );
    }
    // Bounded before it is parsed: what reads the value next recurses, and a huge value must not be echoed back.
    const problem = jsonLimitProblem(a.slice(eq + 1), `--set ${path.join(".")}`);
    if (problem) throw new CandorError(`${problem}. Give a smaller value.`, ErrorCode.INVALID_REQUEST);
    return { text: a, path: path as [string, ...string[]], value: parseValue(a.slice(eq + 1)) };
  });
}

/**
 * Turns `key.path=value` assignments into a state update on top of `base` (the checkpoint's values): each
 * top-level key gets its whole new value, with only the named leaf changed. Values are JSON when they parse,
 * else plain strings (`request.userIntent=Rome` and `settings.maxRevisions=1` both work).
 *
 * With `fields` (see `stateFieldsOf`), every path must exist in the state's shape (a path that does not would be
 * written and then ignored by every node), a list index must be within the list, a field the graph appends to
 * cannot be replaced, and each changed field must still parse with its schema. Refusals are plain
 * `field: what is wrong`, every problem at once.
 * @throws CandorError INVALID_REQUEST naming what was wrong; nothing is written.
 */
export function updateFromAssignments(
  base: Record<string, unknown>,
  assignments: readonly string[],
  fields?: StateFields,
): Record<string, unknown> {
  const update: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const { path, value } of parseAssignments(assignments)) {
    const [top, ...rest] = path;
    if (fields) {
      const problem = pathProblem(fields, path, base);
      if (problem) {
        problems.push(problem);
        continue;
      }
    }
    update[top] =
      rest.length === 0 ? value : setPath(Object.hasOwn(update, top) ? update[top] : base[top], rest, value);
  }
  if (fields && problems.length === 0) {
    for (const [top, value] of Object.entries(update)) {
      const schema = fields[top];
      if (schema === undefined || schema === "appended") continue;
      const parsed = schema.safeParse(value);
      if (!parsed.success)
        problems.push(
          ...parsed.error.issues.slice(0, 3).map((i) => `${[top, ...i.path.map(String)].join(".")}: ${i.message}`),
        );
    }
  }
  if (problems.length > 0) {
    throw new CandorError(
      `--set refused, nothing was changed: ${problems.map((p) => p.replace(/\.+$/, "")).join("; ")}.`,
      ErrorCode.INVALID_REQUEST,
      { details: { problems } },
    );
  }
  return update;
}

/** Why `path` names nothing in the state's shape, or null when it names a field (or lies inside free-form data). */
function pathProblem(
  fields: StateFields,
  path: readonly [string, ...string[]],
  base: Record<string, unknown>,
): string | null {
  const [top, ...rest] = path;
  const where = (n: number) => path.slice(0, n).join(".");
  const field = Object.hasOwn(fields, top) ? fields[top] : undefined;
  if (field === undefined)
    return `${top}: the state has no such field; its fields are ${Object.keys(fields).join(", ")}`;
  if (field === "appended")
    return `${top}: the run only appends to this list (its history), so a fork cannot replace it`;
  let schema: z.ZodType | null = field;
  let value: unknown = base[top];
  for (const [i, segment] of rest.entries()) {
    if (schema === null) return null; // free-form data (unknown/any): any path below is the value's own
    if (value === null)
      return `${where(i + 1)}: is empty (null) at this checkpoint, so ${path.join(".")} cannot be set; set ${where(i + 1)} whole, or fork from a later checkpoint`;
    const next = childOf(schema, segment, value);
    if (!next.ok) return `${where(i + 2)}: ${next.reason}`;
    schema = next.value;
    value = value !== undefined && typeof value === "object" ? (value as Record<string, unknown>)[segment] : undefined;
  }
  return null;
}

/** The zod def of a schema, read through the wrappers that do not change its shape (optional, default, pipe, ...). */
function shapeOf(schema: z.ZodType): z.core.$ZodTypeDef & Record<string, unknown> {
  let s = schema as z.core.$ZodType;
  for (let i = 0; i < 32; i++) {
    const def = s._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
    if (["optional", "nullable", "default", "prefault", "catch", "readonly", "nonoptional"].includes(def.type))
      s = def.innerType as z.core.$ZodType;
    else if (def.type === "pipe") s = def.in as z.core.$ZodType;
    else if (def.type === "lazy") s = (def.getter as () => z.core.$ZodType)();
    else return def;
  }
  return s._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
}

/** The schema one path segment below `schema`; null when anything may be there. */
function childOf(schema: z.ZodType, segment: string, value: unknown): Result<z.ZodType | null> {
  const def = shapeOf(schema);
  switch (def.type) {
    case "unknown":
    case "any":
      return { ok: true, value: null };
    case "object": {
      const shape = def.shape as Record<string, z.ZodType>;
      if (Object.hasOwn(shape, segment)) return { ok: true, value: shape[segment]! };
      const rest = def.catchall as z.ZodType | undefined;
      if (rest && shapeOf(rest).type !== "never") return { ok: true, value: rest };
      return { ok: false, reason: `no such field; the fields here are ${Object.keys(shape).join(", ")}` };
    }
    case "record":
      return { ok: true, value: def.valueType as z.ZodType };
    case "array": {
      if (!/^\d+$/.test(segment))
        return { ok: false, reason: `a list is indexed by number (0, 1, ...), not "${segment}"` };
      const length = Array.isArray(value) ? value.length : 0;
      if (Number(segment) >= length)
        return {
          ok: false,
          reason: `the list has ${length} item(s) at this checkpoint${length > 0 ? ` (0-${length - 1})` : ""}`,
        };
      return { ok: true, value: def.element as z.ZodType };
    }
    case "tuple": {
      const items = def.items as z.ZodType[];
      const index = Number(segment);
      return /^\d+$/.test(segment) && index < items.length
        ? { ok: true, value: items[index]! }
        : { ok: false, reason: `a list of ${items.length} item(s) has no item "${segment}"` };
    }
    case "union": {
      const reasons: string[] = [];
      for (const option of def.options as z.ZodType[]) {
        const found = childOf(option, segment, value);
        if (found.ok) return found;
        reasons.push(found.reason);
      }
      return { ok: false, reason: reasons[0] ?? "no such field" };
    }
    case "intersection": {
      const left = childOf(def.left as z.ZodType, segment, value);
      return left.ok ? left : childOf(def.right as z.ZodType, segment, value);
    }
    default:
      return { ok: false, reason: `no such field: the value above it is a ${def.type}, which has no fields` };
  }
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
