import { z } from "zod";
import { CITIES, findCity, normalizeName } from "./catalog.js";

/** What a travel request says, with the demo's defaults filled in where it says nothing. */
export const TripFacts = z.object({
  origin: z.string(),
  /** Null when the request names no destination at all; tools then fail asking for one. */
  destination: z.string().nullable(),
  days: z.number().int().min(1),
  travellers: z.number().int().min(1),
  /** Null: the request sets no budget. */
  budget: z.number().positive().nullable(),
  /** The currency the budget was written in, when it said (the catalog prices everything in US dollars). */
  budgetCurrency: z.enum(["USD", "EUR", "GBP"]).nullable(),
  /** Facts that were not in the request and took their default, so a summary can say what it assumed. */
  assumed: z.array(z.enum(["origin", "days", "travellers"])),
});
export type TripFacts = z.infer<typeof TripFacts>;

export const DEFAULT_ORIGIN = "Madrid";
export const DEFAULT_DAYS = 3;
export const DEFAULT_TRAVELLERS = 1;

const MAX_DAYS = 60;
const MAX_TRAVELLERS = 20;

const WORD_NUMBERS: Record<string, number> = {
  a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, twenty: 20,
};
const NUM = `(\\d+|${Object.keys(WORD_NUMBERS).join("|")})`;

/** Words that follow "to" / "in" / "visit" without being a place ("want to go", "in the centre", "in 3 days"). */
const NOT_A_PLACE = new Set(
  (
    "a an the my our your his her their this that these those some any me us them it there here " +
    "go going fly flying travel travelling traveling visit visiting see seeing book booking plan planning stay staying " +
    "spend spending be do get have make find take leave return come explore enjoy relax keep try know " +
    "and or but for with without from to in on at by of about around under below over within than " +
    "total budget max maximum most least up no more less cheap cheaper afford people persons person travellers " +
    "travelers adults guests kids children family couple friends day days night nights week weeks weekend month months " +
    "january february march april may june july august september october november december " +
    "monday tuesday wednesday thursday friday saturday sunday summer winter spring autumn fall christmas easter " +
    "home work airport trip vacation holiday holidays getaway break tour city centre center downtown town hotel hotels flight flights"
  ).split(" "),
);

/**
 * Reads a free-text travel request ("Plan a 3-day trip from Madrid to Paris for 2 people under $2000").
 * Tolerant by design: case, accents and word order vary, and anything it cannot find takes a default
 * (origin Madrid, 3 days, 1 traveller, no budget) recorded in `assumed`.
 */
export function parseTripRequest(text: string): TripFacts {
  const original = text;
  const norm = foldCase(text);
  const assumed: TripFacts["assumed"] = [];

  const places = findPlaces(norm, original);
  const origin = places.origin ?? DEFAULT_ORIGIN;
  if (places.origin === null) assumed.push("origin");

  let days = findDays(norm);
  if (days === null) {
    days = DEFAULT_DAYS;
    assumed.push("days");
  }
  let travellers = findTravellers(norm);
  if (travellers === null) {
    travellers = DEFAULT_TRAVELLERS;
    assumed.push("travellers");
  }
  const budget = findBudget(norm);
  return { origin, destination: places.destination, days, travellers, budget: budget?.amount ?? null, budgetCurrency: budget?.currency ?? null, assumed };
}

/** Lower case without accents, one character per character, so indices still point into the original text. */
function foldCase(text: string): string {
  return [...text]
    .map((ch) => {
      const folded = ch.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
      return folded.length === 1 ? folded : ch.toLowerCase().length === 1 ? ch.toLowerCase() : " ";
    })
    .join("");
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

interface Mention {
  index: number;
  end: number;
  name: string;
  role: "origin" | "destination" | null;
}

const ORIGIN_BEFORE = /\b(?:from|leaving|departing|out of)\s*$/;
const DESTINATION_BEFORE = /\b(?:to|in|into|visit|visiting|towards|around|at|explore|exploring|see|seeing)\s*$/;
const TRIP_AFTER = /^\s*(?:trip|vacation|holiday|holidays|getaway|break|tour|itinerary)\b/;

function findPlaces(norm: string, original: string): { origin: string | null; destination: string | null } {
  const mentions: Mention[] = [];
  for (const city of CITIES) {
    for (const spelling of [normalizeName(city.name), ...city.aliases]) {
      const re = new RegExp(`\\b${escapeRegExp(spelling)}\\b`, "g");
      for (const m of norm.matchAll(re)) {
        const index = m.index;
        const end = index + m[0].length;
        if (mentions.some((x) => index < x.end && end > x.index)) continue;
        const before = norm.slice(0, index);
        const after = norm.slice(end);
        const role = ORIGIN_BEFORE.test(before) ? "origin" : DESTINATION_BEFORE.test(before) || TRIP_AFTER.test(after) ? "destination" : null;
        mentions.push({ index, end, name: city.name, role });
      }
    }
  }
  mentions.sort((a, b) => a.index - b.index);

  let origin = mentions.find((m) => m.role === "origin")?.name ?? null;
  let destination = mentions.find((m) => m.role === "destination" && m.name !== origin)?.name ?? null;
  const untagged = mentions.filter((m) => m.role === null && m.name !== origin && m.name !== destination);
  // Untagged cities in order read as "origin destination" ("Amsterdam Paris trip", "de Madrid a París").
  if (destination === null && origin === null && untagged.length >= 2) {
    origin = untagged[0]?.name ?? null;
    destination = untagged[1]?.name ?? null;
  } else if (destination === null) {
    destination = untagged[0]?.name ?? null;
  } else if (origin === null) {
    const destIndex = mentions.find((m) => m.name === destination)?.index ?? 0;
    origin = untagged.find((m) => m.index < destIndex)?.name ?? null;
  }
  if (origin === null) origin = findUnknownPlace(norm, original, "\\bfrom\\s+", null, false);
  if (destination === null) destination = findUnknownPlace(norm, original, "\\b(?:to|in|visit|visiting)\\s+", origin, true);
  return { origin, destination };
}

/** A place the catalog does not know ("to Narnia"), kept so the tools can say plainly that it is not served. */
function findUnknownPlace(norm: string, original: string, cue: string, origin: string | null, tripSuffix: boolean): string | null {
  const candidates: { index: number; name: string }[] = [];
  const cued = new RegExp(`${cue}([a-z][a-z'-]*(?:\\s+[a-z][a-z'-]*){0,2})`, "g");
  for (const m of norm.matchAll(cued)) {
    const words = m[1]?.split(/\s+/) ?? [];
    const kept: string[] = [];
    for (const w of words) {
      if (NOT_A_PLACE.has(w)) break;
      kept.push(w);
    }
    if (kept.length === 0) continue;
    const start = m.index + m[0].length - (m[1]?.length ?? 0);
    candidates.push({ index: start, name: kept.join(" ") });
  }
  // "Narnia trip": only trusted when capitalised, since "business trip" and "family trip" are not places.
  for (const m of tripSuffix ? norm.matchAll(/\b([a-z][a-z'-]+)\s+(?:trip|vacation|holiday|getaway|break)\b/g) : []) {
    const word = m[1] ?? "";
    const first = original[m.index] ?? "";
    if (!NOT_A_PLACE.has(word) && first !== first.toLowerCase()) candidates.push({ index: m.index, name: word });
  }
  candidates.sort((a, b) => a.index - b.index);
  for (const c of candidates) {
    const known = findCity(c.name);
    if (known?.name === origin) continue;
    if (known) return known.name;
    return original
      .slice(c.index, c.index + c.name.length)
      .split(/\s+/)
      .map((w) => (w.length > 0 ? (w[0] ?? "").toUpperCase() + w.slice(1) : w))
      .join(" ");
  }
  return null;
}

function toNumber(token: string): number {
  return WORD_NUMBERS[token] ?? Number(token);
}

function findDays(norm: string): number | null {
  const m = new RegExp(`\\b${NUM}\\s*-?\\s*(days?|nights?|weeks?|fortnights?)\\b`).exec(norm);
  if (m) {
    const n = toNumber(m[1] ?? "");
    const unit = m[2] ?? "";
    const days = unit.startsWith("night") ? n + 1 : unit.startsWith("week") ? n * 7 : unit.startsWith("fortnight") ? n * 14 : n;
    return clamp(days, 1, MAX_DAYS);
  }
  if (/\blong weekend\b/.test(norm)) return 3;
  if (/\bweekend\b/.test(norm)) return 2;
  if (/\bday trip\b/.test(norm)) return 1;
  return null;
}

function findTravellers(norm: string): number | null {
  const withFriends = new RegExp(`\\bwith\\s+${NUM}\\s+(?:friends|colleagues|others)\\b`).exec(norm);
  if (withFriends) return clamp(toNumber(withFriends[1] ?? "") + 1, 1, MAX_TRAVELLERS);
  const groupOf = new RegExp(`\\b(?:family|group|party|team)\\s+of\\s+${NUM}\\b`).exec(norm);
  if (groupOf) return clamp(toNumber(groupOf[1] ?? ""), 1, MAX_TRAVELLERS);
  const counted = new RegExp(
    `\\b${NUM}\\s+(?:people|persons?|travell?ers?|adults?|guests?|pax|friends|passengers?|of us)\\b`,
  ).exec(norm);
  if (counted) return clamp(toNumber(counted[1] ?? ""), 1, MAX_TRAVELLERS);
  const forN = new RegExp(`\\bfor\\s+${NUM}\\b(?!\\s*-?\\s*(?:days?|nights?|weeks?|fortnights?|k\\b|\\$|€|£|usd|eur|euros?|dollars?|bucks|hours?|months?))`).exec(norm);
  if (forN && forN[1] !== "a" && forN[1] !== "an") return clamp(toNumber(forN[1] ?? ""), 1, MAX_TRAVELLERS);
  if (/\b(?:couple|honeymoon|two of us|both of us|my (?:wife|husband|partner|girlfriend|boyfriend|fiancee?))\b/.test(norm)) return 2;
  if (/\b(?:solo|alone|by myself|just me|on my own)\b/.test(norm)) return 1;
  return null;
}

const CURRENCY = "(?:us\\$|\\$|€|£|usd|eur|euros?|dollars?|bucks|gbp|pounds?)";
const AMOUNT = "(\\d{1,3}(?:[.,]\\d{3})+(?:[.,]\\d{1,2})?|\\d+(?:[.,]\\d+)?)(k\\b)?";
const BUDGET_BEFORE =
  /\b(?:budget|under|below|less than|max|maximum|at most|up to|no more than|within|cap|spend|spending|afford|total of|around|about)\s*(?:is|of|:|=|around|about|~)?\s*$/;

type Budget = { amount: number; currency: TripFacts["budgetCurrency"] };

/** The currency a budget's mark names (`€`, "euros", "gbp"…); null when it has none. */
function currencyOf(mark: string | undefined): TripFacts["budgetCurrency"] {
  const m = mark?.trim();
  if (!m) return null;
  if (/€|eur/.test(m)) return "EUR";
  if (/£|gbp|pound/.test(m)) return "GBP";
  return "USD";
}

function findBudget(norm: string): Budget | null {
  const re = new RegExp(`(${CURRENCY}\\s*)?${AMOUNT}(\\s*${CURRENCY})?`, "g");
  let fallback: Budget | null = null;
  for (const m of norm.matchAll(re)) {
    const [, prefix, digits, kilo, suffix] = m;
    if (digits === undefined) continue;
    const after = norm.slice(m.index + m[0].length);
    if (/^\s*-?\s*(?:days?|nights?|weeks?|people|persons?|travell?ers?|adults?|guests?|stars?|km|hours?)\b/.test(after)) continue;
    const amount = parseAmount(digits) * (kilo ? 1000 : 1);
    if (!(amount > 0)) continue;
    const cued = BUDGET_BEFORE.test(norm.slice(0, m.index));
    const found = { amount, currency: currencyOf(prefix ?? suffix) };
    if (cued && (prefix || suffix || kilo || amount >= 50)) return found;
    if ((prefix || suffix || kilo) && fallback === null) fallback = found;
  }
  return fallback;
}

/** "1,200", "1.200", "1,200.50", "2.5" and "2,5" all mean what a reader would expect. */
function parseAmount(digits: string): number {
  if (/^\d{1,3}(?:[.,]\d{3})+$/.test(digits)) return Number(digits.replace(/[.,]/g, ""));
  const m = /^(\d{1,3}(?:[.,]\d{3})+)[.,](\d{1,2})$/.exec(digits);
  if (m) return Number(`${(m[1] ?? "").replace(/[.,]/g, "")}.${m[2] ?? ""}`);
  return Number(digits.replace(",", "."));
}

function clamp(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.round(n)));
}
