import { de } from "./de.js";
import { en } from "./en.js";
import { es } from "./es.js";
import { fr } from "./fr.js";
import { it } from "./it.js";
import { nl } from "./nl.js";
import { pt } from "./pt.js";
import type { LanguageWords } from "./types.js";

export { TASK_VERB_NAMES, type LanguageWords } from "./types.js";

/**
 * The languages the offline reader reads, each by its table. The order is the order of preference when a request's
 * words fit two languages equally (see guessLanguage) and the order in which lists are merged where their order
 * matters (joiners, cues that negate what comes before them).
 */
export const LANGUAGES = { en, es, fr, de, it, pt, nl } satisfies Record<string, LanguageWords>;
export type LanguageCode = keyof typeof LANGUAGES;
export const LANGUAGE_CODES = Object.keys(LANGUAGES) as LanguageCode[];

/** Currency marks that are no word of a language: symbols, ISO codes and abbreviations ("kr": no one currency). */
export const CURRENCY_SIGNS: Record<string, string | null> = {
  us$: "USD",
  $: "USD",
  usd: "USD",
  "€": "EUR",
  eur: "EUR",
  "£": "GBP",
  gbp: "GBP",
  "¥": "JPY",
  jpy: "JPY",
  chf: "CHF",
  "fr.": "CHF",
  c$: "CAD",
  cad: "CAD",
  a$: "AUD",
  aud: "AUD",
  cny: "CNY",
  rmb: "CNY",
  "₹": "INR",
  inr: "INR",
  mxn: "MXN",
  sek: "SEK",
  nok: "NOK",
  dkk: "DKK",
  czk: "CZK",
  pln: "PLN",
  huf: "HUF",
  brl: "BRL",
  krw: "KRW",
  "₩": "KRW",
  kr: null,
};

/** One list of every language's words of one kind, in the registry's order, each word once. */
export function everyLanguage(pick: (l: LanguageWords) => readonly string[]): string[] {
  return [...new Set(LANGUAGE_CODES.flatMap((code) => pick(LANGUAGES[code])))];
}

/** Scripts the tables cannot read at all, with the language they most often mean: such a request is named, not read. */
export const UNREAD_SCRIPTS: [RegExp, string][] = [
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
