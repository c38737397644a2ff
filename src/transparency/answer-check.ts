import type { ExecutionFeedback } from "../domain/feedback.js";
import { resultEntries, type Plan, type ResultEntry, type TaskStep } from "../domain/plan.js";
import type { PlanningRequest } from "../domain/request.js";
import { withMissingListed } from "../planning/coverage.js";
import { figuresOf, NumberIndex, numbersIn } from "./answer-figures.js";

/*
 * The answer says only what the evidence shows (issue 22 item 3). Whoever wrote the answer — a model, or the rules'
 * template — SYNTHESIZE checks it against what the run recorded before anyone reads it, sentence by sentence:
 * 1. a figure that is in no step's result, not in the request and not in the understanding record (answer-figures.ts
 *    says what a figure is) takes its sentence out;
 * 2. a sentence saying that a tool with a side effect took effect, when no call of it succeeded in this run (its step
 *    failed, was skipped, or no step called it), is taken out: a clause holds one of the tool's `effectWords`, or
 *    the past tense of the verb its name starts with next to another word of its name or of what it produces
 *    ("publish_note" → "published" … "note"), and does not deny or hedge it ("not", "failed", "could", "will", …);
 * 3. a sentence presenting as done an item the record lists as missing (every content word of its description,
 *    not denied) is taken out; the item is then listed as missing whatever the answer said. In 2 and 3, a claim
 *    whose words are all in what the tools returned stands: the sentence may be reporting that content (a README
 *    that says how reports are written); its figures are still checked;
 * 4. an answer that, after that, says none of the results' salient values ("Done, everything looks good", an empty
 *    or half-cut answer) gets the rules' template of the results appended; one that leaves out a final step's
 *    result (a step no finished step builds on) gets that step's line.
 * Each correction is a sentence a user can read, and the answer ends with a "Corrected: …" line for each.
 */

/** What the check needs of a tool: a ToolSpec has these fields, so the registry's tools are passed as they are. */
export interface ToolFacts {
  name: string;
  sideEffect: "none" | "reversible" | "irreversible";
  produces: readonly string[];
  /** See ToolSpec.effectWords: words that say this tool's effect took place. */
  effectWords?: readonly string[];
}

/** Something the answer does not give, as coverage.ts's `missingFromAnswer` lists it. */
interface MissingItem {
  id: string;
  description: string;
  reason: string;
}

export interface AnswerCheckInput {
  /** The answer as written (by the model, or the rules' template). */
  answer: string;
  request: PlanningRequest;
  /** The plan as it ended: steps with status, result, tools; the understanding record. */
  plan: Plan;
  missing: readonly MissingItem[];
  /** The run's feedback: which tool's call each finished step's result is, and what failures carried. */
  feedback: readonly Pick<ExecutionFeedback, "taskId" | "dispatch" | "evidence" | "outputs">[];
  tools: readonly ToolFacts[];
  /** The tools each worker type may use: a step naming no tool may have called any of them. */
  grants: Readonly<Record<string, readonly string[]>>;
  /** The rules' template line for one step's result (RulesReasoner.synthesize writes the same). */
  resultLine: (step: TaskStep, result: unknown) => string;
}

type CorrectionKind = "figure" | "effect" | "part" | "unanswered";

export interface Correction {
  kind: CorrectionKind;
  /** The sentence taken out; null when something was added instead. */
  sentence: string | null;
  /**
   * What was corrected and why, for the user: the answer's "Corrected: …" line. It names the figure, the tool or the
   * part, never repeats the sentence taken out (that would say it again); `sentence` keeps it for the log.
   */
  text: string;
}

export interface CheckedAnswer {
  /** The answer to keep: checked, with what is missing listed and a "Corrected: …" line per correction. */
  answer: string;
  corrections: Correction[];
}

/** Checks an answer against the run's record and returns it corrected (see the rules at the top of this file). */
export function checkAnswer(input: AnswerCheckInput): CheckedAnswer {
  const judge = sentenceJudge(input);
  const corrections: Correction[] = [];
  const kept = keptSentences(input.answer, (sentence, denied) => {
    const c = judge(sentence, denied);
    if (c) corrections.push(c);
    return c === null;
  });
  const added = unansweredResults(kept, input);
  if (added) corrections.push(added.correction);
  const body = added ? [kept.trimEnd(), ...added.lines].filter((l) => l.length > 0).join("\n") : kept;
  const answer = withMissingListed(body, input.missing);
  return { answer: withCorrectionsListed(answer, corrections), corrections };
}

/**
 * Rules 1–3 for one sentence: the correction that takes it out, or null. A line listing a missing item as the record
 * does ("- Book the trip (s5): …"), or an item under a heading that denies, claims nothing; its figures still count.
 */
function sentenceJudge(input: AnswerCheckInput): (sentence: string, denied: boolean) => Correction | null {
  const evidence = evidenceNumbers(input);
  const effects = unbackedEffects(input);
  // What the tools returned, in words: only needed when there is a claim to look for.
  const words = effects.length + input.missing.length > 0 ? wordsOf(resultTexts(input.plan).join("\n")) : [];
  const returned = { words: new Set(words), stems: new Set(words.map(stem)) };
  const listed = input.missing.map((m) => `(${m.id})`);
  // The request or the objective restated (the rules' template opens with it) asks; it claims nothing was done.
  const restated = new Set([input.request.userIntent, input.plan.objective].map(flat));
  return (sentence, denied) => {
    const claims = !denied && !listed.some((id) => sentence.includes(id)) && !restated.has(flat(sentence));
    const claim = claims
      ? (effectClaim(sentence, effects, returned.words) ?? partClaim(sentence, input.missing, returned.stems))
      : null;
    return claim ?? unbackedFigures(sentence, evidence);
  };
}

/** A sentence as compared with the request: spaces folded, case and a final stop ignored. */
function flat(text: string): string {
  return text
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[.!?]$/, "")
    .toLowerCase();
}

/** The answer with one "Corrected: …" line per correction at its end. */
function withCorrectionsListed(answer: string, corrections: readonly Correction[]): string {
  if (corrections.length === 0) return answer;
  return [answer.trimEnd(), ...corrections.map((c) => `Corrected: ${c.text}`)].filter((l) => l.length > 0).join("\n");
}

// ---- sentences

/** A line's bullet or number, kept when some of its sentences stay. */
const LINE_PREFIX = /^\s*(?:[-*•+]\s+|\d+[.)]\s+)?/;
/** A heading line: it ends with a colon. When it says what was not done ("Not done:"), its items are not claims. */
const HEADING = /:\s*$/;

/**
 * The answer with each sentence `keep` refuses taken out (a line left empty goes too). `keep` is told whether the
 * sentence is an item under a heading that denies ("Not done:", "Missing:"), where it cannot be a claim.
 */
function keptSentences(answer: string, keep: (sentence: string, denied: boolean) => boolean): string {
  const out: string[] = [];
  let denied = false;
  let dropped = false;
  for (const line of answer.split("\n")) {
    const prefix = LINE_PREFIX.exec(line)?.[0] ?? "";
    const rest = line.slice(prefix.length);
    if (rest.trim().length === 0) {
      denied = false;
      out.push(line);
      continue;
    }
    const heading = prefix.trim().length === 0 && HEADING.test(rest);
    const sentences = rest.split(/(?<=[.!?…])\s+(?=\S)/);
    const stay = sentences.filter((s) => keep(s, denied && !heading));
    if (heading) denied = NOT_A_CLAIM.test(rest);
    else if (prefix.trim().length === 0) denied = false;
    if (stay.length === sentences.length) out.push(line);
    else if (stay.length > 0) out.push(`${prefix}${stay.join(" ")}`);
    dropped ||= stay.length < sentences.length;
  }
  // Untouched, the answer is returned as written, byte for byte: what was streamed is what is kept.
  return dropped ? out.join("\n").replace(/\n{3,}/g, "\n\n") : answer;
}

/** Words that deny, hedge or ask: a clause holding one states nothing done. */
const NOT_A_CLAIM =
  /\b(?:not|no|none|nothing|never|neither|nor|cannot|unable|fail|fails|failed|failing|failure|missing|without|unavailable|skipped|pending|can|could|would|should|may|might|will|shall|if|unless|once|whether|instead|pas|sin|sans)\b|n't\b|\?/i;

const CLAUSE = /[,;:()\u2013\u2014]|\s-\s|\b(?:but|however|although|though|except)\b/i;

function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
}

/** Whether `words` holds `w`, as it is or with/without a plural "s". */
function holdsWord(words: ReadonlySet<string>, w: string): boolean {
  return words.has(w) || words.has(`${w}s`) || (w.endsWith("s") && words.has(w.slice(0, -1)));
}

/** Every string in the finished steps' results: what the tools returned, which an answer may report in its words. */
function resultTexts(plan: Plan): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === "object") Object.values(v).forEach(walk);
  };
  for (const s of plan.steps) if (s.status === "done") walk(s.result);
  return out;
}

// ---- figures

/** A "…" quote inside a reason is someone's words (a model's answer quoted in an error), not a fact of the run. */
function withoutQuotes(text: string | null | undefined): string {
  return (text ?? "").replace(/"[^"]*"|“[^”]*”/g, " ");
}

/**
 * Every number the run recorded: the request, the understanding record, each step's id, description, parameters,
 * result and limits, what is missing and why, what failures carried (a budget check's total). Counts of what the
 * results list, and of the plan's steps, too. Never a model's words: the worker loops' answers are left out.
 */
function evidenceNumbers(input: AnswerCheckInput): NumberIndex {
  const index = new NumberIndex();
  const { plan } = input;
  index.addAll(input.request);
  index.addAll(plan.objective);
  index.addAll(plan.understanding);
  for (const s of plan.steps) {
    index.addAll([s.id, s.description, s.params, s.result, s.limits, withoutQuotes(s.skipReason)]);
  }
  for (const m of input.missing) index.addAll([m.id, m.description, withoutQuotes(m.reason)]);
  for (const f of input.feedback) {
    const { answer: _words, ...facts } = f.outputs;
    index.addAll(facts);
  }
  const done = plan.steps.filter((s) => s.status === "done");
  index.add(plan.steps.length);
  index.add(done.length);
  index.add(input.missing.length);
  // One result found is a count of one ("1 flight"), whatever its shape.
  if (done.length > 0) index.add(1);
  return index;
}

function unbackedFigures(sentence: string, evidence: NumberIndex): Correction | null {
  const unbacked = figuresOf(sentence).filter((f) => !evidence.backs(f));
  if (unbacked.length === 0) return null;
  const names = unbacked.map((f) => f.text).join(", ");
  const which = unbacked.length === 1 ? `the figure ${names}: it is` : `the figures ${names}: they are`;
  return {
    kind: "figure",
    sentence,
    text: `removed a sentence with ${which} in no step's result, in the request or in what was understood of it.`,
  };
}

// ---- side effects

interface UnbackedEffect {
  tool: ToolFacts;
  /** Why no call of it succeeded, for the user. */
  why: string;
}

/**
 * Tools with a side effect that no call in this run is shown to have made. A finished step backs the tool its
 * result came from (its feedback's evidence), the one tool it could call, and the only tool it could call that
 * produces one of its expected outputs. A finished step that could call several tools leaves the others open:
 * its loop may have called them, and the plan alone cannot tell, so their claims stand.
 */
function unbackedEffects(input: AnswerCheckInput): UnbackedEffect[] {
  const { plan } = input;
  const byName = new Map(input.tools.map((t) => [t.name, t]));
  const backed = new Set<string>();
  const open = new Set<string>();
  for (const s of plan.steps.filter((x) => x.status === "done")) {
    const reach = s.tools.length > 0 ? s.tools : (input.grants[s.workerType] ?? []);
    const evidence = input.feedback.find((f) => f.taskId === s.id && f.dispatch === s.dispatches)?.evidence;
    if (evidence) backed.add(evidence.tool);
    if (reach.length === 1) backed.add(reach[0]!);
    for (const out of s.expectedOutputs) {
      const producers = reach.filter((n) => byName.get(n)?.produces.includes(out));
      if (producers.length === 1) backed.add(producers[0]!);
    }
    for (const n of reach) open.add(n);
  }
  return input.tools
    .filter((t) => t.sideEffect !== "none" && !backed.has(t.name) && !open.has(t.name))
    .map((tool) => ({ tool, why: whyNoEffect(plan, tool.name) }));
}

function whyNoEffect(plan: Plan, tool: string): string {
  const step = plan.steps.filter((s) => s.tools.includes(tool)).at(-1);
  if (!step) return `${tool} was not called in this run`;
  // Why it was skipped is in the list of what is missing, which follows the answer.
  const what = step.status === "failed" ? "failed" : step.status === "skipped" ? "was skipped" : "did not run";
  return `no call of ${tool} succeeded in this run (step ${step.id}, "${step.description}", ${what})`;
}

/** The regular past tenses of a verb: book → booked, publish → published, delete → deleted, ship → shipped. */
function pastTenses(verb: string): string[] {
  const out = [`${verb}ed`, `${verb}${verb.at(-1)}ed`];
  if (verb.endsWith("e")) out.push(`${verb}d`);
  if (/[^aeiou]y$/.test(verb)) out.push(`${verb.slice(0, -1)}ied`);
  return out;
}

/** The words by which a clause says the tool took effect (see the rules at the top of this file); null: it does not. */
function effectWordsIn(clause: string, tool: ToolFacts): string[] | null {
  if (NOT_A_CLAIM.test(clause)) return null;
  const words = new Set(wordsOf(clause));
  const entry = (tool.effectWords ?? []).map(wordsOf).find((e) => e.every((w) => holdsWord(words, w)));
  if (entry) return entry;
  const [verb = "", ...rest] = tool.name.split("_");
  const objects = [...rest, ...tool.produces.flatMap((p) => p.split("_"))].filter((w) => w.length >= 3);
  const past = pastTenses(verb).find((p) => words.has(p));
  const object = objects.find((o) => holdsWord(words, o));
  return past && object ? [past, object] : null;
}

/**
 * A sentence claiming an effect no call made. Not when every word of the claim is also in what the tools returned:
 * the sentence may be reporting that content ("the README says reports are written to .candor") and stands.
 */
function effectClaim(
  sentence: string,
  effects: readonly UnbackedEffect[],
  returned: ReadonlySet<string>,
): Correction | null {
  if (effects.length === 0 || /\?\s*$/.test(sentence)) return null;
  const clauses = sentence.split(CLAUSE);
  const claims = (e: UnbackedEffect) =>
    clauses.some((c) => {
      const words = effectWordsIn(c, e.tool);
      return words !== null && !words.every((w) => holdsWord(returned, w));
    });
  const claimed = effects.find(claims);
  if (!claimed) return null;
  return {
    kind: "effect",
    sentence,
    text: `removed a sentence saying ${claimed.tool.name} took effect: ${claimed.why}.`,
  };
}

// ---- missing parts

const STOP = new Set(
  (
    "the and for with from into onto that this these those what which then than your our their its are was were " +
    "has have had been being all any some each every per via about also just only please you they them how why " +
    "when where under over out off but yet too very get got make made give let"
  ).split(" "),
);

/** A word without its common endings, so "booked", "booking" and "book" meet, and "cities" and "city". */
function stem(word: string): string {
  for (const suffix of ["ations", "ation", "ings", "ing", "ied", "ies", "ed", "es", "s", "e", "y"]) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) return word.slice(0, -suffix.length);
  }
  return word;
}

function contentStems(text: string): string[] {
  return [...new Set((text.toLowerCase().match(/\p{L}+/gu) ?? []).filter((w) => w.length >= 3 && !STOP.has(w)))].map(
    stem,
  );
}

/**
 * A sentence holding every content word (two at least) of a missing item's description, and denying nothing. Not
 * when the tools' results hold them all too: the sentence may be reporting what was returned.
 */
function partClaim(
  sentence: string,
  missing: readonly MissingItem[],
  returned: ReadonlySet<string>,
): Correction | null {
  if (NOT_A_CLAIM.test(sentence)) return null;
  const stems = new Set(contentStems(sentence));
  const item = missing.find((m) => {
    const need = contentStems(m.description);
    return need.length >= 2 && need.every((s) => stems.has(s)) && !need.every((s) => returned.has(s));
  });
  if (!item) return null;
  return {
    kind: "part",
    sentence,
    text: `removed a sentence presenting ${item.description} as done: it is missing (${item.reason}).`,
  };
}

// ---- results the answer leaves out

/** Values too common to show that an answer gave a result. */
const GENERIC = new Set(
  "done success succeeded completed complete true false null none ok yes error failed pending skipped unknown".split(
    " ",
  ),
);

/** Names in a long text: a file name, a path, an identifier (camelCase, snake_case, letters with digits). */
const NAME_LIKE = /[\p{L}].*[./_].*[\p{L}\p{N}]|\p{L}\p{N}|\p{N}\p{L}|\p{Ll}\p{Lu}/u;

/** Values of one result looked at, at most: enough to tell whether an answer gives it, bounded for huge results. */
const MAX_VALUES = 2000;

/** The strings of a value an answer could quote: each string, and the names inside a long one. Lower-cased. */
function quotables(value: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (out.length >= MAX_VALUES) return;
    if (typeof v === "string") {
      out.push(v.trim().toLowerCase());
      if (v.length <= 80) return;
      for (const token of v.split(/[\s,;:()"'`[\]{}<>]+/)) {
        if (out.length >= MAX_VALUES) return;
        if (NAME_LIKE.test(token)) out.push(token.toLowerCase());
      }
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(value);
  return out;
}

/** The numbers of a value, as JSON holds them (not those inside its text), at most MAX_VALUES. */
function numbersOf(value: unknown): number[] {
  const out: number[] = [];
  const walk = (v: unknown): void => {
    if (out.length >= MAX_VALUES) return;
    if (typeof v === "number") out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(value);
  return out;
}

/** What was known before a step ran: the request, and the results of the steps it builds on (an input repeated). */
interface Known {
  request: string;
  values: Set<string>;
  numbers: NumberIndex;
}

function knownBefore(step: TaskStep, plan: Plan, request: string, ancestors: boolean): Known {
  const known: Known = { request: request.toLowerCase(), values: new Set(), numbers: new NumberIndex() };
  known.numbers.addAll(request);
  if (!ancestors) return known;
  const byId = new Map(plan.steps.map((s) => [s.id, s]));
  const seen = new Set<string>();
  const visit = (id: string): void => {
    const s = byId.get(id);
    if (!s || seen.has(id)) return;
    seen.add(id);
    for (const v of quotables(s.result)) known.values.add(v);
    for (const n of numbersOf(s.result)) known.numbers.add(n);
    s.dependsOn.forEach(visit);
  };
  step.dependsOn.forEach(visit);
  return known;
}

/**
 * The values of a result that show an answer gave it: names, strings and numbers the request or the results it was
 * built from did not already hold (a budget check's breakdown repeats the itinerary; its total is its own).
 */
function salientOf(result: unknown, known: Known): { strings: string[]; numbers: number[] } {
  const strings = quotables(result).filter(
    (t) =>
      t.length >= 3 &&
      !GENERIC.has(t) &&
      !known.request.includes(t) &&
      !known.values.has(t) &&
      (/\d/.test(t) || t.length >= 5),
  );
  const numbers = numbersOf(result).filter((n) => Math.abs(n) >= 2 && !known.numbers.says(n));
  return { strings, numbers };
}

function says(answer: { lower: string }, value: string): boolean {
  const v = value.replace(/\s+/g, " ");
  if (v.length >= 8) return answer.lower.includes(v);
  const at = answer.lower.indexOf(v);
  if (at < 0) return false;
  const around = new RegExp(`(?<![\\p{L}\\p{N}])${v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\p{L}\\p{N}])`, "u");
  return around.test(answer.lower);
}

/**
 * What to append when the answer leaves results out (rule 4): the whole template when it says nothing of any result,
 * else the line of each final step whose result it does not mention. Null when nothing is left out.
 */
function unansweredResults(kept: string, input: AnswerCheckInput): { lines: string[]; correction: Correction } | null {
  const done = input.plan.steps.filter((s) => s.status === "done");
  if (done.length === 0) return null;
  const answer = { lower: kept.replace(/\s+/g, " ").toLowerCase(), numbers: new NumberIndex() };
  for (const n of numbersIn(kept)) answer.numbers.add(n.value, n.decimals);
  const line = (s: TaskStep) => input.resultLine(s, s.result);
  // Whether a step's value is new is judged against what it was built from only for the final steps: for the others
  // the question is only whether the answer gives anything at all.
  const judge = (step: TaskStep, final: boolean, entry: ResultEntry = { label: null, value: step.result }) => {
    const known = knownBefore(step, input.plan, input.request.userIntent, final);
    const { strings, numbers } = salientOf(entry.value, known);
    const given =
      (entry.label === null && kept.includes(line(step))) ||
      strings.some((v) => says(answer, v)) ||
      numbers.some((n) => answer.numbers.says(n));
    return { step, entry, salient: strings.length + numbers.length > 0, given };
  };
  // The final steps first: when the answer gives one of them, the steps before need not be judged. A reactive step's
  // tools are each judged as a final step: an answer that gives the searches must still give the booking.
  const builtOn = new Set(done.flatMap((s) => s.dependsOn));
  const finals = done
    .filter((s) => !builtOn.has(s.id))
    .flatMap((s) => resultEntries(s, s.result).map((e) => judge(s, true, e)));
  const givesNone = (): boolean => {
    if (finals.some((j) => j.given)) return false;
    const all = [...finals, ...done.filter((s) => builtOn.has(s.id)).map((s) => judge(s, false))];
    return !all.some((j) => j.given) && all.some((j) => j.salient);
  };
  if (kept.trim().length === 0 || givesNone()) {
    return {
      lines: [input.plan.objective, ...done.map(line)],
      correction: {
        kind: "unanswered",
        sentence: null,
        text: "the answer as written gives none of the results, so they are listed from the steps' own results.",
      },
    };
  }
  const missed = finals.filter((j) => j.salient && !j.given);
  if (missed.length === 0) return null;
  const left = [...new Set(missed.map((j) => j.step))];
  // A step's line, with only the pieces of its result the answer left out when it has several (a reactive step's).
  const leftLine = (s: TaskStep) => {
    const pieces = missed.filter((j) => j.step === s && j.entry.label !== null);
    return pieces.length === 0
      ? line(s)
      : input.resultLine(s, Object.fromEntries(pieces.map((j) => [j.entry.label, j.entry.value])));
  };
  const names = left.map((s) => `"${s.description}" (${s.id})`).join(", ");
  return {
    lines: ["From the results:", ...left.map(leftLine)],
    correction: {
      kind: "unanswered",
      sentence: null,
      text: `the answer as written leaves out what ${names} produced, so ${left.length === 1 ? "it is" : "they are"} listed from the steps' own results.`,
    },
  };
}
