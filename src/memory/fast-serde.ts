import { DeltaSnapshot, JsonPlusSerializer } from "@langchain/langgraph-checkpoint";

/**
 * LangGraph's JsonPlusSerializer, byte for byte, without its two slow parts. Writing, it walks every value once
 * looking for cycles before `JSON.stringify` walks it again (fast-safe-stringify); a checkpoint has no cycles,
 * so this stringifies once with the same replacer and falls back to the walk only if `JSON.stringify` throws
 * (a cycle, which it then writes as "[Circular]" as before). Reading, its reviver is async: an `await` and a
 * `Promise.all` for every object and array of a checkpoint (a 6 KiB plan took ~2 ms to read, ~20× its
 * `JSON.parse`), so every getState, resume, replay and fork paid for it. This revives synchronously with the same
 * rules, and hands a value to the async reviver only when it holds a LangChain object (a model message), whose
 * `load()` is async. Values written by either serializer read back the same with the other.
 */
export class FastJsonPlusSerializer extends JsonPlusSerializer {
  protected override _dumps(obj: unknown): Uint8Array {
    let text: string;
    try {
      // Plain data (nearly every write) needs no replacer, and JSON.stringify is twice as fast without one.
      text = isPlainJson(obj, 0)
        ? JSON.stringify(obj)
        : JSON.stringify(obj, (_key, value: unknown) => encodeSpecial(value));
    } catch {
      return super._dumps(obj);
    }
    return ENCODER.encode(text);
  }

  protected override async _loads(data: string): Promise<unknown> {
    const parsed: unknown = JSON.parse(data);
    const revived = reviveSync(parsed);
    return revived === NEEDS_ASYNC ? super._loads(data) : revived;
  }
}

const ENCODER = new TextEncoder();

/** Deeper than this, a value is written through the replacer (and a cycle found by JSON.stringify). */
const MAX_PLAIN_DEPTH = 256;

/**
 * Whether the replacer would return every part of `value` unchanged, so plain JSON.stringify writes the same
 * text: only strings, numbers, booleans, null, arrays and plain objects, nothing undefined (a hole or a missing
 * value is written as a record), no class instance (Set, Map, Date, Error, DeltaSnapshot…), no Send look-alike.
 */
function isPlainJson(value: unknown, depth: number): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case "string":
    case "number":
    case "boolean":
      return true;
    case "object":
      break;
    default:
      return false;
  }
  if (depth > MAX_PLAIN_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!isPlainJson(value[i], depth + 1)) return false;
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  const record = value as Json;
  if (record.lg_name === "Send") return false;
  for (const key in record) if (!isPlainJson(record[key], depth + 1)) return false;
  return true;
}

/** Marks a value that holds a LangChain serialized object: only the async reviver can rebuild it. */
const NEEDS_ASYNC = Symbol("needs async revival");

type Json = Record<string, unknown>;

/** JsonPlusSerializer's `_default`: the values plain JSON would lose, encoded as `lc: 2` records. */
function encodeSpecial(value: unknown): unknown {
  if (value === undefined) return { lc: 2, type: "undefined" };
  if (value === null || typeof value !== "object") return value;
  if (value instanceof DeltaSnapshot)
    return { lc: 2, type: "delta_snapshot", value: (value as DeltaSnapshot<unknown>).value };
  if (value instanceof Set || value instanceof Map)
    return constructorRecord(value.constructor.name, null, [Array.from(value)]);
  if (value instanceof RegExp) return constructorRecord("RegExp", null, [value.source, value.flags]);
  if (value instanceof Error) return constructorRecord("Error", null, [value.message]);
  const send = value as { lg_name?: unknown; node?: unknown; args?: unknown; timeout?: unknown };
  if (send.lg_name === "Send") {
    return { node: send.node, args: send.args, ...(send.timeout !== undefined ? { timeout: send.timeout } : {}) };
  }
  if (value instanceof Uint8Array) return constructorRecord("Uint8Array", "from", [Array.from(value)]);
  return value;
}

const constructorRecord = (name: string, method: string | null, args: unknown[]) => ({
  lc: 2,
  type: "constructor",
  id: [name],
  method,
  args,
  kwargs: {},
});

/**
 * JsonPlusSerializer's `_reviver`, synchronous: children first, then the object itself (an `lc: 2` record becomes
 * undefined, a DeltaSnapshot, or the Set, Map, RegExp, Error or Uint8Array it encodes; an invalid record stays as
 * it is). Returns NEEDS_ASYNC when it meets an `lc: 1` LangChain object.
 */
function reviveSync(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = reviveSync(value[i]);
      if (item === NEEDS_ASYNC) return NEEDS_ASYNC;
      out[i] = item;
    }
    return out;
  }
  const revived: Json = {};
  for (const [k, v] of Object.entries(value)) {
    const item = reviveSync(v);
    if (item === NEEDS_ASYNC) return NEEDS_ASYNC;
    revived[k] = item;
  }
  if (revived.lc === 2) {
    if (revived.type === "undefined") return undefined;
    if (revived.type === "delta_snapshot" && Object.prototype.hasOwnProperty.call(revived, "value")) {
      return new DeltaSnapshot(revived.value);
    }
    if (revived.type === "constructor") return reviveConstructor(revived) ?? revived;
  }
  if (revived.lc === 1 && revived.type === "constructor" && Array.isArray(revived.id)) return NEEDS_ASYNC;
  return revived;
}

/** JsonPlusSerializer's closed set of constructor records; anything else stays inert data (undefined here). */
function reviveConstructor(record: Json): unknown {
  const id = record.id;
  if (!Array.isArray(id) || id.length !== 1) return undefined;
  const name: unknown = id[0];
  const noMethod = record.method === undefined || record.method === null;
  const args = record.args;
  const singleArray = Array.isArray(args) && args.length === 1 && Array.isArray(args[0]);
  if (name === "Set" && noMethod) return singleArray ? new Set(args[0] as unknown[]) : undefined;
  if (name === "Map" && noMethod) {
    if (!singleArray) return undefined;
    const entries = (args as unknown[][])[0]!;
    if (!entries.every((e) => Array.isArray(e) && e.length === 2)) return undefined;
    return new Map(entries as [unknown, unknown][]);
  }
  if (name === "RegExp" && noMethod) {
    if (!Array.isArray(args) || args.length !== 2 || typeof args[0] !== "string" || typeof args[1] !== "string") {
      return undefined;
    }
    try {
      return new RegExp(args[0], args[1]);
    } catch {
      return undefined;
    }
  }
  if (name === "Error" && noMethod) {
    if (!Array.isArray(args) || args.length !== 1 || typeof args[0] !== "string") return undefined;
    return new Error(args[0]);
  }
  if (name === "Uint8Array" && (noMethod || record.method === "from")) {
    if (!singleArray) return undefined;
    const bytes = (args as unknown[][])[0]!;
    if (!bytes.every((b) => typeof b === "number" && Number.isInteger(b) && b >= 0 && b <= 255)) return undefined;
    return new Uint8Array(bytes as number[]);
  }
  return undefined;
}
