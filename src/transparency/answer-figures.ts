/*
 * Reading numbers for the answer check (answer-check.ts): strictly in the answer, where a figure the runs do not
 * back costs a sentence, and generously in the evidence, where reading too much only lets a figure stand.
 *
 * A figure of the answer is a number standing as its own word: digits with thousands separators (`2,182`,
 * `1.000.000`, `1 000` with a no-break space, `1'000`) and a decimal part, after a currency sign or not, before `%`
 * or a unit word or not. Not figures, so never checked:
 * - numbers inside a name or an identifier (`IB895`, `CND-0EJ`, `v2`, `file2.txt`, `src/3.ts`), and numbers joined
 *   to letters (`3rd`, `10km`, `2x`);
 * - dates and times, whose numbers are ambiguous (`2026-11-28`, `28/11/2026`, `Nov 28, 2026`, `28 November`,
 *   `09:10`), and `a/b` forms (a fraction or a date);
 * - a list's own numbering (`1.` or `2)` opening a line) and a number cut short by `...` (a cut rendering);
 * - numbers written as words ("twelve").
 * `2,182` reads as 2182 or as 2.182 (a decimal comma), `2,5` as 2.5: a figure is backed when any of its readings is.
 */

const MONTH =
  "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?";

/** Dates and times: masked before figures are read. */
const DATES: readonly RegExp[] = [
  /\b\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?/g,
  /\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b/g,
  /\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?/gi,
  new RegExp(`\\b(?:${MONTH})\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?(?:,?\\s+\\d{4})?\\b`, "gi"),
  new RegExp(`\\b\\d{1,2}(?:st|nd|rd|th)?\\s+(?:of\\s+)?(?:${MONTH})\\b\\.?(?:,?\\s+\\d{4})?`, "gi"),
  new RegExp(`\\b(?:${MONTH})\\s+\\d{4}\\b`, "gi"),
];

/** A list's own numbering at the start of a line. */
const LIST_NUMBER = /^(\s*)\d+[.)](?=\s)/gm;

/**
 * A figure: not inside a word, a path or an identifier (before it no letter, digit, `_`, `.`, `/`, `\`, nor a
 * hyphen joined to a word), and not running on into one (after it no letter, digit, `_`, `/`, `.` + letter, nor
 * the `...` of a cut rendering).
 */
const FIGURE =
  /(?<![\p{L}\p{N}_./\\]|[\p{L}\p{N}]-)\d+(?:[.,'\u00a0\u202f]\d+)*(?![\p{L}\p{N}_/]|\.\p{L}|\.{2,}|…)(\s?%)?/gu;

/** Every number token, for the generous reading of the evidence. */
const NUMBER_TOKEN = /\d+(?:[.,'\u00a0\u202f]\d+)*/g;

/** One figure of an answer: its text, and every value it can be read as. */
export interface Figure {
  text: string;
  values: number[];
  /** Decimal places written, by reading (2,182 → 0 read as thousands, 3 read as a decimal comma). */
  decimals: number[];
}

/**
 * The values a number token can be read as, each with its decimal places: separators as thousands, or the last one
 * as a decimal point, whichever the token's shape allows.
 */
function readings(token: string): { value: number; decimals: number }[] {
  const t = token.replace(/['\u00a0\u202f]/g, "");
  const dot = t.includes(".");
  const comma = t.includes(",");
  if (!dot && !comma) return [{ value: Number(t), decimals: 0 }];
  if (dot && comma) {
    const at = Math.max(t.lastIndexOf("."), t.lastIndexOf(","));
    const whole = t.slice(0, at).replace(/[.,]/g, "");
    const part = t.slice(at + 1);
    return [{ value: Number(`${whole}.${part}`), decimals: part.length }];
  }
  const groups = t.split(dot ? "." : ",");
  const thousands = groups[0]!.length <= 3 && groups.slice(1).every((g) => g.length === 3);
  const out = thousands ? [{ value: Number(groups.join("")), decimals: 0 }] : [];
  if (groups.length === 2) out.push({ value: Number(`${groups[0]}.${groups[1]}`), decimals: groups[1]!.length });
  return out.filter((r) => Number.isFinite(r.value));
}

/** The text with dates, times and a list's numbering blanked out (same length, so nothing else moves). */
function masked(text: string): string {
  let out = text.replace(LIST_NUMBER, (m) => " ".repeat(m.length));
  for (const re of DATES) out = out.replace(re, (m) => " ".repeat(m.length));
  return out;
}

/** The figures of a sentence of the answer (see the rules at the top of this file). */
export function figuresOf(sentence: string): Figure[] {
  const figures: Figure[] = [];
  for (const m of masked(sentence).matchAll(FIGURE)) {
    const percent = m[1] !== undefined;
    const token = percent ? m[0].slice(0, m[0].length - m[1]!.length) : m[0];
    const rs = readings(token);
    if (rs.length === 0) continue;
    // 50% is 50, or the ratio 0.5 a tool may have returned.
    const all = percent ? [...rs, ...rs.map((r) => ({ value: r.value / 100, decimals: r.decimals + 2 }))] : rs;
    figures.push({ text: m[0].trim(), values: all.map((r) => r.value), decimals: all.map((r) => r.decimals) });
  }
  return figures;
}

/** Every value a text can be read to hold: each number token in each reading, and each run of digits alone. */
export function numbersIn(text: string): { value: number; decimals: number }[] {
  const out: { value: number; decimals: number }[] = [];
  for (const m of text.matchAll(NUMBER_TOKEN)) {
    out.push(...readings(m[0]));
    if (/\D/.test(m[0])) for (const run of m[0].match(/\d+/g) ?? []) out.push({ value: Number(run), decimals: 0 });
  }
  return out;
}

const MAX_DECIMALS = 3;

/** A number at d decimals as an integer key (|value| × 10^d, rounded): cheaper than text for huge results. */
function key(value: number, decimals: number): number {
  return Math.round(Math.abs(value) * 10 ** Math.min(decimals, MAX_DECIMALS));
}

function decimalsOf(value: number): number {
  const [, part = ""] = String(Math.abs(value)).split(".");
  return Math.min(part.length, MAX_DECIMALS);
}

/**
 * A set of numbers. Evidence is added at every rounding (0–3 decimals), so a figure written with d decimals is
 * backed by a value that rounds to it (2181.6 backs "2,182"; 89 backs "89.00"), never by one further off. The
 * answer's own numbers are added as written (`written`), to ask whether it says a result's number.
 */
export class NumberIndex {
  /** By decimals (0–3), the keys of the numbers held at that rounding. */
  private readonly keys: Set<number>[] = Array.from({ length: MAX_DECIMALS + 1 }, () => new Set<number>());

  add(value: number, written?: number): void {
    if (!Number.isFinite(value)) return;
    if (written !== undefined) this.at(written).add(key(value, written));
    else for (let d = 0; d <= MAX_DECIMALS; d++) this.at(d).add(key(value, d));
  }

  private at(decimals: number): Set<number> {
    return this.keys[Math.min(decimals, MAX_DECIMALS)]!;
  }

  /** Every number in `value`: JSON numbers as they are, strings read generously, arrays' lengths too (counts). */
  addAll(value: unknown): void {
    if (typeof value === "number") this.add(value);
    else if (typeof value === "string") for (const n of numbersIn(value)) this.add(n.value);
    else if (Array.isArray(value)) {
      this.add(value.length);
      for (const v of value) this.addAll(v);
    } else if (value !== null && typeof value === "object") for (const v of Object.values(value)) this.addAll(v);
  }

  /** Whether any reading of the figure, at the decimals it was written with, is a number of the evidence. */
  backs(figure: Figure): boolean {
    return figure.values.some((v, i) => {
      const d = figure.decimals[i] ?? 0;
      return this.at(d).has(key(v, d));
    });
  }

  /**
   * Whether a result's number is among the numbers written here: as it is, or rounded when it is 10 or more (a
   * total of 2181.6 said as "2,182"; a 1.6 is not said by a "2").
   */
  says(value: number): boolean {
    if (Math.abs(value) < 10) return this.at(decimalsOf(value)).has(key(value, decimalsOf(value)));
    for (let d = 0; d <= MAX_DECIMALS; d++) if (this.at(d).has(key(value, d))) return true;
    return false;
  }
}
