import { describe, expect, it } from "vitest";
import type { ModelRecoveryProposal } from "../../src/reasoning/recovery-answer.js";
import { validateProposal } from "../../src/replanning/proposal.js";
import { buildFailureContext } from "../../src/replanning/context.js";
import { LlmReasoner, type LlmReasonerOptions } from "../../src/reasoning/llm.js";
import { createChatModel } from "../../src/reasoning/model.js";
import type { PlanResult, Reasoner, RecoveryQuestion } from "../../src/reasoning/types.js";
import { scriptedServersPerTest, type ScriptedResponse } from "../fakes/fake-openai-server.js";
import { pipelineRegistry } from "../fakes/toolkit.js";
import { failure as failedFeedback, plan as makePlan } from "../fakes/toolkit-fixtures.js";

// The real ChatOpenAI talks to a scripted server on 127.0.0.1; nothing leaves the machine.

const registry = pipelineRegistry();

/** fetch failed twice for a reason no rule knows (each dispatch with its own error); analyze waits for it. */
function question(signal?: AbortSignal): RecoveryQuestion {
  const plan = makePlan([
    {
      id: "fetch",
      description: "Fetch the sales data",
      workerType: "reader",
      tools: ["fetch_data"],
      params: { topic: "sales" },
      expectedOutputs: ["data"],
      status: "failed",
      dispatches: 2,
    },
    {
      id: "analyze",
      workerType: "analyzer",
      tools: ["analyze_data"],
      dependsOn: ["fetch"],
      expectedOutputs: ["analysis"],
    },
  ]);
  const common = { tool: "fetch_data", workerType: "reader", params: { topic: "sales" } };
  const feedback = [
    failedFeedback("fetch", "upstream said: shard 7 misrouted", {
      ...common,
      dispatch: 1,
      attempts: [{ attempt: 1, error: "shard 7 misrouted (try 1)", durationMs: 5 }],
    }),
    failedFeedback("fetch", "E_QUIRK 0x1f: topic index stale", {
      ...common,
      dispatch: 2,
      outputs: { stderr: "index generation 41 < 42" },
    }),
  ];
  const step = plan.steps[0]!;
  return { failure: buildFailureContext(step, feedback), plan, registry, ...(signal ? { signal } : {}) };
}

const retryAnswer: ModelRecoveryProposal = {
  strategy: "RETRY_WITH_PARAMS",
  rationale: "The topic index is stale for 'sales'. Asking for 'sales 2024' hits a fresh index.",
  confidence: 0.8,
  modifications: { paramsJson: '{"topic": "sales 2024"}', tool: null, workerType: null, substeps: null },
};

/** Not under test: the reasoner must not consult it for recoveries. */
class StubFallback implements Reasoner {
  readonly kind = "rules" as const;
  recoveryCalls = 0;
  async plan(): Promise<PlanResult> {
    throw new Error("stub: plan() is not part of these tests");
  }
  async synthesize(): Promise<string> {
    throw new Error("stub: synthesize() is not part of these tests");
  }
  async proposeRecovery(): Promise<null> {
    this.recoveryCalls++;
    return null;
  }
}

// Every test must consume exactly its script: a leftover or surprise request is a failure.
const { serve } = scriptedServersPerTest();

async function setUp(script: ScriptedResponse[], opts: Partial<Omit<LlmReasonerOptions, "model" | "fallback">> = {}) {
  const { fake, baseUrl } = await serve(script);
  const model = createChatModel({ apiKey: "test-key", baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
  const fallback = new StubFallback();
  const notes: string[] = [];
  const reasoner = new LlmReasoner({ model, fallback, onFallback: (n) => notes.push(n), ...opts });
  return { fake, reasoner, fallback, notes };
}

describe("LlmReasoner.proposeRecovery against a real ChatOpenAI (seed 003)", () => {
  it("parses a valid RETRY_WITH_PARAMS proposal asked for in json_schema strict mode", async () => {
    const { fake, reasoner, notes, fallback } = await setUp([{ json: retryAnswer }]);
    const q = question();
    const proposal = await reasoner.proposeRecovery(q);

    expect(proposal).toEqual({
      strategy: "RETRY_WITH_PARAMS",
      rationale: retryAnswer.rationale,
      confidence: 0.8,
      modifications: { params: { topic: "sales 2024" }, tool: null, workerType: null, substeps: null },
    });
    expect(notes).toEqual([]);
    expect(fallback.recoveryCalls).toBe(0);
    const body = fake.requests[0]?.body;
    expect(body?.response_format?.json_schema).toMatchObject({ name: "recovery", strict: true });

    // And it is one the validator accepts for this plan.
    const verdict = validateProposal(proposal!, q.failure, q.plan, registry, 1, q.failure.history);
    expect(verdict.ok && verdict.outcome.plan.steps.map((s) => s.id)).toEqual(["fetch_params", "analyze"]);
  });

  it("shows the model the failed step, the error, every previous attempt, the tool output, the tools and an example of each strategy", async () => {
    const { fake, reasoner } = await setUp([{ json: retryAnswer }]);
    await reasoner.proposeRecovery(question());
    const prompt = fake.promptOf(1);

    for (const section of [
      "<failed_step>",
      "<error>",
      "<previous_attempts>",
      "<tool_output>",
      "<params>",
      "<available_tools>",
      "<workers>",
      "<examples>",
    ]) {
      expect(prompt).toContain(section);
    }
    expect(prompt).toMatch(
      /<failed_step>\nid: fetch\ndescription: Fetch the sales data\nworker: reader\ntool: fetch_data/,
    );
    expect(prompt).toMatch(/<error>\nE_QUIRK 0x1f: topic index stale\n<\/error>/);
    expect(prompt).toMatch(
      /<previous_attempts>\n1\. fetch \/ reader \/ fetch_data with \{"topic":"sales"\}: upstream said: shard 7 misrouted\n {3}attempt 1: shard 7 misrouted \(try 1\)\n2\. .*E_QUIRK 0x1f/,
    );
    expect(prompt).toContain('"stderr":"index generation 41 < 42"');
    expect(prompt).toMatch(/- analyze_data: .*\(produces analysis\)/);
    expect(prompt).toMatch(/- fetch_data: .* Arguments: \{"topic":\{/);
    expect(prompt).toMatch(/- general: fetch_data, analyze_data, write_report/);
    const examples = prompt.slice(prompt.indexOf("<examples>"), prompt.indexOf("</examples>"));
    for (const s of [
      "RETRY_WITH_PARAMS",
      "SWAP_TOOL",
      "DECOMPOSE",
      "RETRY_DIFFERENT_AGENT",
      "FIND_WORKAROUND",
      "ADJUST_PARAMETERS",
      "FIX_DEPENDENCIES",
      "SKIP",
    ]) {
      expect(examples).toContain(`{"strategy": "${s}"`);
    }
    expect(prompt).toMatch(/low confidence/);
  });

  it("repairs malformed JSON: ChatOpenAI throws on it, so the reasoner asks once more without a schema", async () => {
    const sloppy = [
      "Here you go:",
      "```json",
      "{'strategy': 'SWAP_TOOL', 'rationale': 'Try another source.', 'confidence': 0.7,",
      ' "modifications": {"tool": "fetch_data", "paramsJson": null,},}',
      "```",
    ].join("\n");
    const { fake, reasoner, notes } = await setUp([sloppy, sloppy]);
    const proposal = await reasoner.proposeRecovery(question());

    expect(proposal).toMatchObject({
      strategy: "SWAP_TOOL",
      confidence: 0.7,
      modifications: { tool: "fetch_data", params: null, workerType: null, substeps: null },
    });
    expect(notes).toEqual([]);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]?.body.response_format).toBeUndefined();
  });

  it("returns null for garbage and says why", async () => {
    const { reasoner, notes, fallback } = await setUp(["I cannot help with that.", "Still no."]);
    expect(await reasoner.proposeRecovery(question())).toBeNull();

    expect(fallback.recoveryCalls).toBe(0);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /^The model proposed no usable recovery for step fetch: its structured answer could not be parsed .*asked again without a schema, but its answer has no usable JSON/,
    );
  });

  it("returns null for a well-formed answer that names no strategy Candor knows", async () => {
    const { reasoner, notes } = await setUp([
      { json: { ...retryAnswer, strategy: "PRAY" } },
      { json: { ...retryAnswer, strategy: "PRAY" } },
    ]);
    expect(await reasoner.proposeRecovery(question())).toBeNull();
    expect(notes[0]).toMatch(/recovery schema: strategy/);
  });

  it("returns null when the server fails, quoting the error", async () => {
    const { reasoner, notes } = await setUp([{ status: 500, error: "model overloaded" }]);
    expect(await reasoner.proposeRecovery(question())).toBeNull();
    expect(notes[0]).toMatch(/the model could not be asked: .*model overloaded/);
  });

  it("returns null within roughly its own timeout when the answer is late", async () => {
    const { reasoner, notes } = await setUp([{ json: retryAnswer, delayMs: 4000 }], { recoveryTimeoutMs: 300 });
    const started = Date.now();
    const proposal = await reasoner.proposeRecovery(question());
    const took = Date.now() - started;

    expect(proposal).toBeNull();
    expect(took).toBeGreaterThanOrEqual(280);
    expect(took).toBeLessThan(1500);
    expect(notes[0]).toMatch(/did not answer within 300 ms/);
  });

  it("rethrows when the caller cancels, instead of returning null", async () => {
    const { fake, reasoner, notes } = await setUp([{ json: retryAnswer, delayMs: 4000 }]);
    const controller = new AbortController();
    // Fire and forget: cancel once the model call is under way; the assertion below awaits the outcome.
    void fake.received(1).then(() => controller.abort());

    await expect(reasoner.proposeRecovery(question(controller.signal))).rejects.toThrow(/abort/i);
    expect(notes).toEqual([]);
  });

  it("rethrows at once, without a model call, when the caller has already cancelled", async () => {
    const { fake, reasoner } = await setUp([]);
    await expect(reasoner.proposeRecovery(question(AbortSignal.abort()))).rejects.toThrow(/abort/i);
    expect(fake.requests).toHaveLength(0);
  });
});
