import type { LanguageCode } from "../../src/planning/languages/index.js";

/**
 * The travel reader's words, one table per language the offline reader reads (keyed by its codes, so a language
 * added there without travel words fails the typecheck here). Words are folded, as in src/planning/languages.
 * Only the units of a trip's length have moved here so far; the rest of the travel reader's words are still in
 * parse-request.ts.
 */
export interface TripWords {
  /** Units of a trip's length after a figure ("3 nights", "2 semanas"), by how many days one of each counts. */
  lengthUnits: {
    /** One day each. */
    day: string[];
    /** A night more than days: "3 nights" is a 4-day trip. */
    night: string[];
    /** Seven days each. */
    week: string[];
    /** Fourteen days each. */
    fortnight: string[];
  };
}

export const TRIP_WORDS: Record<LanguageCode, TripWords> = {
  en: {
    lengthUnits: {
      day: ["day", "days"],
      night: ["night", "nights"],
      week: ["week", "weeks"],
      fortnight: ["fortnight", "fortnights"],
    },
  },
  es: {
    lengthUnits: {
      day: ["dia", "dias"],
      night: ["noche", "noches"],
      week: ["semana", "semanas"],
      fortnight: ["quincena", "quincenas"],
    },
  },
  fr: {
    lengthUnits: {
      day: ["jour", "jours", "journee", "journees"],
      night: ["nuit", "nuits"],
      week: ["semaine", "semaines"],
      fortnight: [],
    },
  },
  de: {
    lengthUnits: {
      day: ["tag", "tage", "tagen"],
      night: ["nacht", "nachte"],
      week: ["woche", "wochen"],
      fortnight: [],
    },
  },
  it: {
    lengthUnits: {
      day: ["giorno", "giorni"],
      night: ["notte", "notti"],
      week: ["settimana", "settimane"],
      fortnight: [],
    },
  },
  pt: { lengthUnits: { day: ["dia", "dias"], night: ["noite", "noites"], week: ["semana", "semanas"], fortnight: [] } },
  nl: { lengthUnits: { day: ["dag", "dagen"], night: ["nachten"], week: ["weken"], fortnight: [] } },
};

/** How many days one of each kind of unit counts, given how many were said. */
const DAYS_OF: Record<keyof TripWords["lengthUnits"], (n: number) => number> = {
  day: (n) => n,
  night: (n) => n + 1,
  week: (n) => n * 7,
  fortnight: (n) => n * 14,
};

const UNIT_KIND = new Map<string, keyof TripWords["lengthUnits"]>(
  Object.values(TRIP_WORDS).flatMap((w) =>
    (Object.keys(DAYS_OF) as (keyof TripWords["lengthUnits"])[]).flatMap((kind) =>
      w.lengthUnits[kind].map((unit): [string, keyof TripWords["lengthUnits"]] => [unit, kind]),
    ),
  ),
);

/** Every unit of a trip's length, in any language, longest first (for one alternation of a regular expression). */
export const LENGTH_UNITS = [...UNIT_KIND.keys()].sort((a, b) => b.length - a.length);

/** The days that `n` of a unit make ("3 nights": 4); a unit no table names counts as days. */
export function unitDays(n: number, unit: string): number {
  return DAYS_OF[UNIT_KIND.get(unit) ?? "day"](n);
}
