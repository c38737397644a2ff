import { describe, expect, it } from "vitest";
import { ConfidenceCalibrator } from "../../src/confidence/calibrator.js";
import { recentEpisodes } from "../../src/memory/episodes.js";
import { EASY_TRIP, agentsOnTempDb, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";

/*
 * Runs with injected faults are practice: their episodes and outcomes are kept, marked simulated; they teach
 * other practice runs (the demo's "learn across runs") but never a real run, and never calibrate confidence.
 */
const { agent } = agentsOnTempDb();
const USER = "practice_user";
const practice = () => agent({ faults: ["search_flights=timeout"], stepTimeoutMs: 150 });
const real = () => agent();
const flightTool = (out: Parameters<typeof planOf>[0]) =>
  planOf(out)!.steps.find((s) => s.id.startsWith("flight"))!.tools[0];

describe("simulated runs (faults injected)", () => {
  it("are stored marked simulated, teach later practice runs, and are left out of a real run's memory", async () => {
    for (const n of [1, 2]) {
      const out = await practice().graph.invoke(tripInput(EASY_TRIP, {}, USER), threadConfig(`practice-${n}`));
      expect(out.status).toBe("completed");
      expect(out.reflection!.lessons.at(-1)).toMatch(
        /^Faults were injected into this run \(search_flights=timeout\): it does not calibrate confidence/,
      );
    }
    const a = real();
    const episodes = await recentEpisodes(a.persistence.store, USER);
    expect(episodes.map((e) => e.simulated)).toEqual([true, true]);
    const outcomes = await new ConfidenceCalibrator(a.persistence.store, USER).outcomes();
    expect(outcomes.map((o) => o.simulated)).toEqual([true, true]);

    // Another practice run learns from the first two: the flight search that kept timing out is planned around.
    const third = await practice().graph.invoke(tripInput(EASY_TRIP, {}, USER), threadConfig("practice-3"));
    expect(flightTool(third)).toBe("search_flights_backup");

    // A real run does not: search_flights never failed for real, and the plan says what memory left out.
    const live = await a.graph.invoke(tripInput(EASY_TRIP, {}, USER), threadConfig("real"));
    expect(live.status).toBe("completed");
    expect(flightTool(live)).toBe("search_flights");
    expect(live.planNotes).toContain(
      "Memory: 3 recent run(s) with injected faults left out; practice runs do not teach real ones.",
    );
    expect(live.reflection!.lessons.join(" ")).not.toMatch(/Faults were injected/);
    expect((await recentEpisodes(a.persistence.store, USER))[0]!.simulated).toBeUndefined();
  });
});
