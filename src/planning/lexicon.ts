import { DATE_LANGUAGES, recognizeDates, type DateLanguage, type DateMention } from "../reasoning/recognizers.js";
import {
  CURRENCY_SIGNS,
  LANGUAGE_CODES,
  LANGUAGES,
  TASK_VERB_NAMES,
  UNREAD_SCRIPTS,
  everyLanguage,
  type LanguageWords,
} from "./languages/index.js";

/**
 * Generic reading of a request: its language, clauses, the scope of a negation and of "only", what it says it has
 * no constraint on, numbers (digits and words), amounts of money with their currency, ranges, dates, task verbs and
 * names. Every mention carries its span in the original text, so the planner can tell which words served the plan
 * and which served nothing. Nothing here knows a domain: toolkits read their own meaning on top of it.
 *
 * Dates come from a maintained recognizer, chrono-node, in the request's language (src/reasoning/recognizers.ts).
 * The rest is the same code for every language, reading each by its word table (src/planning/languages/: English,
 * Spanish, French, German, Italian, Portuguese and Dutch): what the planner needs — negation and "only" scopes,
 * number words, currency marks, spans into the original text — no maintained JavaScript library reads in these
 * languages (`compromise` reads English only; Microsoft's recognizers-text reads neither German, Italian nor Dutch
 * numbers, and costs seconds on its first call). A request in another language is named as such (`language.read`),
 * never half-read.
 */

export interface Span {
  start: number;
  end: number;
  text: string;
}

interface Negation {
  /** The negating words ("no", "without", "sin", "pas de", "we already have"). */
  cue: Span;
  /** What is negated: the words after the cue up to the end of the clause or a contrast ("but", "pero"). */
  scope: Span;
}

interface OnlyScope {
  cue: Span;
  /** What "only" restricts the request to ("flight" in "flight only", "a hotel" in "just a hotel"). */
  scope: Span;
}

interface NumberMention extends Span {
  value: number;
  /** Spelled out ("two thousand", "dos", "trois"). */
  word: boolean;
}

interface RangeMention extends Span {
  min: number;
  max: number;
}

interface Amount extends Span {
  value: number;
  /** ISO 4217 code of the currency named, or null when the mark is not one the table knows (e.g. "pesos"). */
  currency: string | null;
  /** The currency mark as written ("€", "yen", "CHF", "dollars"), or null when the amount has none. */
  mark: string | null;
}

export interface TaskVerb extends Span {
  /** The verb's English infinitive ("translate" for "traduce" and "traduis"). */
  verb: string;
}

/** A format character (Unicode category Cf: zero-width space, soft hyphen, direction marks…) removed before reading. */
export interface Invisible {
  /** Where it stood in the request as written. */
  index: number;
  /** Its code point, "U+200B". */
  code: string;
  /** The word it stood in, as read once it is removed ("Paris" for "Pa\u200bris"). */
  word: string;
}

export interface Analysis {
  /** The request as read: as written, less its invisible characters (see `invisible`); every span points into it. */
  text: string;
  /** Lower case without accents, same length as `text`, so indices point into both. */
  norm: string;
  /** The language the request is written in (see guessLanguage). */
  language: Language;
  clauses: Span[];
  negations: Negation[];
  /**
   * Where the request says it has no constraint ("no specific restrictions", "we don't mind the cuisine", "sin
   * preferencias"): read, and ruling nothing out. Never among `negations`.
   */
  waivers: Span[];
  onlys: OnlyScope[];
  numbers: NumberMention[];
  ranges: RangeMention[];
  amounts: Amount[];
  /** Dates and ranges of dates, with the days they name (chrono-node, see src/reasoning/recognizers.ts). */
  dates: DateMention[];
  taskVerbs: TaskVerb[];
  /** Capitalised words that are not sentence-initial function words: candidate places and names. */
  names: Span[];
  /**
   * Invisible characters the request held, removed before reading: "Pa\u200bris" shows as Paris yet, read as
   * written, is no word at all. The record says they were there.
   */
  invisible: Invisible[];
  /**
   * Figures of time that say either when something starts or how long it lasts ("Rome in 3 days"), read here as a
   * length: whoever reads lengths says so.
   */
  lengthOrStart: Span[];
  /**
   * When the language is uncertain (see Language.certain): the words a candidate language would read otherwise
   * ("sei" is six in Italian, nothing in Spanish), left unread.
   */
  unsure: Span[];
}

// "ß" is one letter here, so that indices still match: "dreißig" reads as "dreisig".
const STROKED: Record<string, string> = { ł: "l", ø: "o", đ: "d", ħ: "h", ß: "s" };

/** Lower case without accents, one character per character, so indices still point into the original text. */
export function foldCase(text: string): string {
  return [...text]
    .map((ch) => {
      // Letters with a stroke do not decompose: "złoty" is read as "zloty", "Tromsø" as "tromso".
      const folded = (STROKED[ch.toLowerCase()] ?? ch)
        .normalize("NFD")
        .replace(/[\u0300-\u036f]/g, "")
        .toLowerCase();
      if (folded.length === 1) return folded;
      const lower = ch.toLowerCase();
      return lower.length === 1 ? lower : " ";
    })
    .join("")
    .replace(/[’`]/g, "'");
}

const FORMAT = /\p{Cf}/gu;

/**
 * The text without its format characters (Unicode category Cf), each removed one listed with where it stood and the
 * word it stood in. They show as nothing, so what a person reads is the text without them.
 */
export function withoutInvisible(text: string): { text: string; invisible: Invisible[] } {
  const found = [...text.matchAll(FORMAT)];
  if (found.length === 0) return { text, invisible: [] };
  const clean = text.replace(FORMAT, "");
  const invisible = found.map((m, i) => {
    const at = m.index - i;
    const from = clean.slice(0, at).search(/[\p{L}\p{N}'’.-]*$/u);
    const to = at + (/^[\p{L}\p{N}'’.-]*/u.exec(clean.slice(at))?.[0].length ?? 0);
    const code = `U+${(m[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
    return { index: m.index, code, word: clean.slice(from, to) };
  });
  return { text: clean, invisible };
}

export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function span(text: string, start: number, end: number): Span {
  return { start, end, text: text.slice(start, end) };
}

/** Whether [start, end) lies inside one of the spans. */
export function within(s: { start: number; end: number }, spans: readonly { start: number; end: number }[]): boolean {
  return spans.some((x) => s.start >= x.start && s.end <= x.end);
}

/** Whether [start, end) overlaps one of the spans. */
export function overlaps(s: { start: number; end: number }, spans: readonly { start: number; end: number }[]): boolean {
  return spans.some((x) => s.start < x.end && s.end > x.start);
}

/** Word boundary that treats accented letters (folded to ASCII in `norm`) and digits as word characters. */
const B = "(?<![a-z0-9])";
const E = "(?![a-z0-9])";

// ---------------------------------------------------------------------------------------------------------------
// Clauses

/** Words that join two clauses ("and", "then", "y", "et", "puis"), in the order the tables list them. */
const JOINER = new RegExp(
  `\\s(?:${everyLanguage((l) => l.joiners)
    .map(escapeRegExp)
    .join("|")})${E}`,
  "g",
);

/**
 * The request's clauses: split on ";", ".", "!", "?", on commas (not inside a number such as 1,500) and on joining
 * words. Each clause is trimmed; empty ones are dropped.
 */
function splitClauses(
  text: string,
  norm = foldCase(text),
  protect: readonly { start: number; end: number }[] = [],
): Span[] {
  const cuts: { start: number; end: number }[] = [];
  for (const m of norm.matchAll(/[;!?]|\.(?!\d)(?=\s|$)|,(?!\d{3}(?!\d))/g))
    cuts.push({ start: m.index, end: m.index + m[0].length });
  for (const m of norm.matchAll(JOINER)) cuts.push({ start: m.index, end: m.index + m[0].length });
  cuts.sort((a, b) => a.start - b.start);
  const clauses: Span[] = [];
  let from = 0;
  for (const cut of cuts) {
    // Never inside a number or a range ("vingt et un", "between 1000 and 1500").
    if (cut.start < from || overlaps(cut, protect)) continue;
    pushTrimmed(text, from, cut.start, clauses);
    from = cut.end;
  }
  pushTrimmed(text, from, text.length, clauses);
  return clauses;
}

function pushTrimmed(text: string, start: number, end: number, out: Span[]): void {
  let s = start;
  let e = end;
  while (s < e && /\s/.test(text[s] ?? "")) s++;
  while (e > s && /\s/.test(text[e - 1] ?? "")) e--;
  if (e > s) out.push(span(text, s, e));
}

/** The clause that holds position `index`. */
function clauseAt(clauses: readonly Span[], index: number): Span | undefined {
  return clauses.find((c) => index >= c.start && index < c.end);
}

// ---------------------------------------------------------------------------------------------------------------
// Negation and "only"

/** Any of the words or phrases, matched whole in the folded text. */
function phrase(words: readonly string[]): RegExp {
  return new RegExp(`${B}(?:${words.map(escapeRegExp).join("|")})${E}`, "g");
}

/** One expression per word or phrase, in the list's order, for readers where an earlier match takes the place. */
function each(words: readonly string[], tail: (w: string) => string = () => E): RegExp[] {
  return words.map((w) => new RegExp(`${B}${escapeRegExp(w)}${tail(w)}`, "g"));
}

/** Phrases that look negative but state a limit ("no more than $500", "pas plus de", "no más de"). */
const LIMITS = phrase(everyLanguage((l) => l.negation.limits));

/** Cues whose scope follows them. Longest first, so "don't want" wins over "no". */
const NEGATION_CUES = each(
  everyLanguage((l) => l.negation.cues).sort((a, b) => b.length - a.length),
  // "non-stop", "no-frills": a prefix, not a negation.
  (cue) => (cue.endsWith("'") ? "" : "(?![a-z0-9-])"),
);

/** Cues that negate what comes before them ("hotel not needed"), in the order the tables list them. */
const POSTFIX_NEGATIONS = each(everyLanguage((l) => l.negation.after));

/** Words that end a negation's scope: what follows is wanted again ("no hotel but a flight"). */
const CONTRAST = new RegExp(`${B}(?:${everyLanguage((l) => l.negation.contrasts).join("|")})${E}`);

/**
 * Saying there is no constraint is no exclusion: "no specific restrictions", "no particular cuisine", "we have no
 * preferences about food", "sin preferencias", "keine besonderen Wünsche" rule nothing out. A negation is such a
 * waiver when its scope opens (within a few words) with one of these qualifiers or nouns of preference (folded).
 */
const WAIVER_WORDS = new RegExp(`^(?:[a-z']+\\s+){0,3}?(?:${everyLanguage((l) => l.waiver.qualifiers).join("|")})${E}`);

/** Phrases that waive a constraint by themselves ("we don't mind", "da igual", "peu importe", "egal"), longest first. */
const WAIVER_PHRASES = each(everyLanguage((l) => l.waiver.phrases).sort((a, b) => b.length - a.length));

function findNegations(
  text: string,
  norm: string,
  clauses: readonly Span[],
): { negations: Negation[]; waivers: Span[] } {
  const blocked: { start: number; end: number }[] = [];
  const waivers: Span[] = [];
  for (const phrase of WAIVER_PHRASES) {
    for (const m of norm.matchAll(phrase)) {
      const s = { start: m.index, end: m.index + m[0].length };
      if (overlaps(s, blocked)) continue;
      blocked.push(s);
      // What is waived runs to the end of the clause or a contrast ("we don't mind the cuisine, but no hotel"), and
      // back over a short subject with no figure in it ("the cuisine doesn't matter"): never over the request's values.
      const clause = clauseAt(clauses, s.start) ?? span(text, 0, text.length);
      const contrast = CONTRAST.exec(norm.slice(s.end, clause.end));
      const before = norm.slice(clause.start, s.start);
      const from = before.trim().split(/\s+/).length <= 4 && !/[0-9]/.test(before) ? clause.start : s.start;
      waivers.push(trimSpan(text, from, contrast ? s.end + contrast.index : clause.end));
    }
  }
  for (const m of norm.matchAll(LIMITS)) blocked.push({ start: m.index, end: m.index + m[0].length });
  const out: Negation[] = [];
  const taken: { start: number; end: number }[] = [];
  // Postfix cues first: "not needed" is one cue, not "not" followed by "needed".
  for (const cue of POSTFIX_NEGATIONS) {
    for (const m of norm.matchAll(cue)) {
      const s = { start: m.index, end: m.index + m[0].length };
      if (overlaps(s, taken)) continue;
      const clause = clauseAt(clauses, s.start);
      const scope = trimSpan(text, clause?.start ?? 0, s.start);
      if (scope.end <= scope.start) continue;
      taken.push(s);
      out.push({ cue: span(text, s.start, s.end), scope });
    }
  }
  for (const cue of NEGATION_CUES) {
    for (const m of norm.matchAll(cue)) {
      const s = { start: m.index, end: m.index + m[0].length };
      if (overlaps(s, taken) || overlaps(s, blocked)) continue;
      // "not" inside "do not want" is taken by the longer cue; French "ne ... pas": the cue is "pas".
      const clause = clauseAt(clauses, s.start);
      const clauseEnd = clause?.end ?? text.length;
      let end = clauseEnd;
      const rest = norm.slice(s.end, clauseEnd);
      const contrast = CONTRAST.exec(rest);
      if (contrast) end = s.end + contrast.index;
      const scope = trimSpan(text, s.end, end);
      if (scope.end <= scope.start) continue;
      taken.push(s);
      if (WAIVER_WORDS.test(norm.slice(scope.start, scope.end))) waivers.push(span(text, s.start, scope.end));
      else out.push({ cue: span(text, s.start, s.end), scope });
    }
  }
  return {
    negations: out.sort((a, b) => a.cue.start - b.cue.start),
    waivers: waivers.sort((a, b) => a.start - b.start),
  };
}

function trimSpan(text: string, start: number, end: number): Span {
  let s = start;
  let e = end;
  while (s < e && /[\s,:]/.test(text[s] ?? "")) s++;
  while (e > s && /[\s,.;:!?]/.test(text[e - 1] ?? "")) e--;
  return span(text, s, e);
}

/** Cues of "only" ("just", "solamente", "seulement"). */
const ONLY_CUES = each(everyLanguage((l) => l.only.cues));
/** Articles an "only" reads forward past ("just a hotel"). */
const ONLY_ARTICLES = new Set(everyLanguage((l) => l.only.articles));
/** Function words after which a postfix "only" ("flights only from Madrid") still looks back. */
const FUNCTION_WORDS = new Set(everyLanguage((l) => l.only.functionWords));

function findOnlys(text: string, norm: string, clauses: readonly Span[]): OnlyScope[] {
  const out: OnlyScope[] = [];
  const taken: { start: number; end: number }[] = [];
  for (const cue of ONLY_CUES) {
    for (const m of norm.matchAll(cue)) {
      const s = { start: m.index, end: m.index + m[0].length };
      if (overlaps(s, taken)) continue;
      taken.push(s);
      const clause = clauseAt(clauses, s.start) ?? span(text, 0, text.length);
      const next = /^\s*([a-z0-9'$€£¥-]+)/.exec(norm.slice(s.end, clause.end))?.[1];
      const prefix = next !== undefined && !FUNCTION_WORDS.has(next);
      // "just a hotel" reads forward past an article; "flight only" reads back.
      const forward = next !== undefined && (prefix || ONLY_ARTICLES.has(next));
      const scope = forward
        ? trimSpan(text, s.end, clause.end)
        : trimSpan(text, Math.max(clause.start, lastWords(norm, clause.start, s.start, 3)), s.start);
      if (scope.end > scope.start) out.push({ cue: span(text, s.start, s.end), scope });
    }
  }
  return out.sort((a, b) => a.cue.start - b.cue.start);
}

/** Start index of the last `n` words before `end` (not before `floor`). */
function lastWords(norm: string, floor: number, end: number, n: number): number {
  let i = end;
  let words = 0;
  while (i > floor && words < n) {
    while (i > floor && /\s/.test(norm[i - 1] ?? "")) i--;
    while (i > floor && !/\s/.test(norm[i - 1] ?? "")) i--;
    words++;
  }
  return i;
}

// ---------------------------------------------------------------------------------------------------------------
// Numbers

/** The languages whose number words collide with no other language's ordinary words: read in every request. */
const EVERYWHERE = LANGUAGE_CODES.filter((code) => LANGUAGES[code].numbers.readEverywhere);
const UNITS: Record<string, number> = Object.fromEntries(
  EVERYWHERE.flatMap((c) => Object.entries(LANGUAGES[c].numbers.units)),
);
const MULTIPLIERS: Record<string, number> = Object.fromEntries(
  EVERYWHERE.flatMap((c) => Object.entries(LANGUAGES[c].numbers.multipliers)),
);

/** The number words read in a request of a language: those read everywhere, plus its own. */
interface NumberWords {
  units: Record<string, number>;
  mults: Record<string, number>;
  /** The parts of a number written as one word, longest first; empty where the language does not. */
  parts: [string, number | null][];
  /** The language's own number words, beyond those read everywhere (they tell the language, see guessLanguage). */
  own: Record<string, number>;
}

function numberWordsOf(language: LanguageWords | null): NumberWords {
  const numbers = language === null || language.numbers.readEverywhere ? null : language.numbers;
  const own = numbers?.units ?? {};
  const mults = numbers?.multipliers ?? {};
  const compound = language?.numbers.compound ?? null;
  const parts: [string, number | null][] = compound
    ? [
        ...Object.entries({ ...own, ...compound.units }),
        ...Object.entries(mults),
        ...compound.glue.map((g): [string, null] => [g, null]),
      ]
    : [];
  return {
    units: { ...UNITS, ...own },
    mults: { ...MULTIPLIERS, ...mults },
    parts: parts.sort((a, b) => b[0].length - a[0].length),
    own,
  };
}

const NUMBER_WORDS = new Map<string, NumberWords>(LANGUAGE_CODES.map((c) => [c, numberWordsOf(LANGUAGES[c])]));
const NUMBER_WORDS_EVERYWHERE = numberWordsOf(null);

/** The number words read in a request of this language (null: not known for sure, only those read everywhere). */
function numberWords(language: string | null): NumberWords {
  return (language === null ? undefined : NUMBER_WORDS.get(language)) ?? NUMBER_WORDS_EVERYWHERE;
}

/**
 * A number written as one word, by its parts ("zweitausendfunfhundert": zwei, tausend, funf, hundert → 2500), or
 * null when the word is not made of them whole. At least two number parts, so no ordinary word is a number.
 */
function compoundValue(word: string, nw: NumberWords): number | null {
  if (nw.parts.length === 0 || word.length < 6) return null;
  let total = 0;
  let current = 0;
  let numbers = 0;
  let i = 0;
  while (i < word.length) {
    const part = nw.parts.find(([p]) => word.startsWith(p, i));
    if (part === undefined) return null;
    i += part[0].length;
    const [name, value] = part;
    if (value === null) continue;
    numbers++;
    if (name in nw.mults && value >= 1000) {
      total += (current || 1) * value;
      current = 0;
    } else if (name in nw.mults) current = (current || 1) * value;
    else current += value;
  }
  return numbers >= 2 ? total + current : null;
}

/** Multipliers that are a number on their own ("mil euros", "cent euros"); "grand hotel" is not. */
const STANDALONE_MULTIPLIERS = new Set(everyLanguage((l) => l.numbers.standalone));
/** Words that join the parts of one spelled number ("twenty-five", "treinta y cinco", "vingt et un"). */
const NUMBER_GLUE = new Set([...everyLanguage((l) => l.numbers.glue), "-"]);
/** Words for "one" that are usually articles: never a number on their own. */
const ARTICLE_ONES = new Set(everyLanguage((l) => l.numbers.articleOnes));
/** Articles that count as one before a multiplier ("a hundred"). */
const ARTICLE_BEFORE_MULTIPLIER = new Set(everyLanguage((l) => l.numbers.articleBeforeMultiplier));
/** Words for twenty that multiply a smaller number before them ("quatre-vingts", "quatre vingts"). */
const TWENTIES = new Set(everyLanguage((l) => l.numbers.twenties));
/** Words, as written, that fold to a number word of another language and are none ("très"). */
const NOT_NUMBERS = new Set(everyLanguage((l) => l.numbers.notNumbers));

/** "two and a half", "dos y medio", "deux et demi": half more than the number before it. */
const HALF = new RegExp(`^\\s+(?:${everyLanguage((l) => l.numbers.half).join("|")})(?![a-z])`);
/** A multiplier after digits ("2 thousand", "3 mil"). */
const MULTIPLIER_AFTER = new RegExp(`^\\s+(${everyLanguage((l) => l.numbers.afterDigits).join("|")})(?![a-z])`);

/** Digits with thousands separators or a decimal part, an optional sign and a "k" for thousands. */
const DIGITS = /(?<![\w.,])(-\s?)?(\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d+)?)(?:\s?(k)(?![a-z]))?/g;

/** "1,200", "1.200", "1,200.50", "2.5" and "2,5" all mean what a reader would expect. */
function parseDigits(digits: string): number {
  if (/^\d{1,3}(?:[.,]\d{3})+$/.test(digits)) return Number(digits.replace(/[.,]/g, ""));
  const m = /^(\d{1,3}(?:[.,]\d{3})+)[.,](\d{1,2})$/.exec(digits);
  if (m) return Number(`${(m[1] ?? "").replace(/[.,]/g, "")}.${m[2] ?? ""}`);
  return Number(digits.replace(",", "."));
}

function findNumbers(text: string, norm: string, nw: NumberWords = numberWords(null)): NumberMention[] {
  const out: NumberMention[] = [];
  for (const m of norm.matchAll(DIGITS)) {
    const [, sign, digits = "", kilo] = m;
    // "3-5 days": the dash is a range, not a sign; "-2 people" after a space or at the start is a sign.
    const signed = sign !== undefined && (m.index === 0 || /[\s$€£¥₹₩]/.test(norm[m.index - 1] ?? ""));
    const start = signed ? m.index : m.index + (sign?.length ?? 0);
    let value = parseDigits(digits) * (kilo ? 1000 : 1);
    if (signed) value = -value;
    // "2 thousand", "3 mil"
    const after = MULTIPLIER_AFTER.exec(norm.slice(m.index + m[0].length));
    let end = m.index + m[0].length;
    if (after && !kilo) {
      value *= nw.mults[after[1] ?? ""] ?? 1;
      end += after[0].length;
    }
    const half = HALF.exec(norm.slice(end));
    if (half) {
      value += Math.sign(value || 1) * 0.5;
      end += half[0].length;
    }
    out.push({ ...span(text, start, end), value, word: false });
  }
  // Spelled numbers: runs of number words and glue.
  const tokens = [...norm.matchAll(/[a-z]+(?:-[a-z]+)*|-/g)];
  let i = 0;
  while (i < tokens.length) {
    const parsed = spelledAt(tokens, i, norm, nw);
    if (!parsed) {
      i++;
      continue;
    }
    const { value, start, end, next, words } = parsed;
    // French "très" (very) folds to Spanish "tres".
    const notNumber = words.length === 1 && NOT_NUMBERS.has(text.slice(start, end).toLowerCase());
    if (!(words.length === 1 && ARTICLE_ONES.has(words[0] ?? "")) && !notNumber) {
      const half = HALF.exec(norm.slice(end));
      const to = end + (half?.[0].length ?? 0);
      if (!overlaps({ start, end: to }, out))
        out.push({ ...span(text, start, to), value: value + (half ? 0.5 : 0), word: true });
    }
    i = next;
  }
  return out.sort((a, b) => a.start - b.start);
}

function wordValue(w: string, nw: NumberWords): { unit: number } | { mult: number } | null {
  if (w in nw.mults) return { mult: nw.mults[w]! };
  if (w in nw.units) return { unit: nw.units[w]! };
  const compound = compoundValue(w, nw);
  if (compound !== null) return { unit: compound };
  // "twenty-five", "vingt-deux", "soixante-dix"
  if (w.includes("-")) {
    let sum = 0;
    for (const p of w.split("-").filter((x) => !NUMBER_GLUE.has(x))) {
      const v = nw.units[p];
      if (v === undefined) return null;
      // "quatre-vingt-dix": four twenties and ten.
      sum = TWENTIES.has(p) && sum > 0 && sum < 20 ? sum * 20 : sum + v;
    }
    return { unit: sum };
  }
  return null;
}

function spelledAt(
  tokens: RegExpMatchArray[],
  i: number,
  norm: string,
  nw: NumberWords,
): { value: number; start: number; end: number; next: number; words: string[] } | null {
  const first = tokens[i]?.[0] ?? "";
  const startsWithArticle = ARTICLE_BEFORE_MULTIPLIER.has(first);
  // "a hundred", "a thousand": the article counts as one.
  if (startsWithArticle) {
    const second = tokens[i + 1]?.[0] ?? "";
    if (!(second in nw.mults)) return null;
  } else if (wordValue(first, nw) === null) return null;
  else if (first in nw.mults && !STANDALONE_MULTIPLIERS.has(first)) return null;
  let total = 0;
  let current = 0;
  let j = i;
  let last = i;
  const words: string[] = [];
  let sawNumber = false;
  while (j < tokens.length) {
    const w = tokens[j]?.[0] ?? "";
    if (j > i) {
      // Only spaces between the words of one number.
      const gap = norm.slice((tokens[j - 1]?.index ?? 0) + (tokens[j - 1]?.[0].length ?? 0), tokens[j]?.index ?? 0);
      if (!/^\s*$/.test(gap)) break;
    }
    if (j === i && startsWithArticle) {
      current = 1;
      words.push(w);
      j++;
      continue;
    }
    if (NUMBER_GLUE.has(w) && sawNumber) {
      // "twenty and five", "treinta y cinco", "vingt et un", "one hundred and five" — not "two and three".
      const nextValue = wordValue(tokens[j + 1]?.[0] ?? "", nw);
      const sofar = total + current;
      const glued =
        nextValue &&
        "unit" in nextValue &&
        ((current >= 20 && current % 10 === 0 && nextValue.unit < 10) ||
          (sofar >= 100 && sofar % 100 === 0 && nextValue.unit < 100));
      if (glued) {
        j++;
        continue;
      }
      break;
    }
    const v = wordValue(w, nw);
    if (!v) break;
    if ("mult" in v) {
      if (v.mult >= 1000) {
        total += (current || 1) * v.mult;
        current = 0;
      } else current = (current || 1) * v.mult;
    } else if (TWENTIES.has(w) && current > 0 && current < 20) {
      current *= 20; // French "quatre vingts" written apart
    } else if (v.unit >= 100) {
      current += v.unit; // "doscientos", "cent"
    } else current += v.unit;
    words.push(w);
    sawNumber = true;
    last = j;
    j++;
  }
  if (!sawNumber && !startsWithArticle) return null;
  if (words.length === 0) return null;
  const start = tokens[i]?.index ?? 0;
  const end = (tokens[last]?.index ?? 0) + (tokens[last]?.[0].length ?? 0);
  return { value: total + current, start, end, next: last + 1, words };
}

/**
 * Ranges between two numbers: "3-5", "3 to 5", "between 1000 and 1500", "entre 3 y 5", "de 3 à 5", and two small
 * whole figures on either side of a slash ("3/4 people"), which may also be a date or a fraction: what follows
 * says which, and the caller that knows its nouns decides.
 */
const RANGE_BETWEEN = everyLanguage((l) => l.ranges.between);
/** What stands between the two numbers of a range: a dash or a word ("to", "hasta", "ou"). */
const RANGE_GAP = new RegExp(`^\\s*(?:-|–|${everyLanguage((l) => l.ranges.joiners).join("|")})\\s*$`);
const RANGE_AND = new RegExp(`^\\s*(?:${everyLanguage((l) => l.ranges.betweenAnd).join("|")})\\s*$`);
const RANGE_BETWEEN_BEFORE = new RegExp(`(?:${RANGE_BETWEEN.join("|")})\\s*$`);
/** "between" or "from" before a range's first number, part of its span. */
const RANGE_OPENER = new RegExp(`(?:${[...RANGE_BETWEEN, ...everyLanguage((l) => l.ranges.from)].join("|")})\\s*$`);

function findRanges(text: string, norm: string, numbers: readonly NumberMention[]): RangeMention[] {
  const out: RangeMention[] = [];
  for (let k = 0; k + 1 < numbers.length; k++) {
    const a = numbers[k]!;
    const b = numbers[k + 1]!;
    const gap = norm.slice(a.end, b.start);
    const slash = gap === "/" && !a.word && !b.word && Number.isInteger(a.value) && Number.isInteger(b.value);
    if (!slash && !RANGE_GAP.test(gap) && !(RANGE_AND.test(gap) && RANGE_BETWEEN_BEFORE.test(norm.slice(0, a.start))))
      continue;
    // "-" glued to a digit was read as a sign: "3-5" gives 3 and -5.
    const max = gap.trim() === "" && b.value < 0 ? -b.value : b.value;
    const before = RANGE_OPENER.exec(norm.slice(0, a.start));
    const start = before ? a.start - before[0].length : a.start;
    if (max > a.value) out.push({ ...span(text, start, b.end), min: a.value, max });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Money

/**
 * Currency marks: symbols and ISO codes, and the names every language gives them, each with its code ("" where the name
 * is no one currency: kept as a mark, so a toolkit can ask). Longest first when matching.
 */
const CURRENCY_MARKS: [string, string][] = [
  ...Object.entries(CURRENCY_SIGNS),
  ...LANGUAGE_CODES.flatMap((code) => Object.entries(LANGUAGES[code].currencies)),
]
  .map(([mark, iso]): [string, string] => [mark, iso ?? ""])
  .sort((a, b) => b[0].length - a[0].length);

function markRegex(after: boolean): RegExp {
  const alts = CURRENCY_MARKS.map(([m]) => (/^[a-z]/.test(m) ? `${escapeRegExp(m)}(?![a-z])` : escapeRegExp(m))).join(
    "|",
  );
  return after ? new RegExp(`^\\s*(${alts})`) : new RegExp(`(${alts})\\s*$`);
}
const MARK_AFTER = markRegex(true);
const MARK_BEFORE = markRegex(false);

function currencyOfMark(mark: string): string | null {
  const found = CURRENCY_MARKS.find(([m]) => m === mark);
  return found && found[1] !== "" ? found[1] : null;
}

/** Amounts of money: a number with a currency mark before or after it ("$2000", "2.000 €", "two thousand dollars"). */
function findAmounts(text: string, norm: string, numbers: readonly NumberMention[]): Amount[] {
  const out: Amount[] = [];
  for (const n of numbers) {
    const after = MARK_AFTER.exec(norm.slice(n.end));
    const before = MARK_BEFORE.exec(norm.slice(Math.max(0, n.start - 12), n.start));
    // A letter mark right before a number only when glued to it or spaced ("CHF 2000", "USD 500"), not "a pound of".
    const mark = after?.[1] ?? before?.[1] ?? null;
    if (mark === null) continue;
    const start = after ? n.start : n.start - (before?.[0].length ?? 0);
    const end = after ? n.end + (after[0].length ?? 0) : n.end;
    // "2 dollars" is money; "2 people" is not. A bare "$" or code always is.
    out.push({
      ...span(text, start, end),
      value: n.value,
      currency: currencyOfMark(mark),
      mark: text.slice(after ? n.end + (after[0].length - mark.length) : start, after ? end : start + mark.length),
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Dates, task verbs, names

/** Times chrono-node does not read as dates in these languages (weekends, seasons): read as dates all the same. */
const RELATIVE_DATES = each(everyLanguage((l) => l.dates.relative));

/**
 * Dates and ranges of dates, by chrono-node in the request's language (src/reasoning/recognizers.ts), plus the
 * weekends and seasons it does not read.
 */
function findDates(
  text: string,
  norm: string,
  language: string | null,
  numbers: readonly Span[],
): { dates: DateMention[]; lengthOrStart: Span[] } {
  const locale =
    language !== null && (DATE_LANGUAGES as readonly string[]).includes(language) ? (language as DateLanguage) : "en";
  const found = recognizeDates(text, [locale]).filter(
    // "per tre giorni", "voor drie dagen": a length counted in words, which chrono takes for a date that far ahead.
    (d) => !(d.relative && d.begins === undefined && overlaps(d, numbers)),
  );
  // "in 3 days" says when, or how long ("Rome in 3 days"): when, if a verb of leaving says the trip starts then or the
  // request gives its length otherwise ("in 2 weeks for 4 days"); else a length, and whoever reads lengths says so.
  const lengthOrStart: Span[] = [];
  const out = found.filter((d) => {
    if (d.begins !== "maybe") return true;
    const before = norm.slice(0, d.start);
    const otherLength = numbers.some((n) => !overlaps(n, [d]) && LENGTH_AFTER.test(norm.slice(n.end)));
    if (otherLength || DEPARTING.test(before)) return true;
    lengthOrStart.push(span(text, d.start, d.end));
    return false;
  });
  for (const phrase of RELATIVE_DATES)
    for (const m of norm.matchAll(phrase)) {
      const s = span(text, m.index, m.index + m[0].length);
      if (!overlaps(s, out)) out.push({ ...s, first: null, last: null, days: null, relative: true });
    }
  return { dates: out.sort((a, b) => a.start - b.start), lengthOrStart };
}

/** Verbs of setting off, before "in 3 days": then it is when ("fly to Paris in 3 days", "salir en 3 días"). */
const DEPARTING = new RegExp(`(?<![a-z])(?:${everyLanguage((l) => l.dates.departing).join("|")})(?![a-z])`);
/** A unit of time after a figure: the request gives a length of its own. */
const LENGTH_AFTER = new RegExp(`^\\s*-?\\s*(?:${everyLanguage((l) => l.dates.lengthUnits).join("|")})(?![a-z])`);

/**
 * Verbs that ask for something to be done, by their English infinitive, with the forms a request uses in the
 * languages read (imperative, infinitive, "-ing"). Matching a form names the task; whether a tool does it is the
 * planner's question.
 */
const TASK_VERBS = Object.fromEntries(
  TASK_VERB_NAMES.map((verb) => [verb, everyLanguage((l) => l.taskVerbs[verb] ?? [])]),
) as Record<(typeof TASK_VERB_NAMES)[number], string[]>;

/**
 * Task verbs in the request. A tool's keyword that is the "-ing" form of a verb's form ("posting" of "post") is that
 * verb too: a toolkit names its work with such nouns.
 */
function findTaskVerbs(text: string, norm: string, toolWords: ReadonlySet<string>): TaskVerb[] {
  const out: TaskVerb[] = [];
  const base = Object.entries(TASK_VERBS).flatMap(([verb, fs]) => fs.map((f) => [verb, f] as const));
  const known = new Set(base.map(([, f]) => f));
  const derived = base.flatMap(([verb, f]) =>
    toolWords.has(`${f}ing`) && !known.has(`${f}ing`) ? [[verb, `${f}ing`] as const] : [],
  );
  const forms = [...base, ...derived].sort((a, b) => b[1].length - a[1].length);
  for (const [verb, form] of forms) {
    for (const m of norm.matchAll(new RegExp(`${B}${escapeRegExp(form)}${E}`, "g"))) {
      const s = { start: m.index, end: m.index + m[0].length };
      if (overlaps(s, out)) continue;
      out.push({ ...span(text, s.start, s.end), verb });
    }
  }
  return out.sort((a, b) => a.start - b.start);
}

/** Everyday words that open a sentence: never the start of a name (nor are the tools' own words, see findNames). */
const SENTENCE_STARTERS = new Set(everyLanguage((l) => l.names.sentenceStarters));

/** Capitalised words that are not names even mid-sentence. */
const NOT_NAMES = new Set(everyLanguage((l) => l.names.notNames));
/** Small words inside a name ("Isle of Man", "Puerto de la Cruz"). */
const CONNECTORS = everyLanguage((l) => l.names.connectors).map((w) => `${escapeRegExp(w)}\\s+`);
/** A capitalised word or a run of them: a candidate name. */
const CAPITALISED = new RegExp(`\\p{Lu}[\\p{L}'’.-]*(?:\\s+(?:${CONNECTORS.join("|")})?\\p{Lu}[\\p{L}'’-]*)*`, "gu");
/** An article before a capitalised word that makes it a noun (German capitalises every noun): "eine Woche". */
const NOUN_ARTICLE = new RegExp(`(?<![\\p{L}])(?:${everyLanguage((l) => l.names.nounArticles).join("|")})\\s+$`, "iu");

/**
 * Capitalised words and runs of them ("New York", "Puerto Rico"), not at the start of a sentence (where a
 * capital says nothing), plus all-capital codes of 3+ letters that are not currency codes. Candidate places and
 * names: a toolkit that reads one accounts for it.
 */
function findNames(
  text: string,
  amounts: readonly Span[],
  toolWords: ReadonlySet<string>,
  numbers: readonly Span[] = [],
): Span[] {
  const everyday = (w: string) =>
    SENTENCE_STARTERS.has(w) ||
    FUNCTION_WORDS.has(w) ||
    toolWords.has(foldCase(w)) ||
    toolWords.has(foldCase(w).replace(/s$/, ""));
  const out: Span[] = [];
  for (const m of text.matchAll(CAPITALISED)) {
    const start = m.index;
    const before = text.slice(0, start);
    const sentenceStart = /^\s*["'(¿¡]?\s*$/.test(before) || /[.!?]\s*["'(¿¡]?\s*$/.test(before);
    const word = m[0].replace(/[.'’-]+$/, "");
    if (NOT_NAMES.has(word.toLowerCase())) continue;
    if (overlaps({ start, end: start + word.length }, amounts)) continue;
    // What a figure counts is no name, capitalised or not ("4 Tage", "2 Personen": German capitalises nouns), nor
    // a German noun after its article ("eine Woche", "kein Hotel").
    if (numbers.some((n) => /^\s+$/.test(text.slice(n.end, start)))) continue;
    if (NOUN_ARTICLE.test(text.slice(0, start))) continue;
    if (/^[A-Z]{1,2}$/.test(word)) continue;
    let from = start;
    let name = word;
    if (sentenceStart) {
      // A sentence's first word is capitalised anyway: a name only when it is not an everyday word and more
      // capitalised words follow ("New York trip"), or the rest of the run once it is dropped ("Then Rome").
      const [first = "", ...rest] = word.split(/\s+/);
      if (rest.length === 0) continue;
      if (everyday(first.toLowerCase())) {
        from = start + word.indexOf(rest[0]!);
        name = word.slice(from - start);
      }
    }
    out.push(span(text, from, from + name.length));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Language

/** Frequent words of each language (folded), to tell which one a request is written in. */
const TELLING = new Map(LANGUAGE_CODES.map((code) => [code, new Set(LANGUAGES[code].telling)]));

const languageNames = new Intl.DisplayNames(["en"], { type: "language" });

/** The language a request is written in, and whether the tables here read it. */
interface Language {
  /** ISO 639-1 code ("en", "de", "ja"). */
  code: string;
  /** Its English name ("German"). */
  name: string;
  /** Whether the lexicon reads it: a request in another language is named as such, never half-read. */
  read: boolean;
  /**
   * False when the words are too few to tell ("Roma", "Roma con amici": Italian or Spanish): then `code` is only the
   * first of `candidates`, no word is read as only one of them would read it, and dates are read as in English.
   */
  certain: boolean;
  /** The languages the request may be in, when uncertain (every one the tables read when no word tells). */
  candidates: string[];
}

/**
 * Which language a request is in: a script the tables cannot read decides when it makes up a third of the letters;
 * otherwise the language with the most of its frequent words (and of its own number words) present. With none, or
 * a tie, the evidence is too thin to guess: uncertain, never a wrong guess.
 */
function guessLanguage(text: string, norm = foldCase(text)): Language {
  const letters = (text.match(/\p{L}/gu) ?? []).length || 1;
  for (const [script, code] of UNREAD_SCRIPTS) {
    if ((text.match(script) ?? []).length * 3 >= letters)
      return { code, name: languageNames.of(code) ?? code, read: false, certain: true, candidates: [code] };
  }
  const words = norm.match(/[a-z']+/g) ?? [];
  const scores = LANGUAGE_CODES.map((code) => {
    const own = numberWords(code);
    const numbers = words.filter((w) => !(w in UNITS) && (w in own.own || compoundValue(w, own) !== null));
    return { code, score: words.filter((w) => TELLING.get(code)?.has(w)).length + numbers.length };
  });
  const top = Math.max(...scores.map((x) => x.score));
  const best = scores.filter((x) => x.score === top).map((x) => x.code);
  const code = best[0] ?? "en";
  return {
    code,
    name: languageNames.of(code) ?? code,
    read: true,
    certain: top > 0 && best.length === 1,
    candidates: best,
  };
}

/**
 * Reads a request: the generic layer every toolkit's interpretation builds on. `toolWords`: the keywords the tools
 * name their work with; one that opens a sentence is not the start of a name ("Report North Sales": a report tool's).
 */
export function analyzeRequest(written: string, toolWords: Iterable<string> = []): Analysis {
  const { text, invisible } = withoutInvisible(written);
  const words = new Set([...toolWords].map((w) => foldCase(w)));
  const norm = foldCase(text);
  const language = guessLanguage(text, norm);
  const own = language.certain ? language.code : null;
  const numbers = findNumbers(text, norm, numberWords(own));
  const unsure = language.certain ? [] : unsureNumbers(text, norm, numbers, language.candidates);
  const ranges = findRanges(text, norm, numbers);
  const { dates, lengthOrStart } = findDates(text, norm, own, numbers);
  // Never inside a date either: "vom 16. bis 18. März" is one.
  const clauses = splitClauses(text, norm, [...numbers, ...ranges, ...dates]);
  const amounts = findAmounts(text, norm, numbers);
  const { negations, waivers } = findNegations(text, norm, clauses);
  return {
    text,
    norm,
    language,
    clauses,
    negations,
    waivers,
    onlys: findOnlys(text, norm, clauses),
    numbers,
    ranges,
    amounts,
    dates,
    taskVerbs: findTaskVerbs(text, norm, words),
    names: findNames(text, amounts, words, numbers),
    invisible,
    lengthOrStart,
    unsure,
  };
}

/** The numbers one of the candidate languages would read that the uncertain reading does not ("sei" in Italian). */
function unsureNumbers(text: string, norm: string, read: readonly Span[], candidates: readonly string[]): Span[] {
  const out: Span[] = [];
  for (const code of candidates)
    for (const n of findNumbers(text, norm, numberWords(code)))
      if (!overlaps(n, read) && !overlaps(n, out)) out.push(span(text, n.start, n.end));
  return out.sort((a, b) => a.start - b.start);
}

// ---------------------------------------------------------------------------------------------------------------
// Content words

/**
 * Words that ask for nothing by themselves, in every language read (folded: no accents): articles, pronouns,
 * prepositions, auxiliaries, the verbs of asking ("I would like", "can you get me", "quisiera", "je voudrais"),
 * politeness and a few empty intensifiers. What a clause says beyond these, its numbers, dates, amounts and names,
 * is what it asks about — and something in the plan must serve it.
 */
const STOP_WORDS = new Set(everyLanguage((l) => l.stopWords));

/**
 * The words of the request that may carry what it asks: every word that is not a stop word and has a letter. A
 * word keeps its dots, slashes, hyphens and digits ("README.md", "src/app.ts", "3-day"), so a file name or a
 * figure is one word; it splits at apostrophes ("l'hôtel" gives "hôtel"). Spans point into the original text.
 */
export function contentWords(a: Analysis): Span[] {
  const out: Span[] = [];
  for (const m of a.norm.matchAll(/[a-z0-9]+(?:[./_-][a-z0-9]+)*/g)) {
    if (!/[a-z]/.test(m[0]) || m[0].length < 2 || STOP_WORDS.has(m[0])) continue;
    out.push(span(a.text, m.index, m.index + m[0].length));
  }
  return out;
}
