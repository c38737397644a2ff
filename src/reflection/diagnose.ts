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
  return [...new Set(terms)].filter((raw) => spansOf(words, raw, wordMatches).length > 0);
}

/** Where a term is in the text's words, as [first, end) word indexes; `at` decides whether one word is the term. */
function spansOf(words: readonly string[], raw: string, at: (w: string, term: string) => boolean): [number, number][] {
  const term = normalize(raw).trim().split(" ");
  if (term[0] === "") return [];
  const out: [number, number][] = [];
  for (let i = 0; i + term.length <= words.length; i++) {
    const hit =
      term.length === 1 ? at(words[i]!, term[0]!) : words.slice(i, i + term.length).join(" ") === term.join(" ");
    if (hit) out.push([i, i + term.length]);
  }
  return out;
}

/** Whether every place `t` is found is inside a place one of `others` is found. */
function within(normalized: string, t: string, others: readonly string[]): boolean {
  const words = normalized.trim().split(" ");
  const own = spansOf(words, t, wordMatches);
  const theirs = others.flatMap((u) => spansOf(words, u, wordMatches));
  return own.length > 0 && own.every(([a, b]) => theirs.some(([c, d]) => c <= a && b <= d));
}

/**
 * Whether `t` is found only inside longer terms of `others`: "budget" in "budget hotel", "cheap" at the start of
 * "cheaply". Such a word is the longer term's, not evidence of its own.
 */
function shadowed(normalized: string, t: string, others: readonly string[]): boolean {
  const length = (u: string) => normalize(u).trim().length;
  return within(
    normalized,
    t,
    others.filter((u) => length(u) > length(t)),
  );
}

/**
 * Which way a word points is read from its clause, in plain words of the languages Candor reads, no domain's. Said
 * of the answer shown — after a verb of being or seeming, with at most a few words of degree or an article between
 * ("it felt cheap", "the room looked really basic", "era algo barata", "wirkte billig"), or just after "too"/"so"
 * ("too cheap for us") — a word describes what was shown and the rejection complains it had it. Said as what is
 * wanted — after a verb of wanting or a word that asks ("somewhere", "just", "quiero", "brauche") or before one that
 * says it would suffice ("a basic room is all we need") — it is a wish.
 */
const BEING: ReadonlySet<string> = new Set(
  [
    "is was were are be been being felt feel feels looked look looks seemed seem seems smelled smelt smells sounded",
    "appeared es era eran fue fueron estaba estaban parecia parecian parece resulto est etait etaient semblait",
    "semble faisait fait war waren ist sind wirkte wirkt schien sah erano sembrava pareva eram estava ficou leek",
    "voelde oogde",
  ]
    .join(" ")
    .split(" "),
);
const DEGREE: ReadonlySet<string> = new Set(
  [
    "very really pretty quite rather a an bit little kind sort of so too just super way far extremely kinda somewhat",
    "muy un una poco bastante demasiado algo tan tres vraiment une peu assez trop si plutot sehr ziemlich etwas zu",
    "echt recht eher ein eine molto troppo po davvero cosi piuttosto muito meio bem um uma tao erg heel nogal te wel",
    "best een zo",
  ]
    .join(" ")
    .split(" "),
);
const WISHING: ReadonlySet<string> = new Set(
  [
    "want wanted wants need needed needs get find book pick choose prefer give just only somewhere something anything",
    "rather quiero queremos quisiera necesito necesitamos busca buscar algo solo prefiero dame veux voulons voudrais",
    "cherche besoin quelque juste seulement prends trouvez trouve prefere will wollen mochte mochten brauche brauchen",
    "suche nimm etwas nur lieber voglio vorrei cerco qualcosa quero queria preciso wil willen zoek iets alleen",
    "liever",
  ]
    .join(" ")
    .split(" "),
);
const SUFFICES: readonly string[] = [
  "is all",
  "is enough",
  "would do",
  "will do",
  "is fine",
  "suffices",
  "es suficiente",
  "alcanza",
  "basta",
  "suffit",
  "reicht",
  "genugt",
  "volstaat",
];

/** Whether the word at `i` is said of the answer shown (see BEING). */
function describedAt(words: readonly string[], i: number): boolean {
  let j = i - 1;
  // "Such a basic hotel", "so very cheap": too much of it, said of what was shown, across words of degree.
  while (j >= 0 && i - j <= 3 && DEGREE.has(words[j]!) && !EXCESS_JUST_BEFORE.has(words[j]!)) j--;
  return j >= 0 && (BEING.has(words[j]!) || EXCESS_JUST_BEFORE.has(words[j]!));
}

/** The word itself or its plural: a direction is read for the word a toolkit listed, not for a longer one it begins. */
const exactly = (w: string, term: string) => w === term || w === `${term}s`;

/** Pure. The terms of `terms` the normalized text says of the answer shown ("it felt cheap", "too basic"). */
export function describedIn(normalized: string, terms: readonly string[]): string[] {
  const words = normalized.trim().split(" ");
  return [...new Set(terms)].filter((raw) => spansOf(words, raw, exactly).some(([i]) => describedAt(words, i)));
}

/** Pure. The terms of `terms` the normalized text says as what is wanted ("something basic", "a basic room is all"). */
export function wishedIn(normalized: string, terms: readonly string[]): string[] {
  const words = normalized.trim().split(" ");
  const after = (b: number) => ` ${words.slice(b, b + 5).join(" ")} `;
  return [...new Set(terms)].filter((raw) =>
    spansOf(words, raw, exactly).some(
      ([i, b]) =>
        !describedAt(words, i) &&
        (words.slice(Math.max(0, i - 4), i).some((w) => WISHING.has(w)) ||
          SUFFICES.some((p) => [0, 1, 2].some((k) => after(b + k).startsWith(` ${p} `)))),
    ),
  );
}

/**
 * Pure. The settings a reason points at among the tools that ran (`choices`). A tool is named by a word only it has
 * among them (its keywords, its category, the `subject` words of its settings: "room", "place to sleep"), or by a
 * value of its result ("Iberia"). The reason is read clause by clause, so that what a word qualifies decides where it
 * lands: in a clause that names a tool with settings, only that tool's settings are candidates ("a more affordable
 * place to sleep" is about the hotel search, not every search the budget check adds up); a clause that names only a
 * tool with no setting of its own (the budget check) reaches the tools whose results it consumed, narrowed to those
 * the reason names elsewhere when it names any ("we only sleep in the room, so get a budget-friendly one" is about
 * the room: only a reason naming no tool at all reaches every search the check adds up); a clause that names none
 * ("get a cheaper one") takes what the whole reason names, or every tool that ran when it names none either. A knob
 * matches when its clauses have one of its words, read in the direction the clause gives them (see `describedIn`,
 * `wishedIn`); an `exclude` knob also when they name the rejected value. A match that would set what the step
 * already had is dropped: the complaint is then about something else.
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
  const steerable = (named: readonly string[]) => named.filter((t) => knobs.some((k) => k.tool === t));
  const namedTools = [...new Set(namedIn(normalize(reason)))];
  // The tools with settings the reason names anywhere: what a check spanning several tools is narrowed to.
  const ownSteerable = steerable(namedTools);
  const scopeOf = (named: readonly string[]): Set<string> | null => {
    if (named.length === 0) return null;
    const own = steerable(named);
    if (own.length > 0) return new Set(own);
    const reached = named.flatMap((t) => feedersOf(t, ran, knobs, registry));
    const narrowed = reached.filter((t) => ownSteerable.includes(t));
    return new Set([...named, ...(narrowed.length > 0 ? narrowed : reached)]);
  };
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
    // Words said the other way round (too much of them, said of the answer where they are asked for, asked for where
    // they complain) point away from what they name, so they never raise a minimum ("not a palace", "a basic room is
    // all we need": no higher rating).
    const options = own.flatMap((k) => (k.learn.kind === "choice" ? Object.values(k.learn.options) : []));
    const reversed = [
      ...excessIn(
        text,
        options.flatMap((o) => o.excess?.terms ?? []),
      ),
      ...describedIn(
        text,
        options.flatMap((o) => o.described?.terms ?? []),
      ),
      ...wishedIn(
        text,
        options.flatMap((o) => o.wished?.terms ?? []),
      ),
    ];
    for (const knob of own) {
      const m = matchKnob(text, knob, choice, reversed);
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

function matchKnob(text: string, knob: Knob, choice: StepChoice, reversed: readonly string[]): KnobMatch | null {
  const l = knob.learn;
  const base = { knob, stepId: choice.stepId, explicit: false };
  switch (l.kind) {
    case "choice": {
      const current = choice.params[knob.param] ?? l.default;
      // Too much of an option's word asks for the option it names instead ("why so fancy?": cheapest first).
      const evidence = new Map<string, string[]>(
        Object.entries(l.options).map(([v, o]) => [v, termsIn(text, o.terms)]),
      );
      // A word said the other way round asks for the option its turn names ("it felt cheap": quality), or nothing.
      for (const [v, o] of Object.entries(l.options))
        for (const [turn, found] of [
          [o.excess, excessIn],
          [o.described, describedIn],
          [o.wished, wishedIn],
        ] as const) {
          if (!turn) continue;
          const turned = found(text, turn.terms);
          if (turned.length === 0) continue;
          evidence.set(
            v,
            evidence.get(v)!.filter((t) => !within(text, t, turned)),
          );
          if (turn.asks !== undefined)
            evidence.set(turn.asks, [...new Set([...(evidence.get(turn.asks) ?? []), ...turned])]);
        }
      // A word found only inside a longer word or phrase another option has ("budget" in "budget hotel", "cheap" in
      // "cheaply") is that option's. An option's own inflections ("review", "reviews") each count, as they did.
      const others = (value: string) => [...evidence].flatMap(([v, ts]) => (v === value ? [] : ts));
      const ranked = Object.entries(l.options)
        .map(([value, o]) => ({
          value,
          says: o.says,
          evidence: evidence.get(value)!.filter((t) => !shadowed(text, t, others(value))),
        }))
        .filter((o) => o.evidence.length > 0 && o.value !== current)
        .sort((a, b) => b.evidence.length - a.evidence.length);
      const best = ranked[0];
      if (!best) return null;
      return { ...base, current, value: best.value, says: best.says, chosen: null, evidence: best.evidence };
    }
    case "minimum": {
      const evidence = [
        ...termsIn(text, l.terms).filter((t) => !within(text, t, reversed)),
        ...describedIn(text, l.described ?? []),
      ];
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
