import type { StepChoice } from "../domain/reflection.js";
import type { ToolRegistry } from "../tools/registry.js";
import { knobKey, type Knob } from "./knobs.js";

/**
 * Reading a reason ("the hotel was a dump", "never again with that airline") as the settings of the run's tools it
 * points at. Deterministic: the words come from the toolkit (each tool's keywords, each knob's terms), so a reason
 * worded in a new way still lands on the same setting when it shares a word with it, and a reason that shares
 * none lands nowhere (and the reflection says so) rather than on a guess.
 */

/** One setting the reason points at, with what to set it to next time. */
export interface KnobMatch {
  knob: Knob;
  stepId: string;
  /** The value the step ran with (the knob's default when the step did not set it). */
  current: unknown;
  /** The value the reason asks for: a choice's option, a minimum, true, or a value to exclude. */
  value: string | number | boolean;
  /** For a choice: the option's own description ("cheapest first"). */
  says: string | null;
  /** The rejected answer's value of the field the knob filters on (a rating, an airline), when it has one. */
  chosen: string | number | boolean | null;
  /** The words of the reason that pointed here. */
  evidence: string[];
}

export interface Diagnosis {
  /** Tools the reason names by their own words; empty when it names none (then every tool that ran is a candidate). */
  namedTools: string[];
  matches: KnobMatch[];
}

/** The blamed keys an evaluation stores: the knob, with the option asked for (a choice) or the value to avoid. */
export function blamedKeys(d: Diagnosis): string[] {
  return d.matches.map((m) =>
    m.knob.learn.kind === "choice" || m.knob.learn.kind === "exclude"
      ? `${knobKey(m.knob)}=${String(m.value)}`
      : knobKey(m.knob),
  );
}

/** Lower case, accents and punctuation folded to spaces, padded so " term " finds whole words. */
export function normalize(text: string): string {
  return ` ${text
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, " ")
    .trim()} `;
}

/** The words of `terms` found in the normalized text: whole words, a plural "s", or a longer word they begin. */
export function termsIn(normalized: string, terms: readonly string[]): string[] {
  const words = normalized.trim().split(" ");
  const found = new Set<string>();
  for (const raw of terms) {
    const term = normalize(raw).trim();
    if (term === "") continue;
    if (term.includes(" ")) {
      if (normalized.includes(` ${term} `)) found.add(raw);
      continue;
    }
    if (words.some((w) => w === term || w === `${term}s` || (term.length >= 5 && w.startsWith(term)))) found.add(raw);
  }
  return [...found];
}

/**
 * Pure. The settings a reason points at among the tools that ran (`choices`). A tool is named by a keyword only it
 * has among them, by its category, or by a value of its result ("Iberia"); when the reason names a tool, only its
 * knobs are candidates (for a tool with no knob of its own, those of the tools whose results it consumed). A knob
 * matches when the reason has one of its words (an `exclude` knob also when the reason names the rejected value).
 * A match that would set what the step already had is dropped: the complaint is then about something else.
 */
export function diagnose(
  reason: string,
  choices: readonly StepChoice[],
  knobs: readonly Knob[],
  registry: ToolRegistry,
): Diagnosis {
  const text = normalize(reason);
  const ran = choices.filter((c) => knobs.some((k) => k.tool === c.tool) || registry.tool(c.tool) !== undefined);
  const words = new Map(ran.map((c) => [c.tool, toolWords(c.tool, registry)]));
  const counts = new Map<string, number>();
  for (const ws of words.values()) for (const w of new Set(ws)) counts.set(w, (counts.get(w) ?? 0) + 1);
  const namedTools = ran
    .filter((c) => {
      const own = (words.get(c.tool) ?? []).filter((w) => counts.get(w) === 1);
      return termsIn(text, own).length > 0 || mentionedValues(text, c).length > 0;
    })
    .map((c) => c.tool);
  const steered = new Set(namedTools.flatMap((t) => [t, ...feedersOf(t, ran, knobs, registry)]));
  const candidates = namedTools.length > 0 ? ran.filter((c) => steered.has(c.tool)) : ran;
  const matches: KnobMatch[] = [];
  for (const choice of candidates) {
    for (const knob of knobs.filter((k) => k.tool === choice.tool)) {
      const m = matchKnob(text, knob, choice);
      if (m) matches.push(m);
    }
  }
  return { namedTools: [...new Set(namedTools)], matches };
}

function matchKnob(text: string, knob: Knob, choice: StepChoice): KnobMatch | null {
  const l = knob.learn;
  const base = { knob, stepId: choice.stepId };
  switch (l.kind) {
    case "choice": {
      const current = choice.params[knob.param] ?? l.default;
      const ranked = Object.entries(l.options)
        .map(([value, o]) => ({ value, says: o.says, evidence: termsIn(text, o.terms) }))
        .filter((o) => o.evidence.length > 0 && o.value !== current)
        .sort((a, b) => b.evidence.length - a.evidence.length);
      const best = ranked[0];
      if (!best) return null;
      return { ...base, current, value: best.value, says: best.says, chosen: null, evidence: best.evidence };
    }
    case "minimum": {
      const evidence = termsIn(text, l.terms);
      if (evidence.length === 0) return null;
      const raw = choice.result[l.field];
      const chosen = typeof raw === "number" ? raw : null;
      const current = typeof choice.params[knob.param] === "number" ? (choice.params[knob.param] as number) : null;
      const above = Math.max(
        chosen === null ? l.floor : Math.floor(chosen) + l.step,
        current === null ? l.floor : current + l.step,
      );
      const value = Math.min(l.max, Math.max(l.floor, above));
      if (current !== null && value <= current) return null;
      return { ...base, current, value, says: null, chosen, evidence };
    }
    case "flag": {
      const evidence = termsIn(text, l.terms);
      if (evidence.length === 0 || choice.params[knob.param] === true) return null;
      return { ...base, current: choice.params[knob.param] ?? false, value: true, says: null, chosen: null, evidence };
    }
    case "exclude": {
      const raw = choice.result[l.field];
      if (typeof raw !== "string" || raw === "") return null;
      const named = termsIn(text, [raw]);
      const evidence = [...named, ...termsIn(text, l.terms)];
      if (evidence.length === 0) return null;
      const current = Array.isArray(choice.params[knob.param]) ? (choice.params[knob.param] as unknown[]) : [];
      if (current.includes(raw)) return null;
      return { ...base, current, value: raw, says: null, chosen: raw, evidence };
    }
  }
}

/**
 * The tools that ran and fed `tool` what it consumes, when `tool` has no setting of its own: a complaint about a
 * tool that only combines others' results ("too pricey" names the budget check) is about what those others chose.
 */
function feedersOf(tool: string, ran: readonly StepChoice[], knobs: readonly Knob[], registry: ToolRegistry): string[] {
  if (knobs.some((k) => k.tool === tool)) return [];
  const spec = registry.tool(tool);
  if (!spec) return [];
  const inputs = new Set([...spec.consumes, ...(spec.optionalConsumes ?? [])]);
  return ran
    .filter((c) => c.tool !== tool && (registry.tool(c.tool)?.produces ?? []).some((p) => inputs.has(p)))
    .map((c) => c.tool);
}

/** A tool's own words: its keywords, its category and the words of its name. */
export function toolWords(tool: string, registry: ToolRegistry): string[] {
  const spec = registry.tool(tool);
  if (!spec) return [];
  return [...spec.keywords, spec.category, ...spec.name.split("_")].map((w) => w.toLowerCase());
}

/** Text values of a step's result (longer than 2 characters) that the reason repeats. */
export function mentionedValues(text: string, choice: StepChoice): string[] {
  const values = Object.entries(choice.result)
    .filter(([k, v]) => k !== "summary" && typeof v === "string" && v.length > 2 && v.length <= 60)
    .map(([, v]) => v as string);
  return termsIn(text, values);
}
