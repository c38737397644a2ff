import { createRequire } from "node:module";
import { CandorError, ErrorCode } from "../errors.js";

/**
 * Maintained recognizers the rules reasoner reads requests with, loaded on the first request that needs them (the
 * CLI's start-up never pays for them).
 *
 * Dates: chrono-node (MIT, maintained, no dependencies, Node ≥ 12). It reads dates and ranges of dates in many
 * languages ("from March 16th to March 18th, 2022", "vom 16. bis 18. März", "du 16 au 18 mars", "dal 16 al 18
 * marzo", "amanhã", "next Friday") with their place in the text. Only the locale of the request's language is
 * loaded (measured on this machine: English alone ≈ 0.2 s to load and ≈ 0.25 s for its first parse, ≈ 2 MB; all
 * seven European locales ≈ 0.5 s and ≈ 5 MB).
 *
 * Numbers and money are not read here: Microsoft's recognizers-text 1.3.1 (the JavaScript port) knows English,
 * Spanish, French, Portuguese, Chinese and Japanese only (German, Italian and Dutch fall back to digits), its first
 * call in a language takes 1–3 s and ~120 MB, and it reads "mille cinq cents" as 1005. The lexicon's own tables
 * do better on what a request says.
 */

/** Languages chrono-node has a locale for (its own codes). */
export const DATE_LANGUAGES = ["en", "de", "fr", "es", "it", "pt", "nl", "ja", "ru", "zh", "sv", "fi", "uk"] as const;
export type DateLanguage = (typeof DATE_LANGUAGES)[number];

/** A date or range of dates the request names, with its place in the text. */
export interface DateMention {
  start: number;
  end: number;
  text: string;
  /** The first and last day (yyyy-mm-dd) when the text names days; both null for a vaguer time ("next month"). */
  first: string | null;
  last: string | null;
  /** Days from the first to the last, both counted ("March 16th to March 18th": 3); null unless a range of days. */
  days: number | null;
  /** Said relative to today ("next month", "mañana", "in 3 days") rather than as a date of the calendar. */
  relative: boolean;
  /**
   * A figure of time that says when something starts, not how long it lasts: "sure" for "3 days from now", "dans 3
   * jours", "in 3 Tagen", "tra 3 giorni", "a week from Friday"; "maybe" where the same words also say a length
   * ("in 3 days", "en 3 días": "Rome in 3 days" is a length) and the caller decides by the rest of the request.
   */
  begins?: "sure" | "maybe";
}

/** The part of chrono-node's result this module reads; checked when a locale is loaded. */
interface ChronoComponents {
  date(): Date;
  isCertain(component: "day" | "month" | "year" | "weekday"): boolean;
}
interface ChronoResult {
  index: number;
  text: string;
  start: ChronoComponents;
  end?: ChronoComponents | null;
  tags?: () => Set<string>;
}
interface ChronoLocale {
  parse(text: string, reference: Date, options: { forwardDate: boolean }): ChronoResult[];
}

const locales = new Map<DateLanguage, ChronoLocale>();
const load = createRequire(import.meta.url);

function locale(language: DateLanguage): ChronoLocale {
  const known = locales.get(language);
  if (known !== undefined) return known;
  let loaded: unknown;
  try {
    loaded = load(`chrono-node/${language}`);
  } catch (cause) {
    throw new CandorError(
      `The date recognizer (package chrono-node) is missing its "${language}" locale: run \`npm ci\`.`,
      ErrorCode.CONFIGURATION,
      { cause },
    );
  }
  const parse = (loaded as { casual?: { parse?: unknown } } | null)?.casual?.parse;
  if (typeof parse !== "function")
    throw new CandorError(
      `The date recognizer (package chrono-node) has an unexpected shape: its "${language}" locale has no casual parser; reinstall it with \`npm ci\`.`,
      ErrorCode.CONFIGURATION,
    );
  const casual = (loaded as { casual: ChronoLocale }).casual;
  const wrapped: ChronoLocale = { parse: (t, r, o) => casual.parse(t, r, o) };
  locales.set(language, wrapped);
  return wrapped;
}

const DAY_MS = 86_400_000;

/** "2022-03-16" in the reference's calendar, not UTC: chrono builds local dates. */
function isoDay(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/**
 * A length of time is no date ("3 days", "for 7 days", "a week"): chrono reads those as a date that far from today.
 * A relative date with a figure in it is taken as such a length, unless words say it is when something starts (see
 * START_CUES); one without a figure ("next month", "nächste Woche", "la semaine prochaine") is a date.
 */
function isLength(r: ChronoResult): boolean {
  const tags = r.tags?.() ?? new Set<string>();
  return tags.has("result/relativeDate") && /\d|\b(?:a|an|one)\s+\w/i.test(r.text);
}

/**
 * How each language says that a figure of time is when something starts, not how long it lasts: words before it
 * ("dans", "tra", "over") or after it ("from now"). `maybe`: words that say either ("in 3 days" may be the start or,
 * as in "Rome in 3 days", the length).
 */
const START_CUES: Partial<Record<DateLanguage, { sure: RegExp; maybe?: RegExp }>> = {
  en: { sure: /\s(?:from (?:now|today)|later|hence)$/i, maybe: /^(?:in|within)\s/i },
  es: { sure: /^(?:dentro de|de aqu[ií] a)\s|\sdespu[eé]s$/i, maybe: /^en\s/i },
  fr: { sure: /^dans\s|\splus tard$/i },
  de: { sure: /^(?:in|binnen)\s|\sspäter$/i },
  it: { sure: /^(?:tra|fra)\s|\sdopo$/i },
  pt: { sure: /^(?:daqui a|dentro de)\s/i },
  nl: { sure: /^over\s|\slater$/i },
};

function startCue(r: ChronoResult, language: DateLanguage): DateMention["begins"] {
  const cues = START_CUES[language];
  const said = r.text.trim();
  if (cues?.sure.test(said)) return "sure";
  if (cues?.maybe?.test(said)) return "maybe";
  return undefined;
}

/** "a week from Friday": a figure of time counted from a day the request names, itself a date. */
const FROM_DAY = /^\s+(?:from|after)\s+$/i;

/**
 * The dates a text names, in the given languages (each read with its own locale; overlapping finds keep the
 * first language's). `reference` is "today" for relative dates; ranges of days carry their length.
 */
export function recognizeDates(
  text: string,
  languages: readonly DateLanguage[],
  reference: Date = new Date(),
): DateMention[] {
  const out: DateMention[] = [];
  for (const language of languages) {
    const results = locale(language).parse(text, reference, { forwardDate: true });
    for (const [i, r] of results.entries()) {
      const start = r.index;
      // "vom 16. bis 18. März 2022, 4 Tage": chrono takes the ", 4" as an hour; a bare figure after a comma is not
      // how a request writes a time ("4 pm", "16:00" are).
      const tail = /,\s*\d{1,2}$/.exec(r.text);
      let end = r.index + r.text.length - (tail?.[0].length ?? 0);
      while (end > start && /[\s,.;:]/.test(text[end - 1] ?? "")) end--;
      if (out.some((x) => start < x.end && end > x.start)) continue;
      const tags = r.tags?.() ?? new Set<string>();
      if (tags.has("result/relativeDate")) {
        const from = countedFrom(text, r, results[i + 1], reference);
        if (from !== null) {
          out.push(from);
          continue;
        }
        const cue = startCue(r, language);
        if (cue !== undefined) {
          const first = isoDay(r.start.date());
          out.push({
            start,
            end,
            text: text.slice(start, end),
            first,
            last: first,
            days: null,
            relative: true,
            begins: cue,
          });
          continue;
        }
        // A length of time is no date: the caller reads lengths its own way.
        if (isLength(r)) continue;
      }
      const named = r.start.isCertain("day") || r.start.isCertain("weekday");
      const first = named ? isoDay(r.start.date()) : null;
      const last = named && r.end ? isoDay(r.end.date()) : first;
      let days: number | null = null;
      if (first !== null && last !== null && r.end) {
        const span = Math.round((Date.parse(last) - Date.parse(first)) / DAY_MS) + 1;
        if (span > 1 && span <= 366) days = span;
      }
      const relative = tags.has("result/relativeDate") || [...tags].some((t) => t.startsWith("casualReference"));
      out.push({ start, end, text: text.slice(start, end), first, last, days, relative });
    }
  }
  return out.sort((a, b) => a.start - b.start);
}

/**
 * "a week from Friday", "3 days after tomorrow": a figure of time right before a day named by weekday or relative to
 * today is that day moved on, and when it starts. A calendar date is not moved ("3 days from March 16th" is a
 * length from that day).
 */
function countedFrom(
  text: string,
  r: ChronoResult,
  next: ChronoResult | undefined,
  reference: Date,
): DateMention | null {
  if (next === undefined || next.end) return null;
  const gap = text.slice(r.index + r.text.length, next.index);
  if (!FROM_DAY.test(gap) || next.start.isCertain("month")) return null;
  const day = new Date(next.start.date().getTime() + (r.start.date().getTime() - reference.getTime()));
  const end = next.index + next.text.length;
  const first = isoDay(day);
  return {
    start: r.index,
    end,
    text: text.slice(r.index, end),
    first,
    last: first,
    days: null,
    relative: true,
    begins: "sure",
  };
}
