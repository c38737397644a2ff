import { z } from "zod";

/**
 * How a tool result can fall short of what was asked, while still being real:
 * - `truncated`: the input was cut (a file read up to a cap);
 * - `binary`: the input is not text, so nothing was read or counted as text;
 * - `listing_cut`: a listing shows only some of its entries;
 * - `sampled`: a figure was computed from part of the data, or is an estimate.
 */
export const ResultLimitKind = z.enum(["truncated", "binary", "listing_cut", "sampled"]);
export type ResultLimitKind = z.infer<typeof ResultLimitKind>;

/**
 * One way a result is not whole. `message` is one sentence a user can read, naming the figures ("read 200,000 of
 * 184,320,000 bytes of big.log; the rest was not read"), because it is shown as it is next to the result.
 */
export const ResultLimit = z.object({ kind: ResultLimitKind, message: z.string().min(1) });
export type ResultLimit = z.infer<typeof ResultLimit>;

/** The optional `limits` field of a tool's output schema. */
export const ResultLimits = z.array(ResultLimit);

/**
 * The limits a tool result carries: the valid entries of its `limits` array.
 *
 * The convention: a tool whose result is real but not whole (a cut read, a binary file it would not read as text,
 * a listing cut short, a sampled figure) says so in a `limits` array on its object result, each entry a
 * {@link ResultLimit}. A result without `limits`, or with an empty one, claims to be whole. Candor's evidence rule
 * (src/execution/evidence.ts) reads limits through this function and does not let a limited result complete a
 * part as if it were whole; tools that consume a limited result carry its limits into their own.
 *
 * Results come from tools, MCP servers and stored runs, so nothing here is trusted: a non-object result, a
 * missing or non-array `limits`, and each malformed entry are ignored (never thrown on), and valid entries next
 * to a malformed one are still returned.
 */
export function limitsOf(result: unknown): ResultLimit[] {
  if (typeof result !== "object" || result === null || Array.isArray(result)) return [];
  const limits: unknown = (result as { limits?: unknown }).limits;
  if (!Array.isArray(limits)) return [];
  return limits.flatMap((entry) => {
    const parsed = ResultLimit.safeParse(entry);
    return parsed.success ? [parsed.data] : [];
  });
}

/**
 * `result` with `limits` added to those it already carries (duplicates dropped). With nothing to add and none
 * carried, the result is returned as it is, without a `limits` field, so a whole result looks as it always did.
 */
export function withLimits<T extends object>(
  result: T,
  limits: readonly ResultLimit[],
): T & { limits?: ResultLimit[] } {
  const all = [...limitsOf(result), ...limits];
  if (all.length === 0) return result;
  const seen = new Set<string>();
  const unique = all.filter((l) => {
    const key = `${l.kind}\u0000${l.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { ...result, limits: unique };
}

/** A count as a user reads it in a limit's message: digits grouped by thousands with commas (184,320,000). */
export function figure(n: number): string {
  return Number.isInteger(n) ? String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",") : String(n);
}
