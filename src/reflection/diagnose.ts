import type { StepChoice } from "../domain/reflection.js";
import type { ToolRegistry } from "../tools/registry.js";
import { knobKey, subjectWords, type Knob } from "./knobs.js";

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
  /**
   * The reason is about one value the run showed (an `exclude` knob: the rejected answer's airline, named or pointed
   * at as "that airline"): explicit evidence about that value, which may be offered at the first rejection.
   */
  explicit: boolean;
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
 * Pure. The settings a reason points at among the tools that ran (`choices`). A tool is named by a word only it has
 * among them (its keywords, its category, the `subject` words of its settings: "room", "place to sleep"), or by a
 * value of its result ("Iberia"). The reason is read clause by clause, so that what a word qualifies decides where it
 * lands: in a clause that names a tool with settings, only that tool's settings are candidates ("a more affordable
 * place to sleep" is about the hotel search, not every search the budget check adds up); a clause that names only a
 * tool with no setting of its own (the budget check) reaches the tools whose results it consumed; a clause that
 * names none takes what the whole reason names, or every tool that ran when it names none either. A knob matches
 * when its clauses have one of its words (an `exclude` knob also when they name the rejected value). A match that
 * would set what the step already had is dropped: the complaint is then about something else.
 */
export function diagnose(
  reason: string,
  choices: readonly StepChoice[],
  knobs: readonly Knob[],
  registry: ToolRegistry,
): Diagnosis {
  const ran = choices.filter((c) => knobs.some((k) => k.tool === c.tool) || registry.tool(c.tool) !== undefined);
  const words = new Map(ran.map((c) => [c.tool, subjectOf(c.tool, knobs, registry)]));
  const counts = new Map<string, number>();
  for (const ws of words.values()) for (const w of new Set(ws)) counts.set(w, (counts.get(w) ?? 0) + 1);
  const namedIn = (text: string) =>
    ran
      .filter((c) => {
        const own = (words.get(c.tool) ?? []).filter((w) => counts.get(w) === 1);
        return termsIn(text, own).length > 0 || mentionedValues(text, c).length > 0;
      })
      .map((c) => c.tool);
  const scopeOf = (named: readonly string[]): Set<string> | null => {
    if (named.length === 0) return null;
    const steerable = named.filter((t) => knobs.some((k) => k.tool === t));
    if (steerable.length > 0) return new Set(steerable);
    return new Set(named.flatMap((t) => [t, ...feedersOf(t, ran, knobs, registry)]));
  };
  const namedTools = [...new Set(namedIn(normalize(reason)))];
  const whole = scopeOf(namedTools);
  // The text each tool's settings are read in: the clauses about it (or about nothing in particular).
  const textOf = new Map<string, string[]>();
  for (const clause of clausesOf(reason)) {
    const text = normalize(clause);
    const scope = scopeOf(namedIn(text)) ?? whole;
    for (const c of ran) if (!scope || scope.has(c.tool)) textOf.set(c.tool, [...(textOf.get(c.tool) ?? []), text]);
  }
  const matches: KnobMatch[] = [];
  for (const choice of ran) {
    const clauses = textOf.get(choice.tool);
    if (!clauses) continue;
    const text = ` ${clauses.map((t) => t.trim()).join(" ")} `;
    const own = knobs.filter((k) => k.tool === choice.tool);
    // Words said as too much of them ask for less, so they never raise a minimum ("not a palace": no higher rating).
    const excess = excessIn(
      text,
      own
        .flatMap((k) => (k.learn.kind === "choice" ? Object.values(k.learn.options) : []))
        .flatMap((o) => o.excess?.terms ?? []),
    );
    for (const knob of own) {
      const m = matchKnob(text, knob, choice, excess);
      if (m) matches.push(m);
    }
  }
  return { namedTools, matches };
}

/** A reason's clauses: split at sentence and clause punctuation and at "but", so each qualifies its own subject. */
function clausesOf(reason: string): string[] {
  return reason
    .split(/[.;:!?,()]+|\s+(?:but|pero|mais|aber|ma|mas|maar)\s+/i)
    .map((c) => c.trim())
    .filter((c) => c !== "");
}

/** A tool's own words and the subject words of its settings: what a complaint about its results says. */
export function subjectOf(tool: string, knobs: readonly Knob[], registry: ToolRegistry): string[] {
  return [...toolWords(tool, registry), ...knobs.filter((k) => k.tool === tool).flatMap(subjectWords)];
}

/**
 * Words just before a term that say the answer had too much of it ("too", "so", "overly"; in the other languages
 * Candor reads, "demasiado", "trop", "zu", "troppo"), and phrases a few words before it that say it was not needed
 * ("not a …", "I don't need four …", "no need for …"). Plain language, no domain's words.
 */
const EXCESS_JUST_BEFORE: ReadonlySet<string> = new Set([
  "too",
  "so",
  "overly",
  "excessively",
  "such",
  "demasiado",
  "demasiada",
  "trop",
  "zu",
  "troppo",
]);
const NOT_NEEDED_BEFORE: readonly string[] = [
  "not a",
  "not an",
  "no need for",
  "don t need",
  "dont need",
  "do not need",
  "didn t need",
  "did not need",
  "doesn t need",
  "no necesito",
  "pas besoin d",
  "pas besoin de",
  "brauche kein",
  "brauche keine",
];

/** Pure. The terms of `terms` the normalized text says there was too much of (see EXCESS_JUST_BEFORE). */
export function excessIn(normalized: string, terms: readonly string[]): string[] {
  const words = normalized.trim().split(" ");
  const found = new Set<string>();
  for (const raw of terms) {
    const term = normalize(raw).trim().split(" ");
    if (term[0] === "") continue;
    for (let i = 0; i + term.length <= words.length; i++) {
      const at =
        term.length === 1
          ? wordMatches(words[i]!, term[0]!)
          : words.slice(i, i + term.length).join(" ") === term.join(" ");
      if (!at) continue;
      const before = (n: number) => words.slice(Math.max(0, i - n), i).join(" ");
      const notNeeded = NOT_NEEDED_BEFORE.some((p) =>
        [0, 1, 2].some((gap) => ` ${before(p.split(" ").length + gap)}`.startsWith(` ${p}`)),
      );
      if ((i > 0 && EXCESS_JUST_BEFORE.has(words[i - 1]!)) || notNeeded) found.add(raw);
    }
  }
  return [...found];
}

function wordMatches(w: string, term: string): boolean {
  return w === term || w === `${term}s` || (term.length >= 5 && w.startsWith(term));
}

function matchKnob(text: string, knob: Knob, choice: StepChoice, excess: readonly string[]): KnobMatch | null {
  const l = knob.learn;
  const base = { knob, stepId: choice.stepId, explicit: false };
  switch (l.kind) {
    case "choice": {
      const current = choice.params[knob.param] ?? l.default;
      // Too much of an option's word asks for the option it names instead ("why so fancy?": cheapest first).
      const evidence = new Map<string, string[]>(
        Object.entries(l.options).map(([v, o]) => [v, termsIn(text, o.terms)]),
      );
      for (const [v, o] of Object.entries(l.options)) {
        if (!o.excess) continue;
        const excess = excessIn(text, o.excess.terms);
        if (excess.length === 0) continue;
        evidence.set(
          v,
          evidence.get(v)!.filter((t) => !excess.includes(t)),
        );
        evidence.set(o.excess.asks, [...(evidence.get(o.excess.asks) ?? []), ...excess]);
      }
      const all = [...evidence.values()].flat();
      // A word inside a longer phrase another option has ("budget" in "budget hotel") is that phrase's.
      const inLonger = (t: string) =>
        all.some((u) => u !== t && ` ${normalize(u).trim()} `.includes(` ${normalize(t).trim()} `));
      const ranked = Object.entries(l.options)
        .map(([value, o]) => ({ value, says: o.says, evidence: evidence.get(value)!.filter((t) => !inLonger(t)) }))
        .filter((o) => o.evidence.length > 0 && o.value !== current)
        .sort((a, b) => b.evidence.length - a.evidence.length);
      const best = ranked[0];
      if (!best) return null;
      return { ...base, current, value: best.value, says: best.says, chosen: null, evidence: best.evidence };
    }
    case "minimum": {
      const evidence = termsIn(text, l.terms).filter((t) => !excess.includes(t));
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
      return { ...base, current, value: raw, says: null, chosen: raw, evidence, explicit: true };
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
function toolWords(tool: string, registry: ToolRegistry): string[] {
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
