/**
 * The learning benchmark's simulated users (bench/learning.ts): each has a hidden preference, writes trip requests
 * in varied words from a seed, and judges every answer as a person with that preference would — accept when the
 * answer meets it, else reject with a reason drawn from a list of ways of saying so. The evaluator knows the
 * preference, never Candor's settings: it is not written to pass, and a preference Candor cannot learn fails.
 */
import { z } from "zod";
import { planOf } from "../../src/domain/plan-state.js";
import { ActivitiesResult, Breakdown, FlightResult, HotelResult } from "../../examples/travel/tools.js";
import { CITIES, flightsFor } from "../../examples/travel/catalog.js";

/** The original six preferences (issue 12), whose phrasings the travel toolkit's words were written against. */
type SeenKind = "quality" | "rating" | "nonstop" | "airline" | "budget" | "museums";
/**
 * Issue 26's users, written after the toolkit's words and not tuned to them: preferences a setting can express but
 * worded afresh (a cheap bed, the outdoors, food, another way of refusing an airline), two no setting can express
 * (an afternoon departure, breakfast), and a control user who accepts everything.
 */
type HiddenKind = "cheapBed" | "outdoors" | "foodie" | "carrier" | "afternoon" | "breakfast" | "control";
export type PreferenceKind = SeenKind | HiddenKind;

export interface Preference {
  kind: PreferenceKind;
  /** The airline the user never flies (kind "airline"). */
  airline?: string;
  /** The most the whole trip may cost, per person per day (kind "budget"). */
  perPersonDay?: number;
}

/**
 * What each preference is, in words, which travel setting (if any) could express it, whether the row belongs to the
 * hidden set, and whether any setting can express it at all.
 */
export const PREFERENCES: Record<
  PreferenceKind,
  { label: string; setting: string; hidden?: boolean; expressible?: false }
> = {
  quality: { label: "quality over price (hotel ≥ 4★ rated ≥ 8)", setting: "search_hotels priority, minRating" },
  rating: { label: "well-reviewed hotels (rated ≥ 8.5)", setting: "search_hotels priority, minRating" },
  nonstop: { label: "nonstop flights only (requests state a budget)", setting: "search_flights nonstop" },
  airline: { label: "an airline to avoid (the home city's usual one)", setting: "search_flights avoidAirlines" },
  budget: {
    label: "strict budget, unstated ($250 per person per day)",
    setting: "search_flights, search_hotels priority; search_activities focus",
  },
  museums: { label: "museums over nightlife", setting: "search_activities focus" },
  cheapBed: { label: "a cheap bed (hotel of 3★ or fewer)", setting: "search_hotels priority", hidden: true },
  outdoors: { label: "outdoor outings only", setting: "search_activities focus", hidden: true },
  foodie: { label: "food outings only", setting: "search_activities focus", hidden: true },
  carrier: {
    label: "an airline to avoid, said other ways",
    setting: "search_flights avoidAirlines",
    hidden: true,
  },
  afternoon: {
    label: "an afternoon departure (none exists)",
    setting: "none: no setting chooses the time",
    hidden: true,
    expressible: false,
  },
  breakfast: {
    label: "breakfast included (never offered)",
    setting: "none: no setting chooses breakfast",
    hidden: true,
    expressible: false,
  },
  control: { label: "control: accepts every answer", setting: "none needed", hidden: true },
};

/** The hidden cap of the strict-budget user, fixed before any run was looked at. */
export const BUDGET_PER_PERSON_DAY = 250;

/**
 * Ways of saying each preference was not met. Written as people write, not from Candor's word lists: some share
 * a word with a setting and some do not, which is the point.
 */
export const REASONS: Record<PreferenceKind, (p: Preference) => readonly string[]> = {
  quality: () => [
    "The hotel was a dump",
    "Far too shabby a place for us",
    "I expected a much nicer place to stay",
    "Basic rooms, not the standard I travel at",
    "We want somewhere upscale next time",
    "The hotel felt cheap and tired",
    "Not comfortable at all, I want luxury",
  ],
  rating: () => [
    "Guests rate that hotel badly, and they were right",
    "The room was dirty",
    "Noisy all night: read the reviews next time",
    "The reviews of that place are terrible",
    "The bathroom was not clean",
    "Pick somewhere people actually rate well",
  ],
  nonstop: () => [
    "I can't stand layovers",
    "Two stops to get there is too many",
    "Direct flights only, please",
    "Changing planes wastes my whole day",
    "I want to fly nonstop",
    "Connecting flights make me miss meetings",
  ],
  airline: (p) => [
    `Never again with ${p.airline}`,
    `I refuse to fly ${p.airline}`,
    `${p.airline} lost my luggage last time`,
    "I told you I avoid that airline",
    "Wrong carrier, I don't fly with them",
    `Book anyone but ${p.airline}`,
  ],
  budget: () => [
    "Way too expensive",
    "I can't afford that",
    "That's more than I want to spend",
    "Too pricey for me",
    "Find me something cheaper",
    "That costs too much money",
    "Overpriced, I'm on a tight budget",
  ],
  museums: () => [
    "Too much nightlife, I wanted museums",
    "I don't want a dinner cruise, I want galleries",
    "Skip the evening outings, more culture please",
    "I'd rather spend the time in museums",
    "No late-night stuff, I go to bed early",
    "More art and history, less partying",
  ],
  cheapBed: () => [
    "Paying that much for a bed is silly",
    "The room rate was steep",
    "Pick a more affordable place to sleep",
    "That hotel blew my budget",
    "I only need a cheap bed, not a palace",
    "Why so fancy? I just sleep there",
  ],
  outdoors: () => [
    "I want to be outside hiking, not in buildings",
    "Too many indoor things, take me into the countryside",
    "We love nature walks and fresh air",
    "Less sightseeing in town, more green spaces",
    "Get us out of the city into the hills",
  ],
  foodie: () => [
    "I came for the food",
    "Where are the restaurants and tastings?",
    "More eating, less walking around",
    "Every day should have something to taste",
    "We travel to eat, plan around meals",
  ],
  carrier: (p) => [
    "Not that carrier again",
    "Their seats are awful, choose a different airline",
    `I'm done with ${p.airline}`,
    `${p.airline} cancelled on me twice, avoid them`,
    `Anyone except ${p.airline}, please`,
    `${p.airline}'s service is appalling`,
  ],
  afternoon: () => [
    "I hate early flights, I want to leave after lunch",
    "A 6am start ruins the first day",
    "We'd like an afternoon departure",
    "Too early! I need to sleep in before flying",
  ],
  breakfast: () => [
    "No breakfast included, again",
    "I want breakfast in the price",
    "Where's the breakfast?",
    "A hotel without breakfast is useless to me",
  ],
  control: () => ["(never said: the control user accepts every answer)"],
};

/** Deterministic pseudo-random numbers in [0, 1) from a seed (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const pickOf = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** One request a simulated user makes, with what it means (so a misreading can be told apart from a bad answer). */
export interface TripRequest {
  text: string;
  origin: string;
  destination: string;
  days: number;
  travellers: number;
  budget: number | null;
}

const TEMPLATES: readonly ((t: Omit<TripRequest, "text">, party: string) => string)[] = [
  (t, party) => `Plan a ${t.days}-day trip from ${t.origin} to ${t.destination} for ${party}`,
  (t, party) => `I want to travel to ${t.destination} from ${t.origin} for ${t.days} days, ${party}`,
  (t, party) => `A ${t.days}-day holiday in ${t.destination} from ${t.origin} for ${party}`,
  (t, party) => `Organise a getaway to ${t.destination} from ${t.origin}: ${t.days} days for ${party}`,
  (t, party) => `Can you plan a trip for ${party} from ${t.origin} to ${t.destination} for ${t.days} days?`,
  (t, party) => `Trip from ${t.origin} to ${t.destination} for ${party}, ${t.days} days`,
];

const CURATED = CITIES.map((c) => c.name);

/** A user's home city, from the seed. */
export function homeOf(seed: number): string {
  return pickOf(rng(seed ^ 0x5eed), CURATED);
}

/**
 * Pure. `n` requests of one user from the seed: from their home city to varied destinations, 2–6 days, 1–4
 * travellers, worded six ways; with a stated budget ($180–$300 per person per day) when `withBudget`.
 */
export function requestsFor(seed: number, n: number, withBudget: boolean): TripRequest[] {
  const r = rng(seed);
  const origin = homeOf(seed);
  const out: TripRequest[] = [];
  let last = "";
  for (let i = 0; i < n; i++) {
    let destination = pickOf(r, CURATED);
    while (destination === origin || destination === last) destination = pickOf(r, CURATED);
    last = destination;
    const days = 2 + Math.floor(r() * 5);
    const travellers = 1 + Math.floor(r() * 4);
    const budget = withBudget ? Math.round((180 + r() * 120) * days * travellers) : null;
    const t = { origin, destination, days, travellers, budget };
    const party = travellers === 1 ? "1 person" : `${travellers} people`;
    const base = pickOf(r, TEMPLATES)(t, party);
    const said = budget === null ? "" : pickOf(r, [` with a budget of $${budget}`, `, under $${budget} in total`]);
    // The budget goes inside a question ("… for 3 days with a budget of $900?").
    const text = base.endsWith("?") ? `${base.slice(0, -1)}${said}?` : `${base}${said}`;
    out.push({ ...t, text });
  }
  return out;
}

/** The airline a user from `home` flies most often by default, so the one they have grown to avoid. */
export function usualAirline(home: string): string {
  const from = CITIES.find((c) => c.name === home)!;
  const counts = new Map<string, number>();
  for (const to of CITIES.filter((c) => c !== from)) {
    const a = flightsFor(from, to, "primary")[0]!.airline;
    counts.set(a, (counts.get(a) ?? 0) + 1);
  }
  return [...counts.entries()].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))[0]![0];
}

/** What the user sees of an answer: the parts of the trip it found, and its total. */
export interface Answer {
  status: string;
  flight: FlightResult | null;
  hotel: HotelResult | null;
  activities: ActivitiesResult | null;
  total: number | null;
}

/** The answer of a finished run: the last done step whose result is a flight, a hotel, activities, a total. */
export function answerOf(state: Parameters<typeof planOf>[0] & { status: unknown }): Answer {
  const done = (planOf(state)?.steps ?? []).filter((s) => s.status === "done").map((s) => s.result);
  const last = <T>(schema: z.ZodType<T>): T | null => {
    for (const r of [...done].reverse()) {
      const p = schema.safeParse(r);
      if (p.success) return p.data;
    }
    return null;
  };
  const total = last(z.object({ total: z.number(), breakdown: Breakdown }));
  return {
    status: String(state.status),
    flight: last(FlightResult),
    hotel: last(HotelResult),
    activities: last(ActivitiesResult),
    total: total?.total ?? null,
  };
}

export type Judgement = { verdict: "accepted" } | { verdict: "rejected"; reason: string };

const NIGHTLIFE = /evening|night|bar\b|club|cruise with dinner|party/i;
const MUSEUM = /museum|gallery/i;

/**
 * Pure. Whether the answer meets the preference. A missing part the preference is about (no hotel, no flight,
 * no total) is a rejection that says so. `pick` chooses which wording of the reason the user writes (0–1).
 */
export function judge(pref: Preference, trip: TripRequest, a: Answer, pick: number): Judgement {
  const say = (): Judgement => {
    const reasons = REASONS[pref.kind](pref);
    return { verdict: "rejected", reason: reasons[Math.floor(pick * reasons.length)]! };
  };
  const missing = (what: string): Judgement => ({ verdict: "rejected", reason: `The plan has no ${what} at all` });
  const ok: Judgement = { verdict: "accepted" };
  switch (pref.kind) {
    case "quality":
      if (!a.hotel) return missing("hotel");
      return a.hotel.stars >= 4 && a.hotel.rating >= 8 ? ok : say();
    case "rating":
      if (!a.hotel) return missing("hotel");
      return a.hotel.rating >= 8.5 ? ok : say();
    case "nonstop":
      if (!a.flight) return missing("flight");
      return a.flight.stops === 0 ? ok : say();
    case "airline":
      if (!a.flight) return missing("flight");
      return a.flight.airline.toLowerCase() === pref.airline?.toLowerCase() ? say() : ok;
    case "budget":
      if (a.total === null) return missing("total price");
      return a.total <= (pref.perPersonDay ?? BUDGET_PER_PERSON_DAY) * trip.travellers * trip.days ? ok : say();
    case "museums": {
      if (!a.activities) return missing("activities");
      const names = a.activities.activities.map((x) => x.name);
      return names.some((n) => NIGHTLIFE.test(n)) || !names.some((n) => MUSEUM.test(n)) ? say() : ok;
    }
    case "cheapBed":
      if (!a.hotel) return missing("hotel");
      return a.hotel.stars <= 3 ? ok : say();
    case "outdoors":
    case "foodie": {
      if (!a.activities) return missing("activities");
      const wanted = pref.kind === "outdoors" ? "outdoors" : "food";
      const kinds = a.activities.activities.flatMap((x) => (x.kind ? [x.kind] : []));
      return kinds.length > 0 && kinds.every((k) => k === wanted) ? ok : say();
    }
    case "carrier":
      if (!a.flight) return missing("flight");
      return a.flight.airline.toLowerCase() === pref.airline?.toLowerCase() ? say() : ok;
    case "afternoon":
      if (!a.flight) return missing("flight");
      return Number(a.flight.departure.slice(0, 2)) >= 12 ? ok : say();
    case "breakfast":
      return say();
    case "control":
      return ok;
  }
}
