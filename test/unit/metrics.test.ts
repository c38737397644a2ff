import { describe, expect, it } from "vitest";
import { Episode } from "../../src/domain/report.js";
import type { Reflection, ReflectionRun } from "../../src/domain/reflection.js";
import { learningMetrics, metricsLines } from "../../src/reflection/metrics.js";
import { hotelChoice, judgedEpisode } from "../fakes/learning-fixtures.js";
import { travelRegistry } from "../fakes/toolkit-fixtures.js";

const registry = travelRegistry();

function reflection(quality: number, depth: number, actionability: number): Reflection {
  return {
    id: `refl-${quality}`,
    threadId: null,
    planId: "p",
    task: "t",
    trigger: "rejection",
    analysis: { whatHappened: "w", why: "y", rootCause: "r" },
    patternsIdentified: [],
    strategyAdjustments: [],
    learning: "l",
    scores: { quality, completeness: 1, depth, actionability, relevance: 1 },
    source: "llm",
    attempts: 1,
    adjustmentIds: [],
    createdAt: "2025-01-01T00:00:00.000Z",
    expiresAt: "2025-04-01T00:00:00.000Z",
  };
}

function run(over: Partial<ReflectionRun>): ReflectionRun {
  return {
    at: "2025-01-01T00:00:00.000Z",
    threadId: null,
    trigger: "rejection",
    source: "llm",
    iterations: 1,
    reflectionId: "refl-x",
    scores: null,
    violations: [],
    degraded: null,
    cost: 0.01,
    tokens: 100,
    adjustmentsActivated: 0,
    expiresAt: "2025-04-01T00:00:00.000Z",
    ...over,
  };
}

describe("metrics (seed 001 scenario 20, seed 002, seed 000)", () => {
  it("scenario 20: quality average and p95, depth and actionability, rejected reflections, loop iterations, success after reflection", () => {
    const accepted = Episode.parse({
      ...judgedEpisode(registry, [hotelChoice("Paris", 9.2)], { verdict: "accepted" }),
      applied: [{ adjustmentId: "adj-1", reflectionId: "refl-1", stepIds: ["hotel"], summary: "s" }],
      planningMs: 40,
    });
    const rejected = Episode.parse({
      ...judgedEpisode(registry, [hotelChoice("Rome", 9)], { verdict: "rejected", reason: "too expensive" }),
      applied: [{ adjustmentId: "adj-1", reflectionId: "refl-1", stepIds: ["hotel"], summary: "s" }],
      planningMs: 10,
      status: "partial",
      strategiesUsed: ["SKIP"],
    });
    const practice = Episode.parse({ ...judgedEpisode(registry, [], null), simulated: true });
    const m = learningMetrics({
      users: ["ana"],
      episodes: [accepted, rejected, practice],
      reflections: [reflection(0.8, 0.7, 0.9), reflection(0.9, 0.8, 0.8), reflection(0.7, 0.9, 1)],
      runs: [
        run({ iterations: 1 }),
        run({ iterations: 2 }),
        run({ iterations: 3, reflectionId: null }),
        run({ degraded: "timeout", reflectionId: null, iterations: 0 }),
        run({ degraded: "budget", iterations: 0, source: "rules" }),
      ],
      outcomes: [],
      plansLogged: 5,
    });
    expect(m.scope).toEqual({ users: ["ana"], practiceRunsLeftOut: 1 });
    expect(m.reflection).toMatchObject({
      reflections: 3,
      qualityP95: 0.9,
      rejected: 1,
      improvementIterationsAverage: 2,
      timeouts: 1,
      overBudget: 1,
    });
    expect(m.reflection.qualityAverage).toBeCloseTo(0.8, 10);
    expect(m.reflection.depthAverage).toBeCloseTo(0.8, 10);
    expect(m.reflection.actionabilityAverage).toBeCloseTo(0.9, 10);
    expect(m.adjustments).toMatchObject({ applied: 2, judgedAfterReflection: 2, successAfterReflectionRate: 0.5 });
    expect(m.planning).toMatchObject({ plansCreated: 5, planningMsP50: 10, planningMsP95: 40, planSuccessRate: 0.5 });
    expect(m.revisions).toEqual({ total: 1, successRate: 1 });
    expect(m.calibration).toMatchObject({ correlation: null, target: 0.7, outcomes: 0 });
    expect(metricsLines(m)[3]).toBe("Adjustments: 2 applied · success after reflection 50% of 2 judged (target 78%)");
  });

  it("figures over nothing are n/a, never 0 or NaN", () => {
    const m = learningMetrics({ users: [], episodes: [], reflections: [], runs: [], outcomes: [], plansLogged: null });
    expect(m.planning.planSuccessRate).toBeNull();
    expect(m.reflection.qualityAverage).toBeNull();
    expect(metricsLines(m).join("\n")).not.toMatch(/NaN/);
  });
});
