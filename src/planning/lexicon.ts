import { DATE_LANGUAGES, recognizeDates, type DateLanguage, type DateMention } from "../reasoning/recognizers.js";
import { everyLanguage } from "./languages/index.js";

/**
 * Generic reading of a request: its language, clauses, the scope of a negation and of "only", what it says it has
 * no constraint on, numbers (digits and words), amounts of money with their currency, ranges, dates, task verbs and
 * names. Every mention carries its span in the original text, so the planner can tell which words served the plan
 * and which served nothing. Nothing here knows a domain: toolkits read their own meaning on top of it.
 *
 * Dates come from a maintained recognizer, chrono-node, in the request's language (src/reasoning/recognizers.ts).
 * The rest are small tables in English, Spanish, French, German, Italian, Portuguese and Dutch: what the planner
 * needs — negation and "only" scopes, number words, currency marks, spans into the original text — no maintained
 * JavaScript library reads in these languages (`compromise` reads English only; Microsoft's recognizers-text
 * reads neither German, Italian nor Dutch numbers, and costs seconds on its first call). A request in another
 * language is named as such (`language.read`), never half-read.
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

const UNITS: Record<string, number> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
  cero: 0,
  uno: 1,
  una: 1,
  dos: 2,
  tres: 3,
  cuatro: 4,
  cinco: 5,
  seis: 6,
  siete: 7,
  ocho: 8,
  nueve: 9,
  diez: 10,
  doce: 12,
  trece: 13,
  catorce: 14,
  quince: 15,
  dieciseis: 16,
  diecisiete: 17,
  dieciocho: 18,
  diecinueve: 19,
  veinte: 20,
  veintiuno: 21,
  veintidos: 22,
  veintitres: 23,
  veinticuatro: 24,
  veinticinco: 25,
  treinta: 30,
  cuarenta: 40,
  cincuenta: 50,
  sesenta: 60,
  setenta: 70,
  ochenta: 80,
  noventa: 90,
  doscientos: 200,
  trescientos: 300,
  cuatrocientos: 400,
  quinientos: 500,
  seiscientos: 600,
  setecientos: 700,
  ochocientos: 800,
  novecientos: 900,
  cien: 100,
  ciento: 100,
  un: 1,
  une: 1,
  deux: 2,
  trois: 3,
  quatre: 4,
  cinq: 5,
  sept: 7,
  huit: 8,
  neuf: 9,
  dix: 10,
  onze: 11,
  douze: 12,
  treize: 13,
  quatorze: 14,
  quinze: 15,
  seize: 16,
  vingt: 20,
  vingts: 20,
  trente: 30,
  quarante: 40,
  cinquante: 50,
  soixante: 60,
  "quatre-vingt": 80,
  "quatre-vingts": 80,
};
const MULTIPLIERS: Record<string, number> = {
  dozen: 12,
  hundred: 100,
  cent: 100,
  cents: 100,
  thousand: 1000,
  million: 1_000_000,
  millions: 1_000_000,
  grand: 1000,
  mil: 1000,
  millon: 1_000_000,
  millones: 1_000_000,
  mille: 1000,
};
/**
 * Number words of languages whose words collide with English and with each other ("due", "sei", "elf", "acht",
 * "vier", "nove"): read only in a request written in that language (see guessLanguage).
 */
const UNITS_BY_LANGUAGE: Partial<Record<string, Record<string, number>>> = {
  de: {
    zwei: 2,
    drei: 3,
    vier: 4,
    funf: 5,
    sechs: 6,
    sieben: 7,
    acht: 8,
    neun: 9,
    zehn: 10,
    elf: 11,
    zwolf: 12,
    sechzehn: 16,
    siebzehn: 17,
    zwanzig: 20,
    dreissig: 30,
    dreisig: 30,
    vierzig: 40,
    funfzig: 50,
    sechzig: 60,
    siebzig: 70,
    achtzig: 80,
    neunzig: 90,
  },
  it: {
    due: 2,
    tre: 3,
    quattro: 4,
    cinque: 5,
    sei: 6,
    sette: 7,
    otto: 8,
    nove: 9,
    dieci: 10,
    undici: 11,
    dodici: 12,
    tredici: 13,
    quattordici: 14,
    quindici: 15,
    sedici: 16,
    diciassette: 17,
    diciotto: 18,
    diciannove: 19,
    venti: 20,
    trenta: 30,
    quaranta: 40,
    cinquanta: 50,
    sessanta: 60,
    settanta: 70,
    ottanta: 80,
    novanta: 90,
  },
  pt: {
    dois: 2,
    duas: 2,
    tres: 3,
    quatro: 4,
    cinco: 5,
    seis: 6,
    sete: 7,
    oito: 8,
    nove: 9,
    dez: 10,
    onze: 11,
    doze: 12,
    quinze: 15,
    vinte: 20,
    trinta: 30,
    quarenta: 40,
    cinquenta: 50,
  },
  nl: {
    twee: 2,
    drie: 3,
    vier: 4,
    vijf: 5,
    zes: 6,
    zeven: 7,
    acht: 8,
    negen: 9,
    tien: 10,
    elf: 11,
    twaalf: 12,
    dertien: 13,
    veertien: 14,
    vijftien: 15,
    zestien: 16,
    zeventien: 17,
    achttien: 18,
    negentien: 19,
    twintig: 20,
    dertig: 30,
    veertig: 40,
    vijftig: 50,
    zestig: 60,
    zeventig: 70,
    tachtig: 80,
    negentig: 90,
  },
};
const MULTIPLIERS_BY_LANGUAGE: Partial<Record<string, Record<string, number>>> = {
  de: { hundert: 100, tausend: 1000 },
  it: { cento: 100, mila: 1000, mille: 1000 },
  pt: { cem: 100, cento: 100 },
  nl: { honderd: 100, duizend: 1000 },
};

/**
 * Languages that write a number as one word ("zweitausendfünfhundert", "vijfentwintig", "duemilacinquecento"): the
 * parts such a word is made of besides the language's own number words — "one" as a prefix ("einundzwanzig"), the
 * "and" between a unit and its tens, Italian tens that drop their vowel ("ventotto").
 */
const COMPOUND_PARTS: Partial<Record<string, { units: Record<string, number>; glue: string[] }>> = {
  de: { units: { ein: 1, eins: 1 }, glue: ["und"] },
  nl: { units: { een: 1 }, glue: ["en", "ën"] },
  it: { units: { uno: 1, un: 1, vent: 20, trent: 30, quarant: 40, cinquant: 50, sessant: 60 }, glue: [] },
};

/** The number words read in a request of this language: English, Spanish and French always, plus its own. */
interface NumberWords {
  units: Record<string, number>;
  mults: Record<string, number>;
  /** The parts of a number written as one word, longest first; empty where the language does not. */
  parts: [string, number | null][];
}
function numberWords(language: string | null): NumberWords {
  const own = language === null ? undefined : UNITS_BY_LANGUAGE[language];
  const mults = language === null ? undefined : MULTIPLIERS_BY_LANGUAGE[language];
  const compound = language === null ? undefined : COMPOUND_PARTS[language];
  const parts: [string, number | null][] = compound
    ? [
        ...Object.entries({ ...own, ...compound.units }),
        ...Object.entries(mults ?? {}),
        ...compound.glue.map((g): [string, null] => [g, null]),
      ]
    : [];
  return {
    units: { ...UNITS, ...own },
    mults: { ...MULTIPLIERS, ...mults },
    parts: parts.sort((a, b) => b[0].length - a[0].length),
  };
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
const STANDALONE_MULTIPLIERS = new Set([
  "hundred",
  "thousand",
  "mil",
  "mille",
  "cent",
  "million",
  "millions",
  "millon",
  "millones",
]);
/** Words that join the parts of one spelled number ("twenty-five", "treinta y cinco", "vingt et un"). */
const NUMBER_GLUE = new Set(["and", "y", "et", "-"]);
/** Words for "one" that are usually articles: never a number on their own. */
const ARTICLE_ONES = new Set(["un", "une", "una", "uno", "a", "an"]);

/** "two and a half", "dos y medio", "deux et demi": half more than the number before it. */
const HALF = /^\s+(?:and a half|y medio|y media|et demi|et demie)(?![a-z])/;

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
    const after = /^\s+(thousand|mil|mille|million|millones|millon|grand)(?![a-z])/.exec(
      norm.slice(m.index + m[0].length),
    );
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
    const accentedTres = words.length === 1 && words[0] === "tres" && text.slice(start, end).toLowerCase() === "très";
    if (!(words.length === 1 && ARTICLE_ONES.has(words[0] ?? "")) && !accentedTres) {
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
    const parts = w.split("-").filter((p) => !NUMBER_GLUE.has(p));
    if (w.startsWith("quatre-vingt")) {
      const rest = parts.slice(2).reduce((sum, p) => sum + (nw.units[p] ?? NaN), 0);
      return Number.isNaN(rest) ? null : { unit: 80 + rest };
    }
    let sum = 0;
    for (const p of parts) {
      const v = nw.units[p];
      if (v === undefined) return null;
      sum += v;
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
  const startsWithArticle = first === "a" || first === "an";
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
    } else if (v.unit === 20 && current > 0 && current < 20 && w.startsWith("vingt")) {
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
function findRanges(text: string, norm: string, numbers: readonly NumberMention[]): RangeMention[] {
  const out: RangeMention[] = [];
  for (let k = 0; k + 1 < numbers.length; k++) {
    const a = numbers[k]!;
    const b = numbers[k + 1]!;
    const gap = norm.slice(a.end, b.start);
    const slash = gap === "/" && !a.word && !b.word && Number.isInteger(a.value) && Number.isInteger(b.value);
    if (
      !slash &&
      !/^\s*(?:-|–|to|a|au|hasta|or|ou|o|oder)\s*$/.test(gap) &&
      !(/^\s*(?:and|y|et)\s*$/.test(gap) && /(?:between|entre)\s*$/.test(norm.slice(0, a.start)))
    )
      continue;
    // "-" glued to a digit was read as a sign: "3-5" gives 3 and -5.
    const max = gap.trim() === "" && b.value < 0 ? -b.value : b.value;
    const before = /(?:between|entre|from|de|desde)\s*$/.exec(norm.slice(0, a.start));
    const start = before ? a.start - before[0].length : a.start;
    if (max > a.value) out.push({ ...span(text, start, b.end), min: a.value, max });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Money

/** Currency marks: symbols, ISO codes and names in the three languages. Longest first when matching. */
const CURRENCY_MARKS: [string, string][] = (
  [
    ["us$", "USD"],
    ["$", "USD"],
    ["usd", "USD"],
    ["us dollars", "USD"],
    ["dollars", "USD"],
    ["dollar", "USD"],
    ["bucks", "USD"],
    ["dolares", "USD"],
    ["dolar", "USD"],
    ["€", "EUR"],
    ["eur", "EUR"],
    ["euros", "EUR"],
    ["euro", "EUR"],
    ["£", "GBP"],
    ["gbp", "GBP"],
    ["pounds", "GBP"],
    ["pound", "GBP"],
    ["quid", "GBP"],
    ["libras", "GBP"],
    ["livres sterling", "GBP"],
    ["livres", "GBP"],
    ["¥", "JPY"],
    ["jpy", "JPY"],
    ["yen", "JPY"],
    ["yenes", "JPY"],
    ["chf", "CHF"],
    ["swiss francs", "CHF"],
    ["swiss franc", "CHF"],
    ["francos suizos", "CHF"],
    ["francs suisses", "CHF"],
    ["fr.", "CHF"],
    ["c$", "CAD"],
    ["cad", "CAD"],
    ["canadian dollars", "CAD"],
    ["dollars canadiens", "CAD"],
    ["dolares canadienses", "CAD"],
    ["a$", "AUD"],
    ["aud", "AUD"],
    ["australian dollars", "AUD"],
    ["dollars australiens", "AUD"],
    ["dolares australianos", "AUD"],
    ["cny", "CNY"],
    ["yuan", "CNY"],
    ["rmb", "CNY"],
    ["₹", "INR"],
    ["inr", "INR"],
    ["rupees", "INR"],
    ["rupias", "INR"],
    ["mxn", "MXN"],
    ["mexican pesos", "MXN"],
    ["sek", "SEK"],
    ["swedish kronor", "SEK"],
    ["nok", "NOK"],
    ["dkk", "DKK"],
    ["czk", "CZK"],
    ["korunas", "CZK"],
    ["pln", "PLN"],
    ["zloty", "PLN"],
    ["huf", "HUF"],
    ["forints", "HUF"],
    ["brl", "BRL"],
    ["reais", "BRL"],
    ["krw", "KRW"],
    ["₩", "KRW"],
    ["won", "KRW"],
    ["korean won", "KRW"],
    ["lira", "TRY"],
    ["liras", "TRY"],
    // Names the table cannot pin to one currency: kept as marks, with no code, so a toolkit can ask.
    ["pesos", ""],
    ["peso", ""],
    ["francs", ""],
    ["franc", ""],
    ["francos", ""],
    ["kronor", ""],
    ["kroner", ""],
    ["krone", ""],
    ["kr", ""],
    ["crowns", ""],
    ["coronas", ""],
    ["couronnes", ""],
    ["dinars", ""],
    ["dirhams", ""],
  ] as [string, string][]
).sort((a, b) => b[0].length - a[0].length);

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
const RELATIVE_DATES = [
  "this summer",
  "this winter",
  "this spring",
  "this autumn",
  "this fall",
  "next summer",
  "this weekend",
  "este fin de semana",
  "el fin de semana que viene",
  "la semana que viene",
  "la proxima semana",
  "el mes que viene",
  "este verano",
  "ce week-end",
  "ce weekend",
  "le week-end prochain",
  "cet ete",
  "dieses wochenende",
  "diesen sommer",
  "questo fine settimana",
  "quest'estate",
  "este fim de semana",
  "dit weekend",
];

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
    for (const m of norm.matchAll(new RegExp(`${B}${escapeRegExp(phrase)}${E}`, "g"))) {
      const s = span(text, m.index, m.index + m[0].length);
      if (!overlaps(s, out)) out.push({ ...s, first: null, last: null, days: null, relative: true });
    }
  return { dates: out.sort((a, b) => a.start - b.start), lengthOrStart };
}

/** Verbs of setting off, before "in 3 days": then it is when ("fly to Paris in 3 days", "salir en 3 días"). */
const DEPARTING =
  /(?<![a-z])(?:fly|flying|leave|leaving|depart|departing|go|going|travel|travell?ing|head|heading|set off|setting off|start|starting|begin|beginning|volar|volamos|salir|salimos|salgo|ir|vamos|viajar|partir|partimos)(?![a-z])/;
/** A unit of time after a figure: the request gives a length of its own. */
const LENGTH_AFTER = /^\s*-?\s*(?:days?|nights?|weeks?|dias?|noches?|semanas?|jours?|nuits?|semaines?)(?![a-z])/;

/**
 * Verbs that ask for something to be done, by their English infinitive, with the forms a request uses in the
 * three languages (imperative, infinitive, "-ing"). Matching a form names the task; whether a tool does it is the
 * planner's question.
 */
const TASK_VERBS: Record<string, string[]> = {
  translate: ["translate", "translating", "traduce", "traducir", "traduceme", "traduis", "traduire", "traduisez"],
  summarize: [
    "summarize",
    "summarise",
    "summarizing",
    "summarising",
    "sum up",
    "resume",
    "resumir",
    "resumeme",
    "resume-moi",
    "resumer",
    "resumez",
  ],
  email: [
    "email",
    "e-mail",
    "mail",
    "emailing",
    "envia un correo",
    "mandar un correo",
    "envoie un mail",
    "envoyer un mail",
    "envoie un courriel",
  ],
  send: ["send", "sending", "envia", "enviar", "manda", "mandar", "envoie", "envoyer", "envoyez"],
  call: ["call", "phone", "calling", "llama", "llamar", "appelle", "appeler", "appelez"],
  text: ["sms", "whatsapp"],
  compare: ["compare", "comparing", "compara", "comparar", "compare-moi", "comparer", "comparez"],
  book: ["book", "reserve", "reserva", "reservar", "reservame", "reserve-moi", "reserver", "reservez"],
  buy: ["buy", "purchase", "compra", "comprar", "achete", "acheter", "commande", "commander"],
  pay: ["pay", "paga", "pagar", "paye", "payer"],
  cancel: ["cancel", "cancela", "cancelar", "annule", "annuler"],
  rent: ["rent", "hire", "alquila", "alquilar", "loue", "louer"],
  find: [
    "find",
    "search",
    "searching for",
    "look for",
    "looking for",
    "look up",
    "busca",
    "buscar",
    "buscame",
    "encuentra",
    "cherche",
    "chercher",
    "trouve",
    "trouver",
  ],
  plan: [
    "plan",
    "organize",
    "organise",
    "planning",
    "planea",
    "planear",
    "planifica",
    "planificar",
    "organiza",
    "organizar",
    "planifie",
    "planifier",
    "organise-moi",
    "organiser",
  ],
  write: [
    "write",
    "draft",
    "compose",
    "writing",
    "escribe",
    "escribir",
    "redacta",
    "redactar",
    "ecris",
    "ecrire",
    "redige",
    "rediger",
  ],
  read: ["read", "open", "reading", "lee", "leer", "lis", "lire"],
  count: ["count", "counting", "cuenta", "contar", "compte", "compter"],
  list: ["list", "listing", "listar", "lister"],
  analyze: ["analyze", "analyse", "analyzing", "analiza", "analizar", "analyse-moi"],
  convert: ["convert", "converting", "convierte", "convertir", "convertis"],
  calculate: ["calculate", "compute", "calcula", "calcular", "calcule", "calculer"],
  remind: ["remind", "recuerdame", "recordar", "rappelle-moi", "rappeler"],
  schedule: ["schedule", "agendar", "programar", "programmer"],
  check: ["check", "verify", "comprueba", "comprobar", "verifica", "verificar", "verifie", "verifier"],
  post: ["post", "tweet", "publish", "publica", "publicar", "publie", "publier"],
  delete: ["delete", "remove", "borra", "borrar", "elimina", "eliminar", "supprime", "supprimer"],
};

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
const SENTENCE_STARTERS = new Set(
  (
    "then also please plan book find take get go i we my our the a an this next last visit fly " +
    "what how can could would help show give tell make send let lets i'd i'm hi hello hey " +
    "planea reserva busca quiero queremos necesito planifie reserve cherche je nous"
  ).split(" "),
);

/** Capitalised words that are not names even mid-sentence. */
const NOT_NAMES = new Set(["i", "i'm", "i'd", "i'll", "ok", "okay", "please", "thanks", "hi", "hello"]);

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
  for (const m of text.matchAll(/\p{Lu}[\p{L}'’.-]*(?:\s+(?:de\s+|del\s+|la\s+|los\s+|of\s+)?\p{Lu}[\p{L}'’-]*)*/gu)) {
    const start = m.index;
    const before = text.slice(0, start);
    const sentenceStart = /^\s*["'(¿¡]?\s*$/.test(before) || /[.!?]\s*["'(¿¡]?\s*$/.test(before);
    const word = m[0].replace(/[.'’-]+$/, "");
    if (NOT_NAMES.has(word.toLowerCase())) continue;
    if (overlaps({ start, end: start + word.length }, amounts)) continue;
    // What a figure counts is no name, capitalised or not ("4 Tage", "2 Personen": German capitalises nouns), nor
    // a German noun after its article ("eine Woche", "kein Hotel").
    if (numbers.some((n) => /^\s+$/.test(text.slice(n.end, start)))) continue;
    if (
      /(?<![\p{L}])(?:der|die|das|den|dem|des|ein|eine|einen|einem|einer|kein|keine|keinen)\s+$/iu.test(
        text.slice(0, start),
      )
    )
      continue;
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

/** Languages whose clauses, negations and numbers the tables here read. */
const READ_LANGUAGES = ["en", "es", "fr", "de", "it", "pt", "nl"] as const;

/** Frequent words of each language the tables read (folded), to tell which one a request is written in. */
const LANGUAGE_WORDS: Record<(typeof READ_LANGUAGES)[number], ReadonlySet<string>> = {
  en: new Set("the and to for from with of in my we i is are want need please days people our".split(" ")),
  es: new Set("el los las del y para con por quiero necesito dias personas desde somos queremos".split(" ")),
  fr: new Set("le les des du et pour avec je nous voudrais jours personnes depuis au aux".split(" ")),
  de: new Set("der die das und in nach von mit fur ich wir mochte eine ein tage personen kein keine nicht".split(" ")),
  it: new Set("il gli di da dal in nel alla per con che non vorrei voglio giorni persone senza della siamo".split(" ")),
  pt: new Set("o os do da para com quero gostaria dias pessoas sem em somos".split(" ")),
  nl: new Set("het een in naar van met voor ik wij wil dagen personen geen niet".split(" ")),
};

/** Scripts the tables cannot read at all, with the language they most often mean. */
const SCRIPTS: [RegExp, string][] = [
  [/[\u3040-\u30ff]/g, "ja"],
  [/[\u4e00-\u9fff]/g, "zh"],
  [/[\uac00-\ud7af]/g, "ko"],
  [/[\u0400-\u04ff]/g, "ru"],
  [/[\u0600-\u06ff]/g, "ar"],
  [/[\u0590-\u05ff]/g, "he"],
  [/[\u0370-\u03ff]/g, "el"],
  [/[\u0900-\u097f]/g, "hi"],
  [/[\u0e00-\u0e7f]/g, "th"],
];

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
  for (const [script, code] of SCRIPTS) {
    if ((text.match(script) ?? []).length * 3 >= letters)
      return { code, name: languageNames.of(code) ?? code, read: false, certain: true, candidates: [code] };
  }
  const words = norm.match(/[a-z']+/g) ?? [];
  const scores = READ_LANGUAGES.map((code) => {
    const own = numberWords(code);
    const numbers = words.filter(
      (w) => !(w in UNITS) && (w in (UNITS_BY_LANGUAGE[code] ?? {}) || compoundValue(w, own) !== null),
    );
    return { code, score: words.filter((w) => LANGUAGE_WORDS[code].has(w)).length + numbers.length };
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
 * Words that ask for nothing by themselves, in the three languages (folded: no accents): articles, pronouns,
 * prepositions, auxiliaries, the verbs of asking ("I would like", "can you get me", "quisiera", "je voudrais"),
 * politeness and a few empty intensifiers. What a clause says beyond these, its numbers, dates, amounts and names,
 * is what it asks about — and something in the plan must serve it.
 */
const STOP_WORDS = new Set(
  // English
  (
    "a an the this that these those some any all each every both either neither another other such same " +
    "i me my mine myself we us our ours ourselves you your yours yourself he him his she her hers it its they them their theirs " +
    "to from in on at by of for with about into onto over through during before after around near along across within via per " +
    "up down out off than as so too very also just only really quite even still again maybe perhaps possibly probably " +
    "and or but nor if then else when where what which who whom whose why how there here " +
    "is are was were be been being am do does did doing done have has had having " +
    "will would shall should can could may might must want wants wanted wanna need needs needed like love " +
    "get gets getting got give show tell let lets make help know think " +
    "please pls kindly thanks thank thx hi hello hey ok okay sure " +
    "go going goes went come coming take bring keep something anything everything nothing thing things somewhere anywhere " +
    "possible posible soon asap well actually basically definitely " +
    "much many most least more less each first finally yet already now " +
    "s t d ll re ve m good nice great best better lovely cool fun quick quickly short brief fit fits fine alright perfect " +
    // Spanish
    "el la los las lo un una unos unas de del al a en para por con y e o u ni que quien cual como cuando donde " +
    "mi mis tu tus su sus nuestro nuestra nuestros nuestras vuestro vuestra me te se nos os le les yo ella ellos ellas " +
    "nosotros nosotras usted ustedes este esta estos estas ese esa esos esas eso esto es son estan ser estar hay " +
    "muy mas tambien solo quiero queremos quisiera quisieramos necesito necesitamos gustaria puedes puede podrias " +
    "tiene tienen tengo tenemos tienes " +
    "dame dime haz hazme favor gracias hola desde hacia hasta entre sobre durante algo todo todos cada primero " +
    // French
    "le les l un une des du d au aux pour par avec et ou qu qui quoi comment quand ma mes ton ta tes sa ses notre nos " +
    "votre vos leur leurs je j il on vous ils elles moi toi lui ce c cet cette ces ca sont etre avoir ai avons avez ont " +
    "veux veut voulons voudrais voudrions aimerais besoin faut plait merci bonjour tres plus aussi depuis vers chez sur dans " +
    "comme juste seulement peux pouvez pourrais donne donnez montre fais faites pendant chaque " +
    // German
    "der die das den dem des ein eine einen einem einer und oder aber mit fur von vom zum zur zu im in am an auf aus " +
    "bei nach uber unter ich wir du sie er es mich mir uns unser unsere mein meine ist sind haben habe " +
    "mochte mochten mochtest wurde wurden will wollen bitte danke hallo auch nur sehr noch schon " +
    // Italian
    "il lo gli di da dal dallo dalla dei del della delle al allo alla nel nella con per tra fra su e ed o ma " +
    "io noi mi ci mio mia nostro nostra sono siamo ho abbiamo vorrei vorremmo voglio vogliamo posso puoi grazie " +
    "ciao anche solo molto " +
    // Portuguese
    "os do dos das na nas no nos num numa em com sem por pelo pela eu nos meu minha nosso nossa sou somos tenho " +
    "temos quero queremos gostaria gostariamos obrigado ola tambem muito " +
    // Dutch
    "het een en naar voor met ik wij we mij ons onze mijn is zijn ben heb hebben wil willen graag alstublieft " +
    "dank ook alleen erg"
  ).split(/\s+/),
);

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
