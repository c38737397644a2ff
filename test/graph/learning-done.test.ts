import { describe, expect, it } from "vitest";
import { loadLearnedConfig } from "../../src/memory/learning.js";
import { giveFeedback } from "../../src/reflection/feedback.js";
import type { LearningDeps } from "../../src/reflection/learn.js";
import { revokeAdjustment, userMemory } from "../../src/reflection/memory-view.js";
import { collectMetrics } from "../../src/reflection/collect-metrics.js";
import { agentsOnTempDb, threadConfig, tripInput, type Agent } from "../fakes/graph-harness.js";
import { travelRegistry } from "../fakes/toolkit-fixtures.js";
import { planOf } from "../../src/domain/plan-state.js";

// Issue 12's "done when": a user who rejects three answers for the same reason, in three different words, gets a
// better answer on the fourth run, is told which lesson did it, and can revoke it; another user is unaffected.

const { agent } = agentsOnTempDb();
const trip = (to: string) => `Plan a 3-day trip from Madrid to ${to} for 2 people`;

async function run(a: Agent, thread: string, user: string, to: string) {
  const out = await a.graph.invoke(tripInput(trip(to), {}, user), threadConfig(thread));
  expect(out.status).toBe("completed");
  const hotel = planOf(out)!.steps.find((s) => s.tools[0] === "search_hotels")!;
  return { out, hotel, result: hotel.result as { name: string; rating: number; stars: number } };
}

describe("learning that changes the next run (issue 12 done-when; seed 001 scenarios 9, 18, 19)", () => {
  it("three rejections for hotel quality, worded three ways, make the fourth run pick a better hotel and say why; revocable; other users untouched", async () => {
    const a = agent();
    const deps: LearningDeps = { store: a.persistence.store, registry: travelRegistry() };
    const reasons = ["The hotel was a dump", "Way too shabby a place to stay", "I expected a much nicer hotel"];
    const rejected = [];
    for (const [i, to] of ["Paris", "Rome", "London"].entries()) {
      const { result } = await run(a, `ana-${i}`, "ana", to);
      rejected.push(result.rating);
      const fb = await giveFeedback(
        a.graph,
        `ana-${i}`,
        { verdict: "rejected", reason: reasons[i]!, comment: null },
        deps,
      );
      expect(fb.reflection).not.toBeNull();
      if (i < 2) expect(fb.adjustments.every((x) => x.status === "proposed")).toBe(true);
      else {
        // Scenario 18: the third rejection makes the pattern (3 of 3) and the adjustments apply from now on.
        expect(fb.patterns.map((p) => [p.key, p.occurrences, p.validity])).toEqual(
          expect.arrayContaining([
            ["rejected:search_hotels.priority=quality", 3, 1],
            ["rejected:search_hotels.minRating", 3, 1],
          ]),
        );
        expect(fb.adjustments.map((x) => [x.status, x.op.type])).toEqual([
          ["active", "change_priority"],
          ["active", "add_constraint"],
        ]);
      }
    }
    const active = (await loadLearnedConfig(a.persistence.store, "ana")).adjustments.filter(
      (x) => x.status === "active",
    );
    const minRating = active.find((x) => x.op.type === "add_constraint")!;
    expect(minRating.op).toMatchObject({ param: "minRating", value: Math.floor(Math.max(...rejected)) + 1 });

    // Fourth run: the learned settings are on the hotel step, announced with the reflection they came from.
    const fourth = await run(a, "ana-3", "ana", "Lisbon");
    expect(fourth.hotel.params).toMatchObject({ priority: "quality", minRating: 8 });
    const applied = fourth.out.planNotes.filter((n) => n.startsWith("Applied from reflection"));
    expect(applied).toHaveLength(2);
    expect(applied[0]).toMatch(
      new RegExp(
        `^Applied from reflection ${minRating.reflectionId}: search_hotels priority 'recommended' → 'quality' on hotel .*Revoke it with: candor memory revoke adj-\\w+ --user ana$`,
      ),
    );
    expect(planOf(fourth.out)!.learned.map((l) => l.adjustmentId)).toEqual(active.map((x) => x.id));
    expect(fourth.result.rating).toBeGreaterThanOrEqual(8);
    expect(fourth.result.stars).toBe(5);

    // Another user, same request: the provider's pick, rated below what ana asked for.
    const ben = await run(a, "ben-0", "ben", "Lisbon");
    expect(ben.hotel.params).not.toHaveProperty("minRating");
    expect(ben.out.planNotes.some((n) => n.startsWith("Applied from reflection"))).toBe(false);
    expect(ben.result.rating).toBeLessThan(fourth.result.rating);
    expect((await userMemory(a.persistence.store, "ben", travelRegistry())).adjustments).toEqual([]);

    // Scenario 19: accepting the fourth answer is stored as a success after reflection.
    const ok = await giveFeedback(a.graph, "ana-3", { verdict: "accepted", reason: null, comment: null }, deps);
    expect(ok.evaluation.appliedFrom).toEqual([minRating.reflectionId]);
    expect(ok.messages[1]).toMatch(/counted as a success after reflection\.$/);

    // Scenario 20: the learning in figures.
    const metrics = await collectMetrics(a.persistence.store, { userId: "ana" });
    expect(metrics.reflection.reflections).toBe(3);
    expect(metrics.reflection.rejected).toBe(0);
    expect(metrics.reflection.qualityAverage).toBeGreaterThanOrEqual(0.8);
    expect(metrics.adjustments).toMatchObject({ applied: 2, judgedAfterReflection: 1, successAfterReflectionRate: 1 });
    expect(metrics.planning).toMatchObject({ plansCreated: 4, planSuccessRate: 1 });

    // Revoked: the fifth run is back to the provider's pick.
    for (const x of active) await revokeAdjustment(a.persistence.store, "ana", x.id);
    const fifth = await run(a, "ana-4", "ana", "Lisbon");
    expect(fifth.hotel.params).not.toHaveProperty("minRating");
    expect(fifth.result.name).toBe(ben.result.name);
  });
});
