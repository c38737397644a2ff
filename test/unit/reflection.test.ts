import { describe, expect, it } from "vitest";
import type { ReflectionDraft } from "../../src/domain/reflection.js";
import { applyAdjustments, isActionable, parseAdjustment } from "../../src/reflection/adjustments.js";
import { blamedKeys, diagnose } from "../../src/reflection/diagnose.js";
import { knobsOf } from "../../src/reflection/knobs.js";
import { minePatterns, validatePattern, PatternValidator } from "../../src/reflection/patterns.js";
import { scoreReflection, validateReflection } from "../../src/reflection/quality.js";
import { reflectWithRules, type ReflectionInput } from "../../src/reflection/rules-reflection.js";
import { flightChoice, hotelChoice, judgedEpisode } from "../fakes/learning-fixtures.js";
import { travelPlan, travelRegistry } from "../fakes/toolkit-fixtures.js";

const registry = travelRegistry();
const knobs = knobsOf(registry);

/** The reflection input for the newest of `history` (its evaluation must be set). */
function inputFor(history: ReturnType<typeof judgedEpisode>[], first = false): ReflectionInput {
  const episode = history[history.length - 1]!;
  const evaluation = episode.evaluation!;
  return {
    episode,
    evaluation,
    trigger: "rejection",
    diagnosis: diagnose(evaluation.reason ?? "", episode.choices ?? [], knobs, registry),
    history,
    patterns: minePatterns(history, knobs),
    knobs,
    registry,
    first,
  };
}

const evidence = (i: ReflectionInput) => [i.evaluation.reason ?? "", ...(i.episode.choices ?? []).map((c) => c.tool)];

describe("the quality gate (seed 001 scenarios 5, 6, 10)", () => {
  const good: ReflectionDraft = {
    analysis: {
      whatHappened:
        "Step hotel (search_hotels) chose Grand Hotel Paris, 4 stars, guest rating 5, and the user rejected it.",
      why: "search_hotels ran with priority 'price', so it picked the cheapest hotel and never looked at quality.",
      rootCause:
        "The budget-first strategy assumed price matters most; it conflicts with this user's quality preference.",
    },
    patternsIdentified: ["Whenever search_hotels ranks by 'price', the user rejects the answer for hotel quality"],
    strategyAdjustments: [
      "Change priority of search_hotels from 'price' to 'quality'",
      "Add constraint: search_hotels.minRating >= 7",
    ],
    learning:
      "For this user quality beats price: future hotel searches keep only hotels rated 7 or more, then optimise price.",
  };

  it("scenario 5: a complete, deep, actionable, relevant reflection is valid with no violations", () => {
    const v = validateReflection(good, { evidence: ["Quality too low (5 < 7)", "User rejected", "search_hotels"] });
    expect(v.violations).toEqual([]);
    expect(v.valid).toBe(true);
    expect(v.scores).toMatchObject({ completeness: 1, depth: 1, actionability: 1 });
    expect(v.scores.relevance).toBeGreaterThanOrEqual(0.75);
    expect(v.scores.quality).toBeGreaterThanOrEqual(0.85);
  });

  it("scenario 6: a shallow, vague, incomplete reflection is rejected in the seed's words", () => {
    const bad: ReflectionDraft = {
      analysis: { whatHappened: "It failed", why: "", rootCause: "" },
      patternsIdentified: [],
      strategyAdjustments: ["Do better"],
      learning: "",
    };
    const v = validateReflection(bad, { evidence: ["Quality too low (5 < 7)", "User rejected"] });
    expect(v.valid).toBe(false);
    expect(v.scores.quality).toBe(0.3);
    expect(v.violations).toEqual([
      "Shallow reflection: depth=0.3 < 0.7",
      "Not actionable: 0.4 < 0.8",
      "Incomplete reflection: 0.5 < 0.9",
    ]);
  });

  it("scenario 10: what happened is shallow, why is medium, only a root cause naming the strategy is deep", () => {
    const base = { ...good, analysis: { whatHappened: "Wrong hotel selected", why: "", rootCause: "" } };
    const depth = (a: Partial<ReflectionDraft["analysis"]>) =>
      scoreReflection({ ...base, analysis: { ...base.analysis, ...a } }, { evidence: [] }).depth;
    expect(depth({})).toBe(0.3);
    expect(depth({ why: "Prioritized price over quality" })).toBe(0.5);
    expect(depth({ why: "Prioritized price over quality", rootCause: "The hotel was bad" })).toBe(0.65);
    expect(
      depth({
        why: "Prioritized price over quality",
        rootCause: "'Budget-first' strategy conflicts with user preference",
      }),
    ).toBeGreaterThanOrEqual(0.7);
  });

  it("scenario 3: only the seed's actionable forms count as actionable", () => {
    expect(isActionable("Change priority from 'price' to 'quality'")).toBe(true);
    expect(isActionable("Add constraint: quality >= 7 in search")).toBe(true);
    expect(isActionable("Remove search_flights")).toBe(true);
    expect(isActionable("Filter results where rating < 7")).toBe(true);
    expect(isActionable("Do better")).toBe(false);
    expect(isActionable("Be more careful")).toBe(false);
  });
});

describe("patterns (seed 001 scenarios 2, 11)", () => {
  it("scenario 11: one occurrence is insufficient data, validity 0, and the pattern is not cited", () => {
    expect(PatternValidator.validate(1, 1)).toEqual({
      validity: 0,
      valid: false,
      reason: "Insufficient data (1 < 3 min_occurrences)",
    });
    const history = [judgedEpisode(registry, [hotelChoice("Paris", 6.9)], { verdict: "rejected", reason: "a dump" })];
    const patterns = minePatterns(history, knobs);
    expect(patterns[0]).toMatchObject({ occurrences: 1, validity: 0, valid: false });
    expect(reflectWithRules(inputFor(history)).patternsIdentified).toEqual([]);
  });

  it("scenario 2: three hotels chosen by price and rejected for quality make a pattern with validity 1.0", () => {
    const history = ["NYC", "LA", "SF", "Paris"].map((city, i) =>
      judgedEpisode(
        registry,
        [hotelChoice(city === "NYC" ? "New York" : "Paris", 5 + i * 0.2, { priority: "price" })],
        {
          verdict: "rejected",
          reason: ["quality too low", "the room was shabby", "poor quality for the money", "what a dump"][i]!,
        },
      ),
    );
    const quality = minePatterns(history, knobs).find((p) => p.key === "rejected:search_hotels.priority=quality");
    expect(quality).toMatchObject({ occurrences: 4, total: 4, validity: 1, valid: true });
    expect(quality!.text).toMatch(/Whenever search_hotels ranks by 'price' \(cheapest first\), the user rejects/);
  });

  it("an accepted answer under the same setting, no better than a rejected one, counts against the pattern", () => {
    const rejected = [0, 1, 2].map(() =>
      judgedEpisode(registry, [hotelChoice("Paris", 6.9)], { verdict: "rejected", reason: "quality too low" }),
    );
    const accepted = [0, 1].map(() => judgedEpisode(registry, [hotelChoice("Rome", 6.9)], { verdict: "accepted" }));
    const p = minePatterns([...rejected, ...accepted], knobs).find((x) => x.target === "search_hotels.priority");
    expect(p).toMatchObject({ occurrences: 3, total: 5, validity: 0.6, valid: false });
    expect(p!.reason).toBe("Does not hold: validity 0.60 < 0.75 (3 of 5 episodes)");
    expect(validatePattern(3, 4)).toMatchObject({ validity: 0.75, valid: true });
  });
});

describe("reading a rejection's reason (learn from the content, not the exact words)", () => {
  const choices = [flightChoice("Iberia", 1), hotelChoice("Paris", 6.9)];
  const keys = (reason: string) => blamedKeys(diagnose(reason, choices, knobs, registry));

  it("differently worded complaints about the hotel land on the same settings", () => {
    for (const reason of [
      "The hotel was a dump",
      "Terrible place to stay, really shabby",
      "I expected a nicer hotel than that",
      "poor quality accommodation",
    ])
      expect(keys(reason)).toEqual(["search_hotels.priority=quality", "search_hotels.minRating"]);
    expect(keys("dirty room and bad reviews")).toEqual(["search_hotels.priority=rating", "search_hotels.minRating"]);
  });

  it("a complaint names the flight's own settings: layovers, and the airline by name", () => {
    expect(keys("I hate layovers")).toEqual(["search_flights.nonstop"]);
    expect(keys("Never again with Iberia")).toEqual(["search_flights.avoidAirlines=Iberia"]);
  });

  it("a reason that shares no word with any setting points nowhere", () => {
    expect(keys("meh")).toEqual([]);
  });
});

describe("rules reflection (seed 001 scenarios 1, 4, 17, 18)", () => {
  it("scenario 1: a rejection for quality has a root cause naming the strategy, with depth ≥ 0.7", () => {
    const history = [
      judgedEpisode(registry, [hotelChoice("Paris", 5, { priority: "price" })], {
        verdict: "rejected",
        reason: "Quality too low (5 < 7)",
      }),
    ];
    const input = inputFor(history, true);
    const r = reflectWithRules(input);
    expect(r.analysis.whatHappened).toContain("Grand Hotel Paris");
    expect(r.analysis.why).toContain("priority 'price' (cheapest first)");
    expect(r.analysis.rootCause).toMatch(/strategy .* assumed .* conflicts with a preference about hotel quality/);
    const v = validateReflection(r, { evidence: evidence(input), first: true });
    expect(v.scores.depth).toBeGreaterThanOrEqual(0.7);
    expect(v.valid).toBe(true);
  });

  it("scenarios 3 and 4: adjustments are actionable and parse; the learning says how to apply it (≥ 50 chars)", () => {
    const history = [judgedEpisode(registry, [hotelChoice("Paris", 6.9)], { verdict: "rejected", reason: "a dump" })];
    const r = reflectWithRules(inputFor(history, true));
    expect(r.strategyAdjustments).toEqual([
      "Change priority of search_hotels from 'recommended' to 'quality'",
      "Add constraint: search_hotels.minRating >= 7",
    ]);
    expect(scoreReflection(r, { evidence: [], first: true }).actionability).toBeGreaterThanOrEqual(0.8);
    expect(r.strategyAdjustments.map((a) => parseAdjustment(a, knobs, registry))).toEqual([
      {
        ok: true,
        value: {
          type: "change_priority",
          tool: "search_hotels",
          param: "priority",
          from: "recommended",
          to: "quality",
        },
      },
      { ok: true, value: { type: "add_constraint", tool: "search_hotels", param: "minRating", op: ">=", value: 7 } },
    ]);
    expect(r.learning.length).toBeGreaterThanOrEqual(50);
    expect(r.learning).toMatch(/Next time: search_hotels ranks by 'quality'/);
  });

  it("scenario 17: a new user's first reflection works from the current failure alone and passes at 0.6", () => {
    const history = [judgedEpisode(registry, [hotelChoice("Paris", 6.9)], { verdict: "rejected", reason: "meh" })];
    const input = inputFor(history, true);
    const r = reflectWithRules(input);
    expect(r.patternsIdentified).toEqual([]);
    expect(r.strategyAdjustments.length).toBeGreaterThan(0);
    const v = validateReflection(r, { evidence: evidence(input), first: true });
    expect(v.scores.quality).toBeGreaterThanOrEqual(0.6);
    expect(v.valid).toBe(true);
  });

  it("scenario 18: the third rejection for the same reason cites the pattern (validity 1.0) and sets the minimum from every rejected answer", () => {
    const history = [7.6, 6.4, 6.9].map((rating, i) =>
      judgedEpisode(registry, [hotelChoice("Paris", rating)], {
        verdict: "rejected",
        reason: ["a dump", "so shabby", "awful hotel"][i]!,
      }),
    );
    const r = reflectWithRules(inputFor(history));
    expect(r.patternsIdentified.join(" ")).toMatch(/the user rejects .*validity 1\.00, 3 of 3/);
    // The newest answer was rated 6.9, but an earlier one rated 7.6 was rejected too: more aggressive, at least 8.
    expect(r.strategyAdjustments).toContain("Add constraint: search_hotels.minRating >= 8");
    expect(r.learning).toMatch(
      /^For this user, hotel quality and the hotel's guest rating matter more .* Always, from the next run on/,
    );
  });
});

describe("applying adjustments to a plan (seed 001 scenario 9)", () => {
  it("sets the learned parameters on the steps that call the tool, records them, and leaves other steps alone", () => {
    const plan = travelPlan("Plan a 3-day trip from Madrid to Paris for 2 people");
    const active = (id: string, text: string) => {
      const op = parseAdjustment(text, knobs, registry);
      if (!op.ok) throw new Error(op.reason);
      return {
        id,
        op: op.value,
        text,
        reflectionId: "refl-1",
        status: "active" as const,
        why: "3 of 3",
        pattern: null,
        createdAt: "2025-01-01T00:00:00.000Z",
        activatedAt: "2025-01-01T00:00:00.000Z",
        revokedAt: null,
      };
    };
    const out = applyAdjustments(
      plan,
      [
        active("adj-a", "Change priority of search_hotels from 'recommended' to 'quality'"),
        active("adj-b", "Add constraint: search_hotels.minRating >= 7"),
        { ...active("adj-c", "Add constraint: search_flights.nonstop = true"), status: "revoked" },
      ],
      registry,
      (id) => `revoke: ${id}`,
    );
    const hotel = out.plan.steps.find((s) => s.id === "hotel")!;
    expect(hotel.params).toMatchObject({ priority: "quality", minRating: 7 });
    expect(out.plan.steps.find((s) => s.id === "flight")!.params).not.toHaveProperty("nonstop");
    expect(out.plan.learned.map((l) => l.adjustmentId)).toEqual(["adj-a", "adj-b"]);
    expect(out.notes[0]).toBe(
      "Applied from reflection refl-1: search_hotels priority 'recommended' → 'quality' on hotel (3 of 3). revoke: adj-a",
    );
    expect(out.plan.understanding.assumptions.map((a) => a.name)).toEqual(
      expect.arrayContaining(["priority", "minRating"]),
    );
  });

  it("refuses what the tool's schema refuses, and what does not parse", () => {
    expect(parseAdjustment("Add constraint: search_hotels.minRating >= 12", knobs, registry)).toMatchObject({
      ok: false,
    });
    expect(parseAdjustment("Change colour of search_hotels to 'blue'", knobs, registry)).toEqual({
      ok: false,
      reason: "search_hotels.colour is not a setting feedback may change",
    });
    expect(parseAdjustment("Do better", knobs, registry).ok).toBe(false);
    expect(parseAdjustment("Filter search_flights results where airline != 'Iberia'", knobs, registry)).toEqual({
      ok: true,
      value: {
        type: "filter",
        tool: "search_flights",
        param: "avoidAirlines",
        field: "airline",
        op: "!=",
        value: "Iberia",
      },
    });
  });
});
