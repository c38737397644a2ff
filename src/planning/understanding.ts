import type { TaskStep } from "../domain/plan.js";
import { Understanding, type MeaningKind, type RequestPart, type Unaccounted } from "../domain/understanding.js";
import type { Interpretation, ToolSpec } from "../tools/types.js";
import {
  analyzeRequest,
  contentWords,
  escapeRegExp,
  foldCase,
  overlaps,
  within,
  type Analysis,
  type Span,
  type TaskVerb,
} from "./lexicon.js";

/**
 * Building and checking the understanding record: which words of the request served which steps, and which words
 * carried meaning (a negation, a place, an amount, a number, a date, a task verb) yet served nothing. Generic: the
 * words come from the lexicon, the tools' keywords and the toolkits' interpretations, never from a domain here.
 */

/** One place a tool's keyword appears in the request. */
export interface KeywordHit extends Span {
  tool: string;
  keyword: string;
  /** Inside the scope of a negation ("no hotel"). */
  negated: boolean;
  /** Inside the scope of "only" ("flight only"). */
  only: boolean;
}

/** A stem match: "flight" matches "flights", "hotel" matches "hotels" (at most two more letters). */
function keywordPattern(keyword: string): RegExp {
  const k = escapeRegExp(keyword.toLowerCase());
  const tail = keyword.includes(" ") || /[^a-z]$/.test(keyword) ? "" : "[a-z]{0,2}";
  return new RegExp(`(?<![a-z0-9])${k}${tail}(?![a-z0-9])`, "g");
}

/** Every place each tool's keywords appear, marked when inside a negation or an "only". */
export function keywordHits(tools: readonly Pick<ToolSpec, "name" | "keywords">[], analysis: Analysis): KeywordHit[] {
  const hits: KeywordHit[] = [];
  const negated = analysis.negations.map((n) => n.scope);
  const only = analysis.onlys.map((o) => o.scope);
  for (const tool of tools) {
    for (const keyword of tool.keywords) {
      for (const m of analysis.norm.matchAll(keywordPattern(keyword))) {
        const s = { start: m.index, end: m.index + m[0].length };
        // "no specific accommodation restrictions" asks for no accommodation: a waiver's words name no tool.
        if (within(s, analysis.waivers)) continue;
        hits.push({
          ...s,
          text: analysis.text.slice(s.start, s.end),
          tool: tool.name,
          keyword,
          negated: within(s, negated),
          only: within(s, only),
        });
      }
    }
  }
  // A word that is one tool's keyword as written names that tool, not one whose keyword only stems to it: "files"
  // is list_files' word, not read_file's "file".
  const exact = (h: KeywordHit) => h.text.toLowerCase() === h.keyword.toLowerCase();
  const kept = hits.filter(
    (h) => exact(h) || !hits.some((o) => o !== h && o.start === h.start && o.end === h.end && exact(o)),
  );
  return kept.sort((a, b) => a.start - b.start);
}

/**
 * Keyword hits less those a toolkit read otherwise: inside a phrase it read as asking for certain tools ("count the
 * files" asks for the listing, not the word counter; "places to visit" for activities, not flights), a keyword of
 * any other tool; inside a value one toolkit read (the folder "examples/travel"), a keyword of another toolkit's tool.
 */
export function withoutReadSpans(
  hits: readonly KeywordHit[],
  readings: readonly { tools: readonly string[]; reading: Interpretation }[],
): KeywordHit[] {
  const asks = readings.flatMap((r) => r.reading.asks ?? []);
  const values = readings.flatMap((r) => r.reading.values.map((v) => ({ span: v.source, toolkit: r.tools })));
  return hits.filter(
    (h) =>
      !asks.some((a) => within(h, [a.span]) && !a.tools.includes(h.tool)) &&
      !values.some((v) => within(h, [v.span]) && !v.toolkit.includes(h.tool)),
  );
}

/**
 * A toolkit's asks (see Interpretation.asks) as keyword hits of the tools they name: specific to those tools (their
 * text is no shared keyword), marked like any hit when inside a negation or an "only".
 */
export function askHits(
  analysis: Analysis,
  asks: readonly { span: Span; tools: readonly string[] }[],
  usable: ReadonlySet<string>,
): KeywordHit[] {
  const negated = analysis.negations.map((n) => n.scope);
  const only = analysis.onlys.map((o) => o.scope);
  return asks.flatMap((ask) =>
    ask.tools
      .filter((t) => usable.has(t))
      .map((tool) => ({
        ...ask.span,
        tool,
        keyword: ask.span.text.toLowerCase(),
        negated: within(ask.span, negated),
        only: within(ask.span, only),
      })),
  );
}

/**
 * Keywords shared by many tools ("trip", "plan") say that the request is about a domain, not which tool it wants:
 * they never exclude a tool when negated, and never pick one out after "only".
 */
export function genericKeywords(tools: readonly Pick<ToolSpec, "keywords">[], atLeast = 3): Set<string> {
  const count = new Map<string, number>();
  for (const t of tools)
    for (const k of new Set(t.keywords.map((x) => x.toLowerCase()))) count.set(k, (count.get(k) ?? 0) + 1);
  return new Set([...count].filter(([, n]) => n >= atLeast).map(([k]) => k));
}

/** Romance connectors between a head noun and the word that qualifies it ("seguro de viaje", "assurance du voyage"). */
const QUALIFIER_LINK = /^\s+(?:de|del|de la|du|des|d')\s*$/;

/** A clause whose tool words are incidental, with what it asks in their place ("travel insurance"). */
export interface IncidentalClause {
  clause: Span;
  /** The clause's words nothing reads, first to last: what it asks for. */
  asks: Span;
}

/**
 * Clauses whose tool words say the domain, not a task ("get travel insurance": "travel" is no request for a flight):
 * every keyword in the clause is one several tools share, the clause has words nothing reads, and either no
 * toolkit read a value in it, or a shared keyword qualifies an unread word — right before it ("travel insurance") or
 * after it through "de"/"du" ("seguro de viaje", "assurance du voyage"). Such a clause asks for what its unread
 * words say; its keywords must not add steps.
 */
export function incidentalClauses(
  a: Analysis,
  hits: readonly KeywordHit[],
  readings: readonly Interpretation[],
  shared: ReadonlySet<string>,
): IncidentalClause[] {
  const read: Span[] = [
    ...hits,
    ...meaningfulMentions(a),
    ...a.waivers,
    ...readings.flatMap((r) => [
      ...r.values.map((v) => v.source),
      ...r.consumed,
      ...r.exclusions.map((e) => e.span),
      ...r.notUnderstood.map((n) => n.span),
      ...(r.asks ?? []).map((x) => x.span),
    ]),
  ];
  const unread = contentWords(a).filter((w) => !overlaps(w, read));
  const values = readings.flatMap((r) => r.values.map((v) => v.source));
  const out: IncidentalClause[] = [];
  for (const clause of a.clauses) {
    const inside = (s: Span) => s.start >= clause.start && s.end <= clause.end;
    const words = unread.filter(inside);
    const clauseHits = hits.filter((h) => inside(h) && !h.negated);
    if (words.length === 0 || clauseHits.length === 0) continue;
    if (!clauseHits.every((h) => shared.has(h.keyword.toLowerCase()))) continue;
    const qualifying = clauseHits.filter((h) =>
      words.some(
        (w) =>
          (w.start >= h.end && /^[\s-]*$/.test(a.text.slice(h.end, w.start))) ||
          (w.end <= h.start && QUALIFIER_LINK.test(a.norm.slice(w.end, h.start))),
      ),
    );
    if (qualifying.length === 0 && values.some((v) => overlaps(v, [clause]))) continue;
    const parts = [...words, ...qualifying];
    const start = Math.min(...parts.map((x) => x.start));
    const end = Math.max(...parts.map((x) => x.end));
    out.push({ clause, asks: { start, end, text: a.text.slice(start, end) } });
  }
  return out;
}

/** Something the request rules out: the negation's words and the outputs no step may produce. */
export interface Exclusion {
  span: Span;
  outputs: string[];
  why: string;
  /** What is ruled out, in a few words ("no hotel", "not Paris"); default: the outputs. */
  description?: string;
}

/** The exclusions of the request's negations: each negation whose scope names a tool by a specific keyword. */
export function negationExclusions(
  a: Analysis,
  hits: readonly KeywordHit[],
  generic: ReadonlySet<string>,
  producesOf: (tool: string) => readonly string[],
): Exclusion[] {
  const out: Exclusion[] = [];
  for (const negation of a.negations) {
    const named = hits.filter(
      (h) =>
        h.negated &&
        !generic.has(h.keyword.toLowerCase()) &&
        h.start >= negation.scope.start &&
        h.end <= negation.scope.end,
    );
    const outputs = unique(named.flatMap((h) => producesOf(h.tool)));
    if (outputs.length === 0) continue;
    // A postfix cue ("hotel not needed") comes after its scope.
    const start = Math.min(negation.cue.start, negation.scope.start);
    const end = Math.max(negation.cue.end, negation.scope.end);
    const span = { start, end, text: a.text.slice(start, end) };
    out.push({
      span,
      outputs,
      why: `the request rules it out ("${span.text}"), so no step produces the ${outputs.join(" or the ")}`,
    });
  }
  return out;
}

/** What the rules planner hands over to build the record. */
export interface AccountInput {
  analysis: Analysis;
  steps: readonly Pick<TaskStep, "id" | "tools" | "params" | "description">[];
  tools: ReadonlyMap<string, Pick<ToolSpec, "name" | "constraintCheck">>;
  /** Keyword hits outside negations. */
  hits: readonly KeywordHit[];
  exclusions: readonly Exclusion[];
  /** Interpretations of the toolkits whose tools are in the plan. */
  interpretations: readonly Interpretation[];
  /** Tools the request named but the plan cannot use, with why (they need something the request rules out). */
  dropped: ReadonlyMap<string, string>;
  /** "only" cues whose scope picked tools: read, so accounted for. */
  onlyCues: readonly Span[];
  /** Tool names of the registry, to say what can be done when a part cannot. */
  abilities: string;
  /** Keywords shared by many tools (see genericKeywords): alone, they do not say a clause is served. */
  generic?: ReadonlySet<string>;
  /** The plan's model-driven steps by id (see ModelDrivenStep); absent: every step is a direct call. */
  modelDriven?: ReadonlyMap<string, ModelDrivenStep>;
}

/**
 * A step the plan leaves to its worker's model loop (src/execution/agent-step.ts). Its parameters are not in the plan,
 * so they cannot account for the request: its own description does — the model loop is given it as its task.
 */
export interface ModelDrivenStep {
  /** The tools its loop may call: the step's own (granted) tools, or its worker's whole grant when it names none. */
  tools: readonly string[];
  /** Spans of the request its description restates (see restatedSpans). */
  restated: readonly Span[];
}

/** Kinds of mention a model-driven step's description can account for; a task verb or a negation it cannot. */
const RESTATABLE: ReadonlySet<MeaningKind> = new Set(["number", "place", "amount", "date"]);

/** The same word, give or take a plural ending ("file" and "files", "hotel" and "hoteles"). */
function sameWord(x: string, y: string): boolean {
  const [short, long] = x.length <= y.length ? [x, y] : [y, x];
  return long === short || long === `${short}s` || long === `${short}es`;
}

/**
 * The spans of the request that `said` (a model-driven step's description and outputs) restates: a number of the
 * same value however written ("three" and "3"), a range or an amount of the same values and currency, a date or a
 * name written alike (case and accents ignored), and each content word it repeats ("largest", "src"). A model loop
 * works from this text, so what it restates of the request reaches the step. `toolWords` as for analyzeRequest.
 */
export function restatedSpans(a: Analysis, said: string, toolWords: Iterable<string> = []): Span[] {
  const s = analyzeRequest(said, toolWords);
  const out: Span[] = [];
  for (const n of a.numbers) if (s.numbers.some((x) => x.value === n.value)) out.push(n);
  for (const r of a.ranges) if (s.ranges.some((x) => x.min === r.min && x.max === r.max)) out.push(r);
  for (const m of a.amounts) if (s.amounts.some((x) => x.value === m.value && x.currency === m.currency)) out.push(m);
  for (const m of [...a.dates, ...a.names]) {
    const phrase = new RegExp(`(?<![a-z0-9])${escapeRegExp(foldCase(m.text))}(?![a-z0-9])`);
    if (phrase.test(s.norm)) out.push(m);
  }
  const words = contentWords(s).map((w) => s.norm.slice(w.start, w.end));
  for (const w of contentWords(a)) {
    const word = a.norm.slice(w.start, w.end);
    if (words.some((x) => sameWord(x, word))) out.push(w);
  }
  return dedupe(
    out.sort((x, y) => x.start - y.start || x.end - y.end),
    (x) => `${x.start}:${x.end}`,
  );
}

/** The steps that use each tool: a direct call its first tool, a model-driven step every tool its loop may call. */
function stepsByTool(steps: AccountInput["steps"], modelDriven: AccountInput["modelDriven"]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const s of steps) {
    const tools = modelDriven?.get(s.id)?.tools ?? s.tools.slice(0, 1);
    for (const tool of tools) out.set(tool, [...(out.get(tool) ?? []), s.id]);
  }
  return out;
}

/** A mention that carries meaning, to be accounted for. */
interface Mention extends Span {
  kind: MeaningKind;
}

/** The meaningful mentions of the request: names, amounts, numbers, dates, task verbs, negation cues. */
function meaningfulMentions(a: Analysis): Mention[] {
  const out: Mention[] = [];
  const add = (m: Span, kind: MeaningKind) => {
    if (!overlaps(m, out)) out.push({ ...m, kind });
  };
  for (const x of a.amounts) add(x, "amount");
  for (const x of a.dates) add(x, "date");
  for (const x of a.ranges) add(x, "number");
  // A spelled "one" is mostly an article or a figure of speech; digits and other numbers always count.
  for (const x of a.numbers) if (!(x.word && Math.abs(x.value) === 1)) add(x, "number");
  for (const x of a.taskVerbs) add(x, "task");
  for (const x of a.negations) add(x.cue, "negation");
  for (const x of a.names) add(x, "place");
  return out.sort((x, y) => x.start - y.start);
}

/** The mentions, plus each span a toolkit could not read that no mention already covers, of its own kind. */
function withUnread(mentions: Mention[], notUnderstood: Interpretation["notUnderstood"]): Mention[] {
  const extra = notUnderstood.filter((n) => !overlaps(n.span, mentions)).map((n) => ({ ...n.span, kind: n.kind }));
  return [...mentions, ...extra].sort((x, y) => x.start - y.start);
}

/**
 * Spans of step parameter values that appear word for word in the request (for toolkits without a reader). A value
 * that is the whole request (a report titled with it) echoes it: it reads none of its words.
 */
function parameterSpans(a: Analysis, steps: AccountInput["steps"]): Span[] {
  const out: Span[] = [];
  const whole = a.text.trim().toLowerCase();
  for (const step of steps) {
    for (const value of Object.values(step.params)) {
      if (typeof value !== "string" && typeof value !== "number") continue;
      const needle = String(value).toLowerCase();
      // Longer than the request, it cannot be in it (and a model can send a megabyte-long value: no regex of that).
      if (needle.length === 0 || needle.length > a.text.length || needle.trim() === whole) continue;
      const re = new RegExp(`(?<![a-z0-9])${escapeRegExp(needle)}(?![a-z0-9])`, "g");
      for (const m of a.text.toLowerCase().matchAll(re))
        out.push({ start: m.index, end: m.index + m[0].length, text: m[0] });
    }
  }
  return out;
}

const unique = (xs: readonly string[]) => [...new Set(xs)];

/**
 * Verbs that ask for whatever the clause's tools give ("find flights", "plan 3 days"): served by any step of the
 * clause. Every other verb ("translate", "email", "compare") must be a keyword of a tool in the plan.
 */
const GENERIC_VERBS = new Set(["find", "plan", "check"]);

/**
 * Clauses led by a verb no tool does ("call the hotel", "email the itinerary"): their keywords name the verb's
 * object, not a tool's job, so they select no tool and the clause is named as something no tool can do.
 */
export function unsupportedVerbClauses(
  a: Analysis,
  hits: readonly KeywordHit[],
  describe: (tool: string) => string,
): Span[] {
  return a.clauses.filter((c) => {
    const verbs = a.taskVerbs.filter((v) => v.start >= c.start && v.end <= c.end && !GENERIC_VERBS.has(v.verb));
    const inClause = hits.filter((h) => h.start >= c.start && h.end <= c.end);
    // A verb is done by a tool named in the clause whose keyword it is, or whose name or description says it
    // ("write a report": write_report writes); "call the hotel": no hotel tool calls.
    const done = (v: TaskVerb) =>
      inClause.some(
        (h) => overlaps(h, [v]) || new RegExp(`(?<![a-z])${escapeRegExp(v.verb)}`, "i").test(describe(h.tool)),
      );
    return verbs.length > 0 && !verbs.every(done);
  });
}

/**
 * The understanding record of a rules plan: parts (one per clause, adjacent clauses served by the same steps
 * merged), values, assumptions, changes and refusals from the toolkits' interpretations (kept only for tools in
 * the plan), and every meaningful mention no keyword, interpretation, exclusion or parameter accounts for.
 */
export function accountFor(input: AccountInput): Understanding {
  const { analysis: a, interpretations } = input;
  const byTool = stepsByTool(input.steps, input.modelDriven);
  const stepIdsOf = (tools: readonly string[]) => unique(tools.flatMap((t) => byTool.get(t) ?? []));
  const planned = (tools: readonly string[]) => tools.some((t) => byTool.has(t));

  const values = interpretations.flatMap((i) => i.values).filter((v) => planned(v.tools));
  // A limit check given no limit (a budget check without a budget: "children under 10" says "under") checks nothing,
  // so its keywords serve no clause: served means carried.
  const idle = new Set(
    input.steps
      .filter(
        (s) =>
          input.tools.get(s.tools[0] ?? "")?.constraintCheck === true &&
          Object.values(s.params).every((v) => v === null || v === undefined),
      )
      .flatMap((s) => s.tools.slice(0, 1)),
  );
  const accounted: Span[] = [
    ...input.hits.filter((h) => byTool.has(h.tool) && !idle.has(h.tool)),
    ...values.map((v) => v.source),
    ...interpretations.flatMap((i) => i.consumed),
    ...input.exclusions.map((e) => e.span),
    ...input.onlyCues,
    // "no specific restrictions", "we don't mind the cuisine": read, and they ask for nothing.
    ...a.waivers,
    ...parameterSpans(a, input.steps),
  ];
  const notUnderstood = interpretations.flatMap((i) => i.notUnderstood);
  // What a toolkit could not read carries meaning by definition, even written in lower case ("el dorado").
  const mentions = withUnread(meaningfulMentions(a), notUnderstood);
  // Accounted only when covered whole: "week" read as a keyword does not account for "next week".
  const open = (m: Span) =>
    !covered(m, accounted) ||
    overlaps(
      m,
      notUnderstood.map((n) => n.span),
    );

  // The words left once every read span and mention is set aside: what a clause asks that nothing read.
  const readSpans = [
    ...accounted,
    ...mentions,
    ...input.exclusions.map((e) => e.span),
    ...input.hits.filter((h) => input.dropped.has(h.tool)),
  ];
  const words = contentWords(a).filter((w) => !overlaps(w, readSpans));
  const generic = input.generic ?? new Set<string>();

  const parts: (Omit<RequestPart, "id"> & { at: number })[] = [];
  const unaccounted: Unaccounted[] = [];
  for (const clause of a.clauses) {
    const inside = (s: Span) => s.start >= clause.start && s.end <= clause.end;
    const clauseHits = input.hits.filter((h) => inside(h) && byTool.has(h.tool) && !idle.has(h.tool));
    const clauseValues = values.filter((v) => overlaps(v.source, [clause]));
    const unread = words.filter(inside);
    // A clause whose only tool words are ones many tools share ("get travel insurance": "travel") and that asks for
    // something nothing read is not served by them: the shared word says the domain, the rest says the task.
    const onlyGeneric =
      clauseValues.length === 0 &&
      clauseHits.length > 0 &&
      clauseHits.every((h) => generic.has(h.keyword.toLowerCase())) &&
      unread.length > 0;
    // A value's words may start before the clause ("then Rome": the clause is "Rome").
    const servingTools = onlyGeneric
      ? []
      : unique([...clauseHits.map((h) => h.tool), ...clauseValues.flatMap((v) => v.tools)]).filter((t) =>
          byTool.has(t),
        );
    const exclusions = input.exclusions.filter((e) => overlaps(e.span, [clause]));
    const served = servingTools.length > 0;
    // What the clause's own model-driven steps restate in their descriptions (never a task verb or a negation: a
    // step cannot do a verb or rule something out by saying so), unless a toolkit found it unreadable.
    const restated = stepIdsOf(servingTools)
      .flatMap((id) => input.modelDriven?.get(id)?.restated ?? [])
      .filter(
        (r) =>
          !overlaps(
            r,
            notUnderstood.map((n) => n.span),
          ),
      );
    const verbOf = (m: Span) => a.taskVerbs.find((t) => t.start === m.start)?.verb ?? "";
    const left = mentions.filter(
      (m) =>
        inside(m) &&
        open(m) &&
        !(RESTATABLE.has(m.kind) && covered(m, restated)) &&
        !exclusions.some((e) => overlaps(m, [e.span])) &&
        !(served && m.kind === "task" && GENERIC_VERBS.has(verbOf(m))),
    );
    const droppedHere = unique(input.hits.filter((h) => inside(h) && input.dropped.has(h.tool)).map((h) => h.tool));
    for (const e of exclusions)
      parts.push({
        at: e.span.start,
        text: e.span.text,
        description: e.description ?? `no ${e.outputs.join(", ")}`,
        kind: "exclusion",
        status: "excluded",
        stepIds: [],
        why: e.why,
      });
    if (servingTools.length > 0) {
      const stepIds = stepIdsOf(servingTools);
      const constraint = servingTools.every((t) => input.tools.get(t)?.constraintCheck === true);
      // What a toolkit says no parameter of its tools carries ("pet-friendly", "suitable for children") is a part of
      // its own, unsupported with the toolkit's why: the steps serve the rest of the clause, never these words.
      const uncarried = notUnderstood
        .filter((n) => n.kind === "other" && inside(n.span))
        .map((n) => ({ ...n.span, why: n.why }));
      const cut = [...exclusions.map((e) => e.span), ...uncarried];
      const text = cut.length > 0 ? remainder(clause, cut) : clause.text;
      parts.push({
        at: clause.start,
        text,
        description: describeSteps(input.steps, stepIds),
        kind: constraint ? "constraint" : "task",
        status: "served",
        stepIds,
        why: null,
      });
      for (const m of uncarried)
        parts.push({
          at: m.start,
          text: m.text,
          description: m.text,
          kind: "constraint",
          status: "unsupported",
          stepIds: [],
          why: m.why,
        });
      for (const m of left.filter((x) => !overlaps(x, uncarried)))
        unaccounted.push({ text: m.text, kind: m.kind, why: whyUnaccounted(m, notUnderstood) });
      // Words of a served clause that no step reads ("a hotel with a pool", "what README.md says about benchmarks"):
      // the steps do the clause's task, not what those words add. Named once per clause, unless a mention of the
      // clause is already asked about.
      const unsaid = unread.filter((w) => !overlaps(w, restated));
      if (unsaid.length > 0 && droppedHere.length === 0 && left.length === 0) {
        const phrase = spanOf(a, unsaid[0]!.start, unsaid.at(-1)!.end);
        unaccounted.push({
          text: phrase.text,
          kind: "other",
          why: `in "${clause.text}", no step does or uses ${unsaid.map((w) => `"${w.text}"`).join(", ")}`,
        });
      }
      for (const t of droppedHere)
        parts.push({
          at: clause.start,
          text: clause.text,
          description: t,
          kind: "task",
          status: "unsupported",
          stepIds: [],
          why: input.dropped.get(t) ?? null,
        });
      continue;
    }
    if (droppedHere.length > 0) {
      parts.push({
        at: clause.start,
        text: clause.text,
        description: droppedHere.join(", "),
        kind: "task",
        status: "unsupported",
        stepIds: [],
        why: droppedHere.map((t) => input.dropped.get(t)).join("; "),
      });
      continue;
    }
    if (
      exclusions.length > 0 &&
      left.length === 0 &&
      unread.every((w) => exclusions.some((e) => overlaps(w, [e.span])))
    )
      continue;
    const verbs = left.filter((m) => m.kind === "task");
    if (verbs.length > 0) {
      const asked = unique(
        verbs.map((v) => a.taskVerbs.find((t) => t.start === v.start)?.verb ?? v.text.toLowerCase()),
      );
      parts.push({
        at: clause.start,
        text: clause.text,
        description: asked.join(", "),
        kind: "task",
        status: "unsupported",
        stepIds: [],
        why: `no tool can ${asked.join(" or ")} (the tools can: ${input.abilities})`,
      });
      continue;
    }
    if (left.length > 0) {
      const own = left
        .map((m) => notUnderstood.find((n) => overlaps(m, [n.span]))?.why)
        .filter((w): w is string => w !== undefined);
      parts.push({
        at: clause.start,
        text: clause.text,
        description: left.map((m) => `${m.kind} "${m.text}"`).join(", "),
        kind: "task",
        status: "not_understood",
        stepIds: [],
        why:
          own.length > 0
            ? unique(own).join("; ")
            : `${left.map((m) => `"${m.text}" (${m.kind})`).join(", ")} served no step of the plan`,
      });
      continue;
    }
    // A clause no step serves, whose verb is no task verb the lexicon knows ("order a taxi", "apply for my visa"):
    // what it asks is its words, and no tool does them.
    if (unread.length > 0) {
      const asked = spanOf(a, unread[0]!.start, unread.at(-1)!.end).text;
      const unchecked = unique(input.hits.filter((h) => inside(h) && idle.has(h.tool)).map((h) => h.tool));
      parts.push({
        at: clause.start,
        text: clause.text,
        description: asked,
        kind: "task",
        status: "unsupported",
        stepIds: [],
        why:
          unchecked.length > 0
            ? `${unchecked.join(", ")} would check it, but the request gives it no limit to check, so no step carries "${asked}"`
            : `no tool does "${asked}" (the tools can: ${input.abilities})`,
      });
    }
  }
  // What a toolkit could not read outside any clause (should not happen) still surfaces.
  for (const n of notUnderstood) {
    if (!parts.some((p) => p.text.includes(n.span.text)) && !unaccounted.some((u) => u.text === n.span.text))
      unaccounted.push({ text: n.span.text, kind: n.kind, why: n.why });
  }

  return Understanding.parse({
    parts: mergeParts(parts.sort((x, y) => x.at - y.at).map(({ at: _, ...p }) => p)).map((p, i) => ({
      ...p,
      id: `p${i + 1}`,
    })),
    values: dedupe(
      values.map((v) => ({ name: v.name, value: v.value, source: v.source.text, stepIds: stepIdsOf(v.tools) })),
      (v) => `${v.name}=${JSON.stringify(v.value)}`,
    ),
    assumptions: dedupe(
      [
        ...readingNotes(a),
        ...interpretations
          .flatMap((i) => i.assumptions)
          .filter((x) => planned(x.tools))
          .map((x) => ({ name: x.name, value: x.value, why: x.why, stepIds: stepIdsOf(x.tools) })),
      ],
      (x) => x.name,
    ),
    changes: dedupe(
      interpretations
        .flatMap((i) => i.changes)
        .filter((x) => planned(x.tools))
        .map((x) => ({
          name: x.name,
          from: x.from,
          to: x.to,
          source: x.source,
          why: x.why,
          by: "planner" as const,
          stepIds: stepIdsOf(x.tools),
        })),
      (x) => x.name,
    ),
    refused: dedupe(
      interpretations
        .flatMap((i) => i.refusals)
        .filter((x) => planned(x.tools) || x.tools.length === 0)
        .map((x) => ({ name: x.name, text: x.text, why: x.why })),
      (x) => `${x.name}:${x.text}`,
    ),
    unaccounted: dedupe(unaccounted, (u) => u.text),
    by: "rules",
  });
}

/**
 * What the reading itself took for granted: invisible characters it removed (the request shows "Paris" yet holds
 * "Pa\u200bris") and words it left unread because the request's language is uncertain.
 */
function readingNotes(a: Analysis): Understanding["assumptions"] {
  const out: Understanding["assumptions"] = [];
  if (a.invisible.length > 0) {
    const codes = [...new Set(a.invisible.map((x) => x.code))].join(", ");
    const words = [...new Set(a.invisible.map((x) => `"${x.word}"`).filter((w) => w !== '""'))].join(", ");
    out.push({
      name: "invisible characters",
      value: a.invisible.length,
      why: `the request holds ${a.invisible.length} invisible character${a.invisible.length === 1 ? "" : "s"} (${codes})${words === "" ? "" : ` in ${words}`}, removed before reading: it is read as it shows`,
      stepIds: [],
    });
  }
  if (a.unsure.length > 0) {
    const names = a.language.candidates.map((c) => new Intl.DisplayNames(["en"], { type: "language" }).of(c) ?? c);
    out.push({
      name: "language",
      value: "uncertain",
      why: `the request's language is uncertain (${names.join(" or ")}): ${a.unsure.map((u) => `"${u.text}"`).join(", ")} would be read as a number in one of them and is not read; write a few more words to tell`,
      stepIds: [],
    });
  }
  return out;
}

function spanOf(a: Analysis, start: number, end: number): Span {
  return { start, end, text: a.text.slice(start, end) };
}

/** Whether every non-space character of `m` lies inside one of the spans. */
function covered(m: Span, spans: readonly { start: number; end: number }[]): boolean {
  for (let i = m.start; i < m.end; i++) {
    if (/\s/.test(m.text[i - m.start] ?? "")) continue;
    if (!spans.some((x) => i >= x.start && i < x.end)) return false;
  }
  return true;
}

function whyUnaccounted(m: Mention, notUnderstood: Interpretation["notUnderstood"]): string {
  const own = notUnderstood.find((n) => overlaps(m, [n.span]));
  if (own) return own.why;
  switch (m.kind) {
    case "negation":
      return "the plan does not rule out anything it negates";
    case "place":
      return "no step uses this place";
    case "amount":
      return "no step uses this amount";
    case "number":
      return "no step uses this number";
    case "date":
      return "no step takes a date";
    case "task":
      return "no step does this";
    default:
      return "no step uses it";
  }
}

/** The clause's text without the excluded spans ("3 days in Paris" from "3 days in Paris, no hotel"). */
function remainder(clause: Span, cut: readonly Span[]): string {
  let text = clause.text;
  for (const c of [...cut].sort((x, y) => y.start - x.start)) {
    const s = c.start - clause.start;
    const e = c.end - clause.start;
    if (s >= 0 && e <= text.length) text = `${text.slice(0, s)}${text.slice(e)}`;
  }
  return text.replace(/\s+/g, " ").replace(/^[\s,;]+|[\s,;]+$/g, "") || clause.text;
}

/**
 * The record after a person edited steps: each served part described again from its steps (a part must not say
 * "2 night(s)" once the step says 3), and each parameter edit recorded as a change made by a person.
 */
export function afterPersonEdits(
  u: Understanding,
  steps: AccountInput["steps"],
  edits: readonly { stepId: string; key: string; from: unknown; to: unknown }[],
): Understanding {
  const parts = u.parts.map((p) =>
    p.status === "served" && p.stepIds.length > 0 ? { ...p, description: describeSteps(steps, p.stepIds) } : p,
  );
  const changes = edits.map((e) => ({
    name: e.key,
    from: e.from,
    to: e.to,
    source: "",
    why: "changed by a person before the plan ran",
    by: "person" as const,
    stepIds: [e.stepId],
  }));
  return { ...u, parts, changes: [...u.changes, ...changes] };
}

function describeSteps(steps: AccountInput["steps"], ids: readonly string[]): string {
  return ids.map((id) => steps.find((s) => s.id === id)?.description ?? id).join("; ");
}

/** Adjacent parts served by the same steps, of the same kind, are one part. */
function mergeParts(parts: Omit<RequestPart, "id">[]): Omit<RequestPart, "id">[] {
  const out: Omit<RequestPart, "id">[] = [];
  for (const p of parts) {
    const prev = out.at(-1);
    if (
      prev &&
      prev.status === "served" &&
      p.status === "served" &&
      prev.kind === p.kind &&
      sameSet(prev.stepIds, p.stepIds)
    ) {
      out[out.length - 1] = { ...prev, text: `${prev.text}, ${p.text}` };
      continue;
    }
    out.push(p);
  }
  return out;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

function dedupe<T>(xs: readonly T[], key: (x: T) => string): T[] {
  const seen = new Set<string>();
  return xs.filter((x) => {
    const k = key(x);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
