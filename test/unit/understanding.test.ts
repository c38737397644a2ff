import { describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { parseTripRequest } from "../../examples/travel/parse-request.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { openQuestions } from "../../src/domain/understanding.js";
import { planWithRules } from "../../src/planning/rules-planner.js";
import { dependencyInputs } from "../../src/planning/schedule.js";
import { applyAdjustments } from "../../src/replanning/human-decision.js";
import { workspaceToolkit } from "../../src/tools/builtin/workspace.js";
import { generalToolkit } from "../../src/tools/general.js";
import { ToolRegistry } from "../../src/tools/registry.js";

const registry = ToolRegistry.create([workspaceToolkit(), travelToolkit({ latencyMs: 0 }), generalToolkit()]);
const plan = (userIntent: string) => planWithRules(PlanningRequest.parse({ userIntent }), registry);
const tools = (userIntent: string) => plan(userIntent).steps.map((s) => s.tools[0]);

describe("every plan carries an understanding record", () => {
  it("the demo request: one served part, every value with the words it came from, nothing open", () => {
    const u = plan("Plan a 3-day trip from Madrid to Paris for 2 people under $2000").understanding;
    expect(u.by).toBe("rules");
    expect(u.parts).toHaveLength(1);
    expect(u.parts[0]).toMatchObject({ status: "served", kind: "task" });
    expect(u.parts[0]!.stepIds).toEqual(
      expect.arrayContaining(["flight", "hotel", "activities", "budget_status", "itinerary"]),
    );
    expect(u.values.map((v) => [v.name, v.value, v.source])).toEqual([
      ["origin", "Madrid", "from Madrid"],
      ["destination", "Paris", "to Paris"],
      ["days", 3, "3-day"],
      ["travellers", 2, "2 people"],
      ["budget", "2000 USD", "under $2000"],
    ]);
    expect(openQuestions(u)).toEqual([]);
  });
});

describe("negations and 'only' shape the plan", () => {
  it.each([
    "3 days in Paris from Madrid for 2, no hotel",
    "we already have a place to stay, 4 days in Lisbon from London",
    "Trip to Rome from Paris for 3 days without a hotel",
    "3 días en Roma desde París, sin hotel",
    "4 jours à Rome depuis Paris, sans hôtel",
    "5 days in Vienna from Berlin, hotel not needed",
  ])("no hotel step, and an excluded part that says so: %s", (text) => {
    const p = plan(text);
    expect(p.steps.map((s) => s.tools[0])).not.toContain("search_hotels");
    expect(p.steps.map((s) => s.tools[0])).toEqual(
      expect.arrayContaining(["search_flights", "search_activities", "build_itinerary"]),
    );
    expect(p.understanding.parts.find((x) => x.status === "excluded")).toMatchObject({
      kind: "exclusion",
      description: "no hotel",
      stepIds: [],
    });
    expect(p.confidence).toBeGreaterThanOrEqual(0.5);
  });

  it.each([
    "3 days in Paris without flights",
    "4 days in Rome from Madrid, no flights please",
    "we are driving, 3 days in Paris by car",
  ])("no flight step: %s", (text) => {
    expect(tools(text)).not.toContain("search_flights");
    expect(tools(text)).toContain("search_hotels");
  });

  it.each([
    ["flight only from Paris to London", ["search_flights"]],
    ["only flights from Madrid to Rome", ["search_flights"]],
    ["just a hotel in Rome for 3 nights", ["search_hotels"]],
    ["solo vuelos de Madrid a Roma", ["search_flights"]],
  ])("'only' keeps just what it names: %s", (text, expected) => {
    expect(tools(text)).toEqual(expected);
  });

  it.each([
    "I don't want to go to Paris, take me to Rome",
    "Rome instead of Paris, 3 days from London",
    "Go to Rome instead. Plan a 4-day trip to Atlantis from Paris",
  ])("a negated place is not the destination, and the plan says it is ruled out: %s", (text) => {
    const p = plan(text);
    expect(p.steps.find((s) => s.id === "hotel")?.params.city).toBe("Rome");
    expect(
      p.understanding.parts.some((x) => x.status === "excluded" && /^not (Paris|Atlantis)$/.test(x.description)),
    ).toBe(true);
  });
});

describe("the plan's shape follows what was asked", () => {
  it.each([
    "book me a flight from Paris to London",
    "reserve a flight from Madrid to Rome for 2",
    "please book flights from Berlin to Vienna",
  ])("booking a flight books a flight, not a trip: %s", (text) => {
    const p = plan(text);
    expect(p.steps.map((s) => s.tools[0]).sort()).toEqual(["book_trip", "search_flights"]);
    expect(p.steps.find((s) => s.tools[0] === "book_trip")?.dependsOn).toEqual(["flight"]);
  });

  it.each([
    "3 days in Rome from Paris under two thousand dollars",
    "4 days in Lisbon from Madrid, budget 1500",
    "weekend in Rome from Berlin, max €800",
  ])("a budget word never removes a step: %s", (text) => {
    expect(tools(text)).toEqual(
      expect.arrayContaining([
        "search_flights",
        "search_hotels",
        "search_activities",
        "check_budget",
        "build_itinerary",
      ]),
    );
  });

  it("planning and booking a whole trip books the itinerary", () => {
    expect(
      plan("plan 2 days in Rome from Paris and book it").steps.find((s) => s.tools[0] === "book_trip")?.dependsOn,
    ).toEqual(["itinerary"]);
  });
});

describe("budgets are read in words and other currencies, converted by the dated table, never silently", () => {
  it.each([
    ["3 days in Rome from Paris under two thousand dollars", 2000, null],
    ["5 days in Tokyo from London, ¥300000", 2089, "JPY"],
    ["5 days in Tokyo from London, budget 300000 yen", 2089, "JPY"],
    ["4 days in Vienna from Paris, 2000 CHF", 2433, "CHF"],
    ["3 days in Rome from Madrid, €1,500", 1705, "EUR"],
    ["3 días en Roma desde Madrid, presupuesto de dos mil euros", 2274, "EUR"],
  ])("%s", (text, usd, currency) => {
    const p = plan(text);
    expect(p.steps.find((s) => s.id === "budget_status")?.params.budget).toBe(usd);
    const change = p.understanding.changes.find((c) => c.name === "budget");
    if (currency === null) expect(change).toBeUndefined();
    else
      expect(change?.why).toMatch(
        new RegExp(
          `taken as \\$${usd.toLocaleString("en-US").replace(",", ",")} at the table's rate of 1 ${currency} = [\\d.]+ USD \\(rates of \\d{4}-\\d{2}-\\d{2}`,
        ),
      );
  });

  it.each(["3 days in Rome from Madrid, 2000 pesos", "3 days in Rome from Madrid, 500 francs"])(
    "a currency name the table cannot pin is refused and asked about: %s",
    (text) => {
      const p = plan(text);
      expect(p.understanding.refused[0]).toMatchObject({ name: "budget" });
      expect(p.confidence).toBeLessThan(0.5);
    },
  );

  it("a budget with no currency is taken as dollars, and the record says it assumed so", () => {
    const u = plan("4 days in Lisbon from Madrid, budget 1500").understanding;
    expect(u.assumptions.find((a) => a.name === "budget currency")).toMatchObject({ value: "USD" });
  });
});

describe("travellers and lengths: zero, negative, fractional and absurd numbers are refused, never changed", () => {
  it.each([
    ["-2 people to Rome from Paris for 3 days", "travellers", -2],
    ["0 people to Rome from Paris", "travellers", 0],
    ["Rome from Paris for 2.5 people", "travellers", 2.5],
    ["500 people to Rome from Paris", "travellers", 500],
    ["2.5 days in Rome from Paris", "days", 2.5],
    ["0 days in Rome from Paris", "days", 0],
    ["365 days in Rome from Paris", "days", 365],
    ["3-5 days in Rome from Paris", "days", null],
  ])("%s", (text, name, value) => {
    const p = plan(text);
    expect(p.understanding.refused.map((r) => r.name)).toContain(name);
    expect(p.confidence).toBeLessThan(0.5);
    if (value !== null && name === "travellers")
      expect(p.steps.find((s) => s.id === "flight")?.params.travellers).toBe(value);
    if (value !== null && name === "days") expect(p.steps.find((s) => s.id === "activities")?.params.days).toBe(value);
  });

  it.each([
    ["2 adults and 2 kids to Rome from Paris for 3 days", 4],
    ["Rome from Paris, 2 adultos y 1 niño, 3 días", 3],
    ["Rome depuis Paris, deux adultes et trois enfants, 3 jours", 5],
  ])("adults and children are all travellers, and the record says children are priced as adults: %s", (text, total) => {
    const p = plan(text);
    expect(p.steps.find((s) => s.id === "flight")?.params.travellers).toBe(total);
    expect(p.understanding.values.find((v) => v.name === "children")).toBeDefined();
    expect(p.understanding.assumptions.find((a) => a.name === "children's fares")).toBeDefined();
  });
});

describe("Spanish and French direction words", () => {
  it.each([
    ["3 días a París desde Madrid", "Madrid", "Paris"],
    ["viaje de Madrid a Roma, 4 días", "Madrid", "Rome"],
    ["vuelos hacia Lisboa desde Londres", "London", "Lisbon"],
    ["4 jours à Rome depuis Paris", "Paris", "Rome"],
    ["un voyage de Berlin vers Rome pour 2", "Berlin", "Rome"],
    ["je veux aller à Prague depuis Madrid", "Madrid", "Prague"],
  ])("%s flies %s → %s", (text, origin, destination) => {
    const flight = plan(text).steps.find((s) => s.id === "flight")!;
    expect(flight.params).toMatchObject({ origin, destination });
  });
});

describe("what no tool can do is named, and a person is asked before anything runs", () => {
  it.each([
    ["find flights from Madrid to Paris and translate the restaurant menu into German", "translate"],
    ["book me a flight from Paris to London and email the confirmation to my boss", "email"],
    ["3 days in Rome from Paris, then call the hotel to confirm", "call"],
    ["busca vuelos de Madrid a Roma y traduce el menú al alemán", "translate"],
  ])("%s", (text, verb) => {
    const p = plan(text);
    const part = p.understanding.parts.find((x) => x.status === "unsupported");
    expect(part?.description).toBe(verb);
    expect(part?.why).toMatch(new RegExp(`no tool can ${verb}`));
    expect(p.confidence).toBeLessThan(0.5);
    expect(p.understanding.parts.some((x) => x.status === "served")).toBe(true);
  });

  it.each([
    ["3 days in Paris from Madrid next Friday", "date"],
    ["3 days in Paris from Madrid, visit the Louvre", "place"],
  ])("meaningful text that served nothing is named: %s", (text, kind) => {
    const p = plan(text);
    expect(p.understanding.unaccounted.map((u) => u.kind)).toContain(kind);
    expect(p.confidence).toBeLessThan(0.5);
  });

  it("a city the tools do not know, listed with others, is named, never dropped", () => {
    const p = plan("a week in Lisbon, Atlantis and Madrid from London");
    expect(openQuestions(p.understanding).join(" ")).toMatch(/Atlantis/);
    expect(p.confidence).toBeLessThan(0.5);
  });
});

describe("multi-city trips: a flight per leg, a hotel and activities per city, one budget check and one itinerary", () => {
  it.each([
    ["Madrid to Paris then Rome, 6 days", "Madrid", ["Paris", "Rome"], [3, 3]],
    ["Prague and Vienna, 6 days", "Madrid", ["Prague", "Vienna"], [3, 3]],
    ["de Madrid a París y luego a Roma, 6 días", "Madrid", ["Paris", "Rome"], [3, 3]],
    ["2 days in Paris and 3 days in Rome from London under $3000", "London", ["Paris", "Rome"], [2, 3]],
    ["a week in Lisbon, Barcelona and Rome from Berlin", "Berlin", ["Lisbon", "Barcelona", "Rome"], [3, 2, 2]],
  ])("%s", (text, origin, cities, days) => {
    const p = plan(text);
    const byTool = (tool: string) => p.steps.filter((s) => s.tools[0] === tool);
    const places = [origin, ...cities, origin];
    expect(byTool("search_flights").map((s) => [s.params.origin, s.params.destination])).toEqual(
      places.slice(1).map((to, i) => [places[i], to]),
    );
    expect(byTool("search_activities").map((s) => [s.params.city, s.params.days])).toEqual(
      cities.map((c, i) => [c, days[i]]),
    );
    // The last city's last day is the flight home: one night fewer there.
    expect(byTool("search_hotels").map((s) => [s.params.city, s.params.nights])).toEqual(
      cities.map((c, i) => [c, i === cities.length - 1 ? days[i]! - 1 : days[i]]),
    );
    expect(byTool("check_budget")).toHaveLength(1);
    const itinerary = byTool("build_itinerary");
    expect(itinerary).toHaveLength(1);
    expect(itinerary[0]!.dependsOn).toEqual(
      expect.arrayContaining(p.steps.filter((s) => s.tools[0] !== "build_itinerary").map((s) => s.id)),
    );
    // Independent legs: no search waits for another.
    for (const s of [...byTool("search_flights"), ...byTool("search_hotels"), ...byTool("search_activities")])
      expect(s.dependsOn).toEqual([]);
    expect(openQuestions(p.understanding)).toEqual([]);
  });

  it("an even split of the days is said as an assumption; fewer days than cities is refused", () => {
    expect(
      plan("Prague and Vienna, 6 days").understanding.assumptions.find((a) => a.name === "days per city")?.why,
    ).toMatch(/6 days split between 2 cities: 3 in Prague, 3 in Vienna/);
    const short = plan("Paris and Rome from Madrid, 1 day");
    expect(short.understanding.refused[0]?.why).toMatch(/2 cities need at least 2 days/);
    expect(short.confidence).toBeLessThan(0.5);
  });
});

describe("a consumer of an output several steps produced receives them all", () => {
  it("dependencyInputs gives the list of results, in plan order, and each by its step id", () => {
    const p = plan("Prague and Vienna, 6 days");
    const done = {
      ...p,
      steps: p.steps.map((s) =>
        s.tools[0] === "check_budget" || s.tools[0] === "build_itinerary"
          ? s
          : { ...s, status: "done" as const, result: { id: s.id } },
      ),
    };
    const budget = done.steps.find((s) => s.id === "budget_status")!;
    const inputs = dependencyInputs(done, budget);
    expect(inputs.flight).toEqual([{ id: "flight_leg1" }, { id: "flight_leg2" }, { id: "flight_leg3" }]);
    expect(inputs.hotel).toEqual([{ id: "hotel_prague" }, { id: "hotel_vienna" }]);
    expect(inputs.flight_leg2).toEqual({ id: "flight_leg2" });
    const single = plan("3 days in Rome from Paris");
    const one = {
      ...single,
      steps: single.steps.map((s) => (s.id === "flight" ? { ...s, status: "done" as const, result: { id: "f" } } : s)),
    };
    expect(
      dependencyInputs(
        one,
        one.steps.find((s) => s.id === "budget_status")!,
      ).flight,
    ).toEqual({ id: "f" });
  });
});

describe("a clause no step serves is named whatever its verb, and a person is asked (issue 9)", () => {
  // Bug: a clause whose verb was not in the lexicon's task-verb list ("renew", "arrange", "walk") completed as if
  // it were not there. None of these wordings is in the bench corpus.
  it.each([
    ["fly to Lisbon from Madrid for 3 days and renew my passport", "renew my passport"],
    ["a hotel in Prague for 2 nights and arrange airport parking", "arrange airport parking"],
    ["read package.json and upgrade the dependencies", "upgrade the dependencies"],
    ["hotel in Berlin for 2 nights; walk my dog", "walk my dog"],
    ["find flights from Paris to Oslo plus a vaccination appointment", "vaccination appointment"],
    ["5 días en Roma desde Madrid y contratar un seguro médico", "contratar un seguro médico"],
    ["4 jours à Lisbonne depuis Paris et changer de l'argent", "changer de l'argent"],
  ])("an unserved clause is an unsupported part, named: %s", (text, named) => {
    const p = plan(text);
    const part = p.understanding.parts.find((x) => x.status === "unsupported");
    expect(part?.text).toContain(named);
    expect(part?.why).toMatch(/^no tool does "/);
    expect(openQuestions(p.understanding).join(" ")).toContain(named);
    expect(p.confidence).toBeLessThan(0.5);
    expect(p.understanding.parts.some((x) => x.status === "served")).toBe(true);
  });

  it.each([
    ["a hotel in Rome with a rooftop pool for 2 nights", ["rooftop", "pool"]],
    ["summarize README.md in the style of a pirate", ["style", "pirate"]],
  ])("words of a served clause that no step uses are named as unaccounted text: %s", (text, words) => {
    const p = plan(text);
    const open = p.understanding.unaccounted.find((u) => u.kind === "other");
    for (const w of words) expect(open?.why).toContain(`"${w}"`);
    expect(p.confidence).toBeLessThan(0.5);
  });

  // Issue 23 item 4: a cuisine is named with why no tool carries it (it was named only as words no step uses).
  it("a cuisine no tool chooses by is named with why: 4 days in Oslo from Paris with vegan restaurants", () => {
    const p = plan("4 days in Oslo from Paris with vegan restaurants");
    expect(p.understanding.parts).toContainEqual(
      expect.objectContaining({
        text: "vegan",
        status: "unsupported",
        why: "no tool chooses food or restaurants by cuisine: the activities search can only favour food outings",
      }),
    );
    expect(p.confidence).toBeLessThan(0.5);
  });

  it.each([
    "4 days in Lisbon from Berlin for 3 people, no hotel, under €900",
    "leaving from Oslo, a week in Prague for two",
    "3 días en Lisboa desde Madrid para 2 personas, sin hotel",
    "read README.md and count the words",
    "Go to Rome instead",
    "quiero ir a Oporto desde Sevilla, 3 días",
    "I'm looking for a hotel in Amsterdam for 3 nights",
    "a relaxing 3-day city break in Porto from London",
    "organise a family holiday to Nice from Lyon for 4 people, 7 days",
    "weekend trip to Edinburgh from Manchester for me and a friend",
  ])("what the plan serves is not flagged: %s", (text) => {
    const p = plan(text);
    expect(openQuestions(p.understanding)).toEqual([]);
    expect(p.confidence).toBeGreaterThanOrEqual(0.5);
  });

  it("a verb of the request is no gazetteer town that shares its spelling ('and buy concert tickets' is not Buy)", () => {
    const p = plan("Vienna from Munich, 3 days, and buy concert tickets");
    expect(p.steps.flatMap((s) => [s.params.city, s.params.destination]).filter(Boolean)).not.toContain("Buy");
    expect(p.understanding.parts.find((x) => x.status === "unsupported")?.text).toBe("buy concert tickets");
  });

  it("an uncounted party word is asked about, a counted one is read", () => {
    expect(openQuestions(plan("family trip to Rome from Paris, 3 days").understanding).join(" ")).toMatch(/"family"/);
    expect(openQuestions(plan("family trip to Rome from Paris for 4, 3 days").understanding)).toEqual([]);
  });

  it("a report titled with the whole request does not read its words", () => {
    const p = plan("write me a limerick about the moon");
    expect(openQuestions(p.understanding).join(" ")).toMatch(/limerick/);
  });
});

describe("travellers named by who they are are counted, or asked about (issue 9)", () => {
  // Bug: "our three children", "a couple and their baby", "un niño" and "family of 4 (2 kids)" were read as the
  // children alone or not at all, and the plan priced the wrong party. None of these wordings is in the corpus.
  it.each([
    ["my husband, me and our daughter: Lisbon from Madrid, 4 days", 3, 2, 1],
    ["mi marido, yo y nuestra hija, Lisboa desde Madrid, 4 días", 3, 2, 1],
    ["ma femme et moi, Rome depuis Paris, 3 jours", 2, 2, null],
    ["a couple with a toddler, Vienna from Prague, 3 days", 3, 2, 1],
    ["a family of 5 with 3 children, Oslo from Berlin, 4 days", 5, 2, 3],
    ["me and my partner with our baby, Athens from Rome, 5 days", 3, 2, 1],
  ])("%s", (text, total, adults, children) => {
    const p = plan(text);
    expect(p.steps.find((s) => s.id === "flight")?.params.travellers).toBe(total);
    expect(p.understanding.values.find((v) => v.name === "travellers")?.value).toBe(total);
    expect(openQuestions(p.understanding)).toEqual([]);
    const facts = parseTripRequest(text);
    expect([facts.adults, facts.children]).toEqual([adults, children]);
  });

  it.each(["Rome from Paris with our kids, 4 days", "3 kids to Lisbon from Madrid, 2 days"])(
    "children without a count or without an adult are asked about: %s",
    (text) => {
      const p = plan(text);
      expect(p.understanding.refused.map((r) => r.name)).toContain("travellers");
      expect(p.confidence).toBeLessThan(0.5);
    },
  );
});

describe("spelled, signed and halved numbers are refused like their digit forms (issue 9)", () => {
  // Bug: "zero nights" became a 1-day trip, "two and a half days" the default 3 days, and "$-500" a $500 budget.
  it.each([
    ["zero nights in Vienna from Munich", "days"],
    ["three and a half days in Lisbon from Paris", "days"],
    ["4 days in Rome from Oslo, max €-800", "budget"],
    ["Rome from Paris for 3 and a half people, 2 days", "travellers"],
  ])("%s", (text, name) => {
    const p = plan(text);
    expect(p.understanding.refused.map((r) => r.name)).toContain(name);
    expect(p.confidence).toBeLessThan(0.5);
  });

  it("'won' is the Korean currency, converted and said; 'kr' names several currencies and is asked about", () => {
    expect(
      plan("Busan from Osaka, 3 days, 1.5 million won").understanding.changes.find((c) => c.name === "budget")?.from,
    ).toBe("1500000 KRW");
    expect(plan("4 days in Bergen from Copenhagen, 9000 kr").understanding.refused[0]).toMatchObject({
      name: "budget",
    });
  });

  it("'don't book a hotel' rules the hotel out", () => {
    expect(tools("Lisbon from Rome, 3 days, and don't book a hotel")).not.toContain("search_hotels");
  });
});

describe("dates and starting points in travellers' words (issue 9)", () => {
  // Bug: "this weekend" was read as a 2-day length only, its date silently dropped; "starting in Madrid" made Madrid
  // a stop instead of the origin.
  it("'this weekend' is a date no step takes: named and asked about", () => {
    const p = plan("Lyon from Geneva this weekend for 2");
    expect(p.understanding.unaccounted.find((u) => u.kind === "date")?.text).toBe("this weekend");
    expect(p.confidence).toBeLessThan(0.5);
  });

  it("'starting in <city>' is the origin", () => {
    const flights = plan("8 days across Seville and Granada starting in Valencia").steps.filter(
      (s) => s.tools[0] === "search_flights",
    );
    // Valencia, Spain: Seville and Granada are in Spain (Valencia, Venezuela is of comparable size).
    expect(flights[0]?.params).toMatchObject({ origin: "Valencia, Spain", destination: "Sevilla" });
  });
});

describe("a place name several places share is said, and a country picks one (issue 9)", () => {
  // Bug: "Valencia" silently became Valencia, Venezuela, and "Valencia, Spain" lost its country on the way to the tools.
  it("a clear winner by size is taken and the record says which, with the others", () => {
    const a = plan("4 days in Athens from Lyon").understanding.assumptions.find((x) => x.name === 'place "Athens"');
    expect(a?.value).toBe("Athens, Greece");
    expect(a?.why).toMatch(/also Athens, Georgia, United States/);
  });

  it("'Valencia, Spain' reaches the tools with its country, and nothing is left unread", () => {
    const p = plan("4 days in Valencia, Spain from Lyon");
    expect(p.steps.find((s) => s.id === "hotel")?.params.city).toBe("Valencia, Spain");
    expect(openQuestions(p.understanding)).toEqual([]);
    expect(p.understanding.assumptions.some((x) => x.name.startsWith("place"))).toBe(false);
  });
});

describe("a person's edit of a planned step", () => {
  // Regression: after `resume --adjust` set nights to 3, the understanding record still described the part as
  // "a hotel … for 2 night(s)", and the edit was not recorded as a change to what was asked.
  it("describes the part again from the edited step and records the change as made by a person", () => {
    const request = PlanningRequest.parse({ userIntent: "Plan a 3-day trip from Madrid to Rome for 2 people" });
    const planned = planWithRules(request, registry);
    const adjusted = applyAdjustments(
      planned,
      [{ taskId: "hotel", field: "params.nights", newValue: 3 }],
      request,
      registry,
    );
    if (!adjusted.ok) throw new Error(adjusted.error);
    const described = adjusted.plan.understanding.parts.map((p) => p.description).join(" | ");
    expect(described).toContain("for 3 night(s)");
    expect(described).not.toContain("for 2 night(s)");
    expect(adjusted.plan.understanding.changes).toContainEqual(
      expect.objectContaining({ name: "nights", from: 2, to: 3, by: "person", stepIds: ["hotel"] }),
    );
  });
});
