import { describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { LlmReasoner } from "../../src/reasoning/llm.js";
import { createChatModel } from "../../src/reasoning/model.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { scriptedServersPerTest } from "../fakes/fake-openai-server.js";
import { FLIGHTS_MODEL_PLAN } from "../fakes/model-plans.js";

// Regression (issue 23 items 1 and 4): the planning prompt showed no tool's parameters, so a model could not serve a
// constraint ("as cheap as possible") through the parameter that carries it, and was never asked to bind its values
// to the steps that take them.
const { serve } = scriptedServersPerTest();

describe("the planning prompt", () => {
  it("shows every parameter of every tool, with its type, choices and default, and asks for values bound to steps", async () => {
    const { fake, baseUrl } = await serve([{ json: FLIGHTS_MODEL_PLAN }]);
    const model = createChatModel({ apiKey: "test-key", baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
    const reasoner = new LlmReasoner({ model, fallback: new RulesReasoner() });
    const registry = ToolRegistry.create([travelToolkit({ latencyMs: 0 })]);
    await reasoner.plan(PlanningRequest.parse({ userIntent: "Find flights from Madrid to Paris" }), {
      registry,
      lessons: [],
      unreliableTools: {},
    });
    const prompt = fake.promptOf(1);
    expect(prompt).toMatch(
      /- search_hotels \[hotels\]: .*\n {2}arguments: city: string; nights: integer 1–60; travellers: integer 1–20 = 1; .*priority: "recommended" \| "price" \| "quality" \| "rating" = "recommended"/,
    );
    expect(prompt).toMatch(/arguments: budget: number \| null/);
    expect(prompt).toMatch(/A limit or preference \("constraint"\) is served only when a step carries it/);
    expect(prompt).toContain('"stepIds": ["s1"]');
    fake.assertConsumed();
  });
});
