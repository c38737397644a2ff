import { describe, expect, it } from "vitest";
import { PlanningRequest } from "../../src/domain/request.js";
import { Understanding } from "../../src/domain/understanding.js";
import { LlmReasoner } from "../../src/reasoning/llm.js";
import { createChatModel } from "../../src/reasoning/model.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { withUsageScope } from "../../src/reasoning/usage.js";
import { buildReport, renderReport } from "../../src/transparency/report.js";
import { scriptedServersPerTest } from "../fakes/fake-openai-server.js";
import { planOf } from "../fakes/graph-harness.js";

const { serve } = scriptedServersPerTest();

const request = PlanningRequest.parse({ userIntent: "say hello" });
const plan = {
  ...planOf([{ id: "s1", description: "Say hello", workerType: "writer", tools: ["read_note"] }]),
  understanding: Understanding.parse({
    parts: [{ id: "p1", text: "say hello", description: "Say hello", kind: "task", status: "served", stepIds: ["s1"] }],
    by: "llm",
  }),
};
const synthesisInput = { request, plan, results: { s1: "hello" }, missing: [] };
const REVIEW = { parts: [{ partId: "p1", answered: true, why: null }] };

// Regression: the synthesize node's review call (is every part answered?) was recorded under `synthesis`, so the
// report could not tell what reviewing cost from what writing the answer cost.
describe("the answer's review is metered as its own call site (fake server: 10 tokens in, 10 out per call)", () => {
  it("records the review as `review` and the answer as `synthesis`, within the synthesize node's one scope", async () => {
    const { baseUrl } = await serve([{ json: REVIEW }, "Hello."]);
    const model = createChatModel({ apiKey: "test-key", baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
    const reasoner = new LlmReasoner({ model, fallback: new RulesReasoner() });
    const { value, calls } = await withUsageScope(
      { site: "synthesis", taskId: null, budget: null, history: [] },
      async () => ({
        review: await reasoner.reviewAnswer(synthesisInput),
        answer: await reasoner.synthesize(synthesisInput),
      }),
    );
    expect(value).toEqual({ review: REVIEW, answer: "Hello." });
    expect(calls.map((c) => [c.site, c.inputTokens, c.outputTokens])).toEqual([
      ["review", 10, 10],
      ["synthesis", 10, 10],
    ]);
    // The report lists the review's tokens apart.
    const report = renderReport(
      buildReport({
        request: "say hello",
        plan,
        feedback: [],
        revisions: [],
        confidenceHistory: [],
        status: "completed",
        failureReason: null,
        lessons: [],
        startedAt: new Date().toISOString(),
        tokens: calls,
      }),
    );
    expect(report).toMatch(/review 1 call\(s\), 20 tokens/);
    expect(report).toMatch(/synthesis 1 call\(s\), 20 tokens/);
  });
});
