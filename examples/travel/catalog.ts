import { CandorError, ErrorCode } from "../../src/errors.js";
import {
  EXONYMS,
  comparableTo,
  countryCodeOf,
  describeOthers,
  describePlace,
  fullLabel,
  matchPlace,
  placeKey,
  qualifierMatches,
  type GazetteerPlace,
} from "./gazetteer.js";

/**
 * A deterministic travel catalog. Nothing is stored per route: flights, hotels and activities are generated from
 * the city data (distance, price level) and a stable hash of the names, so any pair of cities has flights and the
 * same query always returns the same options (tests and demos can quote exact numbers). All amounts are in one
 * currency, shown as dollars.
 *
 * Twelve cities are curated: their price levels were set by hand and the demo, the README and the tests quote
 * their prices, so they never change. Every other real city comes from the gazetteer (./gazetteer.ts), read only
 * when a name is not one of the twelve, with a price level derived from its country and size.
 */

export interface City {
  /** The name that finds this city again: plain for the most populous place of that name, else "Paris, Texas". */
  name: string;
  country: string;
  /** ISO 3166-1 alpha-2. */
  countryCode: string;
  /** First-level region (state, province), as the gazetteer spells it; empty when it has none. */
  region: string;
  lat: number;
  lon: number;
  /** The gazetteer's population (0 when it gives none); prices scale with it. */
  population: number;
  /** Price level of hotels and activities relative to an average European city. */
  priceLevel: number;
  /** Other ways a request may name the city (lower case, without accents). */
  aliases: string[];
  /**
   * Other places the name that found this city also names, most populous first ("Paris, Texas, United States"),
   * so a planner can say which one it took. Empty when the name was unambiguous or qualified ("Paris, France").
   */
  ambiguous: string[];
}

/** The curated cities; population, region and homonyms are the gazetteer's (a test keeps them in step). */
export const CITIES: readonly City[] = [
  curated(
    "Madrid",
    "Spain",
    "ES",
    "Madrid",
    40.42,
    -3.7,
    6_211_000,
    0.9,
    [],
    ["Madrid, Cundinamarca, Colombia", "Madrid, Surigao del Sur, Philippines"],
  ),
  curated("Paris", "France", "FR", "Île-de-France", 48.86, 2.35, 11_060_000, 1.25, [], ["Paris, Texas, United States"]),
  curated("Lisbon", "Portugal", "PT", "Lisboa", 38.72, -9.14, 2_719_000, 0.8, ["lisboa"], []),
  curated(
    "Rome",
    "Italy",
    "IT",
    "Lazio",
    41.9,
    12.5,
    2_872_800,
    1.0,
    ["roma"],
    ["Rome, Georgia, United States", "Rome, New York, United States"],
  ),
  curated(
    "London",
    "United Kingdom",
    "GB",
    "London, City of",
    51.51,
    -0.13,
    11_262_000,
    1.35,
    ["londres"],
    ["London, Ontario, Canada"],
  ),
  curated(
    "Berlin",
    "Germany",
    "DE",
    "Berlin",
    52.52,
    13.4,
    4_473_101,
    0.95,
    [],
    ["Berlin, Connecticut, United States", "Berlín, Usulután, El Salvador"],
  ),
  curated("Tokyo", "Japan", "JP", "Tōkyō", 35.68, 139.69, 37_732_000, 1.15, ["tokio"], []),
  curated(
    "New York",
    "United States",
    "US",
    "New York",
    40.71,
    -74.01,
    18_972_871,
    1.45,
    ["nyc", "new york city", "nueva york"],
    [],
  ),
  curated(
    "Barcelona",
    "Spain",
    "ES",
    "Catalonia",
    41.39,
    2.17,
    4_800_000,
    1.0,
    ["bcn"],
    ["Barcelona, Anzoátegui, Venezuela", "Barcelona, Sorsogon, Philippines"],
  ),
  curated(
    "Amsterdam",
    "Netherlands",
    "NL",
    "Noord-Holland",
    52.37,
    4.9,
    1_459_402,
    1.2,
    [],
    ["Amsterdam, New York, United States"],
  ),
  curated("Prague", "Czechia", "CZ", "Praha", 50.08, 14.44, 1_335_084, 0.75, ["praga"], []),
  curated(
    "Vienna",
    "Austria",
    "AT",
    "Wien",
    48.21,
    16.37,
    1_973_403,
    1.0,
    ["viena"],
    ["Vienna, Virginia, United States"],
  ),
];

function curated(
  name: string,
  country: string,
  countryCode: string,
  region: string,
  lat: number,
  lon: number,
  population: number,
  priceLevel: number,
  aliases: string[],
  ambiguous: string[],
): City {
  return { name, country, countryCode, region, lat, lon, population, priceLevel, aliases, ambiguous };
}

/** The curated cities' names: the ones the demo features. Any other real city works too. */
export const KNOWN_CITIES: readonly string[] = CITIES.map((c) => c.name);

/** Lower case without accents, single spaces: how names are compared. */
export function normalizeName(s: string): string {
  return s
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/\s+/g, " ")
    .trim();
}

/** What a name is: a city (curated or from the gazetteer), a country a planner can ask about, or unknown. */
export type PlaceLookup =
  | { kind: "city"; city: City }
  | { kind: "country"; country: string; /** Its biggest cities, names `findCity` resolves. */ cities: string[] }
  | {
      kind: "unknown";
      /** Nearest names among populous cities, for "did you mean"; may be empty. */ suggestions: string[];
    };

/**
 * What a name refers to. Case, accents, punctuation, exonyms and aliases are ignored ("Lisboa", "Wien", "Köln",
 * "NYC"); an ambiguous name takes its most populous place and lists the others in `city.ambiguous`; a qualified
 * name picks one ("Paris, Texas", "Paris, TX", "London (Canada)"). The curated cities answer without reading the
 * gazetteer.
 */
export function lookupPlace(name: string, options: { suggest?: boolean } = {}): PlaceLookup {
  const own = curatedCity(name);
  if (own !== undefined) return { kind: "city", city: own };
  const match = matchPlace(name, options);
  switch (match.kind) {
    case "city":
      return { kind: "city", city: cityOf(match.place, describeOthers(match.others)) };
    case "country":
      return { kind: "country", country: match.country, cities: match.cities.map((c) => cityOf(c, []).name) };
    case "unknown":
      return match;
  }
}

/** The city a name refers to (see `lookupPlace`), or undefined for a country or an unknown name. */
export function findCity(name: string): City | undefined {
  const place = lookupPlace(name, { suggest: false });
  return place.kind === "city" ? place.city : undefined;
}

/** One of several places a name may mean, as a person and the tools each need it. */
export interface PlaceOption {
  /** The name that finds this place again ("El Dorado, Sinaloa"). */
  name: string;
  /** With region and country: "El Dorado, Sinaloa, Mexico". */
  label: string;
  countryCode: string;
  population: number;
}

/**
 * The places a bare name may mean when none of them is a clear winner by size (see CLEAR_WINNER_RATIO): the most
 * populous first, then those of comparable size. Empty when the name is qualified ("El Dorado, Mexico"), one of the
 * curated cities, unambiguous, or its biggest place dwarfs the others (Paris, France against Paris, Texas).
 */
export function comparableHomonyms(name: string): PlaceOption[] {
  if (curatedCity(name) !== undefined) return [];
  const match = matchPlace(name, { suggest: false });
  if (match.kind !== "city") return [];
  const rivals = comparableTo(match.place, match.others);
  if (rivals.length === 0) return [];
  return [match.place, ...rivals].map((p) => ({
    name: p.qualifiedName,
    label: fullLabel(p),
    countryCode: p.countryCode,
    population: p.population,
  }));
}

/** The ISO code of the country a name means ("Mexico", "España", "UK"), or null; never a city's country. */
export function namedCountry(name: string): string | null {
  if (curatedCity(name) !== undefined) return null;
  return lookupPlace(name, { suggest: false }).kind === "country" ? countryCodeOf(name) : null;
}

/** "Paris, France", "Paris, Texas, United States": a city as a person reads it. */
export function cityLabel(city: Pick<City, "name" | "country">): string {
  return describePlace({ qualifiedName: city.name, country: city.country });
}

/** A curated city by name, alias, exonym or "name, its country"; never reads the gazetteer. */
function curatedCity(name: string): City | undefined {
  const key = placeKey(name);
  const byName = (k: string): City | undefined => CITIES.find((c) => placeKey(c.name) === k || c.aliases.includes(k));
  const direct = byName(key);
  if (direct !== undefined) return direct;
  const exonym = EXONYMS[key];
  if (exonym !== undefined) {
    const mapped = byName(placeKey(exonym));
    if (mapped !== undefined) return mapped;
  }
  const qualified = /^([^,(]+)[,(]\s*([^)]*)\)?\s*$/.exec(name.trim());
  const head = qualified === null ? undefined : byName(placeKey(qualified[1] ?? ""));
  // "Paris, France" is explicit: nothing is ambiguous about it.
  if (head !== undefined && qualifierMatches(qualified?.[2] ?? "", head)) return { ...head, ambiguous: [] };
  return undefined;
}

/** A gazetteer place as a City: the curated one when it is one of the twelve, so their prices never move. */
function cityOf(place: GazetteerPlace, ambiguous: string[]): City {
  const own = CITIES.find((c) => c.countryCode === place.countryCode && placeKey(c.name) === place.key);
  if (own !== undefined) return ambiguous.join("|") === own.ambiguous.join("|") ? own : { ...own, ambiguous };
  return {
    name: place.qualifiedName,
    country: place.country,
    countryCode: place.countryCode,
    region: place.region,
    lat: place.lat,
    lon: place.lon,
    population: place.population,
    priceLevel: derivedPriceLevel(place.countryCode, place.population),
    aliases: [],
    ambiguous,
  };
}

/**
 * Price level of a country's cities relative to an average European city, rounded from the published price level
 * indices (consumer prices at purchasing power parity). Coarse on purpose: it only has to make Zurich dearer than
 * Warsaw and Hanoi cheaper than both. A country not listed takes DEFAULT_COUNTRY_LEVEL.
 */
const COUNTRY_PRICE_LEVEL: Readonly<Record<string, number>> = {
  CH: 1.5,
  IS: 1.45,
  NO: 1.4,
  LU: 1.3,
  DK: 1.3,
  IE: 1.3,
  MC: 1.5,
  LI: 1.5,
  BM: 1.5,
  KY: 1.4,
  FI: 1.2,
  SE: 1.15,
  GB: 1.2,
  NL: 1.15,
  BE: 1.1,
  AT: 1.1,
  FR: 1.1,
  DE: 1.05,
  IT: 1.0,
  ES: 0.9,
  PT: 0.85,
  GR: 0.85,
  CY: 0.9,
  MT: 0.85,
  SI: 0.85,
  EE: 0.9,
  LV: 0.8,
  LT: 0.75,
  CZ: 0.75,
  SK: 0.75,
  HR: 0.75,
  PL: 0.6,
  HU: 0.65,
  RO: 0.55,
  BG: 0.5,
  RS: 0.6,
  BA: 0.55,
  AL: 0.55,
  ME: 0.6,
  MK: 0.5,
  TR: 0.5,
  UA: 0.45,
  RU: 0.55,
  US: 1.3,
  CA: 1.1,
  MX: 0.65,
  BR: 0.65,
  AR: 0.6,
  CL: 0.7,
  CO: 0.5,
  PE: 0.55,
  UY: 0.8,
  CR: 0.75,
  CU: 0.6,
  JP: 1.0,
  KR: 0.95,
  CN: 0.7,
  HK: 1.3,
  SG: 1.3,
  TW: 0.75,
  TH: 0.55,
  VN: 0.45,
  ID: 0.45,
  MY: 0.55,
  PH: 0.5,
  IN: 0.4,
  PK: 0.35,
  BD: 0.4,
  LK: 0.45,
  NP: 0.4,
  AE: 1.1,
  QA: 1.1,
  IL: 1.3,
  SA: 0.8,
  JO: 0.7,
  LB: 0.7,
  EG: 0.4,
  MA: 0.5,
  TN: 0.45,
  ZA: 0.6,
  KE: 0.5,
  NG: 0.45,
  ET: 0.45,
  TZ: 0.5,
  GH: 0.5,
  AU: 1.2,
  NZ: 1.15,
};
const DEFAULT_COUNTRY_LEVEL = 0.6;

/**
 * A gazetteer city's price level: its country's, scaled by size (a town of 50,000 at 0.8 of it, a city of five
 * million at 1.0), so a bigger city in a dearer country costs more. Derived this way the curated twelve come within
 * 15% of their hand-set levels (a test holds it to that).
 */
export function derivedPriceLevel(countryCode: string, population: number): number {
  const country = COUNTRY_PRICE_LEVEL[countryCode] ?? DEFAULT_COUNTRY_LEVEL;
  const size = Math.min(1.15, Math.max(0.8, 0.8 + 0.1 * Math.log10(Math.max(population, 1) / 50_000)));
  return Math.round(country * size * 100) / 100;
}

/** Why a name is not a city the tools can use, and what to write instead. Starts with the name, for planners. */
export function unplacedMessage(name: string): string {
  const place = lookupPlace(name);
  const said = `${JSON.stringify(name)} is not a city the travel tools serve`;
  switch (place.kind) {
    case "city":
      return `${JSON.stringify(name)} is ${cityLabel(place.city)}`;
    case "country":
      return `${said}: it is a country; name a city in it (${place.cities.slice(0, 3).join(", ")} …)`;
    case "unknown":
      return place.suggestions.length > 0
        ? `${said}: no city of that name; did you mean ${place.suggestions.join(", ")}?`
        : `${said}: no city of that name; name a real city (for a homonym, add its region or country: "Paris, Texas")`;
  }
}

/**
 * The city, or a TOOL_FAILED error a planner classifies as invalid parameters: the request named a place the
 * catalog does not serve (a country, a typo, an imaginary place), which no retry can fix but a corrected
 * parameter can; the suggestions say which.
 */
export function requireCity(name: string, param: string, what: string): City {
  const place = lookupPlace(name);
  if (place.kind === "city") return place.city;
  const suggestions = place.kind === "country" ? place.cities : place.suggestions;
  throw new CandorError(`Invalid ${param}: ${what} ${name}; ${unplacedMessage(name)}.`, ErrorCode.TOOL_FAILED, {
    details: { failureClass: "invalid_parameters", param, value: name, place: place.kind, suggestions },
  });
}

/** FNV-1a: stable across runs and platforms, unlike anything seeded by time or object identity. */
export function stableHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A deterministic number in [0, 1) for a key. */
function unit(key: string): number {
  return stableHash(key) / 2 ** 32;
}

/** A deterministic factor in [1 - spread, 1 + spread) for a key. */
function jitter(key: string, spread: number): number {
  return 1 - spread + 2 * spread * unit(key);
}

function pick<T>(items: readonly T[], key: string): T {
  const item = items[stableHash(key) % items.length];
  if (item === undefined) throw new Error("pick from an empty list");
  return item;
}

export function distanceKm(a: Pick<City, "lat" | "lon">, b: Pick<City, "lat" | "lon">): number {
  const rad = (d: number): number => (d * Math.PI) / 180;
  const dLat = rad(b.lat - a.lat);
  const dLon = rad(b.lon - a.lon);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.sqrt(h));
}

/** Three letters of a city for option ids, in ASCII ("Ōsaka" → OSA, "Le Havre" → LEH; the curated twelve as before). */
function idCode(city: City): string {
  return (
    placeKey(city.name)
      .replace(/[^a-z0-9]/g, "")
      .slice(0, 3)
      .toUpperCase() || "CTY"
  );
}

export type Provider = "primary" | "backup";

export interface Flight {
  id: string;
  provider: Provider;
  airline: string;
  flightNumber: string;
  origin: string;
  destination: string;
  stops: number;
  via: string | null;
  departure: string;
  durationHours: number;
  /** Return ticket, per traveller. */
  pricePerTraveller: number;
  /** The option the provider recommends (good times, no stops); not the cheapest. */
  recommended: boolean;
}

const AIRLINES: Record<Provider, readonly string[]> = {
  primary: ["Iberia", "Air France", "Lufthansa", "KLM", "British Airways", "ITA Airways", "TAP"],
  backup: ["SkyBridge", "Vueling", "easyJet", "Transavia", "Eurowings", "Norse"],
};

/** Price of each option relative to the recommended one, in the order a provider ranks them. */
const FLIGHT_LADDER = [
  { stops: 0, factor: 1, departure: "09:10", recommended: true },
  { stops: 0, factor: 0.84, departure: "06:05", recommended: false },
  { stops: 1, factor: 0.7, departure: "11:40", recommended: false },
  { stops: 2, factor: 0.56, departure: "05:30", recommended: false },
] as const;

/** Flight options between two known cities, best first (the provider's own ranking). */
export function flightsFor(origin: City, destination: City, provider: Provider): Flight[] {
  const route = `${origin.name}>${destination.name}`;
  const km = distanceKm(origin, destination);
  const base = (170 + 0.1 * km + 110 * Math.min(destination.priceLevel, 1.4)) * jitter(`${route}:base`, 0.05);
  const providerFactor = provider === "primary" ? 1 : jitter(`${route}:backup`, 0.03) + 0.05;
  const hubs = CITIES.filter((c) => c.name !== origin.name && c.name !== destination.name);
  return FLIGHT_LADDER.map((rung, i) => {
    const airline = pick(AIRLINES[provider], `${route}:${provider}:${i}`);
    const via = rung.stops === 0 ? null : pick(hubs, `${route}:hub:${i}`).name;
    const price = Math.round(base * rung.factor * providerFactor * jitter(`${route}:${provider}:${i}:p`, 0.02));
    return {
      id: `${provider === "primary" ? "F" : "B"}-${idCode(origin)}-${idCode(destination)}-${i + 1}`,
      provider,
      airline,
      flightNumber: `${airline.slice(0, 2).toUpperCase()}${100 + (stableHash(`${route}:${provider}:${i}:n`) % 900)}`,
      origin: origin.name,
      destination: destination.name,
      stops: rung.stops,
      via,
      departure: rung.departure,
      durationHours: Math.round((km / 780 + 0.6 + rung.stops * 2.4) * 10) / 10,
      pricePerTraveller: price,
      recommended: rung.recommended,
    };
  });
}

export interface Hotel {
  id: string;
  name: string;
  city: string;
  stars: number;
  distanceKm: number;
  pricePerNight: number;
  /** Guest rating, 0–10: what guests thought of it, beside the stars (what it offers). */
  rating: number;
  /** The central hotel chosen when the request says nothing else. */
  preferred: boolean;
}

/** Hotels within this distance of the centre count as central. */
export const CENTRAL_KM = 1;

const HOTEL_NAMES = [
  "Grand",
  "Central",
  "Plaza",
  "Riverside",
  "Garden",
  "Station",
  "Park",
  "Harbour",
  "Royal",
  "Boulevard",
];
/**
 * The provider's ladder, its own order (the preferred central hotel first). The preferred hotel's guests rate it
 * middling (6.1–7.7): a guest who cares about quality has reason to object, and the centre has a 5★ palace rated
 * 8.9–9.6 that a search ranked by quality or rating finds. Rungs are only ever appended, so ids stay stable.
 */
const HOTEL_LADDER = [
  { kind: "Hotel", stars: 4, km: [0.3, 0.8], factor: 1, rating: [6.1, 7.7], preferred: true },
  { kind: "Inn", stars: 3, km: [0.5, 1.0], factor: 0.72, rating: [5.6, 7.2], preferred: false },
  { kind: "Suites", stars: 4, km: [3, 5], factor: 0.94, rating: [7.9, 8.8], preferred: false },
  { kind: "Hotel", stars: 3, km: [5, 8], factor: 0.62, rating: [6.5, 7.6], preferred: false },
  { kind: "Hostel", stars: 2, km: [8, 12], factor: 0.42, rating: [5.0, 7.0], preferred: false },
  { kind: "Lodge", stars: 3, km: [18, 24], factor: 0.5, rating: [7.2, 8.3], preferred: false },
  { kind: "Palace", stars: 5, km: [0.2, 0.9], factor: 1.45, rating: [8.9, 9.6], preferred: false },
] as const;

/** Hotels in a known city, best first. */
export function hotelsIn(city: City): Hotel[] {
  const base = 380 * city.priceLevel * jitter(`${city.name}:hotels`, 0.05);
  return HOTEL_LADDER.map((rung, i) => {
    const [near, far] = rung.km;
    return {
      id: `H-${idCode(city)}-${i + 1}`,
      name: `${pick(HOTEL_NAMES, `${city.name}:hotel:${i}`)} ${rung.kind} ${city.name}`,
      city: city.name,
      stars: rung.stars,
      distanceKm: Math.round((near + (far - near) * unit(`${city.name}:hotel:${i}:km`)) * 10) / 10,
      pricePerNight: Math.round(base * rung.factor * jitter(`${city.name}:hotel:${i}:p`, 0.02)),
      rating:
        Math.round((rung.rating[0] + (rung.rating[1] - rung.rating[0]) * unit(`${city.name}:hotel:${i}:r`)) * 10) / 10,
      preferred: rung.preferred,
    };
  });
}

/** What kind of outing an activity is: what a traveller's taste (or complaint) is about. */
export type ActivityKind = "culture" | "nightlife" | "outdoors" | "food";

export interface Activity {
  id: string;
  name: string;
  city: string;
  pricePerPerson: number;
  kind: ActivityKind;
}

const ACTIVITY_TEMPLATES = [
  { name: "Guided museum visit", price: 40, kind: "culture" },
  { name: "Evening river or harbour cruise with dinner", price: 65, kind: "nightlife" },
  { name: "Day trip to the surroundings", price: 55, kind: "outdoors" },
  { name: "Food market tasting tour", price: 35, kind: "food" },
  { name: "Old town walking tour", price: 15, kind: "culture" },
  { name: "Parks and viewpoints on foot", price: 0, kind: "outdoors" },
  { name: "Free walking tour (tip-based)", price: 0, kind: "culture" },
] as const satisfies readonly { name: string; price: number; kind: ActivityKind }[];

/** Activities in a known city, best first; the last ones are free, so any cap can be met. */
export function activitiesIn(city: City): Activity[] {
  return ACTIVITY_TEMPLATES.map((t, i) => ({
    id: `A-${idCode(city)}-${i + 1}`,
    name: `${t.name} in ${city.name}`,
    city: city.name,
    pricePerPerson: t.price === 0 ? 0 : Math.round(t.price * city.priceLevel * jitter(`${city.name}:act:${i}`, 0.05)),
    kind: t.kind,
  }));
}

/** Hotel rooms needed: two travellers share a room. */
export function roomsFor(travellers: number): number {
  return Math.max(1, Math.ceil(travellers / 2));
}

/** Nights for a trip of `days` days: you fly in on day 1 and home on the last day. */
export function nightsFor(days: number): number {
  return Math.max(1, days - 1);
}
