import { z } from "zod";

/**
 * What the planner understood of a request, accounted for: every part of it with the steps that serve it (or why
 * none can), every value taken from it with the words it came from, every default and every change made on the
 * user's behalf, and the words that carried meaning but served nothing. Nothing the user asked may be dropped or
 * changed silently: an open item here brings a person in before anything runs, and SYNTHESIZE judges the outcome
 * part by part.
 */

/**
 * `served`: steps do it. `excluded`: the user ruled something out ("no hotel") and no step does it.
 * `unsupported`: no tool can do it. `not_understood`: the planner could not read it.
 */
const PartStatus = z.enum(["served", "excluded", "unsupported", "not_understood"]);
type PartStatus = z.infer<typeof PartStatus>;

/** One intent or clause of the request. */
export const RequestPart = z.object({
  id: z.string().min(1),
  /** The request's own words for this part. */
  text: z.string(),
  /** What the planner took it to mean ("flights Madrid → Paris", "no hotel"). */
  description: z.string(),
  /** A thing to do, a thing ruled out, or a limit on the rest (a budget). */
  kind: z.enum(["task", "exclusion", "constraint"]),
  status: PartStatus,
  /** The steps that serve it; empty for an exclusion (honoured by the absence of a step) or an unsupported part. */
  stepIds: z.array(z.string()).default([]),
  /** Why it is unsupported, excluded or not understood. */
  why: z.string().nullable().default(null),
});
export type RequestPart = z.infer<typeof RequestPart>;

/** A value read from the request, with the text it came from. */
const TakenValue = z.object({
  name: z.string(),
  value: z.unknown(),
  source: z.string(),
  stepIds: z.array(z.string()).default([]),
});
type TakenValue = z.infer<typeof TakenValue>;

/** A default used because the request did not say. */
const Assumption = z.object({
  name: z.string(),
  value: z.unknown(),
  why: z.string(),
  stepIds: z.array(z.string()).default([]),
});
type Assumption = z.infer<typeof Assumption>;

/** A value changed on the user's behalf: a conversion, a clamp, a strategy's correction. Always announced. */
const ValueChange = z.object({
  name: z.string(),
  from: z.unknown(),
  to: z.unknown(),
  /** The request's words for the original value, when it came from the request. */
  source: z.string().default(""),
  why: z.string(),
  /** Who changed it: the planner (a conversion), a recovery strategy, or a person. */
  by: z.enum(["planner", "strategy", "person"]).default("planner"),
  stepIds: z.array(z.string()).default([]),
});
type ValueChange = z.infer<typeof ValueChange>;

/** A value the request gave that the planner will not use as it is ("-2 people", "2.5 days"): a person decides. */
const Refusal = z.object({
  name: z.string(),
  text: z.string(),
  why: z.string(),
});
type Refusal = z.infer<typeof Refusal>;

/** What kind of meaning a piece of unaccounted text carries. */
export const MeaningKind = z.enum(["negation", "place", "amount", "number", "date", "task", "other"]);
export type MeaningKind = z.infer<typeof MeaningKind>;

/** Text that carries meaning and served nothing in the plan. */
export const Unaccounted = z.object({
  text: z.string(),
  kind: MeaningKind,
  why: z.string(),
});
export type Unaccounted = z.infer<typeof Unaccounted>;

/**
 * A claim of a model's record that the request does not bear out: words quoted as the request's that it does not
 * say, or a number, amount or date read otherwise than the deterministic reader reads its source. Named, never
 * used: a disputed value is not applied to any call.
 */
const Dispute = z.object({
  /** The words the claim is about, as the model gave them. */
  text: z.string(),
  why: z.string(),
});
type Dispute = z.infer<typeof Dispute>;

export const Understanding = z.object({
  parts: z.array(RequestPart).default([]),
  values: z.array(TakenValue).default([]),
  assumptions: z.array(Assumption).default([]),
  changes: z.array(ValueChange).default([]),
  refused: z.array(Refusal).default([]),
  unaccounted: z.array(Unaccounted).default([]),
  disputed: z.array(Dispute).default([]),
  /** Who made the record: a plan from before the record existed has `none` (and is judged by its steps alone). */
  by: z.enum(["rules", "llm", "none"]).default("none"),
});
export type Understanding = z.infer<typeof Understanding>;

/**
 * What a person must hear about before anything runs, one sentence each: parts no tool can do or the planner
 * could not read, values it refuses, and meaningful text that served nothing. Changes and assumptions are
 * announced with the plan but do not stop it.
 */
export function openQuestions(u: Understanding): string[] {
  const out: string[] = [];
  for (const p of u.parts) {
    if (p.status === "unsupported") out.push(`"${p.text}" cannot be done: ${p.why ?? "no tool serves it"}`);
    if (p.status === "not_understood")
      out.push(`"${p.text}" was not understood: ${p.why ?? "the planner could not read it"}`);
  }
  for (const r of u.refused) out.push(`"${r.text}" is not used as ${r.name}: ${r.why}`);
  for (const x of u.unaccounted)
    out.push(`"${x.text}" (${x.kind === "other" ? "text" : x.kind}) served nothing in the plan: ${x.why}`);
  for (const d of u.disputed) out.push(`the planner's reading of "${d.text}" does not hold: ${d.why}`);
  return out;
}

/** The record as lines for a person: parts with their steps, values with their source, assumptions and changes. */
export function understandingLines(u: Understanding): string[] {
  if (u.by === "none") return [];
  const out: string[] = [];
  for (const p of u.parts) {
    const serving = p.stepIds.length > 0 ? ` → ${p.stepIds.join(", ")}` : "";
    const why = p.why && p.status !== "served" ? ` (${p.why})` : "";
    out.push(`part "${p.text}": ${p.description} — ${p.status.replace("_", " ")}${serving}${why}`);
  }
  for (const v of u.values) out.push(`value ${v.name} = ${show(v.value)} from "${v.source}"`);
  for (const a of u.assumptions) out.push(`assumed ${a.name} = ${show(a.value)}: ${a.why}`);
  for (const c of u.changes)
    out.push(`changed ${c.name}: ${show(c.from)} → ${show(c.to)}${c.source ? ` ("${c.source}")` : ""}: ${c.why}`);
  for (const r of u.refused) out.push(`refused ${r.name} "${r.text}": ${r.why}`);
  for (const x of u.unaccounted) out.push(`not accounted for: "${x.text}" (${x.kind}): ${x.why}`);
  for (const d of u.disputed) out.push(`disputed: "${d.text}": ${d.why}`);
  return out;
}

/**
 * The record in a few lines for the plan's announcement: each part and what serves it, each change, and what is
 * open. Values and defaults are in the full record (`run --json`, the approval request, the decision log).
 */
export function understandingNotes(u: Understanding): { info: string[]; warnings: string[] } {
  if (u.by === "none") return { info: [], warnings: [] };
  const info: string[] = [];
  for (const p of u.parts) {
    if (p.status === "served") info.push(`Understood "${quoted(p.text)}" → ${p.stepIds.join(", ")}`);
    else if (p.status === "excluded")
      info.push(`Understood "${quoted(p.text)}": ${quoted(p.description)}, so no step does it`);
  }
  // A change made on the user's behalf and anything open are warnings: they are what a person must notice.
  const warnings = [
    ...u.changes.map((c) => quoted(`Changed ${c.name}: ${show(c.from)} → ${show(c.to)} (${c.why})`)),
    ...openQuestions(u).map((q) => `Not done or not understood: ${quoted(q)}`),
  ];
  return { info, warnings };
}

/**
 * A quote of the request inside a one-line note: its line breaks shown as ␤, so the request cannot break a list of
 * notes (one a line) into lines that read as notes of Candor's own.
 */
function quoted(text: string): string {
  return text.replace(/\r\n|\r|\n/g, "␤");
}

function show(v: unknown): string {
  return typeof v === "string" ? v : (JSON.stringify(v) ?? String(v));
}
