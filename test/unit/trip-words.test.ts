import { describe, expect, it } from "vitest";
import { analyzeRequest } from "../../src/planning/lexicon.js";
import { LANGUAGE_CODES } from "../../src/planning/languages/index.js";
import { readTrip } from "../../examples/travel/parse-request.js";
import { TRIP_WORDS, unitDays } from "../../examples/travel/trip-words.js";

describe("the travel reader's words per language", () => {
  it.each(LANGUAGE_CODES)("%s names days, nights and weeks, folded", (code) => {
    const { day, night, week } = TRIP_WORDS[code].lengthUnits;
    expect([day.length > 0, night.length > 0, week.length > 0]).toEqual([true, true, true]);
    const words = Object.values(TRIP_WORDS[code].lengthUnits).flat();
    expect(words.filter((w) => analyzeRequest(w).norm !== w)).toEqual([]);
  });

  it("counts a trip's days by its unit: nights are a day more, weeks seven, fortnights fourteen", () => {
    expect([unitDays(3, "days"), unitDays(3, "noches"), unitDays(2, "semaines"), unitDays(1, "fortnight")]).toEqual([
      3, 4, 14, 14,
    ]);
    // A unit no table names counts as days rather than failing the reading.
    expect(unitDays(5, "jour-ish")).toBe(5);
  });

  it.each([
    ["2 weeks in Rome from Madrid", 14],
    ["Lisboa desde Madrid, 3 noches", 4],
    ["Rome depuis Paris pour 2 semaines", 14],
    ["Ich möchte 3 Nächte in Wien, von Berlin", 4],
    ["vorrei 2 settimane a Roma da Milano", 14],
    // The singular too: "1 Tag" was left to the default length (3 days) and the plan stopped for a person.
    ["Plane 1 Tag in Wien ab Berlin", 1],
    ["Plane 4 Tage in Wien ab Berlin", 4],
  ])("reads the length of '%s' as %i days", (request, days) => {
    expect(readTrip(request).facts.days).toBe(days);
  });
});
