import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { Episode } from "../../src/domain/report.js";
import { saveEpisode } from "../../src/memory/episodes.js";
import { loadLearnedConfig, saveLearnedConfig, userReflections } from "../../src/memory/learning.js";
import { mergeAdjustments, reflectOnRunFailures } from "../../src/reflection/learn.js";
import { knobsOf } from "../../src/reflection/knobs.js";
import { minePatterns } from "../../src/reflection/patterns.js";
import { revokeAdjustment } from "../../src/reflection/memory-view.js";
import { applyAdjustments } from "../../src/reflection/adjustments.js";
import { hotelChoice, judgedEpisode } from "../fakes/learning-fixtures.js";
import { travelPlan, travelRegistry } from "../fakes/toolkit-fixtures.js";

const registry = travelRegistry();
const knobs = knobsOf(registry);

/** A run whose flight search timed out and was given up on. */
function timedOut(i: number): Episode {
  const base = judgedEpisode(registry, [hotelChoice("Paris", 7)], null, { at: Date.now() - (10 - i) * 1000 });
  return Episode.parse({
    ...base,
    status: "partial",
    plan: { steps: [{ id: "flight", workerType: "flight_agent", tools: ["search_flights"] }, ...base.plan.steps] },
    failures: [
      {
        taskId: "flight",
        tool: "search_flights",
        workerType: "flight_agent",
        failureClass: "timeout",
        error: "timed out",
      },
    ],
  });
}

describe("patterns of a run's own failures (issue 12 items 1, 4)", () => {
  it("a tool that times out in three runs becomes a valid pattern, and the third reflection removes it for this user", async () => {
    const store = new InMemoryStore();
    const outcomes = [];
    for (const i of [0, 1, 2]) {
      const episode = timedOut(i);
      const key = await saveEpisode(store, "ana", episode);
      outcomes.push(await reflectOnRunFailures({ store, registry }, "ana", key, episode));
    }
    expect(outcomes.map((o) => o?.adjustments.map((a) => [a.op.type, a.status]))).toEqual([
      [["remove_tool", "proposed"]],
      [["remove_tool", "proposed"]],
      [["remove_tool", "active"]],
    ]);
    expect(outcomes[2]!.reflection!.strategyAdjustments).toEqual([
      "Remove search_flights from plans for this user; plan search_flights_backup instead",
    ]);
    expect(outcomes[2]!.patterns[0]).toMatchObject({
      key: "failed:search_flights:timeout",
      occurrences: 3,
      validity: 1,
    });
    expect((await userReflections(store, "ana")).every((r) => r.trigger === "failure")).toBe(true);
  });

  it("an active remove_tool puts the step on the tool that produces the same thing, with its worker", () => {
    const plan = travelPlan("Plan a 3-day trip from Madrid to Paris for 2 people");
    const out = applyAdjustments(
      plan,
      [
        {
          id: "adj-r",
          op: { type: "remove_tool", tool: "search_flights" },
          text: "Remove search_flights",
          reflectionId: "refl-r",
          status: "active",
          why: "search_flights failed with timeout in 3 of 3 runs",
          pattern: "failed:search_flights:timeout",
          createdAt: "2025-01-01T00:00:00.000Z",
          activatedAt: "2025-01-01T00:00:00.000Z",
          revokedAt: null,
        },
      ],
      registry,
      () => "",
    );
    expect(out.plan.steps.find((s) => s.id === "flight")).toMatchObject({
      tools: ["search_flights_backup"],
      workerType: "backup_flight_agent",
    });
    expect(out.notes[0]).toMatch(/^Applied from reflection refl-r: no search_flights on flight/);
  });

  it("a failure no alternative tool can avoid is evaluated but not reflected on", async () => {
    const store = new InMemoryStore();
    const episode = Episode.parse({
      ...timedOut(0),
      failures: [
        {
          taskId: "hotel",
          tool: "search_hotels",
          workerType: "hotel_agent",
          failureClass: "resource_unavailable",
          error: "fully booked",
        },
      ],
    });
    const key = await saveEpisode(store, "ana", episode);
    expect(await reflectOnRunFailures({ store, registry }, "ana", key, episode)).toBeNull();
    expect(await userReflections(store, "ana")).toEqual([]);
  });
});

describe("merging adjustments into a user's config", () => {
  const ctx = (patterns = minePatterns([], knobs)) => ({
    reflectionId: "refl-2",
    patterns,
    knobs,
    registry,
    at: "2025-01-02T00:00:00.000Z",
    simulated: false,
  });

  it("an adjustment the user revoked is not proposed again; text that does not parse is kept out, with why", async () => {
    const store = new InMemoryStore();
    const first = mergeAdjustments({ adjustments: [] }, ["Add constraint: search_flights.nonstop = true"], ctx());
    await saveLearnedConfig(store, "ana", first.config);
    await revokeAdjustment(store, "ana", first.changed[0]!.id);
    const again = mergeAdjustments(
      await loadLearnedConfig(store, "ana"),
      ["Add constraint: search_flights.nonstop = true", "Be more careful"],
      ctx(),
    );
    expect(again.changed).toEqual([]);
    expect(again.notes).toEqual([
      "Not proposed again: you revoked the same adjustment (search_flights nonstop = true).",
      expect.stringMatching(/^Kept as text only, not applied: "Be more careful" \(/),
    ]);
  });

  it("an active adjustment with a new value supersedes the old one for the same setting", () => {
    const history = [6.5, 7.5, 7.9].map((r) =>
      judgedEpisode(registry, [hotelChoice("Paris", r)], { verdict: "rejected", reason: "so shabby" }),
    );
    const patterns = minePatterns(history, knobs);
    const one = mergeAdjustments({ adjustments: [] }, ["Add constraint: search_hotels.minRating >= 7"], ctx(patterns));
    const two = mergeAdjustments(one.config, ["Add constraint: search_hotels.minRating >= 8"], ctx(patterns));
    expect(two.config.adjustments.map((a) => [a.op.type === "add_constraint" && a.op.value, a.status])).toEqual([
      [7, "superseded"],
      [8, "active"],
    ]);
  });
});
