import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { saveEpisode } from "../../src/memory/episodes.js";
import {
  addCost,
  costToday,
  liveEpisodes,
  loadLearnedConfig,
  reflectionRuns,
  userReflections,
} from "../../src/memory/learning.js";
import { LlmReasoner } from "../../src/reasoning/llm.js";
import { createChatModel } from "../../src/reasoning/model.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { recordFeedback, type LearningDeps } from "../../src/reflection/learn.js";
import type { ReflectionLimits } from "../../src/reflection/limits.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { scriptedServersPerTest, type ScriptedResponse } from "../fakes/fake-openai-server.js";
import { flightChoice, hotelChoice, judgedEpisode } from "../fakes/learning-fixtures.js";
import { travelRegistry } from "../fakes/toolkit-fixtures.js";

// The model path of reflection against a scripted OpenAI-compatible server on 127.0.0.1.
const { serve } = scriptedServersPerTest();
const registry = travelRegistry();

const SHALLOW = {
  whatHappened: "It failed",
  why: "",
  rootCause: "",
  patternsIdentified: [],
  strategyAdjustments: ["Do better"],
  learning: "",
};
const VAGUE = {
  whatHappened: "search_hotels chose Grand Hotel Paris, rated 6.9 by its guests, and the user found it a dump.",
  why: "search_hotels ran with priority 'recommended', the provider's own pick.",
  rootCause: "The strategy of trusting the default ranking assumed it suits every user; it does not suit this one.",
  patternsIdentified: [],
  strategyAdjustments: ["Change priority of search_hotels from 'recommended' to 'quality'", "Be more careful"],
  learning: "For this user, rank hotels by quality next time, so that a poorly rated hotel is not chosen again.",
};
const GOOD = {
  ...VAGUE,
  strategyAdjustments: [
    "Change priority of search_hotels from 'recommended' to 'quality'",
    "Add constraint: search_hotels.minRating >= 8",
  ],
};

async function setUp(script: ScriptedResponse[], limits: Partial<ReflectionLimits> = {}) {
  const { fake, baseUrl } = await serve(script);
  const model = createChatModel({ apiKey: "k", baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
  const store = new InMemoryStore();
  const episode = judgedEpisode(registry, [flightChoice("Iberia"), hotelChoice("Paris", 6.9)], null);
  await saveEpisode(store, "ana", episode);
  const log = memoryDecisionLog();
  const deps: LearningDeps = {
    store,
    registry,
    reasoner: new LlmReasoner({ model, fallback: new RulesReasoner() }),
    decisionLog: log,
    limits,
  };
  const reject = () =>
    recordFeedback(
      deps,
      { threadId: episode.threadId, userId: "ana", planId: episode.planId },
      { verdict: "rejected", reason: "The hotel was a dump", comment: null },
    );
  return { fake, store, log, reject };
}

describe("model reflection: the improvement loop (seed 001 scenario 7)", () => {
  it("retries a shallow answer with quality guidance, then with an example, and stores the third (3 iterations)", async () => {
    const { fake, store, reject } = await setUp([{ json: SHALLOW }, { json: VAGUE }, { json: GOOD }]);
    const out = await reject();
    expect(out.reflection).toMatchObject({ source: "llm", attempts: 3, strategyAdjustments: GOOD.strategyAdjustments });
    expect(out.messages).toEqual(
      expect.arrayContaining([
        // A first reflection is not expected to cite patterns, so completeness counts three parts.
        "Reflection: Attempt 1: quality 0.34 (Shallow reflection: depth=0.3 < 0.7; Not actionable: 0.4 < 0.8; Incomplete reflection: 0.67 < 0.9).",
        "Reflection: Attempt 2: quality 0.93 (Not actionable: 0.7 < 0.8).",
      ]),
    );
    expect(fake.promptOf(1)).not.toContain("did not pass the quality gate");
    expect(fake.promptOf(2)).toContain("did not pass the quality gate");
    expect(fake.promptOf(2)).toContain("Shallow reflection: depth=0.3 < 0.7");
    expect(fake.promptOf(2)).not.toContain("An example of a reflection that passes");
    expect(fake.promptOf(3)).toContain("An example of a reflection that passes");
    // The prompt shows the settings the model may change, and the evaluation in the user's words.
    expect(fake.promptOf(1)).toContain("search_hotels.priority (hotel quality)");
    expect(fake.promptOf(1)).toContain("rejected by the user: The hotel was a dump");
    expect((await userReflections(store, "ana")).map((r) => r.attempts)).toEqual([3]);
    const [run] = await reflectionRuns(store, "ana");
    expect(run).toMatchObject({ source: "llm", iterations: 3, tokens: 60, degraded: null });
    // Scenario 12's ledger: three calls of 20 tokens at gpt-4o-mini's list price.
    expect((await costToday(store, "ana", Date.now())).calls).toBe(3);
    expect(run!.cost).toBeCloseTo((3 * (10 * 0.15 + 10 * 0.6)) / 1e6, 12);
  });

  it("scenario 6 with a model: three answers that fail the gate store nothing from the model; the rules reflect instead", async () => {
    const { store, reject } = await setUp([{ json: SHALLOW }, { json: SHALLOW }, { json: SHALLOW }]);
    const out = await reject();
    expect(out.reflection).toMatchObject({ source: "rules", attempts: 3 });
    expect(out.messages).toContain("Reflection: The rules reflected instead.");
    expect((await userReflections(store, "ana"))[0]!.analysis.whatHappened).not.toBe("It failed");
  });

  it("an unusable answer falls back to the rules at once, saying why", async () => {
    const { reject } = await setUp([{ content: "I think the hotel was fine." }]);
    const out = await reject();
    expect(out.reflection?.source).toBe("rules");
    expect(out.messages.find((m) => m.startsWith("Reflection: Attempt 1:"))).toMatch(/unusable|no usable JSON/);
  });
});

describe("limits (seed 001 scenarios 12, 13)", () => {
  it("scenario 12: a call that would pass the daily budget is not made; the rules reflect and a degradation is logged", async () => {
    const { store, log, reject } = await setUp([], {
      dailyBudgetUsd: 5,
      prices: { "gpt-4o-mini": { input: 10, output: 10 } },
      estimate: { inputTokens: 2000, outputTokens: 1000 },
    });
    await addCost(store, "ana", Date.now(), 4.98, 100);
    const out = await reject();
    expect(out.reflection?.source).toBe("rules");
    expect(out.messages).toContain(
      "Reflection: MetacognitionCostExceeded: Would exceed daily budget: $5.01 > $5.00; no model reflection until tomorrow (UTC)",
    );
    expect(log.entries.find((d) => d.decision === "degraded: daily reflection budget")).toBeDefined();
    expect((await reflectionRuns(store, "ana"))[0]).toMatchObject({ degraded: "budget", iterations: 0 });
  });

  it("scenario 13: past the hard limit nothing is stored (non-reflective mode), and the timeout is counted", async () => {
    const { store, log, reject } = await setUp([{ json: GOOD, delayMs: 5000 }], { timeoutMs: 200 });
    const out = await reject();
    expect(out.reflection).toBeNull();
    expect(out.notStored).toMatch(/^MetacognitionTimeout: the reflection took longer than 0.2 s/);
    expect(await userReflections(store, "ana")).toEqual([]);
    expect((await loadLearnedConfig(store, "ana")).adjustments).toEqual([]);
    expect((await reflectionRuns(store, "ana"))[0]).toMatchObject({ degraded: "timeout", reflectionId: null });
    expect(log.entries.some((d) => d.decision === "degraded: reflection timed out")).toBe(true);
    // The feedback itself is kept: only the reflection is dropped.
    expect((await liveEpisodes(store, "ana"))[0]!.evaluation?.verdict).toBe("rejected");
  });
});
