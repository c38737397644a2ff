import { z } from "zod";
import { CandorError, ErrorCode } from "../../src/errors.js";
import type { FailureClass } from "../../src/domain/feedback.js";
import { learnable } from "../../src/reflection/knobs.js";
import { sleep } from "../../src/tools/sleep.js";
import { analyzeRequest, overlaps, type Span } from "../../src/planning/lexicon.js";
import { keywordHits } from "../../src/planning/understanding.js";
import {
  defineTool,
  paramText,
  type Interpretation,
  type RequestFacts,
  type ToolContext,
  type ToolSpec,
  type Toolkit,
  type WorkerType,
} from "../../src/tools/types.js";
import {
  CENTRAL_KM,
  activitiesIn,
  findCity,
  flightsFor,
  hotelsIn,
  nightsFor,
  requireCity,
  roomsFor,
  stableHash,
  type Provider,
  unplacedMessage,
} from "./catalog.js";
import { findActivityAsks, readTrip, type TripFacts } from "./parse-request.js";

/** How far a widened hotel search reaches (FIND_WORKAROUND after "fully booked"). */
export const WIDE_RADIUS_KM = 15;

/**
 * The most days search_activities plans in one call. A longer trip fails as too complex, and DECOMPOSE does the
 * same work in two smaller steps (find_attractions, then plan_days). A week, so every trip of the demo, the
 * README and the tests that run a plan stays a single call.
 */
export const MAX_ACTIVITY_DAYS_PER_CALL = 7;

export interface TravelToolkitOptions {
  /** Simulated latency of every call, in ms; defaults to each tool's `estimates.durationMs`. Tests pass 0–5. */
  latencyMs?: number;
}

// Results are schemas too: consumers (check_budget, build_itinerary, book_trip) parse what they receive, since an
// upstream step may have returned garbage (see the `garbage` fault) or been replaced by another provider.

export const FlightResult = z.object({
  id: z.string(),
  provider: z.enum(["primary", "backup"]),
  airline: z.string(),
  flightNumber: z.string(),
  origin: z.string(),
  destination: z.string(),
  stops: z.number().int().min(0),
  via: z.string().nullable(),
  departure: z.string(),
  durationHours: z.number(),
  pricePerTraveller: z.number(),
  recommended: z.boolean(),
  travellers: z.number().int().min(1),
  /** Total for all travellers (return tickets). */
  cost: z.number().min(0),
  /** The cheapest fare this provider has for the route and travellers: the floor of any price cap. */
  cheapestCost: z.number().min(0).optional(),
  summary: z.string(),
});
export type FlightResult = z.infer<typeof FlightResult>;

export const HotelResult = z.object({
  id: z.string(),
  name: z.string(),
  city: z.string(),
  stars: z.number().int(),
  distanceKm: z.number(),
  pricePerNight: z.number(),
  /** Guest rating, 0–10. */
  rating: z.number().min(0).max(10),
  preferred: z.boolean(),
  nights: z.number().int().min(1),
  rooms: z.number().int().min(1),
  /** Where the search looked: "the centre" or "within N km of the centre". */
  searchArea: z.string(),
  /** Total for all nights and rooms. */
  cost: z.number().min(0),
  /**
   * The cheapest stay this search reaches, counting its widened form (out to WIDE_RADIUS_KM): the floor of any
   * price cap, since a cap the centre cannot meet is met by widening.
   */
  cheapestCost: z.number().min(0).optional(),
  summary: z.string(),
});
export type HotelResult = z.infer<typeof HotelResult>;

export const ActivitiesResult = z.object({
  city: z.string(),
  travellers: z.number().int().min(1),
  activities: z.array(
    z.object({
      day: z.number().int().min(1),
      name: z.string(),
      pricePerPerson: z.number().min(0),
      /** What kind of outing it is (culture, nightlife, outdoors, food); absent on a free day. */
      kind: z.string().optional(),
    }),
  ),
  /** Total for all travellers. */
  cost: z.number().min(0),
  /** Always 0: free options fill any day, so no cap is too low. */
  cheapestCost: z.number().min(0).optional(),
  summary: z.string(),
});
export type ActivitiesResult = z.infer<typeof ActivitiesResult>;

/** What find_attractions returns and plan_days consumes: a city's attractions, best first. */
export const AttractionsResult = z.object({
  city: z.string(),
  attractions: z
    .array(
      z.object({ id: z.string(), name: z.string(), pricePerPerson: z.number().min(0), kind: z.string().optional() }),
    )
    .min(1),
  summary: z.string(),
});
export type AttractionsResult = z.infer<typeof AttractionsResult>;

export const Breakdown = z.object({ flight: z.number(), hotel: z.number(), activities: z.number() });
export type Breakdown = z.infer<typeof Breakdown>;

/** The least each part could cost (its search's `cheapestCost`); a part whose search did not say is left out. */
export const Floors = Breakdown.partial();
export type Floors = z.infer<typeof Floors>;

/** The parts a total or itinerary was made without (an optional input that was missing), each with why. */
export const Without = z.record(z.string(), z.string());
export type Without = z.infer<typeof Without>;

export const BudgetStatus = z.object({
  withinBudget: z.boolean(),
  /** Of the parts it had: a part in `without` is not counted. */
  total: z.number(),
  budget: z.number().nullable(),
  breakdown: Breakdown,
  without: Without.optional(),
  summary: z.string(),
});
export type BudgetStatus = z.infer<typeof BudgetStatus>;

export const ItineraryResult = z.object({
  itinerary: z.string(),
  days: z.array(z.string()),
  total: z.number(),
  budget: z.number().nullable(),
  breakdown: Breakdown,
  without: Without.optional(),
  summary: z.string(),
});
export type ItineraryResult = z.infer<typeof ItineraryResult>;

export const BookingResult = z.object({
  bookingRef: z.string(),
  status: z.literal("confirmed"),
  charged: z.number(),
  summary: z.string(),
});
export type BookingResult = z.infer<typeof BookingResult>;

const cap = z.number().positive().nullish();

/** All check_budget needs from a priced result; any provider's result shape passes as long as it has a cost. */
const Priced = z.object({ cost: z.number().min(0), cheapestCost: z.number().min(0).optional() });

/**
 * A city the catalog serves. In the schema, not only in `run`, so the planner's parameter check sees an unknown
 * place before anything runs: the plan's confidence drops, a person is asked, and the reason names the city.
 */
const knownCity = (missing: string) =>
  z
    .string({ error: missing })
    .min(1, missing)
    .refine((name) => findCity(name) !== undefined, { error: (issue) => unplacedMessage(String(issue.input)) });

/*
 * The settings a traveller's feedback can steer (see src/reflection/knobs.ts): what a hotel search ranks by and the
 * least guest rating it accepts; nonstop flights, airlines to avoid and the cheapest fare; what the activities
 * are built around. The words are the travel domain's, so
 * they live here: a rejection reason that shares one of them lands on the setting, however it is worded.
 */

/** Words that complain about quality (the place itself) or comfort; luxury and standing are LUXURY_WORDS. */
const QUALITY_WORDS = [
  "quality",
  "nicer",
  "better",
  "shabby",
  "run down",
  "rundown",
  "dump",
  "dingy",
  "grim",
  "cheap looking",
  "cheaply",
  "tacky",
  "comfort",
  "comfortable",
  "uncomfortable",
  "standard",
  "awful",
  "terrible",
  "horrible",
  "poor",
  "low end",
  "budget hotel",
];
/** Words about what guests said of a place: reviews, cleanliness, noise. */
const RATING_WORDS = [
  "rating",
  "rated",
  "ratings",
  "review",
  "reviews",
  "reviewed",
  "guests",
  "score",
  "dirty",
  "filthy",
  "clean",
  "unclean",
  "noisy",
  "smelly",
  "bugs",
  "stained",
  "opiniones",
  "resenas",
  "valoraciones",
  "comentarios",
  "puntuacion",
  "sucio",
  "sucia",
  "ruidoso",
  "ruidosa",
  "limpio",
  "limpia",
  "chinches",
  "avis",
  "commentaires",
  "sale",
  "crasseux",
  "crasseuse",
  "bruyant",
  "bruyante",
  "punaises",
  "bewertung",
  "rezension",
  "schmutzig",
  "dreckig",
  "laut",
  "larm",
  "sauber",
  "recensioni",
  "sporco",
  "sporca",
  "rumoroso",
  "rumorosa",
  "avaliacoes",
  "sujo",
  "suja",
  "barulhento",
  "barulhenta",
  "recensies",
  "beoordelingen",
  "vies",
  "lawaaierig",
];
/**
 * Words that point both ways, which the clause decides (src/reflection/diagnose.ts): "somewhere cheap" and "a
 * cheap room" ask for a lower price, "it felt cheap" and "too cheap for us" complain about the place. Listed with
 * the price words, turned to quality when said of the answer shown.
 */
const CHEAP_WORDS = [
  "cheap",
  "cheapo",
  "barato",
  "barata",
  "bon marche",
  "billig",
  "economico",
  "economica",
  "goedkoop",
];
/**
 * Words that point both ways the other way round: "the room was basic" complains about the place, "a basic room is
 * all we need" asks for a lower price. Listed with the quality words, turned to price when said as what is wanted.
 */
const BASIC_WORDS = ["basic", "basico", "basica", "basique", "basilare", "basisch"];
/**
 * Luxury words that, said of the answer shown ("it looked fancy", "the room was luxurious"), say it had more than
 * was wanted, as "too fancy" does: asked for ("a fancy hotel"), they ask for quality.
 */
const SHOWY_WORDS = [
  "fancy",
  "posh",
  "luxurious",
  "upscale",
  "lujoso",
  "lujosa",
  "luxueux",
  "luxueuse",
  "luxurios",
  "lussuoso",
  "lussuosa",
  "luxuoso",
  "luxuosa",
  "luxueus",
];
/**
 * Words about price, in the languages the travel reader reads; "cheap" and its kin are CHEAP_WORDS.
 * Where a price word lands is decided by what else the complaint names (a hotel's subject words, below).
 */
const PRICE_WORDS = [
  "expensive",
  "pricey",
  "overpriced",
  "cheaper",
  "cheapest",
  "afford",
  "costly",
  "too much money",
  "pay",
  "paying",
  "paid",
  "spend",
  "spent",
  "steep",
  "fortune",
  "rip off",
  "budget",
  "presupuesto",
  "caro",
  "cara",
  "caros",
  "caras",
  "costoso",
  "cher",
  "chere",
  "chers",
  "couteux",
  "teuer",
  "duur",
];
/**
 * Words for luxury and standing: asked for, they rank by quality; said as too much ("why so fancy?", "not a palace",
 * "I don't need four stars"), they ask for the cheapest instead.
 */
const LUXURY_WORDS = [
  "luxury",
  "luxurious",
  "upscale",
  "posh",
  "fancy",
  "classy",
  "elegant",
  "palace",
  "resort",
  "stars",
  "star",
  "five star",
  "four star",
  "lujo",
  "lujoso",
  "luxe",
  "luxueux",
  "luxus",
  "lusso",
];
/** What people call the place they sleep, in the languages the travel reader reads: the hotel search's subject. */
const LODGING_SUBJECT = [
  "hotel",
  "hotels",
  "room",
  "rooms",
  "bed",
  "beds",
  "place to stay",
  "place to sleep",
  "somewhere to stay",
  "somewhere to sleep",
  "sleep",
  "accommodation",
  "accommodations",
  "lodging",
  "lodgings",
  "hostel",
  "inn",
  "guesthouse",
  "guest house",
  "bed and breakfast",
  "motel",
  "suite",
  "stay",
  "alojamiento",
  "hospedaje",
  "habitacion",
  "cama",
  "hostal",
  "pension",
  "hebergement",
  "logement",
  "chambre",
  "auberge",
  "unterkunft",
  "zimmer",
  "bett",
  "herberge",
  "alloggio",
  "albergo",
  "ostello",
  "alojamento",
  "hospedagem",
  "quarto",
  "pousada",
  "accommodatie",
  "kamer",
  "verblijf",
];
/** What people call a flight and who flies it: the flight searches' subject. */
const FLIGHT_SUBJECT = [
  "flight",
  "flights",
  "fly",
  "flying",
  "plane",
  "planes",
  "airline",
  "airlines",
  "carrier",
  "fare",
  "vuelo",
  "aerolinea",
  "avion",
  "vol",
  "compagnie aerienne",
  "flug",
  "fluggesellschaft",
  "flugzeug",
  "volo",
  "aereo",
  "voo",
  "vlucht",
];
/** What people call the days' outings: the activity search's subject. */
const OUTING_SUBJECT = [
  "activities",
  "activity",
  "outing",
  "outings",
  "excursion",
  "excursions",
  "tour",
  "tours",
  "things to do",
  "sightseeing",
  "day trip",
  "day trips",
  "actividades",
  "excursiones",
  "activites",
  "sorties",
  "aktivitaten",
  "ausfluge",
  "attivita",
  "escursioni",
  "atividades",
  "passeios",
  "activiteiten",
  "uitstapjes",
];

export const FlightSearchArgs = z.object({
  origin: knownCity('no origin given: say where from, e.g. "from Madrid"'),
  destination: knownCity('no destination given: say where to go, e.g. "to Paris"'),
  travellers: z.number().int().min(1).max(20).default(1),
  /** Cap on the total flight price for all travellers. */
  maxCost: cap,
  /** Only flights without stops. */
  nonstop: learnable(z.boolean().default(false), {
    kind: "flag",
    about: "nonstop flights",
    subject: FLIGHT_SUBJECT,
    terms: [
      "stop",
      "stops",
      "stopover",
      "layover",
      "layovers",
      "connection",
      "connecting",
      "nonstop",
      "non stop",
      "direct",
      "transfer",
      "change planes",
    ],
    satisfiedWhen: { field: "stops", equals: 0 },
  }),
  /** What comes first: the provider's recommended option (nonstop, good times) or the lowest fare (`price`). */
  priority: learnable(z.enum(["recommended", "price"]).default("recommended"), {
    kind: "choice",
    about: "the flight's price",
    subject: FLIGHT_SUBJECT,
    default: "recommended",
    options: {
      price: {
        terms: [...PRICE_WORDS, ...CHEAP_WORDS],
        says: "cheapest fare first",
        shows: { field: "pricePerTraveller", better: "lower" },
        // "The plane felt cheap" complains of something no flight setting chooses.
        described: { terms: CHEAP_WORDS },
      },
    },
  }),
  /** Airlines whose flights are never chosen. */
  avoidAirlines: learnable(z.array(z.string().min(1)).max(20).default([]), {
    kind: "exclude",
    about: "airlines to avoid",
    subject: FLIGHT_SUBJECT,
    field: "airline",
    terms: ["airline", "carrier", "crew", "never fly", "never again with"],
  }),
});
export type FlightSearchArgs = z.infer<typeof FlightSearchArgs>;

export const HotelSearchArgs = z.object({
  city: knownCity('no destination given: say where to stay, e.g. "in Paris"'),
  nights: z.number().int().min(1).max(60),
  travellers: z.number().int().min(1).max(20).default(1),
  /** 0: central hotels only. Above 0: the neighbourhoods around the centre, out to this distance. */
  radiusKm: z.number().min(0).max(50).default(0),
  /** Cap on the hotel total for all nights and rooms. */
  maxCost: cap,
  /**
   * What comes first: the provider's own pick (`recommended`, the preferred central hotel), the lowest total
   * (`price`: in the centre and around it, out to WIDE_RADIUS_KM), the most stars then the best rating
   * (`quality`), or the best guest rating (`rating`).
   */
  priority: learnable(z.enum(["recommended", "price", "quality", "rating"]).default("recommended"), {
    kind: "choice",
    about: "hotel quality",
    subject: LODGING_SUBJECT,
    default: "recommended",
    options: {
      price: {
        terms: [...PRICE_WORDS, ...CHEAP_WORDS],
        says: "cheapest first",
        shows: { field: "pricePerNight", better: "lower" },
        described: { asks: "quality", terms: CHEAP_WORDS },
      },
      quality: {
        terms: [...QUALITY_WORDS, ...BASIC_WORDS, ...LUXURY_WORDS, ...SHOWY_WORDS],
        says: "most stars, then best guest rating, first",
        shows: { field: "rating", better: "higher" },
        excess: { asks: "price", terms: LUXURY_WORDS },
        described: { asks: "price", terms: SHOWY_WORDS },
        wished: { asks: "price", terms: BASIC_WORDS },
      },
      rating: { terms: RATING_WORDS, says: "best guest rating first", shows: { field: "rating", better: "higher" } },
    },
  }),
  /** The least guest rating (0–10) a hotel may have. */
  minRating: learnable(z.number().min(0).max(10).nullish(), {
    kind: "minimum",
    about: "the hotel's guest rating",
    subject: LODGING_SUBJECT,
    field: "rating",
    terms: [...QUALITY_WORDS, ...BASIC_WORDS, ...LUXURY_WORDS, ...SHOWY_WORDS, ...RATING_WORDS],
    described: CHEAP_WORDS,
    floor: 7,
    step: 1,
    max: 9,
  }),
});
export type HotelSearchArgs = z.infer<typeof HotelSearchArgs>;

/** Words that ask for culture: museums, galleries, history. */
const CULTURE_WORDS = [
  "museum",
  "museums",
  "gallery",
  "galleries",
  "art",
  "arts",
  "history",
  "historic",
  "historical",
  "culture",
  "cultural",
  "heritage",
  "architecture",
  "monuments",
  "painting",
  "paintings",
  "exhibition",
  "exhibitions",
  "church",
  "churches",
  "cathedral",
  "cathedrals",
  "castle",
  "castles",
  "old town",
  "landmarks",
  "museo",
  "museos",
  "arte",
  "historia",
  "cultura",
  "monumentos",
  "casco antiguo",
  "iglesias",
  "musee",
  "musees",
  "histoire",
  "eglises",
  "museen",
  "kunst",
  "geschichte",
  "kultur",
  "altstadt",
  "kirchen",
  "musei",
  "storia",
  "monumenti",
  "museus",
  "musea",
  "geschiedenis",
  "cultuur",
];
/** Words about evening and night outings: a complaint that names them wants the days without them. */
const NIGHT_WORDS = [
  "nightlife",
  "night",
  "late night",
  "evening",
  "evenings",
  "party",
  "partying",
  "bar",
  "bars",
  "club",
  "clubs",
  "clubbing",
  "noche",
  "fiesta",
  "bares",
  "nuit",
  "soiree",
  "nacht",
  "abend",
  "notte",
];
/** Words for outings in the open, and complaints of being kept indoors. */
const OUTDOOR_WORDS = [
  "outdoor",
  "outdoors",
  "nature",
  "park",
  "parks",
  "hike",
  "hiking",
  "countryside",
  "scenery",
  "outside",
  "indoor",
  "indoors",
  "fresh air",
  "open air",
  "green",
  "greenery",
  "garden",
  "gardens",
  "hills",
  "mountain",
  "mountains",
  "beach",
  "beaches",
  "lake",
  "lakes",
  "trail",
  "trails",
  "viewpoints",
  "cycling",
  "naturaleza",
  "aire libre",
  "senderismo",
  "montana",
  "playa",
  "parque",
  "plein air",
  "randonnee",
  "montagne",
  "plage",
  "parc",
  "campagne",
  "natur",
  "wandern",
  "draussen",
  "berge",
  "strand",
  "natura",
  "aria aperta",
  "montagna",
  "spiaggia",
  "parco",
  "natureza",
  "ar livre",
  "trilhas",
  "praia",
  "natuur",
  "wandelen",
  "buiten",
];
/** Words for eating and drinking out. */
const FOOD_WORDS = [
  "food",
  "foodie",
  "culinary",
  "cuisine",
  "tasting",
  "gastronomy",
  "restaurants",
  "eat",
  "eating",
  "taste",
  "tastes",
  "meal",
  "meals",
  "dinner",
  "lunch",
  "dishes",
  "market",
  "markets",
  "street food",
  "wine",
  "cooking",
  "comida",
  "comer",
  "gastronomia",
  "tapas",
  "mercado",
  "vino",
  "manger",
  "gastronomie",
  "gouter",
  "essen",
  "kulinarisch",
  "markt",
  "wein",
  "cibo",
  "mangiare",
  "cucina",
  "mercato",
  "culinaria",
  "eten",
];

export const ActivitySearchArgs = z.object({
  city: knownCity('no destination given: say where to go, e.g. "in Paris"'),
  days: z.number().int().min(1).max(60),
  travellers: z.number().int().min(1).max(20).default(1),
  /** Cap on the activities total for all travellers. */
  maxCost: cap,
  /**
   * What the days are built around: the provider's own order (`recommended`), the cheapest first (`price`), only
   * one kind of outing (`culture`, `outdoors`, `food`; free days where none is left), or no evening outings
   * (`daytime`).
   */
  focus: learnable(z.enum(["recommended", "price", "culture", "outdoors", "food", "daytime"]).default("recommended"), {
    kind: "choice",
    about: "what the activities are",
    subject: OUTING_SUBJECT,
    default: "recommended",
    // Culture before daytime: a reason that names both ("too much nightlife, I wanted museums") asks for culture.
    options: {
      price: {
        terms: [...PRICE_WORDS, ...CHEAP_WORDS],
        says: "cheapest first, free ones first",
        described: { terms: CHEAP_WORDS },
      },
      culture: { terms: CULTURE_WORDS, says: "museums, galleries and history only" },
      outdoors: { terms: OUTDOOR_WORDS, says: "outdoor outings only" },
      food: { terms: FOOD_WORDS, says: "food outings only" },
      daytime: { terms: NIGHT_WORDS, says: "no evening or night outings" },
    },
  }),
});
export type ActivitySearchArgs = z.infer<typeof ActivitySearchArgs>;

export const FindAttractionsArgs = z.object({
  city: knownCity('no destination given: say where to go, e.g. "in Paris"'),
});
export type FindAttractionsArgs = z.infer<typeof FindAttractionsArgs>;

/**
 * plan_days takes search_activities' arguments: it is the second half of the same job.
 * @alias (a second name on purpose: every tool's arguments have a schema named after the tool)
 */
export const PlanDaysArgs = ActivitySearchArgs;
export type PlanDaysArgs = z.infer<typeof PlanDaysArgs>;

export const CheckBudgetArgs = z.object({ budget: z.number().positive().nullable() });
export const BuildItineraryArgs = z.object({ days: z.number().int().min(1).max(60) });
export const BookTripArgs = z.object({});

function tripOf(facts: RequestFacts): TripFacts {
  return readTrip(facts.text, facts.analysis).facts;
}

/**
 * Asking for the cheapest: "cheap", "as cheap as possible", "low-cost", "on a budget", "a budget hotel", and the
 * Spanish, French, German and Italian words for it. Carried by the searches' `priority`/`focus` "price".
 */
const CHEAP =
  /(?<![\p{L}])(?:as cheap as (?:possible|we can|it gets)|cheap(?:est|er)?|inexpensive|low[- ]cost|budget[- ]friendly|affordable|on a (?:tight |small |shoestring )?budget|budget (?:hotels?|hostels?|flights?|airlines?|options?|trip)|barat[oa]s?|lo m[aá]s barato(?: posible)?|pas cher|bon march[eé]|le moins cher(?: possible)?|g[üu]nstig(?:e[nrs]?|st(?:e[nrs]?)?)?|preiswert(?:e[nrs]?)?|economic[oa]|economich[ei])(?![\p{L}])/iu;
/**
 * Asking for the best: "luxury", "upscale", "5-star", and the Spanish, French, German and Italian words for it.
 * Carried by the hotel search's `priority` "quality"; no flight or activity setting carries it.
 */
const LUXURY =
  /(?<![\p{L}])(?:luxury|luxurious|upscale|high[- ]end|(?:5|five)[- ]stars?|de lujo|lujos[oa]s?|luxe|luxueu(?:x|se)|luxus|luxuri[öo]s(?:e[nrs]?)?|di lusso|lussuos[oa])(?![\p{L}])/iu;

/** Tools whose `priority` orders by price, and those whose `focus` does. */
const PRICE_PRIORITY_TOOLS = ["search_flights", "search_flights_backup", "search_hotels"];
const PRICE_FOCUS_TOOLS = ["search_activities", "plan_days"];

/**
 * How the request wants the trip priced, with the words that say it: the cheapest, or the best hotel. Null when it
 * says neither, or says it inside a negation ("not the cheapest").
 */
export function pricePreference(facts: RequestFacts): { value: "price" | "quality"; source: Span } | null {
  const a = facts.analysis ?? analyzeRequest(facts.text);
  for (const [re, value] of [
    [CHEAP, "price"],
    [LUXURY, "quality"],
  ] as const) {
    const m = re.exec(facts.text);
    if (!m) continue;
    const source = { start: m.index, end: m.index + m[0].length, text: m[0] };
    if (a.negations.some((n) => overlaps(source, [n.scope]))) continue;
    return { value, source };
  }
  return null;
}

/** The values a price preference gives the searches that can carry it (see pricePreference). */
function preferenceValues(facts: RequestFacts): Interpretation["values"] {
  const pref = pricePreference(facts);
  if (!pref) return [];
  if (pref.value === "quality")
    return [{ name: "priority", value: "quality", source: pref.source, tools: ["search_hotels"] }];
  return [
    { name: "priority", value: "price", source: pref.source, tools: PRICE_PRIORITY_TOOLS },
    { name: "focus", value: "price", source: pref.source, tools: PRICE_FOCUS_TOOLS },
  ];
}

/**
 * What a request asks of a trip that no travel tool's parameter carries, each with why: house rules and room types,
 * children's ages, a cuisine, a way of travelling other than flying. Named, so a part that asks it is never taken as
 * served by a search that only shares its words ("accommodations suitable for children under 10" and a hotel search).
 */
const UNCARRIED: readonly { pattern: RegExp; why: string; needs?: RegExp }[] = [
  {
    pattern:
      /(?<![\p{L}])(?:pet[- ]friendly|(?:dog|cat)[- ]friendly|pets? (?:allowed|welcome|ok)|with (?:my|our|a|the) (?:dogs?|cats?|pets?))(?![\p{L}])/iu,
    why: "the hotel search takes no rule about pets, so it cannot choose a place that allows them",
  },
  {
    pattern:
      /(?<![\p{L}])(?:entire (?:room|home|house|apartment|flat|place)|whole (?:home|house|apartment|flat|place)|private room|shared room)(?![\p{L}])/iu,
    why: "the hotel search takes no room type: it finds hotel rooms only",
  },
  {
    pattern:
      /(?<![\p{L}])(?:(?:suitable|good|safe|ok) for (?:small )?(?:children|kids|infants|babies|toddlers)(?: (?:under|below|aged|of) \d+)?|(?:child|kid|family|baby)[- ]friendly|(?:children|kids) (?:under|below|aged|of) \d+)(?![\p{L}])/iu,
    why: "the searches take a number of travellers, not their ages: nothing chooses what suits children",
  },
  {
    pattern:
      /(?<![\p{L}])(?:non[- ]smoking|smoking (?:allowed|room)|no parties|parties allowed|visitors allowed)(?![\p{L}])/iu,
    why: "the hotel search takes no house rules",
  },
  {
    pattern:
      /(?<![\p{L}])(?:italian|chinese|mexican|japanese|indian|thai|french|spanish|greek|korean|vietnamese|american|mediterranean|vegan|vegetarian|halal|kosher|gluten[- ]free|seafood)(?![\p{L}])/iu,
    needs: /(?<![\p{L}])(?:food|cuisines?|restaurants?|dishes|dining|meals?|eat|eating)(?![\p{L}])/iu,
    why: "no tool chooses food or restaurants by cuisine: the activities search can only favour food outings",
  },
  {
    pattern:
      /(?<![\p{L}])(?:self[- ]driv(?:e|ing)|car rental|rent(?:ing)? a car|rental car|by car|road trip|by (?:train|bus|coach|ferry|boat)|(?:train|bus|ferry) (?:ride|trip|tickets?))(?![\p{L}])/iu,
    why: "no tool arranges ground or sea transport: the trip's legs are flights",
  },
];

/** The request's asks no travel tool carries (see UNCARRIED), as spans the record names with why. */
function uncarriedAsks(facts: RequestFacts): Interpretation["notUnderstood"] {
  const out: Interpretation["notUnderstood"] = [];
  for (const { pattern, why, needs } of UNCARRIED) {
    if (needs && !needs.test(facts.text)) continue;
    const global = new RegExp(pattern.source, `${pattern.flags}g`);
    for (const m of facts.text.matchAll(global))
      out.push({ span: { start: m.index, end: m.index + m[0].length, text: m[0] }, kind: "other", why });
  }
  return out;
}

/** A search's own parameter for the request's price preference, when the tool can carry it. */
function preferenceParam(facts: RequestFacts, tool: string): Record<string, unknown> {
  const carried = preferenceValues(facts).find((v) => v.tools.includes(tool));
  return carried ? { [carried.name]: carried.value } : {};
}

/** Words that ask for a flight, a stay, an itinerary or a booking by name: asking for any of them asks to travel. */
const FLIGHT_WORDS = ["flight", "flights", "fly", "flying", "vuelo", "volar", "vol", "vols", "avion"];
const HOTEL_WORDS = [
  "hotel",
  "hotels",
  "stay",
  "accommodation",
  "room",
  "nights",
  "place to stay",
  "alojamiento",
  "hospedaje",
  "hebergement",
  "logement",
];
const ITINERARY_WORDS = ["itinerary", "schedule", "day by day", "itinerario", "itineraire"];
const BOOKING_WORDS = ["book", "booking", "reserve", "reservation", "reserva", "reservar", "reserver"];
/** Words that ask for activities by name. */
const ACTIVITY_WORDS = [
  "activities",
  "activity",
  "things to do",
  "sightseeing",
  "tour",
  "museum",
  "actividades",
  "activites",
  "excursiones",
];
/** A journey named before what to do there asks for the journey ("plan a trip to Rome with museums"). */
const JOURNEY =
  /(?<![a-z])(?:trip|travel|travelling|traveling|vacation|holidays?|getaway|journey|visit|visiting|voyage|viaje|vacaciones|vacances|escapada|escapade|sejour)(?![a-z])/g;

/**
 * The travel toolkit's reading of a request for the understanding record (see Toolkit.interpret): what the request
 * says of the trip (parse-request.ts), and what it asks the trip to be. Asking what to do or see in a place asks for
 * activities, in words no keyword list holds ("what can we do in Lisbon"); and when that is all it asks — nothing
 * about getting there or staying (no origin, no flight, hotel, itinerary or booking, no journey named first) —
 * flights, a hotel and an itinerary are not asked for, and the plan says so.
 */
export function interpretTrip(facts: RequestFacts): Interpretation {
  const read = readTrip(facts.text, facts.analysis);
  const reading = {
    ...read,
    interpretation: {
      ...read.interpretation,
      values: [...read.interpretation.values, ...preferenceValues(facts)],
      notUnderstood: [...read.interpretation.notUnderstood, ...uncarriedAsks(facts)],
    },
  };
  const trip = reading.facts;
  const a = facts.analysis ?? analyzeRequest(facts.text);
  if (trip.destination === null || findCity(trip.destination) === undefined) return reading.interpretation;
  const phrases = findActivityAsks(facts.text, a);
  const named = keywordHits([{ name: "search_activities", keywords: ACTIVITY_WORDS }], a).filter((h) => !h.negated);
  const asked = [...phrases, ...named].sort((x, y) => x.start - y.start);
  if (asked.length === 0) return reading.interpretation;
  const asks = phrases.map((span) => ({ span, tools: ["search_activities"] }));
  const travelWords = keywordHits(
    [{ name: "travel", keywords: [...FLIGHT_WORDS, ...HOTEL_WORDS, ...ITINERARY_WORDS, ...BOOKING_WORDS] }],
    a,
  ).filter((h) => !h.negated && !overlaps(h, asked));
  const journeyFirst = [...a.norm.matchAll(JOURNEY)].some(
    (m) => m.index < asked[0]!.start && !overlaps({ start: m.index, end: m.index + m[0].length }, asked),
  );
  const travel =
    !trip.assumed.includes("origin") ||
    trip.stops.length > 1 ||
    GOING.test(a.norm) ||
    travelWords.length > 0 ||
    journeyFirst;
  if (travel) return { ...reading.interpretation, asks };
  return {
    ...reading.interpretation,
    asks,
    unasked: ["flight", "hotel", "itinerary"],
    assumptions: [
      ...reading.interpretation.assumptions,
      {
        name: "what is planned",
        value: "activities only",
        why: `the request asks what to do in ${trip.destination} and nothing about getting there or staying (no origin, flight, hotel or itinerary), so only activities are planned; say where from ("from Madrid") or ask for a trip to add flights, a hotel and an itinerary`,
        tools: ["search_activities", "plan_days"],
      },
    ],
  };
}

/**
 * A request that names a city the catalog serves as where to go, and where from or for how long, is a trip
 * whatever words it uses ("10 days in Rome from Madrid"): the trip's tools recognise it when no keyword matched.
 * A city alone is not enough ("What is the weather in Paris", "Email the Tokyo team").
 */
export function namesATrip(facts: RequestFacts): boolean {
  const trip = tripOf(facts);
  // "from Lisbon to Atlantis": a known origin makes it a trip, so the unknown place is named, not the whole request.
  const fromKnown = !trip.assumed.includes("origin") && findCity(trip.origin) !== undefined;
  // "10 days across Bavaria from Berlin": a region where a city was expected still makes it a trip, named to a person.
  const somewhere = trip.destination !== null || trip.areas.length > 0;
  const known = somewhere && (fromKnown || (trip.destination !== null && findCity(trip.destination) !== undefined));
  return (
    known &&
    (!trip.assumed.includes("origin") || !trip.assumed.includes("days") || GOING.test(facts.text.toLowerCase()))
  );
}

/** Asking to be taken somewhere ("take me to Rome", "llévame a Roma", "emmène-moi à Rome") names a trip too. */
const GOING =
  /(?<![a-z])(?:(?:go|get|take (?:me|us)|bring (?:me|us)|fly (?:me|us)?)\s+to|(?:ir|viajar|ll[eé]vame|ll[eé]vanos|volar)\s+a|(?:aller|partir|voyager|emm[eè]ne-(?:moi|nous))\s+[àa])(?![a-z])/;

/** What a trip's parameters take for granted that the request did not say (shown with the plan). */
export function tripAssumptions(facts: RequestFacts): string[] {
  return assumptionsAbout("origin", "days", "travellers", "budget")(facts);
}

type Topic = "origin" | "days" | "travellers" | "budget";

/** The defaults and conversions a tool's own parameters rest on (a flight search assumes no length of stay). */
function assumptionsAbout(...topics: Topic[]): (facts: RequestFacts) => string[] {
  return (facts) =>
    tripDefaults(facts)
      .filter((a) => topics.includes(a.topic))
      .map((a) => a.text);
}

function tripDefaults(facts: RequestFacts): { topic: Topic; text: string }[] {
  const trip = tripOf(facts);
  const out: { topic: Topic; text: string }[] = [];
  const push = (topic: Topic, text: string) => out.push({ topic, text });
  if (trip.assumed.includes("origin"))
    push("origin", `leaving from ${trip.origin}: the request names no origin (say "from <city>")`);
  if (trip.assumed.includes("days")) push("days", `${trip.days} days: the request gives no length (say "for 5 days")`);
  if (trip.assumed.includes("travellers"))
    push("travellers", `${trip.travellers} traveller: the request does not say how many (say "for 2 people")`);
  if (trip.budget !== null && facts.constraints.budget === undefined) {
    const change = readTrip(facts.text, facts.analysis).interpretation.changes.find((c) => c.name === "budget");
    if (change) push("budget", change.why);
    else if (trip.assumed.includes("currency"))
      push(
        "budget",
        `the budget of ${trip.budgetAmount ?? trip.budget} is taken as ${money(trip.budget)}: it names no currency and the travel prices are in US dollars`,
      );
  }
  return out;
}

function money(n: number): string {
  return `$${Math.round(n).toLocaleString("en-US")}`;
}

function invalid(message: string, param: string, value: unknown): CandorError {
  return new CandorError(message, ErrorCode.TOOL_FAILED, {
    details: { failureClass: "invalid_parameters", param, value },
  });
}

/**
 * Every result of an input: none when the plan does not have it, one, or several when several steps produced it
 * (a flight per leg of a multi-city trip), each checked.
 */
function listInput<T>(tool: string, ctx: ToolContext, key: string, schema: z.ZodType<T>): T[] {
  const value = ctx.inputs[key];
  if (value === undefined) return [];
  const values: unknown[] = Array.isArray(value) ? value : [value];
  return values.map((v) => input(tool, { ...ctx, inputs: { [key]: v } }, key, schema));
}

/** An input the plan may not have (the request ruled it out): undefined when absent, checked when present. */
function optionalInput<T>(tool: string, ctx: ToolContext, key: string, schema: z.ZodType<T>): T | undefined {
  return ctx.inputs[key] === undefined ? undefined : input(tool, ctx, key, schema);
}

/** Reads a dependency's output through its schema, so a malformed upstream result fails here, by name. */
function input<T>(tool: string, ctx: ToolContext, key: string, schema: z.ZodType<T>): T {
  const value = ctx.inputs[key];
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const got =
    value === undefined
      ? "nothing"
      : typeof value === "string"
        ? `the string "${value.slice(0, 40)}"`
        : (JSON.stringify(value)?.slice(0, 80) ?? typeof value);
  throw new CandorError(
    `${tool} cannot use the ${key} result: expected the ${key} search's structured output, got ${got}.`,
    ErrorCode.TOOL_FAILED,
    {
      details: { input: key, issues: parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`) },
    },
  );
}

/**
 * The parts a result is made without because the step providing them was skipped (the scheduler's reason in
 * `ctx.missing`), each with why. A part the request ruled out ("no hotel") is simply absent, not missing.
 */
function withoutParts(ctx: ToolContext, present: Record<string, number>): Without {
  return Object.fromEntries(
    Object.entries(present)
      .filter(([part, n]) => n === 0 && ctx.missing?.[part] !== undefined)
      .map(([part]) => [part, ctx.missing![part]!]),
  );
}

/** "activities (skipped by a person after it failed: …)", for each part left out. */
function describeWithout(without: Without): string {
  return Object.entries(without)
    .map(([part, why]) => `${part} (${why})`)
    .join("; ");
}

function flightSearch(name: string, provider: Provider, latency: (ms: number) => number): ToolSpec {
  const durationMs = provider === "primary" ? 150 : 200;
  return defineTool({
    name,
    description:
      provider === "primary"
        ? "Search return flights between two cities and pick the recommended option (nonstop, good times); with maxCost, the best option whose total for all travellers fits under it."
        : "Backup flight provider: same search as search_flights on a second provider with slightly different prices. Use when the primary flight search fails.",
    category: "flights",
    keywords:
      provider === "primary"
        ? [
            ...FLIGHT_WORDS,
            "trip",
            "travel",
            "plan",
            "vacation",
            "holiday",
            "getaway",
            "visit",
            "weekend",
            "week",
            "viaje",
            "voyage",
            "vacaciones",
            "vacances",
          ]
        : ["backup", "alternative provider"],
    ...(provider === "primary" ? { appliesTo: namesATrip } : {}),
    consumes: [],
    produces: ["flight"],
    sideEffect: "none",
    needsApproval: false,
    schema: FlightSearchArgs,
    outputSchema: FlightResult,
    estimates: { durationMs, cost: provider === "primary" ? 0.01 : 0.012 },
    costCapParam: "maxCost",
    describeStep: (p) =>
      `${provider === "primary" ? "Find flights" : "Find flights (backup provider)"} ${paramText(p.origin, "?")} → ${paramText(p.destination, "?")} for ${paramText(p.travellers, "1")}`,
    assumptions: assumptionsAbout("origin", "travellers"),
    extractParams: (facts) => {
      const trip = tripOf(facts);
      return {
        origin: trip.origin,
        ...(trip.destination === null ? {} : { destination: trip.destination }),
        travellers: trip.travellers,
        ...preferenceParam(facts, name),
      };
    },
    run: async (args, ctx): Promise<FlightResult> => {
      await sleep(latency(durationMs), ctx.signal);
      const from = requireCity(args.origin, "origin", "no flights from");
      const to = requireCity(args.destination, "destination", "no flights to");
      if (from.name === to.name) {
        throw invalid(
          `Invalid destination: origin and destination are both ${to.name}; say where you leave from, e.g. "from London to ${to.name}".`,
          "destination",
          args.destination,
        );
      }
      const avoided = new Set(args.avoidAirlines.map((a) => a.toLowerCase()));
      const found = flightsFor(from, to, provider).filter(
        (f) => (!args.nonstop || f.stops === 0) && !avoided.has(f.airline.toLowerCase()),
      );
      const options =
        args.priority === "price" ? [...found].sort((a, b) => a.pricePerTraveller - b.pricePerTraveller) : found;
      const wanted = [
        ...(args.nonstop ? ["nonstop"] : []),
        ...(args.avoidAirlines.length > 0 ? [`not on ${args.avoidAirlines.join(", ")}`] : []),
      ].join(", ");
      if (options.length === 0)
        throw new CandorError(
          `No flight from ${from.name} to ${to.name} is ${wanted}.`,
          ErrorCode.RESOURCE_UNAVAILABLE,
          { details: { nonstop: args.nonstop, avoidAirlines: args.avoidAirlines } },
        );
      const total = (f: (typeof options)[number]): number => f.pricePerTraveller * args.travellers;
      const cheapest = Math.min(...options.map(total));
      const chosen = args.maxCost == null ? options[0] : options.find((f) => total(f) <= (args.maxCost ?? 0));
      if (!chosen) {
        throw new CandorError(
          `No flight from ${from.name} to ${to.name}${wanted ? ` (${wanted})` : ""} under ${money(args.maxCost ?? 0)} for ${args.travellers} traveller(s); the cheapest costs ${money(cheapest)}.`,
          ErrorCode.RESOURCE_UNAVAILABLE,
          { details: { maxCost: args.maxCost, cheapest } },
        );
      }
      const stops =
        chosen.stops === 0 ? "nonstop" : `${chosen.stops} stop${chosen.stops > 1 ? "s" : ""} via ${chosen.via}`;
      const cost = total(chosen);
      return {
        ...chosen,
        travellers: args.travellers,
        cost,
        cheapestCost: cheapest,
        summary: `${chosen.airline} ${chosen.flightNumber} ${from.name} ⇄ ${to.name}, ${stops}, departs ${chosen.departure}: ${money(chosen.pricePerTraveller)} × ${args.travellers} = ${money(cost)}`,
      };
    },
  });
}

function hotelSearch(latency: (ms: number) => number): ToolSpec {
  const durationMs = 150;
  return defineTool({
    name: "search_hotels",
    description:
      "Search hotels in a city for the trip's nights. radiusKm 0 looks in the centre and returns the preferred central hotel; a positive radius looks in the neighbourhoods around the centre out to that distance. With maxCost, the best hotel whose total fits under it.",
    category: "hotels",
    keywords: [
      ...HOTEL_WORDS,
      "trip",
      "travel",
      "plan",
      "vacation",
      "holiday",
      "weekend",
      "getaway",
      "week",
      "viaje",
      "voyage",
      "vacaciones",
      "vacances",
    ],
    appliesTo: namesATrip,
    consumes: [],
    produces: ["hotel"],
    sideEffect: "none",
    needsApproval: false,
    schema: HotelSearchArgs,
    outputSchema: HotelResult,
    estimates: { durationMs, cost: 0.01 },
    costCapParam: "maxCost",
    describeStep: (p) =>
      `Find a hotel in ${paramText(p.city, "?")} for ${paramText(p.nights, "?")} night(s)${typeof p.radiusKm === "number" && p.radiusKm > 0 ? ` within ${p.radiusKm} km` : ""}`,
    assumptions: assumptionsAbout("days", "travellers"),
    extractParams: (facts) => {
      const trip = tripOf(facts);
      return {
        ...(trip.destination === null ? {} : { city: trip.destination }),
        nights: nightsFor(trip.days),
        travellers: trip.travellers,
        radiusKm: 0,
        ...preferenceParam(facts, "search_hotels"),
      };
    },
    widen: (params) => {
      const radius = typeof params.radiusKm === "number" ? params.radiusKm : 0;
      if (radius >= WIDE_RADIUS_KM) return null;
      return {
        params: { ...params, radiusKm: WIDE_RADIUS_KM },
        description: `nearby hotels within ${WIDE_RADIUS_KM} km of the centre`,
      };
    },
    run: async (args, ctx): Promise<HotelResult> => {
      await sleep(latency(durationMs), ctx.signal);
      const city = requireCity(args.city, "city", "no hotels in");
      const rooms = roomsFor(args.travellers);
      // Price first trades the centre for the fare: the search reaches the neighbourhoods too, where cheap stays are.
      const cheapFirst = args.priority === "price";
      const reach = cheapFirst ? Math.max(args.radiusKm, WIDE_RADIUS_KM) : args.radiusKm;
      // A widened search exists to get around the centre (booked out or too dear), so it looks beyond it.
      const central = reach <= CENTRAL_KM;
      const area = central ? "the centre" : `within ${reach} km of the centre`;
      const where = central ? `in the centre of ${city.name}` : `within ${reach} km of the centre of ${city.name}`;
      const rated = (h: { rating: number }): boolean => args.minRating == null || h.rating >= args.minRating;
      const total = (h: { pricePerNight: number }): number => h.pricePerNight * args.nights * rooms;
      const inArea = rankHotels(
        hotelsIn(city).filter(
          (h) =>
            rated(h) &&
            (central ? h.distanceKm <= CENTRAL_KM : (cheapFirst || h.distanceKm > CENTRAL_KM) && h.distanceKm <= reach),
        ),
        args.priority,
        total,
      );
      const chosen = args.maxCost == null ? inArea[0] : inArea.find((h) => total(h) <= (args.maxCost ?? 0));
      if (!chosen) {
        const cheapest = inArea.length > 0 ? Math.min(...inArea.map(total)) : null;
        const ratedText = args.minRating == null ? "" : ` rated ${args.minRating} or more`;
        throw new CandorError(
          `No hotel${ratedText} ${where}${args.maxCost == null ? "" : ` under ${money(args.maxCost)}`} for ${args.nights} night(s), ${rooms} room(s)${cheapest === null ? "" : `; the cheapest there costs ${money(cheapest)}`}.`,
          ErrorCode.RESOURCE_UNAVAILABLE,
          {
            details: {
              maxCost: args.maxCost ?? null,
              cheapest,
              radiusKm: args.radiusKm,
              minRating: args.minRating ?? null,
            },
          },
        );
      }
      const cost = total(chosen);
      return {
        ...chosen,
        nights: args.nights,
        rooms,
        searchArea: area,
        cost,
        cheapestCost: Math.min(
          ...hotelsIn(city)
            .filter((h) => rated(h) && h.distanceKm <= Math.max(args.radiusKm, WIDE_RADIUS_KM))
            .map(total),
        ),
        summary: `${chosen.name} (${chosen.stars}★, guests rate it ${chosen.rating}/10, ${chosen.distanceKm} km from the centre): ${money(chosen.pricePerNight)} × ${args.nights} night(s) × ${rooms} room(s) = ${money(cost)}`,
      };
    },
  });
}

/** Hotels in the order a search with this priority takes them (`recommended`: the provider's own order). */
function rankHotels<H extends { stars: number; rating: number }>(
  hotels: H[],
  priority: HotelSearchArgs["priority"],
  total: (h: H) => number,
): H[] {
  const by: Record<HotelSearchArgs["priority"], ((a: H, b: H) => number) | null> = {
    recommended: null,
    price: (a, b) => total(a) - total(b),
    quality: (a, b) => b.stars - a.stars || b.rating - a.rating,
    rating: (a, b) => b.rating - a.rating || b.stars - a.stars,
  };
  const compare = by[priority];
  return compare ? [...hotels].sort(compare) : hotels;
}

/** One activity per day from `options` (best first) within the cap, free days where nothing fits or is left. */
function planActivities(
  cityName: string,
  options: readonly { name: string; pricePerPerson: number; kind?: string | undefined }[],
  args: PlanDaysArgs,
): ActivitiesResult {
  const limit = args.maxCost ?? Number.POSITIVE_INFINITY;
  const picked: { name: string; pricePerPerson: number; kind?: string | undefined }[] = [];
  let spent = 0;
  for (const a of focused(options, args.focus)) {
    if (picked.length === args.days) break;
    const price = a.pricePerPerson * args.travellers;
    if (spent + price > limit) continue;
    picked.push({ name: a.name, pricePerPerson: a.pricePerPerson, ...(a.kind ? { kind: a.kind } : {}) });
    spent += price;
  }
  const activities = Array.from({ length: args.days }, (_, i) => {
    const p = picked[i];
    return p ? { day: i + 1, ...p } : { day: i + 1, name: `Free day to explore ${cityName}`, pricePerPerson: 0 };
  });
  return {
    city: cityName,
    travellers: args.travellers,
    activities,
    cost: spent,
    cheapestCost: 0,
    // The summary names each day's activity: it is what an answer written from summaries alone shows.
    summary: `${args.days} day(s) of activities in ${cityName} for ${args.travellers} traveller(s): ${money(spent)} (${activities.map((a) => `day ${a.day}: ${a.name}`).join("; ")})`,
  };
}

/** The options a focus keeps, in the order it takes them (`recommended`: the provider's own order). */
function focused<A extends { pricePerPerson: number; kind?: string | undefined }>(
  options: readonly A[],
  focus: PlanDaysArgs["focus"],
): A[] {
  switch (focus) {
    case "recommended":
      return [...options];
    case "price":
      return [...options].sort((a, b) => a.pricePerPerson - b.pricePerPerson);
    case "daytime":
      return options.filter((a) => a.kind !== "nightlife");
    default:
      return options.filter((a) => a.kind === focus);
  }
}

function activityParams(facts: RequestFacts): Record<string, unknown> {
  const trip = tripOf(facts);
  return {
    ...(trip.destination === null ? {} : { city: trip.destination }),
    days: trip.days,
    travellers: trip.travellers,
    ...preferenceParam(facts, "search_activities"),
  };
}

function activitySearch(latency: (ms: number) => number): ToolSpec {
  const durationMs = 100;
  return defineTool({
    name: "search_activities",
    description: `Pick one activity per day in a city, best first; with maxCost, the best set whose total for all travellers fits under it (free options always fit). Plans at most ${MAX_ACTIVITY_DAYS_PER_CALL} days in one call.`,
    category: "activities",
    keywords: [
      ...ACTIVITY_WORDS,
      "trip",
      "plan",
      "vacation",
      "holiday",
      "visit",
      "weekend",
      "getaway",
      "week",
      "viaje",
      "voyage",
      "vacaciones",
      "vacances",
    ],
    appliesTo: namesATrip,
    consumes: [],
    produces: ["activities"],
    sideEffect: "none",
    needsApproval: false,
    schema: ActivitySearchArgs,
    outputSchema: ActivitiesResult,
    estimates: { durationMs, cost: 0.005 },
    costCapParam: "maxCost",
    describeStep: (p) => `Pick activities in ${paramText(p.city, "?")} for ${paramText(p.days, "?")} day(s)`,
    assumptions: assumptionsAbout("days", "travellers"),
    extractParams: activityParams,
    run: async (args, ctx): Promise<ActivitiesResult> => {
      await sleep(latency(durationMs), ctx.signal);
      const city = requireCity(args.city, "city", "no activities in");
      if (args.days > MAX_ACTIVITY_DAYS_PER_CALL) {
        throw new CandorError(
          `search_activities cannot plan ${args.days} days in ${city.name} in one call: it plans at most ${MAX_ACTIVITY_DAYS_PER_CALL} days per request, so a ${args.days}-day trip is too complex for one step. Split it: find the city's attractions first, then spread them over the days.`,
          ErrorCode.TOOL_FAILED,
          { details: { failureClass: "too_complex", days: args.days, maxDaysPerCall: MAX_ACTIVITY_DAYS_PER_CALL } },
        );
      }
      return planActivities(city.name, activitiesIn(city), args);
    },
  });
}

// The two halves of search_activities, for DECOMPOSE. No keywords: the rules planner never plans them for a
// request, it plans search_activities; they are reached through activities_agent's grant when that step is too
// big for one call, and registered after it so it stays the first producer of "activities".

function findAttractions(latency: (ms: number) => number): ToolSpec {
  const durationMs = 60;
  return defineTool({
    name: "find_attractions",
    description:
      "List a city's attractions with their price per person, best first, for plan_days to spread over the days of a trip of any length.",
    category: "activities",
    keywords: [],
    consumes: [],
    produces: ["attractions"],
    sideEffect: "none",
    needsApproval: false,
    schema: FindAttractionsArgs,
    outputSchema: AttractionsResult,
    estimates: { durationMs, cost: 0.002 },
    describeStep: (p) => `List attractions in ${paramText(p.city, "?")}`,
    extractParams: (facts) => {
      const trip = tripOf(facts);
      return trip.destination === null ? {} : { city: trip.destination };
    },
    run: async (args, ctx): Promise<AttractionsResult> => {
      await sleep(latency(durationMs), ctx.signal);
      const city = requireCity(args.city, "city", "no attractions in");
      const attractions = activitiesIn(city).map(({ id, name, pricePerPerson, kind }) => ({
        id,
        name,
        pricePerPerson,
        kind,
      }));
      const free = attractions.filter((a) => a.pricePerPerson === 0).length;
      return {
        city: city.name,
        attractions,
        summary: `${attractions.length} attractions in ${city.name} (${free} free)`,
      };
    },
  });
}

function planDays(latency: (ms: number) => number): ToolSpec {
  const durationMs = 50;
  return defineTool({
    name: "plan_days",
    description:
      "Spread a city's attractions (from find_attractions) over the days of a trip, one a day, best first; with maxCost, the best set whose total for all travellers fits under it (free days always fit).",
    category: "activities",
    keywords: [],
    consumes: ["attractions"],
    produces: ["activities"],
    sideEffect: "none",
    needsApproval: false,
    schema: PlanDaysArgs,
    outputSchema: ActivitiesResult,
    estimates: { durationMs, cost: 0.003 },
    costCapParam: "maxCost",
    describeStep: (p) => `Plan ${paramText(p.days, "?")} day(s) of activities in ${paramText(p.city, "?")}`,
    extractParams: activityParams,
    run: async (args, ctx): Promise<ActivitiesResult> => {
      await sleep(latency(durationMs), ctx.signal);
      const city = requireCity(args.city, "city", "no activities in");
      const found = input("plan_days", ctx, "attractions", AttractionsResult);
      if (found.city !== city.name) {
        throw invalid(
          `Invalid city: plan_days was asked to plan ${city.name} but the attractions it received are in ${found.city}.`,
          "city",
          args.city,
        );
      }
      return planActivities(city.name, found.attractions, args);
    },
  });
}

function checkBudget(latency: (ms: number) => number): ToolSpec {
  const durationMs = 20;
  return defineTool({
    name: "check_budget",
    description:
      "Add up the flight, hotel and activities totals and compare them with the budget; fails with a CONSTRAINT_VIOLATION (with the breakdown, and each part's cheapest option as floors) when the trip costs more.",
    category: "budget",
    keywords: [
      "budget",
      "under",
      "cost",
      "afford",
      "price",
      "total",
      "max",
      "maximum",
      "dollars",
      "usd",
      "euros",
      "eur",
      "spend",
      "presupuesto",
      "menos de",
      "moins de",
    ],
    constraintCheck: true,
    consumes: [],
    // A trip without a hotel (the travellers have a place) or without flights is still checked.
    optionalConsumes: ["flight", "hotel", "activities"],
    produces: ["budget_status"],
    sideEffect: "none",
    needsApproval: false,
    schema: CheckBudgetArgs,
    outputSchema: BudgetStatus,
    estimates: { durationMs, cost: 0.001 },
    describeStep: (p) =>
      typeof p.budget === "number" ? `Check the total against the $${p.budget} budget` : "Add up the trip's total",
    assumptions: assumptionsAbout("budget"),
    extractParams: (facts) => ({ budget: facts.constraints.budget ?? tripOf(facts).budget }),
    run: async (args, ctx): Promise<BudgetStatus> => {
      await sleep(latency(durationMs), ctx.signal);
      // A part the plan does not have (no hotel: the travellers have a place) costs nothing and has a floor of 0.
      // Several results of one part (a flight per leg) add up: their costs and their floors.
      const sum = (list: { cost: number; cheapestCost?: number | undefined }[]) => ({
        cost: list.reduce((n, x) => n + x.cost, 0),
        ...(list.every((x) => x.cheapestCost !== undefined)
          ? { cheapestCost: list.reduce((n, x) => n + (x.cheapestCost ?? 0), 0) }
          : {}),
      });
      const given = {
        flight: listInput("check_budget", ctx, "flight", Priced),
        hotel: listInput("check_budget", ctx, "hotel", Priced),
        activities: listInput("check_budget", ctx, "activities", Priced),
      };
      if (given.flight.length + given.hotel.length + given.activities.length === 0) {
        throw invalid(
          "Invalid input: check_budget received no flight, hotel or activities to add up.",
          "inputs",
          Object.keys(ctx.inputs),
        );
      }
      const priced = { flight: sum(given.flight), hotel: sum(given.hotel), activities: sum(given.activities) };
      const breakdown: Breakdown = {
        flight: priced.flight.cost,
        hotel: priced.hotel.cost,
        activities: priced.activities.cost,
      };
      const without = withoutParts(ctx, {
        flight: given.flight.length,
        hotel: given.hotel.length,
        activities: given.activities.length,
      });
      const missing = Object.keys(without).length > 0;
      const floors: Floors = {};
      for (const part of ["flight", "hotel", "activities"] as const) {
        const cheapest = priced[part]?.cheapestCost;
        if (cheapest !== undefined) floors[part] = cheapest;
      }
      const total = breakdown.flight + breakdown.hotel + breakdown.activities;
      // A part skipped is "not included" (and named in `without`); one the plan does not have is "none".
      const parts = (["flight", "hotel", "activities"] as const)
        .map((p) => `${p} ${given[p].length > 0 ? money(breakdown[p]) : p in without ? "not included" : "none"}`)
        .join(", ");
      const excluding = missing ? ` without ${describeWithout(without)}` : "";
      if (args.budget !== null && total > args.budget) {
        const overage = total - args.budget;
        const known = Object.values(floors);
        // Only when every part counted said what it could cost at least: a partial sum would understate the floor.
        const least = known.length === Object.keys(priced).length ? known.reduce((a, b) => a + b, 0) : null;
        const floorNote = least === null ? "" : `; the cheapest options come to ${money(least)}`;
        throw new CandorError(
          `Total cost ${money(total)}${excluding} exceeds budget ${money(args.budget)} (${parts})${floorNote}`,
          ErrorCode.CONSTRAINT_VIOLATION,
          {
            details: {
              budgetStatus: "EXCEEDED",
              total,
              budget: args.budget,
              overage,
              breakdown,
              floors,
              ...(missing ? { without } : {}),
            },
          },
        );
      }
      return {
        withinBudget: true,
        total,
        budget: args.budget,
        breakdown,
        ...(missing ? { without } : {}),
        summary:
          args.budget === null
            ? `Total ${money(total)}${excluding} (${parts}); no budget was set`
            : `Total ${money(total)}${excluding} is within the ${money(args.budget)} budget (${money(args.budget - total)} to spare; ${parts})`,
      };
    },
  });
}

function buildItinerary(latency: (ms: number) => number): ToolSpec {
  const durationMs = 50;
  return defineTool({
    name: "build_itinerary",
    description:
      "Write a day-by-day itinerary from the chosen flight, hotel and activities, with totals against the budget.",
    category: "itinerary",
    keywords: [
      ...ITINERARY_WORDS,
      "plan",
      "trip",
      "vacation",
      "holiday",
      "weekend",
      "getaway",
      "week",
      "viaje",
      "voyage",
      "vacaciones",
      "vacances",
    ],
    appliesTo: namesATrip,
    consumes: ["budget_status"],
    optionalConsumes: ["flight", "hotel", "activities"],
    produces: ["itinerary"],
    sideEffect: "none",
    needsApproval: false,
    schema: BuildItineraryArgs,
    outputSchema: ItineraryResult,
    estimates: { durationMs, cost: 0.002 },
    describeStep: (p) => `Build a ${paramText(p.days, "")}-day itinerary`.replace(" -day", ""),
    assumptions: assumptionsAbout("days"),
    extractParams: (facts) => ({ days: tripOf(facts).days }),
    run: async (args, ctx): Promise<ItineraryResult> => {
      await sleep(latency(durationMs), ctx.signal);
      // Each part may be absent when the request ruled it out ("no hotel", "without flights"), or come several
      // times on a multi-city trip (a flight per leg, a hotel and activities per city).
      const flights = listInput("build_itinerary", ctx, "flight", FlightResult);
      const hotels = listInput("build_itinerary", ctx, "hotel", HotelResult);
      const acts = listInput("build_itinerary", ctx, "activities", ActivitiesResult);
      const status = optionalInput("build_itinerary", ctx, "budget_status", BudgetStatus);
      if (flights.length + hotels.length + acts.length === 0)
        throw invalid(
          "Invalid input: build_itinerary received no flight, hotel or activities to arrange.",
          "inputs",
          Object.keys(ctx.inputs),
        );
      const home = flights[0]?.origin ?? null;
      // The cities in order, with their days: from the activities (one result per city), else one city for the trip.
      const segments =
        acts.length > 1
          ? acts.map((a) => ({ city: a.city, days: a.activities.length, acts: a }))
          : [
              {
                city: acts[0]?.city ?? flights[0]?.destination ?? hotels[0]?.city ?? "?",
                days: args.days,
                acts: acts[0],
              },
            ];
      const flightTo = (city: string, i: number) =>
        i === 0 ? flights[0] : flights.find((f) => f.destination === city && f !== flights[0]);
      const days: string[] = [];
      for (const [i, seg] of segments.entries()) {
        const hotel = hotels.find((h) => h.city === seg.city);
        for (let j = 0; j < seg.days && days.length < args.days; j++) {
          const parts: string[] = [];
          if (j === 0) {
            const arrive = flightTo(seg.city, i);
            if (arrive)
              parts.push(
                `Fly ${arrive.origin} → ${arrive.destination} with ${arrive.airline} ${arrive.flightNumber} (${arrive.stops === 0 ? "nonstop" : `${arrive.stops} stop(s) via ${arrive.via}`}, departs ${arrive.departure}, ${arrive.durationHours} h).`,
              );
            else if (i === 0) parts.push(`Arrive in ${seg.city} (no flight searched).`);
            if (hotel)
              parts.push(`Check in at ${hotel.name} (${hotel.stars}★, ${hotel.distanceKm} km from the centre).`);
          }
          const activity = seg.acts?.activities.find((a) => a.day === j + 1);
          if (activity)
            parts.push(
              `${activity.name}${activity.pricePerPerson > 0 ? ` (${money(activity.pricePerPerson)} pp)` : ""}.`,
            );
          if (days.length === args.days - 1) {
            const out = hotels.length > 0 && args.days > 1 ? "Check out" : "";
            const fly =
              home === null ? "" : args.days > 1 ? `fly home to ${home}` : `Fly home to ${home} in the evening`;
            const line = [out, fly].filter(Boolean).join(" and ");
            if (line) parts.push(`${line.charAt(0).toUpperCase()}${line.slice(1)}.`);
          }
          days.push(`Day ${days.length + 1}: ${parts.join(" ")}`);
        }
      }
      const added = (list: { cost: number }[]) => list.reduce((n, x) => n + x.cost, 0);
      const breakdown: Breakdown = status?.breakdown ?? {
        flight: added(flights),
        hotel: added(hotels),
        activities: added(acts),
      };
      const total = status?.total ?? breakdown.flight + breakdown.hotel + breakdown.activities;
      const budget = status?.budget ?? null;
      const nights = hotels.reduce((n, h) => n + h.nights, 0);
      const rooms = Math.max(0, ...hotels.map((h) => h.rooms));
      // What the budget check left out is left out of these totals too (they are its figures).
      const without: Without = {
        ...status?.without,
        ...withoutParts(ctx, { flight: flights.length, hotel: hotels.length, activities: acts.length }),
      };
      const missing = Object.keys(without).length > 0;
      // A part left out (skipped) is "not included"; one the request ruled out is "none".
      const absent = (part: string) => (part in without ? "not included" : "none");
      const totals =
        `Totals: flight ${flights.length > 0 ? money(breakdown.flight) : absent("flight")} · hotel ${hotels.length > 0 ? `${money(breakdown.hotel)} (${nights} night(s), ${rooms} room(s))` : absent("hotel")} · ` +
        `activities ${acts.length > 0 ? money(breakdown.activities) : absent("activities")} · total ${money(total)}` +
        (budget === null ? " (no budget set)" : ` of a ${money(budget)} budget`);
      const route =
        home === null
          ? segments.map((x) => x.city).join(" → ")
          : segments.length > 1
            ? [home, ...segments.map((x) => x.city), home].join(" → ")
            : `${home} → ${segments[0]!.city}`;
      const travellers = flights[0]?.travellers ?? acts[0]?.travellers ?? null;
      const header = `${route} · ${args.days} day(s)${travellers === null ? "" : ` · ${travellers} traveller(s)`}`;
      const NONE = {
        flight: "No flights were planned",
        hotel: "No hotel was planned",
        activities: "No activities were planned",
      } as const;
      const note = (["flight", "hotel", "activities"] as const)
        .filter((p) => p in without)
        .map((p) => `${NONE[p]}: ${p} ${without[p]}.`);
      return {
        itinerary: [header, ...days, ...note, totals].join("\n"),
        days,
        total,
        budget,
        breakdown,
        ...(missing ? { without } : {}),
        summary: `${args.days}-day itinerary ${route}, total ${money(total)}${missing ? ` without ${describeWithout(without)}` : ""}`,
      };
    },
  });
}

function bookTrip(latency: (ms: number) => number): ToolSpec {
  const durationMs = 300;
  return defineTool({
    name: "book_trip",
    description:
      "Book the itinerary's flight and hotel (simulated, but treated as irreversible: it needs a human's approval).",
    category: "booking",
    keywords: BOOKING_WORDS,
    consumes: [],
    // Books what the plan found: the itinerary of a whole trip, or just the flight or hotel asked for; after the
    // budget check when there is one.
    optionalConsumes: ["itinerary", "flight", "hotel", "budget_status"],
    prefersCombinedInput: true,
    produces: ["booking"],
    sideEffect: "irreversible",
    effectWords: [
      "booked",
      "reserved",
      "booking confirmed",
      "reservation confirmed",
      "booking reference",
      "confirmation number",
      "confirmation code",
      "reservado",
      "reservada",
      "réservé",
      "réservée",
    ],
    needsApproval: true,
    schema: BookTripArgs,
    outputSchema: BookingResult,
    estimates: { durationMs, cost: 0.02 },
    describeStep: () => "Book the trip",
    extractParams: () => ({}),
    run: async (_args, ctx): Promise<BookingResult> => {
      await sleep(latency(durationMs), ctx.signal);
      // The itinerary of a whole trip, else what the plan found: a flight, a hotel or both.
      const itinerary = optionalInput("book_trip", ctx, "itinerary", ItineraryResult);
      const parts = itinerary
        ? []
        : [
            ...listInput("book_trip", ctx, "flight", FlightResult),
            ...listInput("book_trip", ctx, "hotel", HotelResult),
          ];
      const what = itinerary ? itinerary.summary : parts.map((p) => p.summary).join("; ");
      if (!what)
        throw invalid(
          "Invalid input: book_trip received no itinerary, flight or hotel to book.",
          "inputs",
          Object.keys(ctx.inputs),
        );
      const charged = itinerary ? itinerary.total : parts.reduce((n, p) => n + p.cost, 0);
      const bookingRef = `CND-${stableHash(what).toString(36).toUpperCase().padStart(7, "0")}`;
      return {
        bookingRef,
        status: "confirmed",
        charged,
        summary: `Booked (simulated): ${what}, reference ${bookingRef}, ${money(charged)} charged`,
      };
    },
  });
}

export const TRAVEL_WORKERS: readonly WorkerType[] = [
  {
    name: "flight_agent",
    description: "Searches flights on the primary provider.",
    categories: [],
    tools: ["search_flights"],
    keywords: ["flight", "fly", "airline"],
  },
  {
    name: "backup_flight_agent",
    description: "Searches flights on the backup provider, for when the primary flight search fails.",
    categories: [],
    tools: ["search_flights_backup"],
    keywords: ["flight", "fly", "backup", "alternative"],
  },
  {
    name: "hotel_agent",
    description: "Finds hotels.",
    categories: ["hotels"],
    keywords: ["hotel", "stay", "accommodation", "room"],
  },
  {
    name: "activities_agent",
    description: "Picks activities for each day.",
    categories: ["activities"],
    keywords: ["activities", "sightseeing", "tour", "things to do"],
  },
  {
    name: "budget_agent",
    description: "Checks the trip's total against the budget.",
    categories: ["budget"],
    keywords: ["budget", "cost", "afford", "price"],
  },
  {
    name: "itinerary_agent",
    description: "Writes the day-by-day itinerary.",
    categories: ["itinerary"],
    keywords: ["itinerary", "schedule", "plan"],
  },
  {
    name: "booking_agent",
    description: "Books the trip once a human approves.",
    categories: ["booking"],
    keywords: ["book", "reserve", "booking"],
  },
];

/**
 * The simulated travel domain: flight (primary and backup providers), hotel and activity searches over the
 * deterministic catalog (activities also in two smaller steps, for DECOMPOSE), a budget check, an itinerary writer
 * and an approval-gated booking. Every call waits its
 * simulated latency through `sleep`, so it honours the step's AbortSignal like a real network call would.
 */
export function travelToolkit(options: TravelToolkitOptions = {}): Toolkit {
  const latency = (nominal: number): number => options.latencyMs ?? nominal;
  return {
    name: "travel",
    tools: [
      flightSearch("search_flights", "primary", latency),
      flightSearch("search_flights_backup", "backup", latency),
      hotelSearch(latency),
      activitySearch(latency),
      checkBudget(latency),
      buildItinerary(latency),
      bookTrip(latency),
      findAttractions(latency),
      planDays(latency),
    ],
    workers: [...TRAVEL_WORKERS],
    interpret: interpretTrip,
    classifyFailure: classifyTravelFailure,
  };
}

/**
 * Travel wording Candor's generic rules do not know, for errors of these tools (and of a real provider put in their
 * place): nothing left to sell is resource_unavailable, a place no provider knows is invalid_parameters.
 */
export function classifyTravelFailure(message: string): FailureClass | null {
  // A place first: "no flights to Narnia" says where, not that the seats ran out.
  if (/unknown (city|airport|destination|origin)|no flights (to|from)\b/i.test(message)) return "invalid_parameters";
  if (/\bno (rooms?|seats?|flights?|tickets?|cabins?|berths?)\b/i.test(message)) return "resource_unavailable";
  return null;
}
