import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { StepChoice } from "../../src/domain/reflection.js";
import { CandorError } from "../../src/errors.js";
import { blamedKeys, diagnose, excessIn, normalize } from "../../src/reflection/diagnose.js";
import { knobsOf, learnable } from "../../src/reflection/knobs.js";
import { offRunViolations, runScope } from "../../src/reflection/relevance.js";
import { flightChoice, hotelChoice, judgedEpisode } from "../fakes/learning-fixtures.js";
import { travelRegistry } from "../fakes/toolkit-fixtures.js";

// Issue 26: what a complaint is about decides which tool's settings it can change. Lodging words ("bed", "place to
// sleep", "alojamiento") were not read as the hotel search, and a price word reached every search the budget check
// adds up, so "Pick a more affordable place to sleep" was stored as being about search_flights.
const registry = travelRegistry();
const knobs = knobsOf(registry);
const activities: StepChoice = {
  stepId: "activities",
  tool: "search_activities",
  params: { city: "Paris", days: 3 },
  result: { city: "Paris", cost: 200, summary: "3 days of outings" },
};
const budget: StepChoice = { stepId: "budget", tool: "check_budget", params: { budget: 3000 }, result: {} };
const trip = [flightChoice("Iberia"), hotelChoice("Paris", 7.2), activities, budget];
const read = (reason: string) => blamedKeys(diagnose(reason, trip, knobs, registry));

describe("what a complaint is about", () => {
  it.each([
    ["Pick a more affordable place to sleep"],
    ["Paying that much for a bed is silly"],
    ["The accommodation was overpriced"],
    ["El alojamiento era muy caro"],
    ["La chambre était trop chère"],
    ["Die Unterkunft war zu teuer"],
  ])("%s → the hotel search's price, and no other search's", (reason) => {
    expect(read(reason)).toEqual(["search_hotels.priority=price"]);
  });

  it("a price word that qualifies nothing named still reaches every search the budget check adds up", () => {
    expect(read("Way too expensive")).toEqual([
      "search_flights.priority=price",
      "search_hotels.priority=price",
      "search_activities.focus=price",
    ]);
  });

  it("a price word attaches to the clause it is in: the flight was fine, the room was not", () => {
    expect(read("The flight was fine, but the room was overpriced")).toEqual(["search_hotels.priority=price"]);
    expect(read("The hotel was lovely; the plane tickets were far too expensive")).toEqual([
      "search_flights.priority=price",
    ]);
  });

  it("luxury said as too much asks for the cheapest, and raises no minimum; asked for, it asks for quality", () => {
    expect(read("Why so fancy? I just sleep there")).toEqual(["search_hotels.priority=price"]);
    expect(read("I only need a bed, not a palace")).toEqual(["search_hotels.priority=price"]);
    expect(read("I don't need four stars to sleep")).toEqual(["search_hotels.priority=price"]);
    expect(read("We want somewhere upscale next time")).toEqual([
      "search_hotels.priority=quality",
      "search_hotels.minRating",
    ]);
  });

  it("outings named in other words land on the activity focus they ask for", () => {
    expect(read("Get us out of the city into the hills")).toEqual(["search_activities.focus=outdoors"]);
    expect(read("Every day should have something to taste")).toEqual(["search_activities.focus=food"]);
    expect(read("Too many indoor things, take me into the countryside")).toEqual(["search_activities.focus=outdoors"]);
  });

  it("an airline pointed at is explicit evidence about that one value; a ranking is not", () => {
    const airline = diagnose("Their seats are awful, choose a different airline", trip, knobs, registry);
    expect(airline.matches.map((m) => [blamedKeys({ namedTools: [], matches: [m] })[0], m.explicit])).toEqual([
      ["search_flights.avoidAirlines=Iberia", true],
    ]);
    const hotel = diagnose("The hotel was a dump", trip, knobs, registry);
    expect(hotel.matches.every((m) => !m.explicit)).toBe(true);
  });

  it("a wish with no setting's word stays unread, even when it names a price", () => {
    expect(read("I want breakfast in the price")).toEqual([]);
  });
});

describe("excessIn", () => {
  it("finds a term said as too much of it, just after an intensifier or a few words after 'not needed'", () => {
    const terms = ["fancy", "stars", "palace"];
    expect(excessIn(normalize("Why so fancy?"), terms)).toEqual(["fancy"]);
    expect(excessIn(normalize("I don't need four stars"), terms)).toEqual(["stars"]);
    expect(excessIn(normalize("a bed, not a palace"), terms)).toEqual(["palace"]);
    expect(excessIn(normalize("I want something fancy, so book five stars"), terms)).toEqual([]);
  });
});

describe("learnable", () => {
  it("refuses an option whose excess asks for an option the choice does not have", () => {
    const bad = () =>
      learnable(z.enum(["recommended", "quality"]), {
        kind: "choice",
        about: "x",
        default: "recommended",
        options: { quality: { terms: ["nice"], says: "nicest", excess: { asks: "cheap", terms: ["nice"] } } },
      });
    const e = (() => {
      try {
        bad();
        return null;
      } catch (err) {
        return err;
      }
    })();
    expect(CandorError.hasCode(e, "CONFIGURATION")).toBe(true);
    expect(String((e as Error).message)).toMatch(/'quality' says too much of it asks for 'cheap'/);
  });
});

describe("the quality gate on a complaint about the place to sleep", () => {
  it("refuses a reflection that blames the flight search for it", () => {
    const reason = "Pick a more affordable place to sleep";
    const episode = judgedEpisode(registry, trip, { verdict: "rejected", reason });
    const diagnosis = diagnose(reason, trip, knobs, registry);
    const scope = runScope(episode, episode.evaluation!, diagnosis, registry);
    expect(scope.complaintTools).not.toContain("search_flights");
    const violations = offRunViolations(
      {
        analysis: {
          whatHappened: "The trip was rejected.",
          why: "search_flights ranked by the provider's pick.",
          rootCause: "Trusting search_flights' default ranking.",
        },
        patternsIdentified: [],
        strategyAdjustments: ["Change priority of search_flights from 'recommended' to 'price'"],
        learning: "Rank flights by price for this user.",
      },
      scope,
    );
    expect(violations).toEqual([
      expect.stringMatching(
        /^Off-subject reflection: blames search_flights, but the complaint \("Pick a more affordable place to sleep"\) is about /,
      ),
    ]);
  });
});
