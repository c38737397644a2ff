import { describe, expect, it } from "vitest";
import {
  afterFirstAdjustment,
  couldLearn,
  rejectionsBeforeApplied,
  preferenceRejectionsBeforeApplied,
  verdictOf,
  whyNotHelped,
  type RunRecord,
  type UserRecord,
} from "../../bench/learning.js";
import { judge, requestsFor, REASONS, type Answer, type TripRequest } from "../../bench/learning/users.js";
import { HELD_OUT, judgeHeldOut } from "../../bench/learning/held-out.js";

// The learning benchmark's pure parts: the simulated evaluator judges the answer against the hidden preference
// only, requests are reproducible from the seed, and a preference never learned cannot pass.

const trip: TripRequest = { text: "t", origin: "Madrid", destination: "Rome", days: 3, travellers: 2, budget: null };
const hotel = (stars: number, rating: number) =>
  ({ stars, rating, name: "H", city: "Rome", cost: 700 }) as unknown as NonNullable<Answer["hotel"]>;
const flight = (stops: number, airline: string) =>
  ({ stops, airline, cost: 800 }) as unknown as NonNullable<Answer["flight"]>;
const answer = (over: Partial<Answer>): Answer => ({
  status: "completed",
  flight: null,
  hotel: null,
  activities: null,
  total: null,
  ...over,
});

describe("the learning benchmark's simulated evaluator", () => {
  it("accepts a quality answer only with 4★ or more rated 8 or more, and rejects with one of the preference's reasons", () => {
    expect(judge({ kind: "quality" }, trip, answer({ hotel: hotel(5, 9.1) }), 0)).toEqual({ verdict: "accepted" });
    const j = judge({ kind: "quality" }, trip, answer({ hotel: hotel(4, 7.0) }), 0.99);
    expect(j.verdict).toBe("rejected");
    expect(REASONS.quality({ kind: "quality" })).toContain(j.verdict === "rejected" ? j.reason : "");
  });

  it("judges flights by stops and by airline, and says so when the part is missing", () => {
    expect(judge({ kind: "nonstop" }, trip, answer({ flight: flight(1, "KLM") }), 0).verdict).toBe("rejected");
    expect(judge({ kind: "nonstop" }, trip, answer({ flight: flight(0, "KLM") }), 0).verdict).toBe("accepted");
    const avoid = { kind: "airline" as const, airline: "Iberia" };
    expect(judge(avoid, trip, answer({ flight: flight(0, "iberia") }), 0).verdict).toBe("rejected");
    expect(judge(avoid, trip, answer({ flight: flight(0, "TAP") }), 0).verdict).toBe("accepted");
    expect(judge(avoid, trip, answer({}), 0)).toEqual({ verdict: "rejected", reason: "The plan has no flight at all" });
  });

  it("holds the strict budget per person per day and rejects any nightlife", () => {
    const budget = { kind: "budget" as const, perPersonDay: 250 };
    expect(judge(budget, trip, answer({ total: 1500 }), 0).verdict).toBe("accepted");
    expect(judge(budget, trip, answer({ total: 1501 }), 0).verdict).toBe("rejected");
    const acts = (...names: string[]) =>
      ({
        activities: names.map((name, i) => ({ day: i + 1, name, pricePerPerson: 10 })),
      }) as unknown as Answer["activities"];
    const museums = { kind: "museums" as const };
    expect(judge(museums, trip, answer({ activities: acts("Guided museum visit") }), 0).verdict).toBe("accepted");
    const night = acts("Guided museum visit", "Evening river or harbour cruise with dinner");
    expect(judge(museums, trip, answer({ activities: night }), 0).verdict).toBe("rejected");
  });

  it("generates the same requests from the same seed, from one home city, with budgets only when asked", () => {
    const a = requestsFor(7, 6, true);
    expect(requestsFor(7, 6, true)).toEqual(a);
    expect(new Set(a.map((r) => r.origin)).size).toBe(1);
    expect(a.every((r) => r.budget !== null && r.text.includes(`$${r.budget}`))).toBe(true);
    expect(requestsFor(7, 6, false).every((r) => r.budget === null)).toBe(true);
    expect(a.every((r) => r.destination !== r.origin)).toBe(true);
  });
});

describe("success after reflection", () => {
  const run = (applied: number, verdict: RunRecord["verdict"]): RunRecord => ({
    request: "r",
    applied,
    verdict,
    reason: null,
    gateRefused: false,
    blamed: [],
    wishNamed: false,
    confirmed: 0,
  });

  it("counts the runs from the first one under an adjustment on, and a user never helped makes it NOT met", () => {
    const runs = [run(0, "rejected"), run(0, "accepted"), run(1, "accepted"), run(0, "rejected")];
    expect(afterFirstAdjustment(runs)).toEqual(runs.slice(2));
    expect(afterFirstAdjustment([run(0, "rejected")])).toEqual([]);
    expect(verdictOf(9, 10, 0.9, 0)).toBe("met");
    expect(verdictOf(9, 10, 0.9, 1)).toBe("NOT met");
    expect(verdictOf(0, 0, 0.9, 0)).toBe("NOT met");
  });

  it("counts against the verdict only a user whose third rejection left a run to learn for", () => {
    expect(couldLearn([run(0, "rejected"), run(0, "rejected"), run(0, "rejected"), run(0, "accepted")])).toBe(true);
    // The third rejection on the last run: seed 001's three occurrences came with no run left to apply them to.
    expect(couldLearn([run(0, "accepted"), run(0, "rejected"), run(0, "rejected"), run(0, "rejected")])).toBe(false);
    expect(couldLearn([run(0, "rejected"), run(0, "unanswered"), run(0, "rejected"), run(0, "accepted")])).toBe(false);
  });

  it("says why a user was not helped: nothing read as a setting, or the setting read and how often", () => {
    const user = (runs: RunRecord[]): UserRecord => ({
      userId: "u-1",
      kind: "museums",
      preference: { kind: "museums" },
      runs,
      lessons: { applied: 0, visible: 0, revocable: 0 },
      metrics: { reflections: 0, gateRejected: 0, adjustmentsApplied: 0, costUsd: 0, rate: null },
    });
    const no = run(0, "rejected");
    expect(whyNotHelped(user([no, no, no, run(0, "unanswered")]))).toBe(
      "- u-1: 3 of 3 judged answers rejected; no reason was read as a setting Candor can change.",
    );
    const read = { ...run(0, "rejected"), blamed: ["search_flights.nonstop"] };
    expect(whyNotHelped(user([read, read, no, run(0, "accepted")]))).toBe(
      "- u-1: 3 of 4 judged answers rejected; 2 read as a setting, most often search_flights.nonstop (2 of 4 judged).",
    );
    expect(whyNotHelped(user([read, read, run(0, "accepted")]))).toBe(
      "- u-1: 2 of 3 judged answers rejected; too few rejections before the last run to learn from (3 needed, with a run left).",
    );
    expect(whyNotHelped(user([run(0, "accepted")]))).toBe("- u-1: 0 of 1 judged answers rejected; nothing to learn.");
  });
});

describe("the hidden users (issue 26)", () => {
  const run = (applied: number, verdict: RunRecord["verdict"]): RunRecord => ({
    request: "r",
    applied,
    verdict,
    reason: null,
    gateRefused: false,
    blamed: [],
    wishNamed: false,
    confirmed: 0,
  });

  it("counts the rejections about the preference apart from those for a missing part", () => {
    const missing = { ...run(0, "rejected"), reason: "The plan has no activities at all" };
    const about = { ...run(0, "rejected"), reason: "More parks" };
    expect(preferenceRejectionsBeforeApplied([missing, about, about, run(1, "accepted")])).toBe(2);
    expect(rejectionsBeforeApplied([missing, about, about, run(1, "accepted")])).toBe(3);
  });

  it("counts the rejections before the first run under an adjustment", () => {
    expect(
      rejectionsBeforeApplied([run(0, "rejected"), run(0, "accepted"), run(0, "rejected"), run(1, "accepted")]),
    ).toBe(2);
    expect(rejectionsBeforeApplied([run(0, "rejected")])).toBeNull();
  });

  it("a preference no setting can express is rejected every time; the control user accepts everything", () => {
    const trip: TripRequest = {
      text: "t",
      origin: "Madrid",
      destination: "Paris",
      days: 2,
      travellers: 1,
      budget: null,
    };
    const answer: Answer = { status: "completed", flight: null, hotel: null, activities: null, total: 100 };
    expect(judge({ kind: "breakfast" }, trip, answer, 0)).toEqual({
      verdict: "rejected",
      reason: "No breakfast included, again",
    });
    expect(judge({ kind: "control" }, trip, answer, 0)).toEqual({ verdict: "accepted" });
  });
});

describe("the held-out users (issue 26)", () => {
  const none: Answer = { status: "completed", flight: null, hotel: null, activities: null, total: 100 };

  it("judges the held-out preferences by the answer alone, with a reason from their own list", () => {
    const h = (stars: number, rating: number) => ({ ...none, hotel: hotel(stars, rating) });
    expect(judgeHeldOut("lodgingCheap", "Iberia", h(3, 6), 0)).toEqual({ verdict: "accepted" });
    const cheap = judgeHeldOut("lodgingCheap", "Iberia", h(4, 6), 0.99);
    expect(HELD_OUT.lodgingCheap.reasons("Iberia")).toContain(cheap.verdict === "rejected" ? cheap.reason : "");
    expect(judgeHeldOut("lodgingReviews", "Iberia", h(3, 8.5), 0).verdict).toBe("accepted");
    const shun = judgeHeldOut("airlineShun", "Iberia", { ...none, flight: flight(0, "IBERIA") }, 0);
    expect(shun).toEqual({ verdict: "rejected", reason: "Please keep me off Iberia" });
    expect(judgeHeldOut("airlineShun", "Iberia", { ...none, flight: flight(0, "TAP") }, 0).verdict).toBe("accepted");
    expect(judgeHeldOut("airlineShun", "Iberia", none, 0)).toEqual({
      verdict: "rejected",
      reason: "The plan has no flight at all",
    });
    expect(judgeHeldOut("noSetting", "Iberia", none, 0).verdict).toBe("rejected");
    expect(judgeHeldOut("control", "Iberia", none, 0)).toEqual({ verdict: "accepted" });
  });
});
