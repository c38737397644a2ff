import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { saveEpisode } from "../../src/memory/episodes.js";
import { loadLearnedConfig } from "../../src/memory/learning.js";
import { collectMetrics } from "../../src/reflection/collect-metrics.js";
import { recordFeedback } from "../../src/reflection/learn.js";
import { memoryLines, userMemory } from "../../src/reflection/memory-view.js";
import { metricsLines } from "../../src/reflection/metrics.js";
import { wishOf } from "../../src/reflection/wishes.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { flightChoice, hotelChoice, judgedEpisode } from "../fakes/learning-fixtures.js";
import { travelRegistry } from "../fakes/toolkit-fixtures.js";

// Issue 26 item 1: a preference no tool setting can express is named to the user, kept and counted.
const registry = travelRegistry();

describe("wishOf reads what a reason asks for, in plain English phrasing", () => {
  it.each([
    ["I want a window seat", "a window seat"],
    ["We'd like a hotel with a pool, please", "a hotel with a pool"],
    ["There was no breakfast included", "breakfast included"],
    ["I need to have morning flights because I work afternoons", "morning flights"],
    ["Too slow", "Too slow"],
  ])("%s → %s", (reason, wish) => {
    expect(wishOf(reason)).toBe(wish);
  });
});

describe("a rejection no setting can act on becomes an unmet wish", () => {
  async function rejectTwice(reasons: string[]) {
    const store = new InMemoryStore();
    const log = memoryDecisionLog();
    const outs = [];
    for (const reason of reasons) {
      const episode = judgedEpisode(registry, [flightChoice("Iberia"), hotelChoice("Paris", 8.8)], null);
      await saveEpisode(store, "ana", episode);
      outs.push(
        await recordFeedback(
          { store, registry, decisionLog: log },
          { threadId: episode.threadId, userId: "ana", planId: episode.planId },
          { verdict: "rejected", reason, comment: null },
        ),
      );
    }
    return { store, log, outs };
  }

  it("is named to the user with what the settings can choose, counted again when said again, and in metrics", async () => {
    const { store, log, outs } = await rejectTwice(["I want a window seat", "i want a window seat!"]);
    const [first, second] = outs;
    expect(first!.messages).toContainEqual(
      expect.stringMatching(
        /^No tool setting can choose "a window seat": the settings of search_flights, search_hotels choose only nonstop flights; the flight's price \(price\); airlines to avoid; hotel quality \(price, quality, rating\); the hotel's guest rating\. Kept as an unmet wish \(wish-[0-9a-f]{8}\), shown in candor memory and counted in candor metrics; nothing was changed for it\.$/,
      ),
    );
    expect(second!.messages).toContainEqual(expect.stringMatching(/\(wish-[0-9a-f]{8}, said 2 times\)/));
    const config = await loadLearnedConfig(store, "ana");
    expect(config.wishes).toEqual([
      expect.objectContaining({ wish: "a window seat", times: 2, tools: ["search_flights", "search_hotels"] }),
    ]);
    expect(config.adjustments.filter((a) => a.status === "active")).toEqual([]);
    expect(log.entries).toContainEqual(
      expect.objectContaining({
        decision: expect.stringMatching(/^unmet wish wish-\w+: "a window seat" \(said 1 time\)$/),
      }),
    );

    const metrics = await collectMetrics(store, { userId: "ana" });
    expect(metrics.wishes).toEqual({ unmet: 1, said: 2 });
    expect(metricsLines(metrics)).toContain(
      "Wishes:      1 no tool setting can choose (said in 2 rejections; see candor memory)",
    );
    const lines = memoryLines(await userMemory(store, "ana", registry));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}wish-\w+ {2}"a window seat" — said 2 times, last /));
  });

  it("a reason that points at a setting is learned from, not kept as a wish", async () => {
    const { store, outs } = await rejectTwice(["Never again with Iberia"]);
    expect(outs[0]!.messages.join("\n")).not.toMatch(/No tool setting can choose/);
    expect((await loadLearnedConfig(store, "ana")).wishes ?? []).toEqual([]);
  });
});

describe("a reason about a tool with settings, none of whose words it uses", () => {
  it("is not claimed unchoosable: Candor says it could not tell which setting was meant", async () => {
    const store = new InMemoryStore();
    const episode = judgedEpisode(registry, [flightChoice("Iberia"), hotelChoice("Paris", 8.8)], null);
    await saveEpisode(store, "ana", episode);
    const out = await recordFeedback(
      { store, registry },
      { threadId: episode.threadId, userId: "ana", planId: episode.planId },
      { verdict: "rejected", reason: "The hotel wallpaper was an odd colour", comment: null },
    );
    expect(out.messages.join("\n")).not.toMatch(/No tool setting can choose/);
    expect(out.messages).toContainEqual(
      expect.stringMatching(
        /^Not read as a setting: "The hotel wallpaper was an odd colour" is about search_hotels, whose settings choose hotel quality \(price, quality, rating\); the hotel's guest rating, but it shares no word with any of them, so Candor cannot tell which you mean\. Say it with the setting's words to have it learned\. Kept as an unmet wish \(wish-\w+\)/,
      ),
    );
    expect((await loadLearnedConfig(store, "ana")).wishes).toHaveLength(1);
  });
});
