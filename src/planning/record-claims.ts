import * as chrono from "chrono-node";
import { analyzeRequest, foldCase, type Span } from "./lexicon.js";

/**
 * Checking what a model's understanding record claims against the request's own text. A model's record is untrusted
 * input: it may quote words the request does not say, or read "two nights" as 3. Quotes are found in the request
 * the way a person would find them (case, accents, spacing and punctuation aside, "…" for words left out); the
 * numbers, amounts and dates a value was read from are read again by the deterministic reader and by chrono-node,
 * and a value that says something else is named. Pure.
 */

/** The request's text reduced to letters and digits, one space between words, with where each character came from. */
interface Squeezed {
  text: string;
  /** Index in the original text of each character of `text`. */
  at: number[];
}

function squeeze(original: string): Squeezed {
  const folded = foldCase(original);
  let text = "";
  const at: number[] = [];
  let gap = false;
  for (let i = 0; i < folded.length; i++) {
    const ch = folded[i]!;
    if (/[\p{L}\p{N}]/u.test(ch)) {
      if (gap && text.length > 0) {
        text += " ";
        at.push(i);
      }
      text += ch;
      at.push(i);
      gap = false;
    } else gap = true;
  }
  return { text, at };
}

/**
 * Where a quote sits in the request: case, accents, spacing and punctuation ignored, and "..." or "…" standing for
 * words left out (each piece found in order). Null when the request does not say it, or the quote has no word.
 */
export function locateQuote(request: string, quote: string): Span | null {
  const hay = squeeze(request);
  const pieces = quote
    .split(/\.{3}|…/)
    .map((p) => squeeze(p).text)
    .filter((p) => p.length > 0);
  if (pieces.length === 0) return null;
  let from = 0;
  let start = -1;
  let end = -1;
  for (const piece of pieces) {
    const i = wordIndex(hay.text, piece, from);
    if (i < 0) return null;
    if (start < 0) start = i;
    end = i + piece.length;
    from = end;
  }
  let s = hay.at[start]!;
  let e = hay.at[end - 1]! + 1;
  // The marks the quote starts or ends with, where the request has them too ("$2000", "src/").
  const lead = /^[^\p{L}\p{N}\s]+/u.exec(quote.trim())?.[0] ?? "";
  const tail = /[^\p{L}\p{N}\s]+$/u.exec(quote.trim())?.[0] ?? "";
  if (lead && request.slice(s - lead.length, s) === lead) s -= lead.length;
  if (tail && request.slice(e, e + tail.length) === tail) e += tail.length;
  return { start: s, end: e, text: request.slice(s, e) };
}

/** The first place `needle` starts and ends on word boundaries of `hay` at or after `from`, or -1. */
function wordIndex(hay: string, needle: string, from: number): number {
  for (let i = hay.indexOf(needle, from); i >= 0; i = hay.indexOf(needle, i + 1)) {
    const before = i === 0 || hay[i - 1] === " ";
    const after = i + needle.length === hay.length || hay[i + needle.length] === " ";
    if (before && after) return i;
  }
  return -1;
}

/** The figures a text states: numbers, both ends of a range, amounts (with their currency when named). */
function figuresIn(text: string): { numbers: number[]; currencies: string[] } {
  const a = analyzeRequest(text);
  const numbers = [
    ...a.numbers.map((n) => n.value),
    ...a.ranges.flatMap((r) => [r.min, r.max]),
    ...a.amounts.map((m) => m.value),
  ];
  const currencies = a.amounts.map((m) => m.currency).filter((c): c is string => c !== null);
  return { numbers: [...new Set(numbers)], currencies: [...new Set(currencies)] };
}

/** chrono-node's readers, English first: a date written in any of these languages is read. */
const DATE_READERS = [chrono.en, chrono.es, chrono.fr, chrono.de, chrono.it, chrono.pt, chrono.nl];

/** The calendar days a text names (month and day; the year when it is written), in the first language that reads one. */
function datesIn(text: string): { month: number; day: number; year: number | null }[] {
  for (const reader of DATE_READERS) {
    const found = reader.casual.parse(text, new Date(Date.UTC(2000, 0, 1)));
    const days = found.flatMap((r) => [r.start, ...(r.end ? [r.end] : [])]);
    const dated = days.filter((d) => d.isCertain("day") && d.isCertain("month"));
    if (dated.length > 0)
      return dated.map((d) => ({
        month: d.get("month")!,
        day: d.get("day")!,
        year: d.isCertain("year") ? d.get("year")! : null,
      }));
  }
  return [];
}

/** Days from the first date to the last, counted both ways a trip is (nights between them, days including both). */
function spansOf(dates: readonly { month: number; day: number; year: number | null }[]): number[] {
  if (dates.length < 2) return [];
  // "March 16th to March 18th, 2022": the year written once is both dates' year.
  const year = dates.find((d) => d.year !== null)?.year ?? 2001;
  const t = (d: (typeof dates)[number]) => Date.UTC(d.year ?? year, d.month - 1, d.day);
  const nights = Math.round((t(dates.at(-1)!) - t(dates[0]!)) / 86_400_000);
  return nights > 0 ? [nights, nights + 1] : [];
}

const sameDay = (
  x: { month: number; day: number; year: number | null },
  y: { month: number; day: number; year: number | null },
) => x.month === y.month && x.day === y.day && (x.year === null || y.year === null || x.year === y.year);

const list = (xs: readonly (string | number)[]) => xs.map(String).join(", ");

/**
 * Why a value the model says it read from `source` is not what the source says, or null when nothing disagrees:
 * a date the source does not name, a figure none of its numbers, amounts or ranges is (nor the days or nights
 * between two dates it names), a currency other than the one it names. A value with no figure, or a source with
 * none ("a pair", "solo"), leaves nothing to check.
 */
export function misread(source: string, value: unknown): string | null {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (text === undefined || text.trim() === "") return null;
  const said = datesIn(source);
  const given = datesIn(text);
  if (given.length > 0 && said.length > 0) {
    const wrong = given.filter((g) => !said.some((s) => sameDay(g, s)));
    return wrong.length > 0
      ? `"${text}" names a day that "${source}" does not (read by chrono-node: ${said.map((d) => `${d.month}/${d.day}`).join(", ")})`
      : null;
  }
  const read = figuresIn(source);
  // A date against a source whose date no reader reads whole ("del 16 al 18"): its day must be one of its numbers.
  if (given.length > 0) {
    const wrong = given.filter((g) => !read.numbers.includes(g.day));
    return wrong.length > 0 && read.numbers.length > 0
      ? `"${text}" names a day that "${source}" does not (the reader finds ${list(read.numbers)})`
      : null;
  }
  const numbers = typeof value === "number" ? [value] : figuresIn(text).numbers;
  const allowed = [...read.numbers, ...spansOf(said)];
  const off = numbers.filter((n) => !allowed.includes(n));
  if (off.length > 0 && allowed.length > 0)
    return `${list(off)} is not what "${source}" says (the reader finds ${list(allowed)})`;
  const currencies = figuresIn(text).currencies;
  const other = currencies.filter((c) => read.currencies.length > 0 && !read.currencies.includes(c));
  if (other.length > 0) return `"${text}" is in ${list(other)}, but "${source}" is in ${list(read.currencies)}`;
  return null;
}
