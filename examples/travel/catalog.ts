import { CandorError, ErrorCode } from "../../src/errors.js";

/**
 * A deterministic travel catalog. Nothing is stored per route: flights, hotels and activities are generated from
 * the city data and a stable hash of the names, so any pair of known cities has flights and the same query
 * always returns the same options (tests and demos can quote exact numbers). All amounts are in one currency,
 * shown as dollars.
 */

export interface City {
  name: string;
  country: string;
  lat: number;
  lon: number;
  /** Price level of hotels and activities relative to an average European city. */
  priceLevel: number;
  /** Other ways a request may name the city (lower case, without accents). */
  aliases: string[];
}

export const CITIES: readonly City[] = [
  { name: "Madrid", country: "Spain", lat: 40.42, lon: -3.7, priceLevel: 0.9, aliases: [] },
  { name: "Paris", country: "France", lat: 48.86, lon: 2.35, priceLevel: 1.25, aliases: [] },
  { name: "Lisbon", country: "Portugal", lat: 38.72, lon: -9.14, priceLevel: 0.8, aliases: ["lisboa"] },
  { name: "Rome", country: "Italy", lat: 41.9, lon: 12.5, priceLevel: 1.0, aliases: ["roma"] },
  { name: "London", country: "United Kingdom", lat: 51.51, lon: -0.13, priceLevel: 1.35, aliases: ["londres"] },
  { name: "Berlin", country: "Germany", lat: 52.52, lon: 13.4, priceLevel: 0.95, aliases: [] },
  { name: "Tokyo", country: "Japan", lat: 35.68, lon: 139.69, priceLevel: 1.15, aliases: ["tokio"] },
  { name: "New York", country: "United States", lat: 40.71, lon: -74.01, priceLevel: 1.45, aliases: ["nyc", "new york city", "nueva york"] },
  { name: "Barcelona", country: "Spain", lat: 41.39, lon: 2.17, priceLevel: 1.0, aliases: ["bcn"] },
  { name: "Amsterdam", country: "Netherlands", lat: 52.37, lon: 4.9, priceLevel: 1.2, aliases: [] },
  { name: "Prague", country: "Czechia", lat: 50.08, lon: 14.44, priceLevel: 0.75, aliases: ["praga"] },
  { name: "Vienna", country: "Austria", lat: 48.21, lon: 16.37, priceLevel: 1.0, aliases: ["viena"] },
];

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

/** The known city a name refers to (case, accents and aliases ignored), or undefined. */
export function findCity(name: string): City | undefined {
  const n = normalizeName(name);
  return CITIES.find((c) => normalizeName(c.name) === n || c.aliases.includes(n));
}

/**
 * The city, or a TOOL_FAILED error a planner classifies as invalid parameters: the request named a place the
 * catalog does not serve, which no retry can fix but a corrected parameter can.
 */
export function requireCity(name: string, param: string, what: string): City {
  const city = findCity(name);
  if (city) return city;
  throw new CandorError(`Invalid ${param}: ${what} ${name}; known cities: ${KNOWN_CITIES.join(", ")}.`, ErrorCode.TOOL_FAILED, {
    details: { failureClass: "invalid_parameters", param, value: name, knownCities: [...KNOWN_CITIES] },
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

export function distanceKm(a: City, b: City): number {
  const rad = (d: number): number => (d * Math.PI) / 180;
  const dLat = rad(b.lat - a.lat);
  const dLon = rad(b.lon - a.lon);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.sqrt(h));
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
      id: `${provider === "primary" ? "F" : "B"}-${origin.name.slice(0, 3).toUpperCase()}-${destination.name.slice(0, 3).toUpperCase()}-${i + 1}`,
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
  /** The central hotel chosen when the request says nothing else. */
  preferred: boolean;
}

/** Hotels within this distance of the centre count as central. */
export const CENTRAL_KM = 1;

const HOTEL_NAMES = ["Grand", "Central", "Plaza", "Riverside", "Garden", "Station", "Park", "Harbour", "Royal", "Boulevard"];
const HOTEL_LADDER = [
  { kind: "Hotel", stars: 4, km: [0.3, 0.8], factor: 1, preferred: true },
  { kind: "Inn", stars: 3, km: [0.5, 1.0], factor: 0.72, preferred: false },
  { kind: "Suites", stars: 4, km: [3, 5], factor: 0.94, preferred: false },
  { kind: "Hotel", stars: 3, km: [5, 8], factor: 0.62, preferred: false },
  { kind: "Hostel", stars: 2, km: [8, 12], factor: 0.42, preferred: false },
  { kind: "Lodge", stars: 3, km: [18, 24], factor: 0.5, preferred: false },
] as const;

/** Hotels in a known city, best first. */
export function hotelsIn(city: City): Hotel[] {
  const base = 380 * city.priceLevel * jitter(`${city.name}:hotels`, 0.05);
  return HOTEL_LADDER.map((rung, i) => {
    const [near, far] = rung.km;
    return {
      id: `H-${city.name.slice(0, 3).toUpperCase()}-${i + 1}`,
      name: `${pick(HOTEL_NAMES, `${city.name}:hotel:${i}`)} ${rung.kind} ${city.name}`,
      city: city.name,
      stars: rung.stars,
      distanceKm: Math.round((near + (far - near) * unit(`${city.name}:hotel:${i}:km`)) * 10) / 10,
      pricePerNight: Math.round(base * rung.factor * jitter(`${city.name}:hotel:${i}:p`, 0.02)),
      preferred: rung.preferred,
    };
  });
}

export interface Activity {
  id: string;
  name: string;
  city: string;
  pricePerPerson: number;
}

const ACTIVITY_TEMPLATES = [
  { name: "Guided museum visit", price: 40 },
  { name: "Evening river or harbour cruise with dinner", price: 65 },
  { name: "Day trip to the surroundings", price: 55 },
  { name: "Food market tasting tour", price: 35 },
  { name: "Old town walking tour", price: 15 },
  { name: "Parks and viewpoints on foot", price: 0 },
  { name: "Free walking tour (tip-based)", price: 0 },
] as const;

/** Activities in a known city, best first; the last ones are free, so any cap can be met. */
export function activitiesIn(city: City): Activity[] {
  return ACTIVITY_TEMPLATES.map((t, i) => ({
    id: `A-${city.name.slice(0, 3).toUpperCase()}-${i + 1}`,
    name: `${t.name} in ${city.name}`,
    city: city.name,
    pricePerPerson: t.price === 0 ? 0 : Math.round(t.price * city.priceLevel * jitter(`${city.name}:act:${i}`, 0.05)),
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
