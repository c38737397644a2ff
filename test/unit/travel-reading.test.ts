import { describe, expect, it } from "vitest";
import { parseTripRequest, readTrip } from "../../examples/travel/parse-request.js";
import { defaultToolkits } from "../../src/app/toolkits.js";
import { openQuestions } from "../../src/domain/understanding.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { planWithRules } from "../../src/planning/rules-planner.js";
import { ToolRegistry } from "../../src/tools/registry.js";

/** The travel reader on requests written the way people write them (issue 23 items 2, 3 and 5). */

const plan = (text: string) =>
  planWithRules(PlanningRequest.parse({ userIntent: text }), ToolRegistry.create(defaultToolkits()));
const tools = (text: string) => plan(text).steps.flatMap((s) => s.tools);

describe("party sizes", () => {
  it.each([
    ["Rome for 2 ppl, 3 days", 2],
    ["a pair of travellers to Rome for 3 days", 2],
    ["A pair want to go to Rome for 3 days", 2],
    ["a trip to Rome for a single person, 3 days", 1],
    ["solo trip to Rome for 3 days", 1],
    ["a group of 5 going to Rome for 3 days", 5],
    ["Roma per 2 persone, 3 giorni", 2],
    ["Wien, 2 Personen", 2],
    ["Lisboa para 3 pessoas", 3],
  ])("%s: %i", (text, travellers) => {
    const facts = parseTripRequest(text);
    expect(facts.travellers).toBe(travellers);
    expect(facts.assumed).not.toContain("travellers");
  });

  it.each([
    ["Lyon à Barcelone, nous sommes trois", 3],
    ["we are 4 going to Rome for 3 days", 4],
    ["wir sind 3 und fahren nach Wien für 2 Tage", 3],
  ])("'we are N' counts the party: %s", (text, travellers) => {
    expect(parseTripRequest(text).travellers).toBe(travellers);
  });

  it.each(["Roma per 3 giorni", "Rome for 3 nights"])("a length is no party: %s", (text) => {
    expect(parseTripRequest(text).assumed).toContain("travellers");
  });

  it.each(["a couple of days in Rome", "Rome with a couple of friends"])(
    "'a couple of …' counts no party: %s",
    (text) => {
      expect(parseTripRequest(text).assumed).toContain("travellers");
    },
  );
});

describe("places", () => {
  it("reads a multi-word name with an abbreviation whole", () => {
    const facts = parseTripRequest("a week from Daytona Beach to Sault Ste. Marie");
    expect(facts.origin).toBe("Daytona Beach");
    expect(facts.destination).toBe("Sault Ste. Marie");
  });

  it.each([
    ["I'm starting in Daytona Beach and going to Orlando", "Daytona Beach", "Orlando"],
    ["a trip that begins in Philadelphia and ends in Boston", "Philadelphia", "Boston"],
    ["leaving from Denver to Chicago", "Denver", "Chicago"],
    ["von Berlin nach Wien", "Berlin", "Vienna"],
    ["da Roma a Parigi", "Rome", "Paris"],
  ])("the origin is where the trip starts: %s", (text, origin, destination) => {
    const facts = parseTripRequest(text);
    expect(facts.origin).toBe(origin);
    expect(facts.destination).toBe(destination);
  });

  it.each([
    ["Vorrei andare a Parigi per 3 giorni", "Paris"],
    ["Reise nach Wien", "Vienna"],
    ["een reis naar Parijs", "Paris"],
  ])("a city's name in another language is that city: %s", (text, city) => {
    expect(parseTripRequest(text).destination).toBe(city);
  });

  it.each([
    ["We fly from Denver to visit 2 cities in Texas", "Texas", "2 cities in Texas"],
    ["from Seattle to Washington state for 4 days", "Washington", "Washington state"],
    ["begins in Philadelphia and visits 3 different cities in Virginia", "Virginia", "3 different cities in Virginia"],
  ])("a state is named, never read as a city: %s", (text, area, span) => {
    const { facts, interpretation } = readTrip(text);
    expect(facts.stops).not.toContain(area);
    const named = interpretation.notUnderstood.find((n) => n.span.text === span);
    expect(named?.kind).toBe("place");
    expect(named?.why).toContain(`"${area}" is a state`);
  });

  it.each([
    ["from Los Angeles to San Francisco for 3 days", "Los Angeles", "San Francisco"],
    ["from Portland, Maine to Boston, 2 days", "Portland, Maine", "Boston"],
    ["from Vancouver to Victoria for 4 days", "Vancouver", "Victoria"],
  ])(
    "a city is no area: not inside its name, not its qualifier, not its namesake region: %s",
    (text, origin, destination) => {
      const { facts, interpretation } = readTrip(text);
      expect([facts.origin, facts.destination]).toEqual([origin, destination]);
      expect(interpretation.notUnderstood).toEqual([]);
    },
  );

  it("the request's other places choose among a name's places, and that is said", () => {
    const { facts, interpretation } = readTrip("from St. Petersburg to Rockford for 3 days");
    expect(facts.origin).toBe("St. Petersburg, Florida");
    const said = interpretation.assumptions.find((a) => a.name === 'place "St. Petersburg"');
    expect(said?.why).toContain("in the same country as Rockford");
  });

  it("the longest name wins where names overlap", () => {
    // "from Boston to Salt" found the town of Salt, Spain, before "Salt Lake City" was looked at.
    expect(parseTripRequest("from Boston to Salt Lake City for 4 days").destination).toBe("Salt Lake City");
  });

  it("a famous city is not displaced by a small namesake near the other places", () => {
    expect(parseTripRequest("from Dallas to Paris for 3 days").destination).toBe("Paris");
  });

  it("a place nobody knows is named as a place", () => {
    const { interpretation } = readTrip("Take us from Lisbon to Atlantis for 4 days");
    expect(interpretation.notUnderstood.map((n) => [n.span.text, n.kind])).toContainEqual(["Atlantis", "place"]);
  });
});

describe("requests in German, Italian, Portuguese and Dutch", () => {
  it.each([
    ["Wir sind zwei Personen und wollen von München nach Rom, drei Nächte.", "Munich", "Rome", 4, 2],
    ["Vorrei andare a Parigi da Roma per tre giorni, due persone, 1200 euro.", "Rome", "Paris", 3, 2],
    ["Quero viajar de Lisboa para Madrid por 4 dias, duas pessoas, sem hotel.", "Lisbon", "Madrid", 4, 2],
    ["Wij willen van Amsterdam naar Parijs voor drie dagen met twee personen.", "Amsterdam", "Paris", 3, 2],
  ])("%s", (text, origin, destination, days, travellers) => {
    expect(parseTripRequest(text)).toMatchObject({ origin, destination, days, travellers, assumed: [] });
  });

  it("a request in a language the reader does not read is named as such, not half-read", () => {
    expect(() => plan("Хочу поехать из Москвы в Париж на три дня")).toThrow(/written in Russian/);
    expect(() => plan("東京から大阪まで3日間の旅行を計画して")).toThrow(/written in Japanese/);
  });
});

describe("the trip's length from its dates", () => {
  it.each([
    ["a trip from Boston to Chicago from March 16th to March 18th, 2022", 3],
    ["Ich möchte vom 16. bis 18. März 2022 von Berlin nach Wien fahren", 3],
    ["da Roma a Parigi dal 16 al 18 marzo 2022", 3],
    ["Boston to Chicago, March 15th to March 21st, for 7 days", 7],
  ])("%s: %i days", (text, days) => {
    const { facts, interpretation } = readTrip(text);
    expect(facts.days).toBe(days);
    expect(facts.assumed).not.toContain("days");
    // The dates themselves no tool takes: that stays said.
    expect(
      interpretation.notUnderstood.some((n) => n.kind === "date") ||
        interpretation.values.some((v) => v.name === "days"),
    ).toBe(true);
  });

  it("a length and a range of dates that disagree are refused, naming both", () => {
    const { facts, interpretation } = readTrip("Boston to Chicago for 5 days from March 16th to March 18th, 2022");
    expect(facts.refused).toContain("days");
    expect(interpretation.refusals[0]?.why).toContain("disagree");
  });

  it("a week-long trip is 7 days", () => {
    expect(parseTripRequest("a week-long trip from Boston to Chicago").days).toBe(7);
  });
});

describe("what the request rules out", () => {
  it.each([
    "von Berlin nach Wien für 3 Tage, kein Hotel",
    "de Madrid a Roma, 3 días, sin hotel",
    "de Porto a Lisboa, 3 dias, sem hotel",
    "from Paris to Rome for 3 days without a hotel",
  ])("a hotel ruled out in any language plans no hotel: %s", (text) => {
    expect(tools(text)).not.toContain("search_hotels");
    expect(plan(text).understanding.parts.some((p) => p.status === "excluded")).toBe(true);
  });

  it.each([
    "from Denver to Chicago for 3 days. We have no specific accommodation restrictions.",
    "from Boston to Chicago for 3 days, we have no preferences about food",
    "from Paris to Rome for 3 days with no particular cuisine requirements",
    "from Seattle to Chicago for 4 days. We don't mind the cuisine.",
  ])("saying there is no constraint rules nothing out and asks nothing: %s", (text) => {
    const p = plan(text);
    expect(p.steps.flatMap((s) => s.tools)).toContain("search_hotels");
    expect(p.understanding.parts.filter((x) => x.status !== "served")).toEqual([]);
    expect(p.understanding.unaccounted).toEqual([]);
  });

  it("a region where a city was expected is named to a person, not 'no tool matches'", () => {
    const p = plan("Planning 10 days across Bavaria from Berlin");
    expect(openQuestions(p.understanding).join("\n")).toContain('"Bavaria" is a region of Germany');
  });

  it("a place nobody knows is named, not 'no tool matches'", () => {
    const p = plan("Take us from Lisbon to Atlantis for 4 days");
    expect(openQuestions(p.understanding).join("\n")).toContain("Atlantis");
  });

  it("'no specific accommodation restrictions' keeps the hotel", () => {
    const { interpretation } = readTrip("Denver to Chicago, 3 days. We have no specific accommodation restrictions.");
    expect(interpretation.exclusions).toEqual([]);
  });
});
