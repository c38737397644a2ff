import { afterAll, describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent } from "../../graphs/agent.js";
import { HumanApprovalRequest } from "../../src/domain/approval.js";
import type { ModelPlan, ModelUnderstanding } from "../../src/domain/plan.js";
import { planOf } from "../../src/domain/plan-state.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { LlmReasoner } from "../../src/reasoning/llm.js";
import { createChatModel } from "../../src/reasoning/model.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { scriptedServersPerTest } from "../fakes/fake-openai-server.js";
import { interruptValues, tempDir, threadConfig, tripInput } from "../fakes/graph-harness.js";

// Regression (issue 23): with a model, a plan whose step left its call to its worker was judged by the offline reader
// alone, its record's values bound to no step: a sound plan could be stopped for a person, and what the record read
// ("as cheap as possible" → the search's price order) never reached the call. And a record that misread the request
// was taken on its word.

const { serve } = scriptedServersPerTest();
const tmp = tempDir();
const closers: (() => void)[] = [];
afterAll(() => {
  for (const close of closers) close();
  tmp.cleanup();
});

const REQUEST = "Find a hotel in Rome for 3 nights for 2 people, as cheap as possible";

/** The model's plan: one hotel search that names no tool, its arguments left to the hotel worker's model. */
function hotelPlan(values: ModelUnderstanding["values"]): ModelPlan {
  const part = (text: string, kind: "task" | "constraint") => ({
    text,
    description: text,
    kind,
    status: "served" as const,
    stepIds: ["s1"],
    why: null,
  });
  return {
    objective: "A cheap hotel in Rome",
    contextSummary: null,
    confidence: 0.9,
    steps: [
      {
        id: "s1",
        description: "Find the hotel",
        workerType: "hotel_agent",
        tools: [],
        paramsJson: null,
        dependsOn: [],
        expectedOutputs: ["hotel"],
      },
    ],
    understanding: {
      parts: [
        part("Find a hotel in Rome for 3 nights", "task"),
        part("for 2 people", "constraint"),
        part("as cheap as possible", "constraint"),
      ],
      values,
      assumptions: [],
      changes: [],
    },
  };
}

const value = (name: string, v: string, source: string) => ({ name, value: v, source, stepIds: ["s1"] });
const SOUND = [
  value("city", "Rome", "in Rome"),
  value("nights", "3", "3 nights"),
  value("travellers", "2", "2 people"),
  value("priority", "price", "as cheap as possible"),
];

async function hotelAgent(script: Parameters<typeof serve>[0]) {
  const { fake, baseUrl } = await serve(script);
  const model = createChatModel({ apiKey: "test-key", baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
  const persistence = openPersistence(tmp.dbPath);
  closers.push(() => persistence.close());
  const graph = compileAgent(
    {
      toolkits: [travelToolkit({ latencyMs: 1 })],
      reasoner: new LlmReasoner({ model, fallback: new RulesReasoner() }),
    },
    persistence,
  );
  return { graph, fake };
}

describe("a model's record through the graph (fake OpenAI server)", () => {
  it("a sound plan with a step that names no tool runs to completion, no approval asked; the recorded values reach the call", async () => {
    const a = await hotelAgent([
      { json: hotelPlan(SOUND) },
      // The worker leaves the price order out: the record's value fills it.
      { toolCall: { name: "search_hotels", arguments: { city: "Rome", nights: 3, travellers: 2 } } },
      "Found the cheapest hotel in Rome for 3 nights.",
      { json: { parts: [0, 1, 2].map((i) => ({ partId: `p${i + 1}`, answered: true, why: null })) } },
      "The cheapest hotel in Rome for 3 nights for 2 people.",
    ]);
    const done = await a.graph.invoke(tripInput(REQUEST), threadConfig("record-sound"));
    expect(done.pendingInterrupt).toBeNull();
    expect(done.status).toBe("completed");
    const plan = planOf(done)!;
    expect(plan.understanding.disputed).toEqual([]);
    const hotel = plan.steps[0]!.result as { cost: number; cheapestCost?: number; travellers?: number };
    // Searched by price: the hotel taken is the cheapest the search found.
    expect(hotel.cost).toBe(hotel.cheapestCost);
    // The worker was told the record's values for its step, each with the request's words.
    expect(a.fake.promptOf(2)).toMatch(/priority = price \(from "as cheap as possible"\)/);
    a.fake.assertConsumed();
  });

  it("a record that misreads the request is named before anything runs", async () => {
    const a = await hotelAgent([
      {
        json: hotelPlan([
          ...SOUND.filter((v) => v.name !== "travellers"),
          value("travellers", "3", "2 people"),
          value("checkin", "2024-05-01", "from May 1st"),
        ]),
      },
    ]);
    const [payload] = interruptValues(await a.graph.invoke(tripInput(REQUEST), threadConfig("record-misread")));
    const request = HumanApprovalRequest.parse(payload);
    const questions = request.openQuestions!.join("\n");
    expect(questions).toMatch(/"2 people" does not hold: the model read travellers = "3", but 3 is not what/);
    expect(questions).toMatch(/"from May 1st" does not hold: .*the request does not say them/);
    a.fake.assertConsumed();
  });
});
