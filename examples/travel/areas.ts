import { overlaps, type Analysis, type Span } from "../../src/planning/lexicon.js";
import { findCity, KNOWN_CITIES, namedCountry } from "./catalog.js";
import { matchRegion, type GazetteerRegion } from "./gazetteer.js";

/**
 * States, provinces and regions named in a travel request ("2 cities in Texas", "Washington state", "a week in
 * Tuscany"). The travel tools search cities, so an area is no value they can use: it is named, with its biggest
 * cities, and a person says which. Reading "Washington state" as the city of Washington, or "Virginia" as the town
 * of Virginia in South Africa, would be a value read wrongly.
 */
export interface Area extends Span {
  /** The area's name as the request writes it. */
  name: string;
  region: GazetteerRegion;
}

/** Words that say the name before them is an area ("Washington state", "Bavaria region"). */
const AREA_AFTER = /^\s+(?:state|province|region|county|area|territory)(?![a-z])/;
/** Words that say the name after them is an area ("the state of Texas", "el estado de Jalisco", "la Toscane"). */
const AREA_BEFORE =
  /(?:state|province|region|county|estado|provincia|region|etat|bundesland|regione|staat|provincie)\s+(?:of|de|du|di|del|van)?\s*(?:the\s+)?$/;
/** "cities in", "towns across", "ciudades de", "villes de", "Städte in", "città in", "cidades em", "steden in". */
const PLACES_IN =
  /(?<![a-z])(?:cities|towns|places|destinations|spots|stops|ciudades|pueblos|villes|stadte|orte|citta|cidades|steden)\s+(?:in|of|across|around|throughout|within|en|de|dans|du|di|em|no|na|in)\s+(?:the\s+)?$/;
/** A count before "cities in …" ("2 cities in Texas", "three different towns in"), which belongs to the area's ask. */
const COUNT_BEFORE = /(?:\d+|[a-z]+)\s+(?:different\s+|distinct\s+|other\s+)?$/;

/**
 * The areas a request names. A name is an area when a word says so ("Washington state", "cities in Virginia": the
 * state, not the town of Virginia in South Africa), or when it is no city at all ("Texas", "Bavaria"). A country is
 * no area here (the reader names it otherwise), nor a qualifier ("Portland, Maine"), nor a part of a city's name
 * ("Los Angeles"), and a name of one of the demo's curated cities never is one (nor does it read the gazetteer).
 */
export function findAreas(text: string, a: Analysis): Area[] {
  const out: Area[] = [];
  // Inside a city's name ("Los Angeles": Angeles is a region of the Philippines) no tail is an area.
  const cities: Span[] = [];
  for (const c of capitalisedRuns(text)) {
    if (overlaps(c, out) || overlaps(c, cities)) continue;
    const after = a.norm.slice(c.end);
    const before = a.norm.slice(0, c.start);
    // "Portland, Maine": a qualifier of the city before it.
    if (/\p{L},\s*$/u.test(text.slice(0, c.start))) continue;
    const city = findCity(c.text);
    if (city !== undefined && KNOWN_CITIES.includes(city.name)) continue;
    if (namedCountry(c.text) !== null) continue;
    const region = matchRegion(c.text);
    if (region === null) {
      if (city !== undefined) cities.push(c);
      continue;
    }
    const said = AREA_AFTER.exec(after);
    const placesIn = PLACES_IN.exec(before);
    // A name that is a city too ("Victoria", "Washington") is the city unless a word says it is the area.
    const area = said !== null || AREA_BEFORE.test(before) || placesIn !== null || city === undefined;
    if (!area) {
      cities.push(c);
      continue;
    }
    let start = c.start;
    if (placesIn !== null) {
      start -= placesIn[0].length;
      const count = COUNT_BEFORE.exec(a.norm.slice(0, start));
      const counted = count !== null && a.numbers.some((n) => n.end <= start && n.start >= start - count[0].length);
      if (counted) start -= count[0].length;
    }
    const end = c.end + (said?.[0].length ?? 0);
    out.push({ start, end, text: text.slice(start, end), name: c.text, region });
  }
  return out;
}

/** Capitalised runs of words ("North Carolina", "Visit Texas") and each run's tails ("Texas"), longest first. */
function capitalisedRuns(text: string): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(/\p{Lu}[\p{L}'’-]*(?:\s+\p{Lu}[\p{L}'’-]*)*/gu)) {
    const words = [...m[0].matchAll(/\S+/g)];
    for (const w of words) {
      const start = m.index + w.index;
      out.push({ start, end: m.index + m[0].length, text: text.slice(start, m.index + m[0].length) });
    }
  }
  return out;
}

/** Why an area is no value the tools can use, with its biggest cities to choose from. */
export function areaWhy(area: Area): string {
  const kind = area.region.countryCode === "US" ? "a state" : "a region";
  const cities = area.region.cities
    .slice(0, 3)
    .map((c) => c.name)
    .join(", ");
  const country = /^(?:United|Netherlands|Philippines|Czech|Dominican|Bahamas)/.test(area.region.country)
    ? `the ${area.region.country}`
    : area.region.country;
  return `"${area.name}" is ${kind} of ${country}, not a city: the travel tools search cities, so say which ones (its biggest: ${cities})`;
}
