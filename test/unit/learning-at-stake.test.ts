import { describe, expect, it } from "vitest";
import { knobsOf } from "../../src/reflection/knobs.js";
import { minePatterns } from "../../src/reflection/patterns.js";
import { hotelChoice, judgedEpisode } from "../fakes/learning-fixtures.js";
import { travelRegistry } from "../fakes/toolkit-fixtures.js";

// Issue 26 item 2: validity counts the runs where the preference was at stake. A user who wants good hotels and
// accepts the runs whose default pick happened to be good has an occasional preference, not a weak one.
const registry = travelRegistry();
const knobs = knobsOf(registry);

function history(acceptedRatings: number[]) {
  const rejected = [6.5, 7.0, 7.2].map((r) =>
    judgedEpisode(registry, [hotelChoice("Paris", r)], { verdict: "rejected", reason: "The hotel was a dump" }),
  );
  const accepted = acceptedRatings.map((r) =>
    judgedEpisode(registry, [hotelChoice("Rome", r)], { verdict: "accepted" }),
  );
  return [...rejected, ...accepted];
}
const quality = (ratings: number[]) =>
  minePatterns(history(ratings), knobs).find((p) => p.key === "rejected:search_hotels.priority=quality")!;

describe("a choice pattern's validity counts only the runs where the preference was at stake", () => {
  it("accepted runs whose default pick was better than every rejected one do not count against it", () => {
    const p = quality([9.1, 8.9]);
    expect(p).toMatchObject({ occurrences: 3, total: 3, validity: 1, valid: true });
  });

  it("an accepted run no better than a rejected one does count: the preference was at stake and it held", () => {
    expect(quality([7.1])).toMatchObject({ total: 4, validity: 0.75, valid: true });
    expect(quality([7.1, 6.9])).toMatchObject({ total: 5, validity: 0.6, valid: false });
  });
});
