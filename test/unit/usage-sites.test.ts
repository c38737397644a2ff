import { ChatOpenAI } from "@langchain/openai";
import { describe, expect, it } from "vitest";
import { PlanningRequest } from "../../src/domain/request.js";
import { Understanding } from "../../src/domain/understanding.js";
import { LlmReasoner } from "../../src/reasoning/llm.js";
import { createChatModel } from "../../src/reasoning/model.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { withUsageScope } from "../../src/reasoning/usage.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { buildReport, renderReport } from "../../src/transparency/report.js";
import { scriptedServersPerTest } from "../fakes/fake-openai-server.js";
import { planWith } from "../fakes/graph-harness.js";
import { notesToolkit } from "../fakes/notes-toolkit.js";

const { serve } = scriptedServersPerTest();

const request = PlanningRequest.parse({ userIntent: "say hello" });
const plan = {
  // s1 is done: the review is asked only about parts whose steps answered (partsToReview).
  ...planWith([
    { id: "s1", description: "Say hello", workerType: "writer", tools: ["read_note"], status: "done", result: "hello" },
  ]),
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

// Regression: ChatOpenAI's structured output (json_schema) is parsed inside the OpenAI SDK, which throws on an answer
// that is not the requested JSON; LangChain never saw that completion, so its tokens went unrecorded (the fake saw two
// planning requests, the meter one).
describe("a structured answer that fails to parse is still metered (fake server: 10 tokens in, 10 out per call)", () => {
  const notes: string[] = [];
  async function reasonerOn(script: Parameters<typeof serve>[0]) {
    const { fake, baseUrl } = await serve(script);
    const model = createChatModel({ apiKey: "test-key", baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
    return {
      fake,
      reasoner: new LlmReasoner({ model, fallback: new RulesReasoner(), onFallback: (n) => notes.push(n) }),
    };
  }

  it("records the unparseable plan's call and the plain retry: two planning calls for two requests", async () => {
    const { fake, reasoner } = await reasonerOn(["this is not json {", "still not json"]);
    const registry = ToolRegistry.create([notesToolkit()]);
    const { value, calls } = await withUsageScope({ site: "planning", taskId: null, budget: null, history: [] }, () =>
      reasoner.plan(PlanningRequest.parse({ userIntent: "read the readme note" }), {
        registry,
        lessons: [],
        unreliableTools: {},
      }),
    );
    expect(value.notes.join(" ")).toMatch(/structured answer could not be parsed/);
    expect(fake.requests).toHaveLength(2);
    expect(calls.map((c) => [c.site, c.model, c.inputTokens, c.outputTokens])).toEqual([
      ["planning", "gpt-4o-mini", 10, 10],
      ["planning", "gpt-4o-mini", 10, 10],
    ]);
    expect(calls.every((c) => c.costUsd > 0)).toBe(true);
  });

  it("records an unparseable review at its own site, and a parsed answer once (not again from the tap)", async () => {
    const { fake, reasoner } = await reasonerOn(["not a review", { json: REVIEW }]);
    const { value, calls } = await withUsageScope(
      { site: "synthesis", taskId: null, budget: null, history: [] },
      async () => [await reasoner.reviewAnswer(synthesisInput), await reasoner.reviewAnswer(synthesisInput)],
    );
    expect(value).toEqual([null, REVIEW]);
    expect(fake.requests).toHaveLength(2);
    expect(calls.map((c) => [c.site, c.inputTokens, c.outputTokens])).toEqual([
      ["review", 10, 10],
      ["review", 10, 10],
    ]);
  });

  it("from a server that sends no completion id, still counts each call once", async () => {
    const { fake, baseUrl } = await serve([{ json: REVIEW }, "not a review", "Hello."]);
    // The server's answers less their `id`, as some OpenAI-compatible servers send them.
    const withoutId = async (input: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(input, init);
      const body = (await res.json()) as Record<string, unknown>;
      delete body.id;
      return new Response(JSON.stringify(body), {
        status: res.status,
        headers: { "content-type": "application/json" },
      });
    };
    const model = new ChatOpenAI({
      model: "gpt-4o-mini",
      apiKey: "test-key",
      maxRetries: 0,
      configuration: { baseURL: baseUrl, fetch: withoutId },
    });
    const reasoner = new LlmReasoner({ model, fallback: new RulesReasoner() });
    const { value, calls } = await withUsageScope(
      { site: "synthesis", taskId: null, budget: null, history: [] },
      async () => [
        await reasoner.reviewAnswer(synthesisInput),
        await reasoner.reviewAnswer(synthesisInput),
        await reasoner.synthesize(synthesisInput),
      ],
    );
    expect(value).toEqual([REVIEW, null, "Hello."]);
    expect(fake.requests).toHaveLength(3);
    expect(calls.map((c) => c.site)).toEqual(["review", "review", "synthesis"]);
  });
});
