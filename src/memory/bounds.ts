import { DEFAULT_STORAGE_BOUNDS, howToSetBound } from "../domain/config.js";
import { CandorError, ErrorCode } from "../errors.js";
import type { EffectKey, EffectLedger } from "../tools/effects.js";
import type { ResultLimit } from "../tools/limits.js";

/** Bytes of `text` in UTF-8, what the database stores. */
function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

const figure = (n: number) => n.toLocaleString("en-US");

/**
 * The JSON text of a value for the long-term store, refused when it is over the bound on a stored value: the store
 * holds episodes and thread records, each far below it, so a value this large is a request or a result that should
 * not have been kept whole, and the database would otherwise find out (SQLite: "string or blob too big" at 1 GB).
 *
 * @throws CandorError LIMIT_EXCEEDED naming the item, its size and the bound; nothing is written.
 */
export function storableJson(
  namespace: readonly string[],
  key: string,
  value: unknown,
  limit: number = DEFAULT_STORAGE_BOUNDS.maxStoredValueBytes,
): string {
  const text = JSON.stringify(value);
  const bytes = utf8Bytes(text);
  if (bytes <= limit) return text;
  throw new CandorError(
    `The value for "${key}" in [${namespace.join(", ")}] is ${figure(bytes)} bytes, over the ${figure(limit)} bytes a stored value may have (maxStoredValueBytes, the bound on stored values; set by ${howToSetBound("maxStoredValueBytes")}); it was not stored. Keep less in it: a request, a result or a note this large belongs in a file.`,
    ErrorCode.LIMIT_EXCEEDED,
    { details: { constraint: "maxStoredValueBytes", limit, actual: bytes, key, namespace: [...namespace] } },
  );
}

/**
 * What a step keeps of a tool result over the bound (in its checkpoints, and in the effect ledger): its first
 * characters and a `truncated` limit saying so. A result within the bound is returned as it is. A step given the
 * cut result, or a resumed step that reuses it from the ledger, has a result that says it is not whole, which the
 * evidence rule does not take as complete (src/execution/evidence.ts); the call is still never made twice.
 */
export function keptResult(result: unknown, limit: number = DEFAULT_STORAGE_BOUNDS.maxToolResultBytes): unknown {
  const text = JSON.stringify(result) ?? "null";
  const bytes = utf8Bytes(text);
  if (bytes <= limit) return result;
  // Half the bound for the head leaves room for the limit's message and JSON escaping of the head itself.
  const head = cutToBytes(text, Math.floor(limit / 2));
  const cut: ResultLimit = {
    kind: "truncated",
    message: `the tool's result was ${figure(bytes)} bytes, over the ${figure(limit)} bytes kept of one tool result (maxToolResultBytes, the bound on stored tool results; set by ${howToSetBound("maxToolResultBytes")}); only its first ${figure(utf8Bytes(head))} bytes of JSON were kept`,
  };
  return { truncated: true, head, limits: [cut] };
}

/** Whether `value` is what `keptResult` kept of a result over the bound (or a list holding one): not the result. */
export function isCutResult(value: unknown): value is { truncated: true; head: string; limits: ResultLimit[] } {
  if (Array.isArray(value)) return value.some(isCutResult);
  if (typeof value !== "object" || value === null) return false;
  const v = value as { truncated?: unknown; head?: unknown; limits?: unknown };
  return v.truncated === true && typeof v.head === "string" && Array.isArray(v.limits) && Object.keys(v).length === 3;
}

/** The bytes of a call's arguments (JSON, UTF-8) when they are over `limit`, else null: the one measure of both checks. */
function bytesOverBound(args: unknown, limit: number): number | null {
  const bytes = utf8Bytes(JSON.stringify(args) ?? "null");
  return bytes > limit ? bytes : null;
}

/**
 * How a model's call arguments are over the bound on tool arguments, as a phrase its refusal completes ("The
 * arguments of your call … are …"), or null when they are within it. Checked before anything else is done with the
 * call: a person is never asked to approve a call that would be refused for its size.
 */
export function argumentsOverBound(
  args: unknown,
  limit: number = DEFAULT_STORAGE_BOUNDS.maxToolArgumentBytes,
): string | null {
  const bytes = bytesOverBound(args, limit);
  if (bytes === null) return null;
  return `are ${figure(bytes)} bytes, over the ${figure(limit)} bytes one tool call's arguments may have (maxToolArgumentBytes; set by ${howToSetBound("maxToolArgumentBytes")}): pass less, or a file's path rather than its content`;
}

/**
 * Why a tool call with these arguments is refused, naming their size and the bound on tool arguments, or null when
 * they are within it. A 10 MB argument would otherwise be stored in every checkpoint and ledger row of its step.
 */
export function oversizedArguments(
  tool: string,
  args: unknown,
  limit: number = DEFAULT_STORAGE_BOUNDS.maxToolArgumentBytes,
): string | null {
  const bytes = bytesOverBound(args, limit);
  if (bytes === null) return null;
  return `${tool} was not called: its arguments are ${figure(bytes)} bytes, over the ${figure(limit)} bytes one tool call's arguments may have (maxToolArgumentBytes, the bound on tool arguments; set by ${howToSetBound("maxToolArgumentBytes")}). Pass less, or a file's path rather than its content.`;
}

/** The effect ledger with each recorded result held to the bound on a stored tool result (see `keptResult`). */
export function boundedLedger(
  ledger: EffectLedger,
  limit: number = DEFAULT_STORAGE_BOUNDS.maxToolResultBytes,
): EffectLedger {
  return {
    lookup: (key) => ledger.lookup(key),
    recordsFor: (key) => ledger.recordsFor(key),
    verdict: (key) => ledger.verdict(key),
    recordStarted: (key, tool, args) => ledger.recordStarted(key, tool, args),
    recordDone: (key: EffectKey, tool, args, result) => ledger.recordDone(key, tool, args, keptResult(result, limit)),
    recordFailed: (key, tool, args, error) => ledger.recordFailed(key, tool, args, cutToBytes(error, limit)),
  };
}

/** The longest prefix of `text` within `max` UTF-8 bytes that does not split a character. */
function cutToBytes(text: string, max: number): string {
  if (utf8Bytes(text) <= max) return text;
  const buf = Buffer.from(text, "utf8").subarray(0, max);
  // A cut inside a multi-byte character leaves a replacement character at the end: drop it.
  return buf.toString("utf8").replace(/\uFFFD+$/, "");
}
