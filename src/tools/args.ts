import { isDeepStrictEqual } from "node:util";
import type { RecordedValue } from "../domain/step-context.js";
import type { z } from "zod";
import type { ToolSpec } from "./types.js";

/** The parameters a tool takes, by name, with the schema of each; none for a schema that is not an object. */
function paramSchemas(tool: Pick<ToolSpec, "schema">): Record<string, z.ZodType> {
  const shape = (tool.schema as { shape?: unknown }).shape;
  return shape !== null && typeof shape === "object" ? (shape as Record<string, z.ZodType>) : {};
}

/** The parameter names a tool takes (its schema's keys). */
export function paramNames(tool: Pick<ToolSpec, "schema">): string[] {
  return Object.keys(paramSchemas(tool));
}

/**
 * The text parameters a call leaves out that the tool's schema fills with a default ("dir" → "."), as
 * `name = "default"`: what a call says without saying it. Switches, choices and numbers with defaults are left
 * out: they tune a call, where a folder, a path or a title (free text) says what it is about.
 */
export function defaultedText(tool: Pick<ToolSpec, "schema">, args: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [name, schema] of Object.entries(paramSchemas(tool))) {
    if (name in args && args[name] !== undefined) continue;
    const filled = schema.safeParse(undefined);
    if (filled.success && typeof filled.data === "string" && isFreeText(schema)) {
      out.push(`${name} = ${JSON.stringify(filled.data)}`);
    }
  }
  return out;
}

/** The arguments a tool gets once the recorded values are applied, and one sentence per value that differed. */
export interface Reconciled {
  args: Record<string, unknown>;
  /** Each value applied (the call left it out or gave another), or named (the record's form is not the tool's). */
  applied: string[];
}

/**
 * Applies the recorded values to a call's arguments, for the parameters the tool takes:
 * - a change made on the user's behalf (a conversion, a clamp) must reach the tool: a call that left the parameter
 *   out or still carries the value from before the change gets the changed value, named;
 * - a value read from the request fills a parameter the call left out (a folder the request names is not the
 *   tool's default), when the record has one value of that name for the step; a call that gives another value is
 *   left alone, since steps derive from what was read (a leg's origin, half of the days);
 * - a value the parameter's schema does not take as it is (a record's "500 USD" for a number) is never put in the
 *   call: a change the call did not carry is then named instead.
 * Parameters the tool does not take are not touched: the record's name may be another tool's.
 */
export function applyRecordedValues(
  args: Record<string, unknown>,
  values: readonly RecordedValue[],
  tool: Pick<ToolSpec, "schema">,
): Reconciled {
  const schemas = paramSchemas(tool);
  const out = { ...args };
  const applied: string[] = [];
  for (const [name, v] of latestByName(values)) {
    const schema = schemas[name];
    if (!schema || v.value === undefined || v.value === null || sameValue(out[name], v.value)) continue;
    const left = !(name in out) || out[name] === undefined;
    const stale = v.kind === "change" && !left && (sameValue(out[name], v.previous) || says(v.previous, out[name]));
    if (!left && !stale) continue;
    const was = left ? "left it out" : `had ${JSON.stringify(out[name])}, the value before the change`;
    if (schema.safeParse(v.value).success) {
      applied.push(`${name} = ${JSON.stringify(v.value)} as the request's record says (${v.from}); the call ${was}`);
      out[name] = v.value;
    } else if (v.kind === "change") {
      applied.push(
        `${name}: the request's record says ${JSON.stringify(v.value)} (${v.from}), which the tool cannot take as it is; the call ${was}`,
      );
    }
  }
  return { args: out, applied };
}

/** Per name, the value that stands: the latest change, else the one value read (several read values: none). */
function latestByName(values: readonly RecordedValue[]): Map<string, RecordedValue> {
  const out = new Map<string, RecordedValue>();
  const reads = new Map<string, number>();
  for (const v of values) if (v.kind === "read") reads.set(v.name, (reads.get(v.name) ?? 0) + 1);
  for (const v of values) {
    if (v.kind === "change") out.set(v.name, v);
    else if (reads.get(v.name) === 1 && out.get(v.name)?.kind !== "change") out.set(v.name, v);
  }
  return out;
}

/** Equal as values: numbers given as numeric text ("6962") count as the number. */
function sameValue(a: unknown, b: unknown): boolean {
  if (isDeepStrictEqual(a, b)) return true;
  if (typeof a === "string" && typeof b === "number") return a.trim() !== "" && Number(a) === b;
  if (typeof a === "number" && typeof b === "string") return b.trim() !== "" && Number(b) === a;
  return false;
}

/** A recorded value in words that states the call's value ("500 USD" states 500; "Rome, Italy" states "Rome"). */
function says(recorded: unknown, value: unknown): boolean {
  if (typeof recorded !== "string" || (typeof value !== "number" && typeof value !== "string")) return false;
  const tokens = recorded
    .replace(/(\d),(?=\d{3}\b)/g, "$1")
    .split(/[^\p{L}\p{N}.]+/u)
    .filter(Boolean);
  const want = String(value).trim().toLowerCase();
  return want !== "" && tokens.some((t) => t.toLowerCase() === want || (Number(t) === Number(want) && t !== ""));
}

/** A parameter of free text (`z.string()`, under its default or optional), not a choice among named values. */
function isFreeText(schema: z.ZodType): boolean {
  let def = (schema as unknown as { _zod: { def: { type: string; innerType?: unknown } } })._zod.def;
  while ((def.type === "default" || def.type === "optional" || def.type === "prefault") && def.innerType) {
    def = (def.innerType as { _zod: { def: typeof def } })._zod.def;
  }
  return def.type === "string";
}
