import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { Episode } from "../../src/domain/report.js";
import type { ReflectionDraft } from "../../src/domain/reflection.js";
import { saveEpisode } from "../../src/memory/episodes.js";
import { loadLearnedConfig, reflectionRuns, userReflections } from "../../src/memory/learning.js";
import { LlmReasoner } from "../../src/reasoning/llm.js";
import { createChatModel } from "../../src/reasoning/model.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { diagnose } from "../../src/reflection/diagnose.js";
import { knobsOf } from "../../src/reflection/knobs.js";
import { recordFeedback } from "../../src/reflection/learn.js";
import { validateReflection } from "../../src/reflection/quality.js";
import { runScope } from "../../src/reflection/relevance.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { workspaceToolkit } from "../../src/tools/builtin/workspace.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { scriptedServersPerTest } from "../fakes/fake-openai-server.js";
import { flightChoice, hotelChoice, judgedEpisode } from "../fakes/learning-fixtures.js";
import { travelKit, travelRegistry } from "../fakes/toolkit-fixtures.js";

// Issue 26 item 3: a reflection must be about the run it reflects on, not only well written.
const { serve } = scriptedServersPerTest();
const travel = travelRegistry();
const both = ToolRegistry.create([travelKit(), workspaceToolkit()]);

/** Blames the flight search for a complaint about the hotel: every style score is perfect. */
const BLAMES_FLIGHTS: ReflectionDraft = {
  analysis: {
    whatHappened: "search_flights chose Iberia XX123 at 'recommended' priority, and the user rejected the trip.",
    why: "search_flights ran with priority 'recommended', the provider's own pick, so the fare was not the cheapest.",
    rootCause: "The strategy of trusting search_flights' default ranking assumed it suits every user; it does not.",
  },
  patternsIdentified: [],
  strategyAdjustments: ["Change priority of search_flights from 'recommended' to 'price'"],
  learning: "For this user, rank flights by price next time, so that a costly flight is not chosen again.",
};
const ABOUT_THE_HOTEL: ReflectionDraft = {
  analysis: {
    whatHappened: "search_hotels chose Grand Hotel Paris, rated 6.9 by its guests, and the user found it a dump.",
    why: "search_hotels ran with priority 'recommended', the provider's own pick, not the best hotel.",
    rootCause: "The strategy of trusting the default ranking assumed it suits every user; it does not suit this one.",
  },
  patternsIdentified: [],
  strategyAdjustments: [
    "Change priority of search_hotels from 'recommended' to 'quality'",
    "Add constraint: search_hotels.minRating >= 8",
  ],
  learning: "For this user, rank hotels by quality next time, so that a poorly rated hotel is not chosen again.",
};

function rejected(registry: ToolRegistry, episode: Episode, reason: string) {
  const diagnosis = diagnose(reason, episode.choices ?? [], knobsOf(registry), registry);
  const evaluation = {
    verdict: "rejected" as const,
    source: "user" as const,
    reason,
    comment: null,
    at: new Date().toISOString(),
    blamed: [],
    appliedFrom: [],
  };
  return runScope(episode, evaluation, diagnosis, registry);
}

describe("the quality gate judges substance: a reflection about another run is refused", () => {
  it('"the hotel was a dump" blamed on search_flights scores 1.0 on style and is refused as off-subject', () => {
    const episode = judgedEpisode(travel, [flightChoice("Iberia"), hotelChoice("Paris", 6.9)], null);
    const scope = rejected(travel, episode, "the hotel was a dump");
    const unchecked = validateReflection(BLAMES_FLIGHTS, { evidence: [], first: true });
    expect(unchecked.valid).toBe(true);

    const verdict = validateReflection(BLAMES_FLIGHTS, { evidence: [], first: true, scope });

    expect(verdict.valid).toBe(false);
    expect(verdict.scores.relevance).toBe(0);
    expect(verdict.violations).toEqual([
      'Off-subject reflection: blames search_flights, but the complaint ("the hotel was a dump") is about search_hotels',
    ]);
    expect(validateReflection(ABOUT_THE_HOTEL, { evidence: [], first: true, scope }).valid).toBe(true);
  });

  it('a workspace run rejected as "too slow" and blamed on search_hotels is refused: the run never used it', () => {
    const episode = Episode.parse({
      ...judgedEpisode(both, [], null),
      plan: { steps: [{ id: "s1", workerType: "reader", tools: ["read_file"] }] },
      choices: [{ stepId: "s1", tool: "read_file", params: { path: "README.md" }, result: { summary: "read" } }],
    });
    const verdict = validateReflection(ABOUT_THE_HOTEL, {
      evidence: [],
      first: true,
      scope: rejected(both, episode, "too slow"),
    });
    expect(verdict.valid).toBe(false);
    expect(verdict.violations).toEqual([
      "Irrelevant reflection: blames search_hotels, which this run did not use (it used read_file)",
    ]);
  });

  it("a complaint that names no tool: the cause may name the run's tools, an adjustment only one it mentions", () => {
    const episode = judgedEpisode(travel, [flightChoice("Iberia"), hotelChoice("Paris", 6.9)], null);
    const scope = rejected(travel, episode, "not what I wanted");
    expect(scope.complaintTools).toBeNull();
    expect(validateReflection(BLAMES_FLIGHTS, { evidence: [], first: true, scope }).violations).toEqual([
      'Off-subject reflection: changes search_flights, which the complaint ("not what I wanted") does not mention',
    ]);
    const askFirst = { ...BLAMES_FLIGHTS, strategyAdjustments: ["Add constraint: ask which choice fell short first"] };
    expect(validateReflection(askFirst, { evidence: [], first: true, scope }).valid).toBe(true);
    const ghost = { ...askFirst, analysis: { ...askFirst.analysis, why: "Step s7 ran search_flights late." } };
    expect(validateReflection(ghost, { evidence: [], first: true, scope }).violations).toEqual([
      "Irrelevant reflection: names step s7, which this run did not have (its steps: flight, hotel)",
    ]);
  });

  it("the rules' own reflections stay inside their run for every way the bench's users complain", async () => {
    const reasons = [
      "The hotel was a dump",
      "Never again with Iberia",
      "Too pricey for me",
      "I can't stand layovers",
      "Guests rate that hotel badly, and they were right",
    ];
    for (const reason of reasons) {
      const store = new InMemoryStore();
      const episode = judgedEpisode(travel, [flightChoice("Iberia", 1), hotelChoice("Paris", 6.9)], null);
      await saveEpisode(store, "ana", episode);
      const out = await recordFeedback(
        { store, registry: travel },
        { threadId: episode.threadId, userId: "ana", planId: episode.planId },
        { verdict: "rejected", reason, comment: null },
      );
      expect(out.notStored, reason).toBeNull();
    }
  });
});

describe("a model's off-subject reflection is never stored, and the refusal is said and logged", () => {
  async function rejectWith(script: { json: unknown }[]) {
    const { fake, baseUrl } = await serve(script);
    const model = createChatModel({ apiKey: "k", baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
    const store = new InMemoryStore();
    const episode = judgedEpisode(travel, [flightChoice("Iberia"), hotelChoice("Paris", 6.9)], null);
    await saveEpisode(store, "ana", episode);
    const log = memoryDecisionLog();
    const out = await recordFeedback(
      {
        store,
        registry: travel,
        reasoner: new LlmReasoner({ model, fallback: new RulesReasoner() }),
        decisionLog: log,
      },
      { threadId: episode.threadId, userId: "ana", planId: episode.planId },
      { verdict: "rejected", reason: "The hotel was a dump", comment: null },
    );
    return { fake, store, log, out };
  }
  const flat = (d: ReflectionDraft) => ({ ...d.analysis, ...d, analysis: undefined });

  it("the next attempt, about the hotel, is stored; the refused one is announced and in the decision log", async () => {
    const { store, log, out } = await rejectWith([{ json: flat(BLAMES_FLIGHTS) }, { json: flat(ABOUT_THE_HOTEL) }]);
    expect(out.reflection).toMatchObject({ source: "llm", attempts: 2 });
    expect(out.messages).toContainEqual(
      expect.stringMatching(
        /^Reflection: Attempt 1: quality 0\.\d+ \(Off-subject reflection: blames search_flights, but the complaint \("The hotel was a dump"\) is about search_hotels\)\.$/,
      ),
    );
    expect(log.entries).toContainEqual(
      expect.objectContaining({
        operation: "reflect",
        decision: expect.stringMatching(/^model reflection attempt 1 refused by the quality gate/),
        reasoning: expect.stringMatching(/^Off-subject reflection: blames search_flights/),
      }),
    );
    const stored = await userReflections(store, "ana");
    expect(stored.map((r) => r.strategyAdjustments)).toEqual([ABOUT_THE_HOTEL.strategyAdjustments]);
    const ops = (await loadLearnedConfig(store, "ana")).adjustments.map((a) => a.op.tool);
    expect(ops).not.toContain("search_flights");
  });

  it("three off-subject answers: nothing of the model's is stored, the rules reflect on the hotel instead", async () => {
    const { store, out } = await rejectWith([
      { json: flat(BLAMES_FLIGHTS) },
      { json: flat(BLAMES_FLIGHTS) },
      { json: flat(BLAMES_FLIGHTS) },
    ]);
    expect(out.reflection).toMatchObject({ source: "rules" });
    expect(out.reflection!.strategyAdjustments.join(" ")).not.toMatch(/search_flights/);
    expect((await reflectionRuns(store, "ana"))[0]).toMatchObject({ iterations: 3, source: "rules" });
    const tools = (await loadLearnedConfig(store, "ana")).adjustments.map((a) => a.op.tool);
    expect(new Set(tools)).toEqual(new Set(["search_hotels"]));
  });
});
