/**
 * A labelled corpus of requests for the understanding benchmark: what a planner must honour or name in each.
 *
 * Every request lists what it asks (`expect`) and how a run must end (`outcome`). An expectation counts as met
 * when the plan honours it (the step, parameter or absence it implies) or the understanding record names it
 * (an unsupported part, a change, an assumption, text not understood). `outcome`:
 * - `run`: everything asked is within the tools; the run may complete without asking anyone;
 * - `ask`: something cannot be read as written (an absurd number, a place that is not a city, a word the planner
 *   cannot place): a person must be asked before anything runs;
 * - `partial`: part of it is outside the tools; it must never end `completed` (asked first, or `partial`).
 *
 * Wordings are written to vary the forms (word order, number words, currencies, negations, languages), not to
 * match any one parser. Requests used to try Candor are kept out of this file.
 */
import { z } from "zod";

export const Expectation = z.discriminatedUnion("kind", [
  /** A flight from → to is planned, or the leg is named. */
  z.object({ kind: z.literal("route"), from: z.string(), to: z.string() }),
  /** The city is a place of the plan (a hotel, activities, a flight end), or it is named. */
  z.object({ kind: z.literal("city"), name: z.string() }),
  /** An exclusion ("no hotel"): no step uses the tool, or the exclusion is named. */
  z.object({ kind: z.literal("no_tool"), tool: z.string(), word: z.string() }),
  /** A step uses the tool ("book me a flight" books a flight). */
  z.object({ kind: z.literal("tool"), tool: z.string() }),
  /** Some step's parameter has the value, or the value's text is named. */
  z.object({ kind: z.literal("value"), param: z.string(), value: z.number(), word: z.string() }),
  /** Some step's text parameter has the value (the folder listed), or the word is named. */
  z.object({ kind: z.literal("param"), param: z.string(), value: z.string(), word: z.string() }),
  /** The budget check's limit in dollars lies in [min, max] (a conversion), or the amount is named. */
  z.object({ kind: z.literal("budget_usd"), min: z.number(), max: z.number(), word: z.string() }),
  /** The word must be named by the understanding record (unsupported, not understood, refused or asked). */
  z.object({ kind: z.literal("named"), word: z.string() }),
]);
export type Expectation = z.infer<typeof Expectation>;

export const Labelled = z.object({
  id: z.string(),
  request: z.string().min(1),
  domain: z.enum(["travel", "workspace", "mixed"]),
  /** The class of wording the request exercises, for the per-class table. */
  tag: z.string(),
  expect: z.array(Expectation),
  outcome: z.enum(["run", "ask", "partial"]),
});
export type Labelled = z.infer<typeof Labelled>;

const route = (from: string, to: string): Expectation => ({ kind: "route", from, to });
const city = (name: string): Expectation => ({ kind: "city", name });
const no = (tool: string, word: string): Expectation => ({ kind: "no_tool", tool, word });
const uses = (tool: string): Expectation => ({ kind: "tool", tool });
const days = (value: number, word = String(value)): Expectation => ({ kind: "value", param: "days", value, word });
const people = (value: number, word = String(value)): Expectation => ({
  kind: "value",
  param: "travellers",
  value,
  word,
});
const usd = (min: number, max: number, word: string): Expectation => ({ kind: "budget_usd", min, max, word });
const named = (word: string): Expectation => ({ kind: "named", word });

type Row = Omit<Labelled, "id">;
const rows: Row[] = [];
const add = (
  tag: string,
  domain: Labelled["domain"],
  outcome: Labelled["outcome"],
  request: string,
  ...expect: Expectation[]
) => rows.push({ tag, domain, outcome, request, expect });

// Plain trips, many word orders and cities (the gazetteer's, not only the demo's twelve).
const PAIRS: [string, string][] = [
  ["Madrid", "Paris"],
  ["Dublin", "Athens"],
  ["Porto", "Warsaw"],
  ["Seville", "Berlin"],
  ["London", "Lisbon"],
  ["Oslo", "Rome"],
  ["Vienna", "Budapest"],
  ["Chicago", "Toronto"],
  ["Osaka", "Seoul"],
  ["Nairobi", "Cairo"],
  ["Lima", "Bogota"],
  ["Edinburgh", "Copenhagen"],
  ["Krakow", "Prague"],
  ["Sydney", "Auckland"],
  ["Montreal", "Boston"],
];
const PLAIN = [
  (a: string, b: string) => `Plan a 4-day trip from ${a} to ${b} for 2 people`,
  (a: string, b: string) => `${b} from ${a}, 5 days, three travellers`,
  (a: string, b: string) => `I want to spend a week in ${b}, flying out of ${a}, just me`,
  (a: string, b: string) => `weekend getaway to ${b} leaving ${a} for two`,
];
const PLAIN_DAYS = [4, 5, 7, 2];
const PLAIN_PEOPLE = [2, 3, 1, 2];
PAIRS.forEach(([a, b], i) => {
  const k = i % PLAIN.length;
  add("plain", "travel", "run", PLAIN[k]!(a, b), route(a, b), city(b), days(PLAIN_DAYS[k]!), people(PLAIN_PEOPLE[k]!));
});

// Negations and "only": the plan's shape follows what was asked.
const NEG: [string, Expectation[]][] = [
  ["3 days in Paris from Madrid for 2, no hotel", [no("search_hotels", "hotel"), route("Madrid", "Paris")]],
  ["4 days in Rome from Berlin without flights", [no("search_flights", "flights"), city("Rome")]],
  ["flight only from Dublin to Athens", [no("search_hotels", "hotel"), route("Dublin", "Athens")]],
  ["just a hotel in Porto for 3 nights", [no("search_flights", "flight"), city("Porto")]],
  [
    "we already have a place to stay in Lisbon; flights from London for 2, 5 days",
    [no("search_hotels", "place to stay"), route("London", "Lisbon")],
  ],
  ["no activities please, 2 days in Vienna from Prague", [no("search_activities", "activities"), city("Vienna")]],
  ["a trip to Warsaw from Oslo but don't book a hotel", [no("search_hotels", "hotel"), route("Oslo", "Warsaw")]],
  [
    "only flights, Madrid to Barcelona, for 4 people",
    [no("search_hotels", "hotel"), route("Madrid", "Barcelona"), people(4)],
  ],
  [
    "I'm staying with friends in Berlin, find me flights from Paris for a long weekend",
    [no("search_hotels", "staying with friends"), route("Paris", "Berlin")],
  ],
  ["hotel and activities in Seville for 3 days, we drive there", [no("search_flights", "drive"), city("Seville")]],
  [
    "5 days in Athens from Rome, skip the sightseeing",
    [no("search_activities", "sightseeing"), route("Rome", "Athens")],
  ],
  ["3 días en Lisboa desde Madrid, sin hotel", [no("search_hotels", "hotel"), route("Madrid", "Lisbon")]],
  ["vol seulement de Paris à Rome pour deux", [no("search_hotels", "hotel"), route("Paris", "Rome")]],
  ["I don't want to go to Paris, take me to Rome from Madrid for 3 days", [route("Madrid", "Rome"), named("Paris")]],
  ["not Prague — Vienna, from Berlin, 4 days", [route("Berlin", "Vienna"), named("Prague")]],
  ["a week in Tokyo from London, no flights needed, we have miles", [no("search_flights", "flights"), city("Tokyo")]],
  ["hotels only in Amsterdam, 2 nights, 2 adults", [no("search_flights", "flight"), city("Amsterdam")]],
  [
    "nothing booked yet: plan 3 days in Kyoto from Osaka without a hotel",
    [no("search_hotels", "hotel"), route("Osaka", "Kyoto")],
  ],
  [
    "fly me from Boston to Chicago, that's all",
    [uses("search_flights"), no("search_hotels", "hotel"), route("Boston", "Chicago")],
  ],
  [
    "just the flights from Lima to Cusco, no hotel and no tours",
    [no("search_hotels", "hotel"), no("search_activities", "tours"), route("Lima", "Cusco")],
  ],
];
for (const [request, expect] of NEG) add("negation", "travel", "run", request, ...expect);

// Several cities: a flight per leg, a hotel per city.
const MULTI: [string, Expectation[]][] = [
  ["Madrid to Paris then Rome, 6 days", [route("Madrid", "Paris"), route("Paris", "Rome"), city("Rome")]],
  ["Prague and Vienna, 6 days, from Berlin", [city("Prague"), city("Vienna")]],
  ["from London: 3 days in Dublin and 3 in Edinburgh", [city("Dublin"), city("Edinburgh")]],
  ["a week across Lisbon and Porto starting in Madrid for 2", [city("Lisbon"), city("Porto")]],
  ["Rome, Florence and Venice in 9 days from Paris", [city("Rome"), city("Florence"), city("Venice")]],
  ["fly Oslo → Copenhagen → Stockholm, 2 days each", [route("Oslo", "Copenhagen"), route("Copenhagen", "Stockholm")]],
  ["Tokyo then Osaka, 10 days, from Seoul, two of us", [city("Tokyo"), city("Osaka"), people(2, "two")]],
  ["Budapest plus Vienna over 5 days leaving from Warsaw", [city("Budapest"), city("Vienna")]],
  ["desde Madrid a Roma y luego a Atenas, 8 días", [route("Madrid", "Rome"), city("Athens")]],
  ["de Paris à Berlin puis à Prague, 6 jours", [route("Paris", "Berlin"), city("Prague")]],
  ["Barcelona and Valencia for 4 days, from Bilbao", [city("Barcelona"), city("Valencia")]],
  ["first Amsterdam, then Brussels, then home to London, 5 days", [city("Amsterdam"), city("Brussels")]],
];
for (const [request, expect] of MULTI) add("multi-city", "travel", "run", request, ...expect);

// Budgets in words and currencies: converted and said, never taken as dollars silently.
const MONEY: [string, Expectation[]][] = [
  ["4 days in Paris from Madrid for 2 under two thousand dollars", [usd(1990, 2010, "two thousand")]],
  ["Rome from Berlin, 3 days, budget €1500", [usd(1550, 1750, "€1500")]],
  ["3 days in Tokyo from Osaka, ¥300000 max", [usd(1800, 2400, "¥300000")]],
  ["a week in Zurich from London, 300000 yen total", [usd(1800, 2400, "300000 yen")]],
  ["5 days in Geneva from Paris for 2, 2000 CHF", [usd(2100, 2500, "2000 CHF")]],
  ["London from Dublin, 2 days, £800 tops", [usd(950, 1100, "£800")]],
  ["a weekend in Lisbon from Madrid with 900 euros", [usd(930, 1050, "900 euros")]],
  ["3 days in Prague from Vienna for less than 1,200 USD", [usd(1190, 1210, "1,200")]],
  ["Athens from Rome, 4 days, keep it below fifteen hundred bucks", [usd(1490, 1510, "fifteen hundred")]],
  ["plan 5 days in Oslo from Stockholm, 20000 kr", [named("kr")]],
  ["a trip to Mexico City from Chicago, 6 days, 30,000 pesos", [named("pesos")]],
  ["3 días en Roma desde Madrid por menos de 1000 euros", [usd(1030, 1200, "1000 euros")]],
  ["4 jours à Lisbonne depuis Paris, budget 1200 €", [usd(1250, 1400, "1200 €")]],
  ["Berlin from Warsaw, 3 days, 5000 złoty", [usd(1100, 1400, "5000")]],
  ["Seoul from Tokyo for 4 days, budget of 2 million won", [named("won")]],
  ["2 people, Paris from Madrid, 3 days, between $1500 and $2000", [usd(1500, 2000, "$1500")]],
  ["a cheap week in Porto from London, around 1k GBP", [usd(1150, 1350, "1k")]],
  [
    "Dublin from Edinburgh 2 days, max 600 pounds for both of us",
    [usd(700, 820, "600 pounds"), people(2, "both of us")],
  ],
];
for (const [request, expect] of MONEY) add("money", "travel", "run", request, ...expect);

// Travellers as adults and children.
const PARTY: [string, number, string][] = [
  ["3 days in Rome from Madrid for 2 adults and 2 kids", 4, "2 kids"],
  ["family of five to Lisbon from Paris, a week", 5, "family of five"],
  ["me, my wife and our three children: Barcelona from London, 5 days", 5, "three children"],
  ["2 adults + 1 child, Vienna from Berlin, 4 days", 3, "1 child"],
  ["a couple and their baby, Porto from Madrid, 3 days", 3, "baby"],
  ["4 grown-ups and 3 teenagers, Athens from Rome, 6 days", 7, "3 teenagers"],
  ["dos adultos y un niño, 3 días en Sevilla desde Madrid", 3, "un niño"],
  ["deux adultes et deux enfants, Nice depuis Paris, 4 jours", 4, "deux enfants"],
];
for (const [request, n, word] of PARTY) add("party", "travel", "run", request, people(n, word));

// Numbers that cannot be taken as written: refused or asked, never silently changed.
const BAD_NUMBERS: [string, string][] = [
  ["3 days in Paris from Madrid for -2 people", "-2"],
  ["2.5 days in Rome from Berlin", "2.5"],
  ["0 days in Lisbon from Madrid", "0 days"],
  ["365 days in Tokyo from London", "365"],
  ["a trip to Vienna from Prague for 0 travellers", "0 travellers"],
  ["Paris from Madrid, 4 days, 1000 people", "1000 people"],
  ["Athens from Rome for 3.7 people, 3 days", "3.7"],
  ["-4 days in Dublin from London", "-4"],
  ["3 days in Oslo from Paris under $-500", "-500"],
  ["a 90-day trip to Seoul from Osaka", "90"],
  ["two and a half days in Porto from Madrid", "two and a half"],
  ["zero nights in Berlin from Warsaw", "zero"],
];
for (const [request, word] of BAD_NUMBERS) add("bad-number", "travel", "ask", request, named(word));

// Places that are not cities, or that the planner cannot place.
const NOT_PLACES: [string, string][] = [
  ["3 days in Atlantis from Madrid", "Atlantis"],
  ["a week in Narnia from London for 2", "Narnia"],
  ["fly from Paris to Gotham, 4 days", "Gotham"],
  ["5 days in El Dorado from Lima", "El Dorado"],
  ["a trip to Mordor from Rome", "Mordor"],
  ["3 days in Spain from Paris", "Spain"],
  ["a week in Japan from London for 2", "Japan"],
  ["4 days in the Alps from Munich", "Alps"],
];
for (const [request, word] of NOT_PLACES) add("not-a-city", "travel", "ask", request, named(word));

// Spanish and French directions: the trip must not turn around.
const LANG: [string, string, string, number][] = [
  ["3 días a París desde Madrid", "Madrid", "Paris", 3],
  ["5 días en Roma saliendo de Barcelona para 2 personas", "Barcelona", "Rome", 5],
  ["viaje de Sevilla a Londres, 4 días", "Seville", "London", 4],
  ["quiero ir a Lisboa desde Oporto, 2 días", "Porto", "Lisbon", 2],
  ["hacia Berlín desde Viena, una semana", "Vienna", "Berlin", 7],
  ["para Atenas, desde Roma, 6 días, 3 personas", "Rome", "Athens", 6],
  ["3 jours à Rome depuis Paris", "Paris", "Rome", 3],
  ["voyage de Lyon vers Madrid, 4 jours", "Lyon", "Madrid", 4],
  ["une semaine à Lisbonne au départ de Bordeaux", "Bordeaux", "Lisbon", 7],
  ["pour Prague, depuis Bruxelles, 5 jours pour deux", "Brussels", "Prague", 5],
  ["de Marseille à Londres, 2 jours", "Marseille", "London", 2],
  ["aller à Vienne depuis Genève pendant 4 jours", "Geneva", "Vienna", 4],
];
for (const [request, from, to, d] of LANG) add("language", "travel", "run", request, route(from, to), days(d));

// Partly outside the tools: the unsupported part is named and the run is not `completed`.
const PARTLY: [string, string][] = [
  ["find flights from Madrid to Paris and translate the restaurant menu into German", "translate"],
  ["plan 3 days in Rome from Berlin and rent a car at the airport", "rent a car"],
  ["book a table for two in Lisbon and find flights from Madrid", "table"],
  ["3 days in Vienna from Prague, and email the plan to my boss", "email"],
  ["find a hotel in Dublin and get travel insurance", "insurance"],
  ["plan a week in Tokyo from London and apply for my visa", "visa"],
  ["flights Paris to Athens, plus exchange 500 euros to drachma", "exchange"],
  ["2 days in Porto from Madrid; also call my mother", "call"],
  ["Seville from Barcelona, 3 days, and check the weather forecast", "weather"],
  ["hotel in Oslo for 3 nights and order a taxi from the airport", "taxi"],
  ["plan 4 days in Berlin from Paris and remind me to pack", "remind"],
  ["count the words in README.md and post them on Slack", "slack"],
  ["read package.json and translate it to French", "translate"],
  ["list the files in src and delete the biggest one", "delete"],
  ["summarize README.md and send it by email", "email"],
];
for (const [request, word] of PARTLY) add("partly-supported", "mixed", "partial", request, named(word));

// Entirely outside the tools.
const OUTSIDE = [
  "what is the capital of Australia",
  "write me a poem about the sea",
  "order a pizza to my home",
  "what time is it in Tokyo",
  "play some jazz",
  "set an alarm for 7am",
  "how tall is the Eiffel tower",
  "translate hello into Japanese",
];
for (const request of OUTSIDE) add("outside", "mixed", "partial", request, named(request.split(" ")[0]!));

// Plan shape: a budget word never removes a step; "book me a flight" books a flight, not a whole trip.
const SHAPE: [string, Expectation[]][] = [
  [
    "book me a flight from Paris to London",
    [uses("search_flights"), no("search_hotels", "flight"), no("search_activities", "flight")],
  ],
  ["3-day itinerary for Rome from Madrid, budget $1500", [uses("build_itinerary"), usd(1490, 1510, "$1500")]],
  [
    "plan my 4 days in Lisbon from Paris within a budget of 1800 dollars",
    [uses("build_itinerary"), usd(1790, 1810, "1800")],
  ],
  ["reserve a hotel in Vienna for 2 nights", [uses("search_hotels"), no("search_flights", "hotel")]],
  ["what can I do in Prague for 3 days", [uses("search_activities"), no("search_flights", "do in Prague")]],
  ["how much would 5 days in Athens from Rome cost", [uses("check_budget"), route("Rome", "Athens")]],
  ["find me cheap flights from Dublin to Barcelona", [uses("search_flights"), no("search_hotels", "flights")]],
  ["I need somewhere to sleep in Krakow, 3 nights", [uses("search_hotels"), no("search_flights", "sleep")]],
  ["plan and book 2 days in Rome from Paris", [uses("book_trip")]],
  ["things to do in Seville this weekend", [uses("search_activities"), no("search_flights", "things to do")]],
];
for (const [request, expect] of SHAPE) add("shape", "travel", "run", request, ...expect);

// Workspace requests.
const WORKSPACE: [string, Labelled["outcome"], Expectation[]][] = [
  ["summarize README.md", "run", [uses("read_file")]],
  ["count the words in README.md and write a report", "run", [uses("text_stats"), uses("write_report")]],
  ["list the files in src", "run", [uses("list_files")]],
  ["read package.json", "run", [uses("read_file")]],
  ["what are the most frequent words in README.md", "run", [uses("text_stats")]],
  ["give me a short summary of package.json", "run", [uses("read_file")]],
  ["how many lines does tsconfig.json have", "run", [uses("text_stats")]],
  ["read README.md but don't write any report", "run", [uses("read_file"), no("write_report", "report")]],
  ["read nosuchfile.md", "run", [uses("read_file")]],
  ["count the words in README.md, no report", "run", [uses("text_stats"), no("write_report", "report")]],
];
for (const [request, outcome, expect] of WORKSPACE) add("workspace", "workspace", outcome, request, ...expect);

// Systematic variety: every plain pair in two more phrasings with budgets in three currencies.
const CURRENCIES: [string, number, number][] = [
  ["$1800", 1790, 1810],
  ["1800 dollars", 1790, 1810],
  ["€1800", 1850, 2100],
  ["£1800", 2150, 2450],
];
PAIRS.forEach(([a, b], i) => {
  const [word, min, max] = CURRENCIES[i % CURRENCIES.length]!;
  add(
    "money",
    "travel",
    "run",
    `${i + 2} days in ${b} from ${a} for ${(i % 4) + 1} under ${word}`,
    route(a, b),
    days(i + 2),
    people((i % 4) + 1),
    usd(min, max, word),
  );
  add(
    "plain",
    "travel",
    "run",
    `Trip from ${a} to ${b}: ${(i % 5) + 2} nights, ${(i % 3) + 1} adults`,
    route(a, b),
    people((i % 3) + 1),
  );
  add(
    "negation",
    "travel",
    "run",
    `${b} for ${(i % 6) + 2} days from ${a}, no hotel needed`,
    route(a, b),
    no("search_hotels", "hotel"),
  );
  add("language", "travel", "run", `${(i % 6) + 2} días en ${b} desde ${a}`, route(a, b), days((i % 6) + 2));
  add("language", "travel", "run", `${(i % 6) + 2} jours à ${b} depuis ${a}`, route(a, b), days((i % 6) + 2));
  add(
    "partly-supported",
    "mixed",
    "partial",
    `${b} from ${a}, 3 days, and buy concert tickets`,
    route(a, b),
    named("concert"),
  );
});

// Multi-city in systematic form.
const TRIPLES: [string, string, string][] = [
  ["Madrid", "Lisbon", "Porto"],
  ["Paris", "Brussels", "Amsterdam"],
  ["Berlin", "Prague", "Vienna"],
  ["London", "Edinburgh", "Dublin"],
  ["Rome", "Naples", "Athens"],
  ["Tokyo", "Kyoto", "Osaka"],
  ["Chicago", "Toronto", "Montreal"],
  ["Oslo", "Stockholm", "Helsinki"],
  ["Warsaw", "Krakow", "Budapest"],
  ["Barcelona", "Marseille", "Nice"],
];
TRIPLES.forEach(([a, b, c], i) => {
  add("multi-city", "travel", "run", `from ${a} to ${b} and then ${c}, ${i + 4} days`, route(a, b), city(c));
  add("multi-city", "travel", "run", `${b} and ${c}, ${i + 4} days, leaving from ${a}`, city(b), city(c));
});

// Bad numbers and unknown places combined with good parts.
PAIRS.slice(0, 10).forEach(([a, b], i) => {
  add("bad-number", "travel", "ask", `${b} from ${a} for ${-(i + 1)} people, 3 days`, named(String(-(i + 1))));
  add("not-a-city", "travel", "ask", `${i + 2} days in Xyzzyville${i} from ${a}`, named(`Xyzzyville${i}`));
});

// Dates: the demo's tools take no dates, so a date is named, never silently dropped.
const DATES: [string, string][] = [
  ["3 days in Rome from Madrid in March", "March"],
  ["Paris from London next Friday for 2", "next Friday"],
  ["a week in Lisbon from Berlin starting June 3rd", "June"],
  ["Vienna from Prague over Christmas, 4 days", "Christmas"],
  ["Athens from Rome 12-15 August", "August"],
  ["Dublin from Paris this weekend, 2 of us", "weekend"],
  ["5 días en Sevilla desde Madrid en abril", "abril"],
  ["4 jours à Nice depuis Lyon en juillet", "juillet"],
  ["Tokyo from Seoul for 6 days, leaving tomorrow", "tomorrow"],
  ["Oslo from Copenhagen, 3 days, on 2027-05-01", "2027-05-01"],
];
for (const [request, word] of DATES) add("date", "travel", "partial", request, named(word));

// More parties, more shapes, more workspace wordings.
const MORE_PARTY: [string, number, string][] = [
  ["3 adults and 1 infant, Madrid to Rome, 4 days", 4, "1 infant"],
  ["Porto from Lisbon, 2 days, for me and my two sons", 3, "two sons"],
  ["our group of 6 friends wants 3 days in Prague from Berlin", 6, "6 friends"],
  ["a family of 4 (2 kids) to Barcelona from Paris, 5 days", 4, "family of 4"],
  ["husband, wife and 1 toddler: Nice from Geneva, 3 days", 3, "toddler"],
  ["solo trip to Krakow from Warsaw, 2 days", 1, "solo"],
];
for (const [request, n, word] of MORE_PARTY) add("party", "travel", "run", request, people(n, word));

const MORE_SHAPE: [string, Expectation[]][] = [
  ["just check if 4 days in Oslo from London fits $2500", [uses("check_budget"), usd(2490, 2510, "$2500")]],
  ["get me a day-by-day plan for 3 days in Vienna from Munich", [uses("build_itinerary")]],
  ["compare flight prices from Madrid to Athens", [uses("search_flights"), no("search_hotels", "flight")]],
  [
    "I only need activities for 2 days in Rome",
    [uses("search_activities"), no("search_flights", "activities"), no("search_hotels", "activities")],
  ],
  ["where can we stay in Edinburgh for 4 nights, 2 adults", [uses("search_hotels"), no("search_flights", "stay")]],
  [
    "book a flight and a hotel in Lisbon from Madrid, 3 days",
    [uses("search_flights"), uses("search_hotels"), uses("book_trip")],
  ],
];
for (const [request, expect] of MORE_SHAPE) add("shape", "travel", "run", request, ...expect);

const MORE_WORKSPACE: [string, Labelled["outcome"], Expectation[]][] = [
  ["summarise tsconfig.json for me", "run", [uses("read_file")]],
  ["what does README.md say about benchmarks", "partial", [named("benchmarks")]],
  ["count words in README.md and compare with package.json", "partial", [named("compare")]],
  ["read README.md and fix the typos in it", "partial", [named("fix")]],
  ["list files in test and write a report about them", "run", [uses("list_files")]],
  ["read ../secrets.txt", "run", [uses("read_file")]],
];
for (const [request, outcome, expect] of MORE_WORKSPACE) add("workspace", "workspace", outcome, request, ...expect);

// Names that several cities of comparable size share: asked about unless the request's other places settle it.
const HOMONYMS: [string, Labelled["outcome"], Expectation[]][] = [
  ["4 nights in Newcastle for two adults from Dublin", "ask", [named("Newcastle")]],
  ["a trip to Salamanca from Lisbon, 3 days", "ask", [named("Salamanca")]],
  ["San Jose for 5 days, 2 people", "ask", [named("San Jose")]],
  ["from Springfield to Chicago, 2 days", "ask", [named("Springfield")]],
  ["vacaciones en Santa Ana desde Madrid", "ask", [named("Santa Ana")]],
  ["une semaine à Natal depuis Lisbonne", "ask", [named("Natal")]],
  ["3 days in Palermo from Rome", "run", [city("Palermo, Sicilia"), route("Rome", "Palermo, Sicilia")]],
  ["Brest, 3 nights, from Paris", "run", [city("Brest, Bretagne")]],
  ["two days in Reading from London", "run", [city("Reading"), route("London", "Reading")]],
];
for (const [request, outcome, expect] of HOMONYMS) add("homonym", "travel", outcome, request, ...expect);

// Asking what to do in a place: activities, and no journey nobody asked for.
const ACTIVITY_ONLY: string[] = [
  "any good sightseeing spots in Edinburgh?",
  "what's worth seeing in Florence in two days",
  "top attractions in Kyoto for a day",
  "que visiter à Bruxelles en deux jours",
  "lugares para visitar en Granada",
  "I'd love some ideas of things to see in Munich",
  "our family needs fun things to do in Barcelona for 3 days",
  "what could I do in Bruges on a rainy afternoon",
];
for (const request of ACTIVITY_ONLY)
  add(
    "activities only",
    "travel",
    "run",
    request,
    uses("search_activities"),
    no("search_flights", "activities only"),
    no("search_hotels", "activities only"),
  );

// Counting questions and folders in the workspace; folders outside it are refused.
const dir = (value: string): Expectation => ({ kind: "param", param: "dir", value, word: value });
const WORKSPACE_ASKS: [string, Labelled["outcome"], Expectation[]][] = [
  ["tell me the line count of package.json", "run", [uses("text_stats")]],
  ["what is the number of lines in bench/RESULTS.md", "run", [uses("text_stats")]],
  ["¿cuántas palabras hay en README.md?", "run", [uses("text_stats")]],
  ["combien de lignes a package.json", "run", [uses("text_stats")]],
  ["what files are inside the bench directory", "run", [uses("list_files"), dir("bench"), no("read_file", "files")]],
  ["show the contents of examples/travel", "run", [uses("list_files"), dir("examples/travel")]],
  ["how many files does the src folder contain", "run", [uses("list_files"), dir("src"), no("text_stats", "files")]],
  ["list the contents of /var/log", "ask", [named("outside the workspace")]],
  ["ls ../../", "ask", [named("outside the workspace")]],
];
for (const [request, outcome, expect] of WORKSPACE_ASKS)
  add("workspace counts and folders", "workspace", outcome, request, ...expect);

// A clause whose tool words only say the domain: no step through them, the clause named.
const INCIDENTAL: [string, Expectation[]][] = [
  [
    "hotel in Madrid for 2 nights and sort out travel vaccinations",
    [named("vaccinations"), no("search_flights", "travel")],
  ],
  ["flights London to Rome plus travel insurance for the family", [named("insurance"), no("search_hotels", "travel")]],
  ["buscar vuelos de Sevilla a Roma y un seguro de viaje", [named("seguro"), no("search_hotels", "viaje")]],
  ["I want a travel guidebook for Prague", [named("guidebook"), no("search_flights", "travel")]],
  ["trip cancellation cover for Lisbon", [named("cancellation"), no("search_flights", "trip")]],
  ["vols pour Nice depuis Paris et une assurance de voyage", [named("assurance"), no("search_hotels", "voyage")]],
];
for (const [request, expect] of INCIDENTAL) add("incidental words", "mixed", "partial", request, ...expect);

// Requests as people write them: saying there is no constraint, places with abbreviations, states, namesakes near
// the other places, dates that give the length, parties in everyday words, and languages beyond three.
const REAL_WORDING: [string, Labelled["outcome"], Expectation[]][] = [
  [
    "Please plan a trip from Denver to Chicago for 3 days. We have no specific accommodation restrictions.",
    "run",
    [route("Denver", "Chicago"), uses("search_hotels"), days(3)],
  ],
  [
    "from Boston to Chicago for 5 days for 2 people, we have no preferences about food",
    "run",
    [route("Boston", "Chicago"), uses("search_hotels"), days(5), people(2)],
  ],
  ["from Paris to Rome for 3 days with no particular cuisine requirements", "run", [route("Paris", "Rome"), days(3)]],
  [
    "Von Berlin nach Wien für 3 Tage, kein Hotel, zwei Personen",
    "run",
    [route("Berlin", "Vienna"), no("search_hotels", "kein"), days(3), people(2, "zwei")],
  ],
  [
    "Vorrei andare da Roma a Parigi per tre giorni, due persone",
    "run",
    [route("Rome", "Paris"), days(3, "tre"), people(2, "due")],
  ],
  [
    "Quero viajar de Lisboa para Madrid por 4 dias, duas pessoas, sem hotel",
    "run",
    [route("Lisbon", "Madrid"), no("search_hotels", "sem"), days(4), people(2, "duas")],
  ],
  [
    "Wij willen van Amsterdam naar Parijs voor drie dagen met twee personen",
    "run",
    [route("Amsterdam", "Paris"), days(3, "drie"), people(2, "twee")],
  ],
  [
    "I'm planning a week-long trip for 2 ppl starting in Daytona Beach and going to Sault Ste. Marie",
    "run",
    [route("Daytona Beach", "Sault Ste. Marie"), days(7, "week"), people(2, "ppl")],
  ],
  ["from Boston to Salt Lake City for 4 days, we are 3", "run", [route("Boston", "Salt Lake City"), people(3)]],
  [
    "from St. Petersburg to Rockford from March 16th to March 18th, 2022, for a single person",
    "ask",
    [city("Rockford"), days(3, "March 16th"), people(1, "single person"), named("Florida")],
  ],
  ["We are a group of 5 leaving from Denver to visit 2 cities in Texas, 5 days", "ask", [named("Texas"), people(5)]],
  [
    "A pair of travellers from Seattle to Washington state for 4 days",
    "ask",
    [named("is a state of the United States"), people(2, "pair")],
  ],
  ["Take us from Lisbon to Atlantis for 4 days", "ask", [named("Atlantis")]],
  ["Хочу поехать из Москвы в Париж на три дня", "ask", [named("Russian")]],
];
for (const [request, outcome, expect] of REAL_WORDING) add("real wording", "travel", outcome, request, ...expect);

/** The corpus, validated and numbered. */
export const CORPUS: readonly Labelled[] = rows.map((r, i) =>
  Labelled.parse({ id: `u${String(i + 1).padStart(3, "0")}`, ...r }),
);
