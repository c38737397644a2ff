import { describe, expect, it } from "vitest";
import type { StepChoice } from "../../src/domain/reflection.js";
import { blamedKeys, diagnose } from "../../src/reflection/diagnose.js";
import { knobsOf } from "../../src/reflection/knobs.js";
import { minePatterns } from "../../src/reflection/patterns.js";
import { travelToolkit } from "../../examples/travel/index.js";
import { flightChoice, hotelChoice, judgedEpisode } from "../fakes/learning-fixtures.js";
import { travelRegistry } from "../fakes/toolkit-fixtures.js";

const registry = travelRegistry();
const knobs = knobsOf(registry);

const budgetChoice = (): StepChoice => ({
  stepId: "budget",
  tool: "check_budget",
  params: { budget: null },
  result: { total: 2400, summary: "Total $2400" },
});

const activitiesChoice = (params: Record<string, unknown> = {}): StepChoice => ({
  stepId: "activities",
  tool: "search_activities",
  params: { city: "Paris", days: 3, travellers: 2, ...params },
  result: { city: "Paris", cost: 210, summary: "3 day(s) of activities in Paris for 2 traveller(s): $210" },
});

describe("pattern validity weighs only the runs where the blamed condition held", () => {
  it("an accepted nonstop flight does not count against 'rejects flights with stops'", () => {
    // Bug pinned: accepted runs whose default flight was already nonstop counted against the nonstop pattern,
    // so a user who rejected every flight with stops never reached validity 0.75.
    const history = [
      judgedEpisode(registry, [flightChoice("Iberia", 0)], { verdict: "accepted" }),
      judgedEpisode(registry, [flightChoice("Iberia", 0)], { verdict: "accepted" }),
      judgedEpisode(registry, [flightChoice("Iberia", 1)], { verdict: "rejected", reason: "I can't stand layovers" }),
      judgedEpisode(registry, [flightChoice("Iberia", 0)], { verdict: "accepted" }),
      judgedEpisode(registry, [flightChoice("Iberia", 2)], { verdict: "rejected", reason: "Two stops is too many" }),
      judgedEpisode(registry, [flightChoice("Iberia", 1)], { verdict: "rejected", reason: "Direct flights only" }),
    ];
    const p = minePatterns(history, knobs).find((x) => x.key === "rejected:search_flights.nonstop");
    expect(p).toMatchObject({ occurrences: 3, total: 3, validity: 1, valid: true });
  });

  it("an accepted flight with stops does count against it", () => {
    const history = [
      judgedEpisode(registry, [flightChoice("Iberia", 1)], { verdict: "accepted" }),
      judgedEpisode(registry, [flightChoice("Iberia", 1)], { verdict: "accepted" }),
      judgedEpisode(registry, [flightChoice("Iberia", 1)], { verdict: "rejected", reason: "I can't stand layovers" }),
      judgedEpisode(registry, [flightChoice("Iberia", 2)], { verdict: "rejected", reason: "Two stops is too many" }),
      judgedEpisode(registry, [flightChoice("Iberia", 1)], { verdict: "rejected", reason: "Direct flights only" }),
    ];
    const p = minePatterns(history, knobs).find((x) => x.key === "rejected:search_flights.nonstop");
    expect(p).toMatchObject({ occurrences: 3, total: 5, validity: 0.6, valid: false });
  });

  it("accepted flights on other airlines are neutral for 'avoid Iberia'; an accepted Iberia flight is not", () => {
    const reject = () =>
      judgedEpisode(registry, [flightChoice("Iberia", 0)], { verdict: "rejected", reason: "Never again with Iberia" });
    const others = [1, 2, 3].map(() => judgedEpisode(registry, [flightChoice("Vueling", 0)], { verdict: "accepted" }));
    const clean = minePatterns([...others, reject(), reject(), reject()], knobs).find(
      (x) => x.key === "rejected:search_flights.avoidAirlines=Iberia",
    );
    expect(clean).toMatchObject({ occurrences: 3, total: 3, valid: true });
    const onIberia = judgedEpisode(registry, [flightChoice("Iberia", 0)], { verdict: "accepted" });
    const mixed = minePatterns([...others, onIberia, reject(), reject(), reject()], knobs).find(
      (x) => x.key === "rejected:search_flights.avoidAirlines=Iberia",
    );
    expect(mixed).toMatchObject({ occurrences: 3, total: 4, validity: 0.75, valid: true });
  });

  it("an accepted hotel rated above every rejected one is neutral for the minimum rating; one rated below is not", () => {
    const rejected = [6.1, 6.8, 7.2].map((r) =>
      judgedEpisode(registry, [hotelChoice("Paris", r)], { verdict: "rejected", reason: "The reviews are terrible" }),
    );
    const better = judgedEpisode(registry, [hotelChoice("Paris", 8.9)], { verdict: "accepted" });
    const worse = judgedEpisode(registry, [hotelChoice("Paris", 6.5)], { verdict: "accepted" });
    const key = "rejected:search_hotels.minRating";
    expect(minePatterns([better, ...rejected], knobs).find((x) => x.key === key)).toMatchObject({ total: 3 });
    expect(minePatterns([worse, ...rejected], knobs).find((x) => x.key === key)).toMatchObject({ total: 4 });
  });
});

describe("complaints about price and about activities land on settings", () => {
  it("a price complaint that names the budget check points at the price settings of the searches it added up", () => {
    const choices = [flightChoice("Iberia", 0), hotelChoice("Paris", 7), activitiesChoice(), budgetChoice()];
    for (const reason of ["That costs too much money", "I can't afford that", "Too pricey for me"])
      expect(blamedKeys(diagnose(reason, choices, knobs, registry)).sort()).toEqual([
        "search_activities.focus=price",
        "search_flights.priority=price",
        "search_hotels.priority=price",
      ]);
  });

  it("museums over nightlife: culture when the reason asks for it, daytime when it only rules out the night", () => {
    const choices = [flightChoice("Iberia", 0), hotelChoice("Paris", 7), activitiesChoice()];
    const read = (reason: string) => blamedKeys(diagnose(reason, choices, knobs, registry));
    expect(read("Too much nightlife, I wanted museums")).toEqual(["search_activities.focus=culture"]);
    expect(read("No late-night stuff, please")).toEqual(["search_activities.focus=daytime"]);
    expect(read("We love hiking and the countryside")).toEqual(["search_activities.focus=outdoors"]);
    // Already what the step ran with: the complaint is about something else.
    expect(blamedKeys(diagnose("More museums", [activitiesChoice({ focus: "culture" })], knobs, registry))).toEqual([]);
  });

  it("the activity search keeps to its focus: culture only, or no evening outings, free days where none is left", async () => {
    const tool = travelToolkit({ latencyMs: 0 }).tools.find((t) => t.name === "search_activities")!;
    const ctx = { signal: new AbortController().signal, inputs: {}, stepId: "s1", attempt: 1 };
    const run = async (focus: string) =>
      (await tool.run(tool.schema.parse({ city: "Paris", days: 5, travellers: 1, focus }), ctx)) as {
        activities: { name: string; kind?: string }[];
      };
    const culture = await run("culture");
    expect(culture.activities.filter((a) => a.kind !== undefined).every((a) => a.kind === "culture")).toBe(true);
    expect(culture.activities.some((a) => /Free day/.test(a.name))).toBe(true);
    const daytime = await run("daytime");
    expect(daytime.activities.some((a) => a.kind === "nightlife")).toBe(false);
    expect(daytime.activities[0]!.name).toMatch(/museum/i);
    const recommended = await run("recommended");
    expect(recommended.activities.some((a) => a.kind === "nightlife")).toBe(true);
  });
});
