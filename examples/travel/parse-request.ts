import { z } from "zod";
import { analyzeRequest, overlaps, within, type Analysis, type Span } from "../../src/planning/lexicon.js";
import { emptyInterpretation, type Interpretation } from "../../src/tools/types.js";
import {
  cityLabel,
  comparableHomonyms,
  findCity,
  KNOWN_CITIES,
  namedCountry,
  normalizeName,
  type PlaceOption,
} from "./catalog.js";
import { areaCityWhy, areaWhy, findAreaCities, findAreas } from "./areas.js";
import { describePlace, placesNamed } from "./gazetteer.js";
import { LENGTH_UNITS, unitDays } from "./trip-words.js";

/** What a travel request says, with the demo's defaults filled in where it says nothing. */
export const TripFacts = z.object({
  origin: z.string(),
  /** The first city to visit; null when the request names no destination at all (tools then ask for one). */
  destination: z.string().nullable(),
  /** Every city to visit, in order (the destination first); more than one makes a multi-city trip. */
  stops: z.array(z.string()),
  /** Whole days, or the request's own number when it is refused (see `refused`), so the tools' check fails. */
  days: z.number(),
  /** Days per stop when the request gives them ("2 days in Paris and 3 in Rome"), else null. */
  daysPerStop: z.array(z.number()).nullable(),
  travellers: z.number(),
  adults: z.number().nullable(),
  children: z.number().nullable(),
  /** In US dollars (what the catalog prices in); null: the request sets no budget. */
  budget: z.number().positive().nullable(),
  /** ISO code of the currency the budget was written in, when it said (converted by the rates table). */
  budgetCurrency: z.string().nullable(),
  /** The budget as written, before conversion. */
  budgetAmount: z.number().nullable(),
  /** Facts that were not in the request and took their default, so a summary can say what it assumed. */
  assumed: z.array(z.enum(["origin", "days", "travellers", "currency"])),
  /** Facts the request gave in a form the tools will not use as is ("-2 people", "2.5 days"): a person decides. */
  refused: z.array(z.enum(["days", "travellers", "budget"])),
  /** Places the request rules out ("I don't want to go to Paris"). */
  avoided: z.array(z.string()),
  /** States and regions named where a city was expected ("2 cities in Texas"): named to a person, never a value. */
  areas: z.array(z.string()),
});
export type TripFacts = z.infer<typeof TripFacts>;

export const DEFAULT_ORIGIN = "Madrid";
export const DEFAULT_DAYS = 3;
export const DEFAULT_TRAVELLERS = 1;
export const MAX_DAYS = 60;
export const MAX_TRAVELLERS = 20;

/** The date of the rates below: a fixed table in the code, not live rates, and every conversion says so. */
export const RATES_DATE = "2025-06-02";
/** US dollars per unit of each currency, on RATES_DATE. */
export const USD_PER_UNIT: Readonly<Record<string, number>> = {
  USD: 1,
  EUR: 1.1368,
  GBP: 1.3529,
  JPY: 0.006962,
  CHF: 1.2165,
  CAD: 0.7289,
  AUD: 0.6452,
  CNY: 0.1389,
  INR: 0.01168,
  MXN: 0.05178,
  SEK: 0.1042,
  NOK: 0.0987,
  DKK: 0.1524,
  CZK: 0.04581,
  PLN: 0.2664,
  HUF: 0.002823,
  BRL: 0.1769,
  KRW: 0.000728,
  TRY: 0.02548,
};

// Tools each fact feeds, for the understanding record.
const FLIGHT_TOOLS = ["search_flights", "search_flights_backup"];
const CITY_TOOLS = [
  ...FLIGHT_TOOLS,
  "search_hotels",
  "search_activities",
  "find_attractions",
  "plan_days",
  "build_itinerary",
];
const DAY_TOOLS = ["search_hotels", "search_activities", "plan_days", "build_itinerary"];
const PEOPLE_TOOLS = [...FLIGHT_TOOLS, "search_hotels", "search_activities", "plan_days"];
const BUDGET_TOOLS = ["check_budget"];

/** Words that follow a direction word without being a place ("want to go", "in the centre", "in 3 days"). */
const NOT_A_PLACE = new Set(
  (
    "a an the my our your his her their this that these those some any me us them it there here i we you he she they " +
    "go going fly flying travel travelling traveling visit visiting see seeing book booking plan planning stay staying " +
    "spend spending be do get have make find take leave return come explore enjoy relax keep try know " +
    "and or but for with without from to in on at by of about around under below over within than " +
    "total budget max maximum most least up no more less cheap cheaper afford people persons person travellers " +
    "travelers adults guests kids children family couple friends day days night nights week weeks weekend month months " +
    "january february march april may june july august september october november december " +
    "monday tuesday wednesday thursday friday saturday sunday summer winter spring autumn fall christmas easter " +
    "home work airport trip vacation holiday holidays getaway break tour city centre center downtown town hotel hotels flight flights " +
    "la el los las un una de del al en para por con y o vacaciones viaje playa semana dias noches personas " +
    "le les des du au aux pour avec et ou vacances voyage plage semaine jours nuits personnes"
  ).split(" "),
);

interface Place extends Span {
  name: string;
  known: boolean;
  role: "origin" | "destination" | "list" | null;
  /** Where the role's cue starts (the mention's value span starts there). */
  cueStart: number;
  avoided: boolean;
  /** Places of comparable size the name may mean, none said: the request must say which (see settleHomonyms). */
  undecided?: PlaceOption[];
  /** One of several places of comparable size, chosen by the request's other places (see settleHomonyms). */
  settled?: true;
}

/** What the travel reader found, with the text each fact came from. */
export interface TripReading {
  facts: TripFacts;
  interpretation: Interpretation;
}

/**
 * Reads a free-text travel request ("Plan a 3-day trip from Madrid to Paris for 2 people under $2000", "3 días a
 * París desde Madrid", "deux adultes et un enfant, 4 jours à Rome, 1 500 €"): places with their direction words in
 * English, Spanish and French, lengths, travellers (adults and children), budgets in words and in other
 * currencies (converted by a dated table), negated places. What it leaves out takes a default recorded in
 * `assumed`; what it cannot use as written is `refused`, never changed.
 */
export function parseTripRequest(text: string): TripFacts {
  return readTrip(text).facts;
}

let last: { text: string; reading: TripReading } | null = null;

/** `parseTripRequest` with the interpretation for the understanding record (the last request is cached). */
export function readTrip(text: string, analysis?: Analysis): TripReading {
  if (last?.text === text) return last.reading;
  const reading = read(text, analysis ?? analyzeRequest(text));
  last = { text, reading };
  return reading;
}

function read(text: string, a: Analysis): TripReading {
  const out = emptyInterpretation();
  const norm = a.norm;
  const assumed: TripFacts["assumed"] = [];
  const refused: TripFacts["refused"] = [];

  // A state or region is no city: named with its biggest cities, never read as a city that shares its name.
  const areas = findAreas(text, a);
  for (const area of areas) out.notUnderstood.push({ span: area, kind: "place", why: areaWhy(area) });
  // A region's name the trip goes to, when the region has a city of that name, is that city ("fly to Québec").
  const areaCities = findAreaCities(text, a).filter((x) => !overlaps(x, areas));
  for (const x of areaCities)
    out.assumptions.push({ name: `place "${x.text}"`, value: x.city, why: areaCityWhy(x), tools: CITY_TOOLS });
  const found = findPlaces(text, a).filter((p) => !overlaps(p, areas) && !overlaps(p, areaCities));
  const places = supersede(
    text,
    a,
    [...found, ...areaCities.map((x) => withRole(text, a, x.start, x.end, x.city, true))].sort(
      (x, y) => x.start - y.start,
    ),
    out,
  );
  const active = settleHomonyms(
    places.filter((p) => !p.avoided),
    out,
  );
  const avoided = places.filter((p) => p.avoided && p.known);
  for (const p of avoided) {
    const negation = a.negations.find((n) => within(p, [n.scope]));
    const span = negation ? spanOf(text, negation.cue.start, Math.max(p.end, negation.scope.end)) : p;
    out.exclusions.push({
      outputs: [],
      span,
      description: `not ${p.name}`,
      why: `the request rules out ${p.name}, so no step goes there`,
    });
  }
  const { origin: originPlace, stops: stopPlaces } = assignRoles(active);
  for (const p of active.filter((p) => !p.known)) {
    out.notUnderstood.push({ span: p, kind: "place", why: `"${p.name}" is not a city the travel tools know` });
  }
  const origin = originPlace?.name ?? DEFAULT_ORIGIN;
  // An origin whose name several places share is asked about (settleHomonyms), not taken as a value.
  if (originPlace) {
    if (!originPlace.undecided)
      out.values.push({
        name: "origin",
        value: originPlace.name,
        source: spanOf(text, originPlace.cueStart, originPlace.end),
        tools: FLIGHT_TOOLS,
      });
  } else {
    assumed.push("origin");
    out.assumptions.push({
      name: "origin",
      value: DEFAULT_ORIGIN,
      why: 'the request names no origin (say "from <city>")',
      tools: FLIGHT_TOOLS,
    });
  }
  const stops = [...new Set(stopPlaces.map((p) => p.name))];
  // A place the tools do not know is no value they can use: it is named as not understood (above) instead.
  for (const [i, p] of stopPlaces.entries()) {
    if (p.known && !p.undecided)
      out.values.push({
        name: i === 0 ? "destination" : `stop ${i + 1}`,
        value: p.name,
        source: spanOf(text, p.cueStart, p.end),
        tools: CITY_TOOLS,
      });
  }

  // A name several places share, one of them far bigger ("Athens"), is resolved to the most populous: said, never
  // silent. (Places of comparable size were settled or asked about above.) The demo's twelve curated cities are the
  // ones it means by their names.
  for (const p of [originPlace, ...stopPlaces]) {
    if (!p?.known || p.undecided || p.settled || KNOWN_CITIES.includes(p.name)) continue;
    const city = findCity(p.text);
    if (!city || city.ambiguous.length === 0) continue;
    out.assumptions.push({
      name: `place "${p.text}"`,
      value: cityLabel(city),
      why: `"${p.text}" names several places: ${cityLabel(city)} is taken (the most populous); also ${city.ambiguous.join("; ")} — add the country ("${city.name}, <country>") to choose`,
      tools: p === originPlace ? FLIGHT_TOOLS : CITY_TOOLS,
    });
  }

  const duration = findDays(text, a);
  for (const d of a.dates.filter((x) => x.begins !== undefined))
    out.notUnderstood.push({
      span: spanOf(text, d.start, d.end),
      kind: "date",
      why: `"${d.text}" is when the trip starts (${d.first ?? "a date"}), not its length: the travel tools take no start date, so no step holds it`,
    });
  let days = DEFAULT_DAYS;
  if (duration.kind === "none") {
    assumed.push("days");
    out.assumptions.push({
      name: "days",
      value: DEFAULT_DAYS,
      why: 'the request gives no length (say "for 5 days")',
      tools: DAY_TOOLS,
    });
  } else if (duration.kind === "refused") {
    refused.push("days");
    days = duration.value;
    out.refusals.push({ name: "days", text: duration.span.text, why: duration.why, tools: DAY_TOOLS });
    out.consumed.push(duration.span);
  } else {
    days = duration.value;
    out.values.push({ name: "days", value: days, source: duration.span, tools: DAY_TOOLS });
    const either = a.lengthOrStart.find((x) => overlaps(x, [duration.span]));
    if (either)
      out.assumptions.push({
        name: "days",
        value: days,
        why: `"${either.text}" is read as the trip's length; if it is when the trip starts, say so ("leaving ${either.text}") and how long it lasts`,
        tools: DAY_TOOLS,
      });
    // The length is read from the dates; the dates themselves no tool takes, and that must still be said.
    if (duration.kind === "found" && duration.fromDates)
      out.notUnderstood.push({
        span: duration.span,
        kind: "date",
        why: `the travel tools take no dates: only the trip's length (${days} days) is read from "${duration.span.text}"`,
      });
  }
  const daysPerStop = duration.kind === "per_stop" ? duration.perStop : null;

  const people = findTravellers(text, a);
  let travellers = DEFAULT_TRAVELLERS;
  if (people.kind === "none") {
    assumed.push("travellers");
    out.assumptions.push({
      name: "travellers",
      value: DEFAULT_TRAVELLERS,
      why: 'the request does not say how many (say "for 2 people")',
      tools: PEOPLE_TOOLS,
    });
  } else {
    travellers = people.total;
    const counts = people.parts.filter((p) => p.name === "travellers");
    if (counts.length > 1 && counts.some((c) => c.value !== counts[0]!.value)) {
      const others = counts
        .slice(1)
        .map((c) => `"${c.span.text}"`)
        .join(", ");
      out.assumptions.push({
        name: "travellers",
        value: counts[0]!.value,
        why: `the request counts the party more than once ("${counts[0]!.span.text}", then ${others}): the first is used, the others are not`,
        tools: PEOPLE_TOOLS,
      });
    }
    if (people.range)
      out.assumptions.push({
        name: "travellers",
        value: people.range.max,
        why: `"${people.range.span.text}" is a range of travellers (${people.range.min} to ${people.range.max}): ${people.range.max} is used, so there is room for everyone; say how many to change it`,
        tools: PEOPLE_TOOLS,
      });
    for (const part of people.parts)
      out.values.push({ name: part.name, value: part.value, source: part.span, tools: PEOPLE_TOOLS });
    // "a family holiday for 4": once the party is counted, the word for it is read (uncounted, it is asked about).
    for (const m of norm.matchAll(/(?<![a-z])(?:family|group|familia|grupo|famille|groupe)(?![a-z])/g))
      out.consumed.push(spanOf(text, m.index, m.index + m[0].length));
    if (people.parts.length > 1 || (people.parts.length === 1 && people.parts[0]!.name !== "travellers"))
      out.values.push({
        name: "travellers",
        value: people.total,
        source: spanOf(text, people.parts[0]!.span.start, people.parts.at(-1)!.span.end),
        tools: PEOPLE_TOOLS,
      });
    if ((people.children ?? 0) > 0)
      out.assumptions.push({
        name: "children's fares",
        value: "adult fares",
        why: "the travel tools have no child fares, so children are priced as adults",
        tools: PEOPLE_TOOLS,
      });
    for (const bad of people.refusals) {
      refused.push("travellers");
      out.refusals.push({ name: "travellers", text: bad.span.text, why: bad.why, tools: PEOPLE_TOOLS });
      out.consumed.push(bad.span);
    }
  }

  const money = findBudget(text, a);
  let budget: number | null = null;
  let budgetCurrency: string | null = null;
  let budgetAmount: number | null = null;
  if (money.kind === "refused") {
    refused.push("budget");
    out.refusals.push({ name: "budget", text: money.span.text, why: money.why, tools: BUDGET_TOOLS });
    out.consumed.push(money.span);
  } else if (money.kind === "found") {
    budgetAmount = money.amount;
    budgetCurrency = money.currency;
    const rate = USD_PER_UNIT[money.currency ?? "USD"] ?? 1;
    budget = Math.round(money.amount * rate);
    out.values.push({
      name: "budget",
      value: `${money.amount} ${money.currency ?? "USD"}`,
      source: money.span,
      tools: BUDGET_TOOLS,
    });
    if (money.currency === null) {
      assumed.push("currency");
      out.assumptions.push({
        name: "budget currency",
        value: "USD",
        why: `"${money.span.text}" names no currency; the travel prices are in US dollars`,
        tools: BUDGET_TOOLS,
      });
    } else if (money.currency !== "USD") {
      out.changes.push({
        name: "budget",
        from: `${money.amount} ${money.currency}`,
        to: `$${budget.toLocaleString("en-US")}`,
        source: money.span.text,
        why: `${money.span.text} taken as $${budget.toLocaleString("en-US")} at the table's rate of 1 ${money.currency} = ${rate} USD (rates of ${RATES_DATE}, not live); the travel prices are in US dollars`,
        tools: BUDGET_TOOLS,
      });
    }
    if (money.range)
      out.assumptions.push({
        name: "budget",
        value: money.amount,
        why: `"${money.span.text}" is a range: its upper end is the limit`,
        tools: BUDGET_TOOLS,
      });
    if (money.others && money.others.length > 0) {
      out.consumed.push(...money.others);
      out.assumptions.push({
        name: "budget",
        value: money.amount,
        why: `the request states more than one limit ("${money.span.text}", then ${money.others.map((o) => `"${o.text}"`).join(", ")}): the first is used, the others are not`,
        tools: BUDGET_TOOLS,
      });
    }
  }

  for (const e of domainExclusions(text, norm)) out.exclusions.push(e);
  out.consumed.push(...tripWords(text, norm));
  if (stops.length > 1 && stopPlaces.every((p) => p.known))
    planLegs(out, { origin, stops, days, daysPerStop, travellers, refusedDays: refused.includes("days") });

  const facts: TripFacts = {
    origin,
    destination: stops[0] ?? null,
    stops,
    days,
    daysPerStop,
    travellers,
    adults: people.kind === "found" ? people.adults : null,
    children: people.kind === "found" ? people.children : null,
    budget,
    budgetCurrency,
    budgetAmount,
    assumed,
    refused: [...new Set(refused)],
    avoided: [...new Set(avoided.map((p) => p.name))],
    areas: areas.map((x) => x.name),
  };
  return { facts, interpretation: out };
}

/**
 * A name that several places of comparable size share ("El Dorado": Arkansas and Sinaloa; "Valencia": Venezuela
 * and Spain) is not taken by population alone. The request's other places decide when they can: the one candidate
 * in a country the request also names, as a city ("Valencia from Madrid") or as a country ("El Dorado in Mexico"),
 * is taken and said so; a country used that way is read, not a place to go. Otherwise the name is not understood:
 * a person is asked, with the candidates and their countries, and no value is taken from it.
 */
function settleHomonyms(places: Place[], out: Interpretation): Place[] {
  const options = new Map(places.map((p) => [p, p.known ? comparableHomonyms(p.text) : []] as const));
  const countries = new Map(places.map((p) => [p, p.known ? null : namedCountry(p.text)] as const));
  const used = new Set<Place>();
  const settled = places.map((p): Place => {
    const candidates = options.get(p) ?? [];
    // Context: the countries of the request's other places that are themselves clear, and the countries it names.
    const context = new Map<string, Place>();
    for (const q of places) {
      if (q === p) continue;
      const code = countries.get(q) ?? (q.known && options.get(q)?.length === 0 ? findCity(q.name)?.countryCode : null);
      if (code && !context.has(code)) context.set(code, q);
    }
    if (candidates.length === 0) return nearOthers(p, context, out);
    const fits = candidates.filter((c) => context.has(c.countryCode));
    const listed = candidates.map((c) => `${c.label} (${c.population.toLocaleString("en-US")} people)`).join("; ");
    if (fits.length === 1) {
      const chosen = fits[0]!;
      const by = context.get(chosen.countryCode)!;
      if (countries.get(by)) used.add(by);
      out.assumptions.push({
        name: `place "${p.text}"`,
        value: chosen.label,
        why: `"${p.text}" names places of comparable size: ${listed}. ${chosen.label} is taken, in the same country as ${by.text}, which the request also names`,
        tools: CITY_TOOLS,
      });
      return { ...p, name: chosen.name, settled: true };
    }
    // Every candidate after the first has a qualified name that finds it ("El Dorado, Sinaloa").
    out.notUnderstood.push({
      span: p,
      kind: "place",
      why: `"${p.text}" names places of comparable size and the request does not say which: ${listed}; say which with its region or country, e.g. "${candidates[1]!.name}"`,
    });
    return { ...p, undecided: candidates };
  });
  for (const c of used) out.consumed.push(c);
  return settled.filter((p) => !used.has(p));
}

/** A place of a name this big, in a country the request's other places are in, outweighs a bigger one elsewhere. */
const NEAR_OTHERS_MIN_POPULATION = 100_000;

/**
 * A name whose biggest place dwarfs the others ("St. Petersburg": Russia, and Florida) is still read with the
 * request's other places: when the biggest is in none of their countries and a sizeable place of that name is
 * ("from St. Petersburg to Rockford": Rockford is in the United States), that one is taken, and said so. The demo's
 * curated cities are the ones it means by their names.
 */
function nearOthers(p: Place, context: ReadonlyMap<string, Place>, out: Interpretation): Place {
  if (!p.known || context.size === 0 || KNOWN_CITIES.includes(p.name)) return p;
  const [first, ...others] = placesNamed(p.text);
  if (first === undefined || context.has(first.countryCode)) return p;
  const near = others.find((o) => context.has(o.countryCode) && o.population >= NEAR_OTHERS_MIN_POPULATION);
  if (near === undefined) return p;
  const by = context.get(near.countryCode)!;
  out.assumptions.push({
    name: `place "${p.text}"`,
    value: describePlace(near),
    why: `"${p.text}" names several places: ${describePlace(near)} is taken, in the same country as ${by.text}, which the request also names; the most populous is ${describePlace(first)} — add the country ("${p.text}, <country>") to choose`,
    tools: CITY_TOOLS,
  });
  return { ...p, name: near.qualifiedName, settled: true };
}

/**
 * "Go to Rome instead. Plan a trip to Atlantis": a clause that says "instead" (or "rather", "en su lugar",
 * "plutôt", "à la place") replaces the places other clauses would go to. Those are ruled out, and said so.
 */
function supersede(text: string, a: Analysis, places: Place[], out: Interpretation): Place[] {
  const cue =
    /(?<![a-z])(?:instead(?! of)|rather(?! than)|en su lugar|mejor|plutot(?! que)|a la place(?! de))(?![a-z])/g;
  const marked = a.clauses.filter((c) => new RegExp(cue.source).test(a.norm.slice(c.start, c.end)));
  const inMarked = (p: Place) => marked.some((c) => p.start >= c.start && p.end <= c.end);
  const replacing = places.filter((p) => inMarked(p) && p.known && p.role !== "origin" && !p.avoided);
  if (replacing.length === 0) return places;
  // The cue is read: it says which places count.
  for (const c of marked)
    for (const m of a.norm.slice(c.start, c.end).matchAll(cue))
      out.consumed.push(spanOf(text, c.start + m.index, c.start + m.index + m[0].length));
  return places.map((p) => {
    if (inMarked(p) || p.role === "origin" || p.avoided) return p;
    out.exclusions.push({
      outputs: [],
      span: p,
      description: `not ${p.name}`,
      why: `the request says to go to ${replacing.map((r) => r.name).join(" and ")} instead of ${p.name}`,
    });
    return { ...p, avoided: true };
  });
}

/** A step-id-safe key for a city ("New York" → "new_york"). */
function slug(name: string): string {
  return (
    normalizeName(name)
      .replace(/[^a-z0-9]+/g, "_")
      .replace(/^_|_$/g, "") || "city"
  );
}

/**
 * A multi-city trip ("Madrid to Paris then Rome", "Prague and Vienna, 6 days"): a flight per leg (the way home
 * included), a hotel and activities per city, the days split between the cities (evenly unless the request gives
 * each its own) and said so. The planner makes one step per instance; the budget check and the itinerary take them
 * all.
 */
function planLegs(
  out: Interpretation,
  t: {
    origin: string;
    stops: string[];
    days: number;
    daysPerStop: number[] | null;
    travellers: number;
    refusedDays: boolean;
  },
): void {
  const n = t.stops.length;
  if (t.refusedDays) return;
  if (t.days < n) {
    out.refusals.push({
      name: "days",
      text: `${t.days} day(s) for ${n} cities`,
      why: `${n} cities need at least ${n} days: say a longer trip or fewer cities`,
      tools: DAY_TOOLS,
    });
    return;
  }
  const given = t.daysPerStop !== null && t.daysPerStop.length === n;
  const per = given ? t.daysPerStop! : t.stops.map((_, i) => Math.floor(t.days / n) + (i < t.days % n ? 1 : 0));
  if (!given)
    out.assumptions.push({
      name: "days per city",
      value: per,
      why: `${t.days} days split between ${n} cities: ${t.stops.map((c, i) => `${per[i]} in ${c}`).join(", ")} (say the days for each city to change it)`,
      tools: DAY_TOOLS,
    });
  const places = [t.origin, ...t.stops, t.origin];
  const legs = places.slice(1).map((to, i) => ({ from: places[i]!, to }));
  out.instances = {
    flight: legs.map((l, i) => ({
      key: `leg${i + 1}`,
      params: { origin: l.from, destination: l.to, travellers: t.travellers },
    })),
    // The last city's last day is the flight home: one night fewer there.
    hotel: t.stops
      .map((city, i) => ({
        key: slug(city),
        params: { city, nights: i < n - 1 ? per[i]! : per[i]! - 1, travellers: t.travellers, radiusKm: 0 },
      }))
      .filter((h) => h.params.nights > 0),
    activities: t.stops.map((city, i) => ({
      key: slug(city),
      params: { city, days: per[i]!, travellers: t.travellers },
    })),
  };
  if (out.instances.hotel!.length <= 1) delete out.instances.hotel;
}

function spanOf(text: string, start: number, end: number): Span {
  return { start, end, text: text.slice(start, end) };
}

// ---------------------------------------------------------------------------------------------------------------
// Places

/**
 * Words that make the next place the origin, in English, Spanish, French, German, Italian, Portuguese and Dutch:
 * "from", "starting in", "the trip begins in", "leaving (from)", "based in", "von", "ab", "da", "partendo da",
 * "saindo de", "vanuit".
 */
const ORIGIN_CUE =
  /(?:^|[^a-z])(?:from|leaving(?: from)?|departing(?: from)?|depart from|out of|(?:starting|start|starts|beginning|begin|begins|commencing|setting off|set off|based|home is|we live|i live|we're|we are|i'm|i am) (?:in|from|at)|desde|saliendo de|empezando en|de|depuis|partant de|au depart de|en partant de|von|ab|aus|da|partendo da|in partenza da|saindo de|partindo de|a partir de|vanuit|van)\s+$/;
const DESTINATION_CUE =
  /(?:^|[^a-z])(?:to|in|into|visit|visiting|towards|toward|around|at|explore|exploring|see|seeing|a|hacia|para|en|por|vers|pour|chez|then|luego|despues|puis|ensuite|nach|dann|per|verso|poi|rumo a|naar|via|->|→|-)\s+$/;
const LIST_CUE = /(?:^|[^a-z])(?:and|y|e|et|&|,)\s*$/;
const TRIP_AFTER = /^\s*(?:trip|vacation|holiday|holidays|getaway|break|tour|itinerary|weekend)(?![a-z])/;
/** Short Spanish and French cues ("a", "en", "de", "para") lead to a place only when it is one the tools know. */
const WEAK_CUES = /(?:^|[^a-z])(?:a|en|de|para|por|pour|chez|at|around|see|seeing|in|da|van|aus|ab|per)\s+$/;

/** A city named only by a capital at a sentence's start must be at least this big to be taken as meant. */
const UNCUED_MIN_POPULATION = 100_000;

function findPlaces(text: string, a: Analysis): Place[] {
  const norm = a.norm;
  const candidates: Span[] = [];
  // Capitalised phrases (any position: "Prague and Vienna" starts with a city).
  // An abbreviation inside a name keeps its dot ("Sault Ste. Marie", "St. Petersburg").
  for (const m of text.matchAll(/\p{Lu}[\p{L}'’.-]*(?:\s+(?:de\s+|del\s+|la\s+|of\s+)?\p{Lu}[\p{L}'’.-]*)*/gu))
    candidates.push(spanOf(text, m.index, m.index + m[0].replace(/[.'’-]+$/, "").length));
  // A name with its country or region ("Valencia, Spain", "Paris, Texas").
  for (const m of text.matchAll(
    /\p{Lu}[\p{L}'’.-]*(?:\s+\p{Lu}[\p{L}'’-]*)*,\s*\p{Lu}[\p{L}'’-]*(?:\s+\p{Lu}[\p{L}'’-]*)*/gu,
  ))
    candidates.push(spanOf(text, m.index, m.index + m[0].length));
  // Words after a direction word, capitalised or not ("to paris", "a nueva york").
  // A lookahead, so "from paris to narnia" yields both "paris to narnia" and "narnia".
  for (const m of norm.matchAll(
    /(?:^|[^a-z])(?:from|to|in|into|visit|visiting|towards|desde|de|a|hacia|para|en|depuis|vers|pour|then|and|y|et|nach|von|da|per|naar|van)\s+(?=([a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,2}))/g,
  )) {
    const start = m.index + m[0].length;
    candidates.push(spanOf(text, start, start + (m[1]?.length ?? 0)));
  }
  // A request without capitals ("amsterdam paris trip"): every word may be a place.
  if (!/\p{Lu}/u.test(text))
    for (const m of norm.matchAll(/[a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,2}/g))
      candidates.push(spanOf(text, m.index, m.index + m[0].length));

  const places: Place[] = [];
  // The longest name wins where names overlap, whichever candidate found it: "Salt Lake City" over the "Salt" that
  // "from Boston to Salt" finds, "Valencia, Spain" over "Valencia".
  const found = candidates
    .flatMap((c) => citiesIn(text, norm, c))
    .sort((x, y) => y.end - y.start - (x.end - x.start) || x.start - y.start);
  for (const f of found) {
    if (overlaps(f, places)) continue;
    // "and buy concert tickets": a verb of the request is no town of the gazetteer that shares its spelling,
    // unless capitalised mid-sentence.
    const capitalised = /\p{Lu}/u.test(text[f.start] ?? "") && f.start !== sentenceStartOf(text, f.start);
    if (!capitalised && a.taskVerbs.some((v) => v.start === f.start && v.end === f.end)) continue;
    places.push(withRole(text, a, f.start, f.end, f.name, true));
  }
  // A direction word followed by something that is no city the tools know: kept whole ("Xyzzyville0"), so the
  // tools can say so.
  for (const m of norm.matchAll(
    /(?:^|[^a-z])(?:from|to|in|into|visit|visiting|desde|hacia|depuis|vers|nach|naar)\s+(?=([a-z][a-z0-9'-]*(?:\s+[a-z][a-z0-9'-]*){0,2}))/g,
  )) {
    const start = m.index + m[0].length;
    const words = (m[1] ?? "").split(/\s+/);
    const kept: string[] = [];
    for (const w of words) {
      if (NOT_A_PLACE.has(w) || /^\d/.test(w)) break;
      kept.push(w);
    }
    if (kept.length === 0) continue;
    const end = start + kept.join(" ").length;
    if (overlaps({ start, end }, places) || overlaps({ start, end }, a.dates) || overlaps({ start, end }, a.amounts))
      continue;
    const cue =
      /(?:from|to|in|into|visit|visiting|desde|hacia|depuis|vers|nach|naar)\s+$/.exec(norm.slice(0, start))?.[0] ?? "";
    // Lower-case words after "in"/"to" are mostly not places ("in town", "to relax"); a capital says it is a name.
    const capital = /\p{Lu}/u.test(text[start] ?? "");
    if (
      !capital &&
      /^(?:in|to)\s+$/.test(cue) &&
      !/(?:^|[^a-z])(?:trip|travel|fly|flight|go|going|vacation|holiday|getaway)\s+(?:[a-z]+\s+){0,2}$/.test(
        norm.slice(0, start - cue.length + 1),
      )
    )
      continue;
    const name = text
      .slice(start, end)
      .split(/\s+/)
      .map((w) => (w[0] ?? "").toUpperCase() + w.slice(1))
      .join(" ");
    places.push(withRole(text, a, start, end, name, false));
  }
  // "Narnia trip": a capitalised word before a trip word.
  for (const m of norm.matchAll(/([a-z][a-z'-]+)\s+(?:trip|vacation|holiday|getaway|break)(?![a-z])/g)) {
    const start = m.index;
    const end = start + (m[1]?.length ?? 0);
    const first = text[start] ?? "";
    if (
      NOT_A_PLACE.has(m[1] ?? "") ||
      first === first.toLowerCase() ||
      overlaps({ start, end }, places) ||
      start === sentenceStartOf(text, start)
    )
      continue;
    places.push(withRole(text, a, start, end, text.slice(start, end), false));
  }
  return places.sort((x, y) => x.start - y.start);
}

function sentenceStartOf(text: string, index: number): number {
  const before = text.slice(0, index);
  const m = /[.!?]\s*[^.!?]*$/.exec(before);
  return m ? m.index + (/[.!?]\s*/.exec(m[0])?.[0].length ?? 0) : (/^\s*/.exec(before)?.[0].length ?? 0);
}

/** Known cities inside a candidate phrase, longest first from the left ("Amsterdam Paris" → two). */
function citiesIn(text: string, norm: string, c: Span): { start: number; end: number; name: string }[] {
  const words = [...norm.slice(c.start, c.end).matchAll(/[a-z][a-z'.-]*/g)].map((m) => ({
    start: c.start + m.index,
    end: c.start + m.index + m[0].length,
  }));
  const out: { start: number; end: number; name: string }[] = [];
  let i = 0;
  while (i < words.length) {
    let matched = false;
    for (let n = Math.min(4, words.length - i); n >= 1; n--) {
      const start = words[i]!.start;
      const end = words[i + n - 1]!.end;
      const phrase = text.slice(start, end);
      if (n === 1 && NOT_A_PLACE.has(norm.slice(start, end))) break;
      const city = findCity(phrase);
      // A capitalised word with no direction word before it, first in its sentence, is usually just a word
      // ("We are 4 people" is not a trip to Wé): only a city of some size is taken from it.
      const uncued =
        n === 1 &&
        start === sentenceStartOf(text, start) &&
        !DESTINATION_CUE.test(norm.slice(0, start)) &&
        !ORIGIN_CUE.test(norm.slice(0, start));
      if (city && uncued && city.population < UNCUED_MIN_POPULATION) break;
      if (city && normalizeName(phrase).length > 1) {
        // "Valencia, Spain" keeps its country, so the tools resolve the same place.
        out.push({ start, end, name: /[,(]/.test(phrase) ? phrase : city.name });
        i += n;
        matched = true;
        break;
      }
    }
    if (!matched) i++;
  }
  return out;
}

function withRole(text: string, a: Analysis, start: number, end: number, name: string, known: boolean): Place {
  const before = a.norm.slice(0, start);
  const after = a.norm.slice(end);
  const origin = ORIGIN_CUE.exec(before);
  const destination = DESTINATION_CUE.exec(before);
  const list = LIST_CUE.exec(before);
  let role: Place["role"] = null;
  let cueStart = start;
  if (origin && !(known === false && WEAK_CUES.test(before))) {
    role = "origin";
    cueStart = start - origin[0].replace(/^[^a-z]/, "").length;
  } else if (destination && !(known === false && WEAK_CUES.test(before))) {
    role = "destination";
    cueStart = start - destination[0].replace(/^[^a-z>→-]/, "").length;
  } else if (list) role = "list";
  else if (TRIP_AFTER.test(after)) role = "destination";
  return {
    ...spanOf(text, start, end),
    name,
    known,
    role,
    cueStart: Math.max(0, cueStart),
    avoided: a.negations.some((n) => within({ start, end }, [n.scope])),
  };
}

/**
 * Who is where: the first place after "from" is the origin; places after "to", "in", "a", "vers" … are the stops in
 * order, and a place listed after one ("Paris and Rome") continues the list. Places without a direction word:
 * listed together ("Prague and Vienna") they are all stops; side by side ("Amsterdam Paris trip", "Madrid → Paris")
 * the first is the origin; one before the first stop is the origin ("Madrid to Paris").
 */
function assignRoles(places: Place[]): { origin: Place | null; stops: Place[] } {
  let origin = places.find((p) => p.role === "origin") ?? null;
  const stops: Place[] = [];
  let previous: Place | null = null;
  const untagged: Place[] = [];
  for (const p of places) {
    if (p === origin) {
      previous = p;
      continue;
    }
    if (p.role === "destination" || (p.role === "list" && previous !== null && stops.includes(previous))) stops.push(p);
    else if (p.role === "list" && previous !== null && untagged.includes(previous)) untagged.push(p);
    else if (p.role !== "origin") untagged.push(p);
    previous = p;
  }
  if (stops.length === 0 && untagged.length > 0) {
    const listed = untagged.slice(1).every((p) => p.role === "list");
    if (origin === null && untagged.length >= 2 && !listed) {
      origin = untagged[0]!;
      stops.push(...untagged.slice(1));
    } else stops.push(...untagged);
  } else if (origin === null && stops.length > 0) {
    const before = untagged.filter((p) => p.start < stops[0]!.start);
    origin = before[0] ?? null;
    // Untagged places after the stops continue them ("to Paris, Rome").
    for (const p of untagged.filter((p) => p !== origin && p.start > stops[0]!.start)) stops.push(p);
  } else if (origin !== null) {
    for (const p of untagged) stops.push(p);
  }
  const seen = new Set<string>();
  const ordered = stops
    .sort((a, b) => a.start - b.start)
    .filter((p) => {
      // "… and back to Madrid": the way home, not a stop.
      if (origin && p.name === origin.name) return false;
      if (seen.has(p.name)) return false;
      seen.add(p.name);
      return true;
    });
  return { origin, stops: ordered };
}

// ---------------------------------------------------------------------------------------------------------------
// Days

const DAY_UNIT_AFTER = new RegExp(`^\\s*-?\\s*(${LENGTH_UNITS.join("|")})(?![a-z])`);

type Duration =
  | { kind: "none" }
  | { kind: "found"; value: number; span: Span; fromDates?: true }
  | { kind: "per_stop"; value: number; span: Span; perStop: number[] }
  | { kind: "refused"; value: number; span: Span; why: string };

/**
 * The trip's length: its own count of days, nights or weeks, or the days of a range of dates it names ("from March
 * 16th to March 18th, 2022": 3, both ends counted). A count and a range that disagree are refused: a person says
 * which.
 */
function findDays(text: string, a: Analysis): Duration {
  const counted = countDays(text, a);
  const range = a.dates.find((d) => d.days !== null);
  if (range?.days == null || counted.kind === "refused" || counted.kind === "per_stop") return counted;
  const span = spanOf(text, range.start, range.end);
  if (counted.kind === "none")
    return range.days > MAX_DAYS
      ? { kind: "refused", value: range.days, span, why: `the travel tools plan at most ${MAX_DAYS} days` }
      : { kind: "found", value: range.days, span, fromDates: true };
  if (counted.value === range.days) return counted;
  return {
    kind: "refused",
    value: counted.value,
    span: counted.span,
    why: `"${counted.span.text}" and "${range.text}" (${range.days} days, both ends counted) disagree: say which`,
  };
}

function countDays(text: string, a: Analysis): Duration {
  const norm = a.norm;
  // "in 3 days", "dans 3 jours", "a week from Friday" say when the trip starts, not how long it lasts.
  const starts = a.dates.filter((d) => d.begins !== undefined);
  for (const r of a.ranges) {
    if (overlaps(r, starts)) continue;
    const unit = DAY_UNIT_AFTER.exec(norm.slice(r.end));
    if (unit)
      return {
        kind: "refused",
        value: r.min,
        span: spanOf(text, r.start, r.end + unit[0].length),
        why: `a range of ${unit[1]}: say how many (e.g. ${r.min} or ${r.max})`,
      };
  }
  const found: { value: number; span: Span; raw: number }[] = [];
  for (const n of a.numbers) {
    const unit = DAY_UNIT_AFTER.exec(norm.slice(n.end));
    if (!unit || overlaps(n, starts)) continue;
    found.push({
      value: unitDays(n.value, unit[1] ?? "days"),
      raw: n.value,
      span: spanOf(text, n.start, n.end + unit[0].length),
    });
  }
  for (const m of norm.matchAll(
    /(?<![a-z])(?:a|an|one|una|un|une|eine|einen|ein|uma|um|een)\s+(week|fortnight|semana|quincena|semaine|settimana|woche|day|dia|jour|tag|giorno|dag|night|noche|nuit|nacht|notte|noite)(?![a-z])/g,
  )) {
    if (overlaps({ start: m.index, end: m.index + m[0].length }, [...found.map((f) => f.span), ...starts])) continue;
    if (/(?:once|twice|per|a|por|par)\s+$/.test(norm.slice(0, m.index)) && /day|dia|jour/.test(m[1] ?? "")) continue;
    found.push({ value: unitDays(1, m[1] ?? "day"), raw: 1, span: spanOf(text, m.index, m.index + m[0].length) });
  }
  if (found.length === 0) {
    const phrase = (re: RegExp, value: number): Duration | null => {
      const m = re.exec(norm);
      return m ? { kind: "found", value, span: spanOf(text, m.index, m.index + m[0].length) } : null;
    };
    return (
      phrase(/(?<![a-z])(?:long weekend|puente|long week-end)(?![a-z])/, 3) ??
      phrase(/(?<![a-z])(?:weekend|week-end|fin de semana|finde)(?![a-z])/, 2) ??
      phrase(/(?<![a-z])(?:day trip|excursion de un dia|excursion d'une journee)(?![a-z])/, 1) ?? { kind: "none" }
    );
  }
  found.sort((x, y) => x.span.start - y.span.start);
  // "zero nights" is no one-day trip: the number as written decides, before nights become days.
  const bad = found.find((f) => !Number.isInteger(f.raw) || f.raw <= 0 || f.value <= 0 || f.value > MAX_DAYS);
  if (bad) {
    const why = !Number.isInteger(bad.raw)
      ? `a trip is planned in whole days: say ${Math.floor(bad.raw)} or ${Math.ceil(bad.raw)}`
      : bad.raw <= 0 || bad.value <= 0
        ? "a trip needs at least one day"
        : `the travel tools plan at most ${MAX_DAYS} days: say a shorter trip, or split it`;
    return { kind: "refused", value: bad.value, span: bad.span, why };
  }
  // "2 days in Paris and 3 in Rome": one length per stop.
  if (found.length > 1) {
    const total = found.reduce((sum, f) => sum + f.value, 0);
    return {
      kind: "per_stop",
      value: total,
      span: spanOf(text, found[0]!.span.start, found.at(-1)!.span.end),
      perStop: found.map((f) => f.value),
    };
  }
  return { kind: "found", value: found[0]!.value, span: found[0]!.span };
}

// ---------------------------------------------------------------------------------------------------------------
// Travellers

const CHILD_WORDS =
  "kids?|children|child|toddlers?|babies|baby|infants?|teens?|teenagers?|sons?|daughters?|ninos?|ninas?|hijos?|hijas?|bebes?|enfants?|petits?|fils|filles?|kinder(?:en)?|bambini|figli|criancas|filhos";
const ADULT_WORDS = "adults?|grown-?ups?|adultos?|adultes?|erwachsene|adulti|volwassenen";
const PEOPLE_WORDS =
  "people|persons?|ppl|pers|folks|individuals|personas?|personnes?|travell?ers?|viajeros?|voyageurs?|guests?|pax|passengers?|pasajeros?|passagers?|friends|amigos?|amis|of us|de nosotros|d'entre nous|personen|leute|reisende|persone|viaggiatori|pessoas|viajantes|reizigers|mensen";
/** One child named without a number ("a baby", "our son", "un niño", "une fille"). */
const ONE_CHILD =
  /(?<![a-z])(?:a|an|one|our|my|their|his|her|the|un|una|une|mi|nuestro|nuestra|su|el|la|notre|mon|ma|son|sa|le)\s+(?:little\s+|young\s+|pequeno\s+|petit\s+|petite\s+)?(?:baby|toddler|infant|kid|child|son|daughter|teen|teenager|nino|nina|hijo|hija|bebe|enfant|fils|fille)(?![a-z-])/g;
/** Children named without saying how many ("our kids", "los niños"): a person says how many. */
const SOME_CHILDREN =
  /(?<![a-z])(?:our|my|the|their|his|her|with|nuestros|nuestras|mis|sus|los|las|con|nos|mes|les|leurs|avec)\s+(?:kids|children|sons|daughters|ninos|ninas|hijos|hijas|enfants|filles)(?![a-z])/g;
/** One adult named by who they are ("my wife", "husband", "ma femme"). */
const ONE_ADULT =
  /(?<![a-z])(?:(my|mi|ma|mon)\s+|(?:a|an|un|una|une)\s+)?(?:wife|husband|partner|girlfriend|boyfriend|fiancee?|mother|father|mum|mom|dad|friend|colleague|mujer|esposa|marido|esposo|pareja|novia|novio|madre|padre|amigo|amiga|colega|femme|mari|copine|copain|mere|pere|ami|amie|collegue)(?![a-z])/g;
/** The speaker, listed with others ("me, my wife and …", "for me and my two sons", "moi et ma femme"). */
const SPEAKER =
  /(?<![a-z])(?:me|myself|yo|moi)(?=\s*(?:,|and|y|et|&|\+)\s)|(?<=(?:,|and|y|et|&|\+)\s{1,3})(?:me|myself|yo|moi)(?![a-z])/g;

interface Travellers {
  kind: "found";
  /** A range of travellers the request gives ("3/4 people", "2-3 travellers", "3 or 4 of us"): its upper end counts. */
  range?: { min: number; max: number; span: Span };
  total: number;
  adults: number | null;
  children: number | null;
  parts: { name: string; value: number; span: Span }[];
  refusals: { span: Span; why: string }[];
}

function findTravellers(text: string, a: Analysis): Travellers | { kind: "none" } {
  const norm = a.norm;
  const parts: Travellers["parts"] = [];
  const taken = () => parts.map((p) => p.span);
  const numberAt = (re: RegExp, name: string, offset = 0) => {
    for (const n of a.numbers) {
      const m = re.exec(norm.slice(n.end));
      if (m && !overlaps(n, taken()))
        parts.push({ name, value: n.value + offset, span: spanOf(text, n.start, n.end + m[0].length) });
    }
  };
  // "3/4 people", "2-3 travellers", "3 or 4 of us": a party of the range's upper end, never a date or one figure.
  let range: Travellers["range"];
  for (const r of a.ranges) {
    const m = new RegExp(`^\\s+(?:${PEOPLE_WORDS}|${ADULT_WORDS})(?![a-z])`).exec(norm.slice(r.end));
    if (!m) continue;
    range = { min: r.min, max: r.max, span: spanOf(text, r.start, r.end + m[0].length) };
    parts.push({ name: "travellers", value: r.max, span: range.span });
    break;
  }
  numberAt(new RegExp(`^\\s+(?:${CHILD_WORDS})(?![a-z])`), "children");
  numberAt(new RegExp(`^\\s+(?:${ADULT_WORDS})(?![a-z])`), "adults");
  // "a family of 4 (2 kids)", "our group of 6 friends": the group's size is the total, whoever is in it.
  let group: { value: number; span: Span } | null = null;
  for (const n of a.numbers) {
    const before = /(?:family|group|party|team|familia|grupo|famille|groupe)\s+(?:of|de)\s+$/.exec(
      norm.slice(0, n.start),
    );
    if (!before || overlaps(n, taken())) continue;
    const after = new RegExp(`^\\s+(?:${PEOPLE_WORDS}|${ADULT_WORDS})(?![a-z])`).exec(norm.slice(n.end));
    group = { value: n.value, span: spanOf(text, n.start - before[0].length, n.end + (after?.[0].length ?? 0)) };
    break;
  }
  if (group) parts.push({ name: "travellers", value: group.value, span: group.span });
  const friends = a.numbers
    .map((n) => ({
      n,
      m: /(?:with|con|avec)\s+$/.exec(norm.slice(0, n.start)),
      after: /^\s+(?:friends|colleagues|others|amigos|companeros|amis|collegues)(?![a-z])/.exec(norm.slice(n.end)),
    }))
    .find((x) => x.m && x.after);
  if (!group && friends && friends.m && friends.after)
    parts.push({
      name: "travellers",
      value: friends.n.value + 1,
      span: spanOf(text, friends.n.start - friends.m[0].length, friends.n.end + friends.after[0].length),
    });
  if (parts.length === 0) numberAt(new RegExp(`^\\s+(?:${PEOPLE_WORDS})(?![a-z])`), "travellers");
  if (parts.length === 0) {
    for (const n of a.numbers) {
      // "for 3", "we are 3", "nous sommes trois", "wir sind drei", "siamo in tre", "somos tres".
      const forN =
        /(?<![a-z])(?:for|para|pour|we are|we're|there are|nous sommes|on est|somos|wir sind|siamo(?: in)?|we zijn(?: met)?)\s+$/.exec(
          norm.slice(0, n.start),
        );
      const after = norm.slice(n.end);
      const unit =
        /^\s*(?:-?\s*(?:days?|nights?|weeks?|fortnights?|dias?|noches?|semanas?|jours?|nuits?|semaines?|hours?|horas?|heures?|months?|k(?![a-z])|[$€£¥]|usd|eur|euros?|dollars?|bucks|gbp|pounds?))/;
      if (forN && !unit.test(after) && !DAY_UNIT_AFTER.test(after) && !a.amounts.some((x) => overlaps(n, [x])))
        parts.push({ name: "travellers", value: n.value, span: spanOf(text, n.start - forN[0].length, n.end) });
      if (parts.length > 0) break;
    }
  }
  // People named by who they are, not counted: each adult and child once, and the speaker once when listed ("me,
  // my wife and our three children") or implied by "my" before an adult ("with my wife" is two).
  const unknown: Span[] = [];
  if (!parts.some((p) => p.name === "travellers")) {
    for (const m of norm.matchAll(ONE_CHILD)) {
      const s = spanOf(text, m.index, m.index + m[0].length);
      if (!overlaps(s, taken())) parts.push({ name: "children", value: 1, span: s });
    }
    const named: Span[] = [];
    let possessive = false;
    for (const m of norm.matchAll(ONE_ADULT)) {
      const s = spanOf(text, m.index, m.index + m[0].length);
      if (overlaps(s, taken())) continue;
      named.push(s);
      // "my wife", "with a friend": the speaker travels too.
      possessive ||= m[1] !== undefined || /(?:with|con|avec)\s+$/.test(norm.slice(0, m.index));
    }
    // "a couple", "a pair (of travellers)": two; "a couple of days" is no party.
    const couple =
      /(?<![a-z])(?:(?:couple|pair)(?:\s+of\s+(?:travell?ers|people|adults|us))?(?![a-z])(?!\s+of\s)|honeymoon|two of us|both of us|en pareja|en couple|zu zweit|in coppia|em casal|met z'n tweeen)(?![a-z])/.exec(
        norm,
      );
    const speaker = [...norm.matchAll(SPEAKER)]
      .map((m) => spanOf(text, m.index, m.index + m[0].length))
      .find((s) => !overlaps(s, taken()));
    if (couple)
      parts.push({ name: "adults", value: 2, span: spanOf(text, couple.index, couple.index + couple[0].length) });
    else {
      if (speaker) parts.push({ name: "adults", value: 1, span: speaker });
      for (const [i, s] of named.entries())
        parts.push({ name: "adults", value: i === 0 && possessive && !speaker ? 2 : 1, span: s });
    }
    if (!parts.some((p) => p.name === "children")) {
      for (const m of norm.matchAll(SOME_CHILDREN)) unknown.push(spanOf(text, m.index, m.index + m[0].length));
    }
  }
  if (parts.length === 0) {
    const solo =
      /(?<![a-z])(?:solo|alone|by myself|just me|on my own|(?:a |one )?single (?:person|travell?er|adult|passenger|guest)|yo solo|sola|seul|seule|toute seule|tout seul|allein|alleine|da solo|da sola|sozinh[oa]|alleen)(?![a-z])/.exec(
        norm,
      );
    if (solo) parts.push({ name: "travellers", value: 1, span: spanOf(text, solo.index, solo.index + solo[0].length) });
  }
  if (parts.length === 0 && unknown.length === 0) return { kind: "none" };
  parts.sort((x, y) => x.span.start - y.span.start);
  const sum = (name: string) =>
    parts.some((p) => p.name === name) ? parts.filter((p) => p.name === name).reduce((t, p) => t + p.value, 0) : null;
  let adults = sum("adults");
  const children = sum("children");
  // Several whole-party counts ("We are 4 people. … for 1 person": a person's guidance put before the request)
  // are not added up: the first is the party, and the caller says the others were not used.
  const totals = parts.filter((p) => p.name === "travellers");
  const travellers = totals.length > 1 ? totals[0]!.value : sum("travellers");
  let total: number;
  if (group) {
    total = group.value;
    // The group's size counts its children: the rest are adults.
    if (children !== null && adults === null) adults = group.value - children;
    else if (children !== null || adults !== null) total = Math.max(group.value, (adults ?? 0) + (children ?? 0));
  } else
    total =
      adults !== null || children !== null ? (adults ?? 0) + (children ?? 0) + (travellers ?? 0) : (travellers ?? 0);
  const refusals: Travellers["refusals"] = [];
  for (const s of unknown)
    refusals.push({ span: s, why: `"${s.text}" does not say how many children travel: say how many` });
  for (const p of parts) {
    if (!Number.isInteger(p.value)) refusals.push({ span: p.span, why: "people come whole: say how many travel" });
    else if (p.value < 0 || (p.value === 0 && p.name !== "children"))
      refusals.push({ span: p.span, why: `${p.value} ${p.name} cannot travel: say how many do` });
  }
  const first = parts[0]?.span ?? unknown[0]!;
  if (group && children !== null && children > group.value)
    refusals.push({
      span: group.span,
      why: `a group of ${group.value} cannot have ${children} children: say how many travel`,
    });
  if (children !== null && children > 0 && (adults ?? 0) === 0 && travellers === null)
    refusals.push({
      span: first,
      why:
        adults === 0
          ? "children cannot travel without an adult"
          : "the request names children but no adult: say how many adults travel with them",
    });
  if (refusals.length === 0 && total > MAX_TRAVELLERS)
    refusals.push({
      span: spanOf(text, first.start, (parts.at(-1)?.span ?? first).end),
      why: `the travel tools book at most ${MAX_TRAVELLERS} travellers: split the group`,
    });
  if (refusals.length === 0 && total === 0) refusals.push({ span: first, why: "nobody would travel" });
  return { kind: "found", range, total, adults, children, parts, refusals };
}

// ---------------------------------------------------------------------------------------------------------------
// Budget

const BUDGET_CUE =
  /(?:budget|under|below|less than|max|maximum|at most|up to|no more than|not more than|not over|within|cap|spend|spending|afford|total of|around|about|presupuesto|menos de|maximo|hasta|como mucho|no mas de|moins de|pas plus de|jusqu'a|au plus|au maximum|de budget|budget de)\s*(?:is|of|de|:|=|around|about|~|total)?\s*$/;

type Money =
  | { kind: "none" }
  | { kind: "found"; amount: number; currency: string | null; span: Span; range: boolean; others?: Span[] }
  | { kind: "refused"; span: Span; why: string };

function findBudget(text: string, a: Analysis): Money {
  const norm = a.norm;
  const cued = (start: number) => BUDGET_CUE.test(norm.slice(Math.max(0, start - 40), start));
  const withCue = (s: Span): Span => {
    const m = BUDGET_CUE.exec(norm.slice(Math.max(0, s.start - 40), s.start));
    return m ? spanOf(text, s.start - m[0].length, s.end) : s;
  };
  const judge = (amount: number, currency: string | null, mark: string | null, span: Span, range: boolean): Money => {
    if (mark !== null && currency === null)
      return {
        kind: "refused",
        span,
        why: `"${mark}" names more than one currency: say which (an ISO code such as MXN, ARS or CHF)`,
      };
    if (currency !== null && USD_PER_UNIT[currency] === undefined)
      return {
        kind: "refused",
        span,
        why: `${currency} is not in the travel tools' rates table (${Object.keys(USD_PER_UNIT).join(", ")})`,
      };
    if (!(amount > 0)) return { kind: "refused", span, why: "a budget must be more than zero" };
    return { kind: "found", amount, currency, span, range };
  };
  // "between $1000 and $1500": the upper end.
  for (const r of a.ranges) {
    const money = a.amounts.find((x) => overlaps(x, [r]));
    if (money || cued(r.start)) {
      const end = Math.max(r.end, money?.end ?? 0);
      return judge(r.max, money?.currency ?? null, money?.mark ?? null, withCue(spanOf(text, r.start, end)), true);
    }
  }
  const amounts = [...a.amounts].sort((x, y) => Number(cued(y.start)) - Number(cued(x.start)) || x.start - y.start);
  const best = amounts[0];
  if (best) {
    const found = judge(best.value, best.currency, best.mark, withCue(best), false);
    // Other limits stated as limits ("a budget of 5000 dollars is fine. … under $2000": a person's guidance put
    // before the request) are not used; the caller says so. An amount that is no limit stays for the record.
    const others = amounts
      .slice(1)
      .filter((x) => cued(x.start))
      .map(withCue);
    return found.kind === "found" && others.length > 0 ? { ...found, others } : found;
  }
  // A bare number after a budget word ("budget 1500", "under 2000", "max 2.5k").
  for (const n of a.numbers) {
    const kilo = /k$/i.test(n.text.trim());
    if (!cued(n.start) && !kilo) continue;
    if (
      DAY_UNIT_AFTER.test(norm.slice(n.end)) ||
      new RegExp(`^\\s+(?:${PEOPLE_WORDS}|${ADULT_WORDS}|${CHILD_WORDS}|stars?|km|hours?)(?![a-z])`).test(
        norm.slice(n.end),
      )
    )
      continue;
    if (n.value < 50 && !kilo) continue;
    return judge(n.value, null, null, withCue(n), false);
  }
  return { kind: "none" };
}

/**
 * How travellers frame a trip without adding to it ("leaving from Paris", "flying out of Lima", "home to London",
 * "somewhere to sleep", "quiero ir a Lisboa", "aller à Vienne", "£800 tops"): read, so the understanding record
 * does not ask about them. A word outside this list that no step uses is asked about — never silently dropped.
 */
const TRIP_FRAMING = new RegExp(
  `(?<![a-z])(?:${[
    "leaving",
    "leave",
    "departing",
    "depart",
    "flying(?: out)?",
    "fly out",
    "heading",
    "head",
    "travell?ing",
    "starting",
    "start",
    "returning",
    "return",
    "round[- ]trip",
    "(?:the )?way back",
    "back",
    "home",
    "stay(?:ing)?",
    "spend(?:ing)?",
    "explore",
    "planned",
    "exploring",
    "see",
    "seeing",
    "somewhere to (?:sleep|stay)",
    "(?:a )?place to sleep",
    "sleep",
    "across",
    "abroad",
    "city",
    "cities",
    "tops",
    // The mood of a trip changes none of its steps.
    "(?:city |short |weekend )?break",
    "romantic",
    "relaxing",
    "relaxed",
    "lazy",
    "little",
    "escapada",
    "escapade",
    "ir",
    "fahren",
    "reisen",
    "fliegen",
    "besuchen",
    "ubernachten",
    "andare",
    "viaggiare",
    "visitare",
    "partire",
    "tornare",
    "soggiornare",
    "viajar",
    "conhecer",
    "gaan",
    "reizen",
    "bezoeken",
    "vliegen",
    "viajar",
    "salir",
    "saliendo",
    "salida",
    "partiendo",
    "volver",
    "vuelta",
    "regreso",
    "ida y vuelta",
    "quedarme",
    "quedarnos",
    "pasar",
    "dormir",
    "conocer",
    "visitar",
    "recorrer",
    "aller",
    "partir",
    "partant",
    "depart",
    "retour",
    "rentrer",
    "sejour",
    "sejourner",
    "passer",
    "visiter",
    "decouvrir",
  ].join("|")})(?![a-z])`,
  "g",
);

function tripWords(text: string, norm: string): Span[] {
  return [...norm.matchAll(TRIP_FRAMING)].map((m) => spanOf(text, m.index, m.index + m[0].length));
}

/** Ways of travelling that rule out flights, and stays that rule out a hotel, in the travellers' words. */
function domainExclusions(text: string, norm: string): Interpretation["exclusions"] {
  const out: Interpretation["exclusions"] = [];
  const rules: [RegExp, string, string][] = [
    [
      /(?<![a-z])(?:by car|by train|by bus|by coach|driving there|(?:we|i)(?:'ll| will| are|'re|'m| am)? driv(?:e|ing)(?: there)?|road trip|en coche|en tren|en autobus|en bus|en voiture|en train|en autocar)(?![a-z])/g,
      "flight",
      "the trip goes over land",
    ],
    [
      /(?<![a-z])(?:staying with (?:friends|family|relatives)|stay with (?:friends|family)|con (?:amigos|familia)|chez (?:des amis|de la famille|ma famille|nos amis))(?![a-z])/g,
      "hotel",
      "the travellers stay with people they know",
    ],
  ];
  for (const [re, output, why] of rules) {
    for (const m of norm.matchAll(re))
      out.push({
        outputs: [output],
        span: spanOf(text, m.index, m.index + m[0].length),
        why: `${why} ("${text.slice(m.index, m.index + m[0].length)}"), so no step searches a ${output}`,
      });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Asking what to do in a place

/** Subjects of a "what can we do" question, in the three languages (folded). */
const ASKER = "(?:i|we|you|one|us|me|yo|nosotros|je|nous|on)";
/** Verbs of doing and seeing at a place (folded), as the object of an activity question. */
const SEEING = "(?:do|see|visit|explore|check out|hacer|ver|visitar|conocer|explorar|faire|voir|visiter|decouvrir)";

/**
 * Ways of asking what to do or see at a place that no keyword list holds, because their words are everyday ones
 * ("what", "see", "places"): a question word or a thing to do, then within a few words "to" or a modal with its
 * subject and a verb of doing or seeing ("what can we do", "places worth a visit", "qué ver", "que faire", "lugares
 * para visitar", "endroits à visiter"); and the nouns of sights ("sights", "landmarks", "must-see").
 */
const ACTIVITY_ASKS: readonly RegExp[] = [
  new RegExp(
    `(?<![a-z])(?:things|stuff|places|spots|somewhere|something|anything|what|where|which|cosas|lugares|sitios|algo|que|choses|endroits|lieux|quoi)(?:\\s+[a-z'-]+){0,3}?\\s+(?:to|para|a|de|que)\\s+${SEEING}(?![a-z])`,
    "g",
  ),
  new RegExp(
    `(?<![a-z])(?:what|where|which|que|quoi|ou)\\s+(?:can|could|should|shall|might|must|would|puedo|podemos|puede|debo|debemos|peut|peux|pouvons|devrait)\\s+(?:${ASKER}\\s+)?${SEEING}(?![a-z])`,
    "g",
  ),
  /(?<![a-z])(?:que|quoi)\s+(?:hacer|ver|visitar|conocer|faire|voir|visiter)(?![a-z])/g,
  /(?<![a-z])(?:worth (?:a )?(?:seeing|visiting|visit|a look)|must[- ]see|sights|sightsee\w*|landmarks?|attractions?|highlights|monuments?|lugares de interes|atracciones|monumentos|incontournables|a voir|a visiter)(?![a-z])/g,
];

/**
 * Where the request asks what to do or see at a place, in its own words (see ACTIVITY_ASKS), within one clause each.
 * Spans point into the original text.
 */
export function findActivityAsks(text: string, a: Analysis = analyzeRequest(text)): Span[] {
  const out: Span[] = [];
  for (const re of ACTIVITY_ASKS)
    for (const m of a.norm.matchAll(re)) {
      const s = { start: m.index, end: m.index + m[0].length };
      const inOneClause = a.clauses.some((c) => s.start >= c.start && s.end <= c.end);
      if (inOneClause && !overlaps(s, out)) out.push(spanOf(text, s.start, s.end));
    }
  return out.sort((x, y) => x.start - y.start);
}
