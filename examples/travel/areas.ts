import { overlaps, type Analysis, type Span } from "../../src/planning/lexicon.js";
import { findCity, KNOWN_CITIES, namedCountry, normalizeName } from "./catalog.js";
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

/** Words after which a name is where the trip goes or leaves from ("fly to", "nach", "pour", "desde"). */
const TRAVEL_CUE =
  /(?:^|[^a-z])(?:to|in|into|visit|visiting|towards|from|nach|von|naar|vanuit|van|pour|vers|depuis|a|en|para|hacia|desde|de|per|da|verso)\s+$/;

/**
 * A region's own city, named alike ("Québec": Quebec City), when it is one of the region's biggest: the city a
 * traveller means by the name. Texas City is not what "a week in Texas" means.
 */
function ownCity(region: GazetteerRegion, name: string): string | null {
  const key = normalizeName(name);
  return (
    region.cities.slice(0, OWN_CITY_RANK).find((c) => [key, `${key} city`].includes(normalizeName(c.name)))?.name ??
    null
  );
}
const OWN_CITY_RANK = 3;

/**
 * A region's name where the trip goes to or leaves from, no word saying it is the region ("fly to Québec", "vol pour
 * Québec"), is its city of the same name: the travel tools go to cities. Said, with the region it also names.
 */
export interface AreaCity extends Span {
  /** The city taken ("Quebec City"). */
  city: string;
  region: GazetteerRegion;
}

export function findAreaCities(text: string, a: Analysis): AreaCity[] {
  const out: AreaCity[] = [];
  for (const c of capitalisedRuns(text)) {
    if (overlaps(c, out) || findCity(c.text) !== undefined || namedCountry(c.text) !== null) continue;
    const region = matchRegion(c.text);
    if (region === null || !TRAVEL_CUE.test(a.norm.slice(0, c.start))) continue;
    if (AREA_AFTER.test(a.norm.slice(c.end)) || AREA_BEFORE.test(a.norm.slice(0, c.start))) continue;
    const city = ownCity(region, c.text);
    if (city !== null) out.push({ ...c, city, region });
  }
  return out;
}

/** Why a region's name was taken as its city, and how to ask for the region. */
export function areaCityWhy(x: AreaCity): string {
  return `"${x.text}" is read as the city, ${x.city}: the request goes there, and the travel tools go to cities; it also names the ${x.region.countryCode === "US" ? "state" : "province or region"} of ${x.text}, ${x.region.country} — say "the province of ${x.text}" or "cities in ${x.text}" for the region`;
}

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
    // A name that is a city too ("Victoria", "Washington") is the city unless a word says it is the area; so is a
    // region's name the trip goes to, when the region has a city of that name (see findAreaCities).
    const saidArea = said !== null || AREA_BEFORE.test(before) || placesIn !== null;
    const ownCityMeant = city === undefined && TRAVEL_CUE.test(before) && ownCity(region, c.text) !== null;
    const area = saidArea || (city === undefined && !ownCityMeant);
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
