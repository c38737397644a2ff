import type { AIMessageChunk } from "@langchain/core/messages";
import { afterAll, describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent } from "../../graphs/agent.js";
import { FailureEscalationRequest } from "../../src/domain/approval.js";
import { FLIGHTS_MODEL_PLAN } from "../fakes/model-plans.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { LlmReasoner } from "../../src/reasoning/llm.js";
import { createChatModel } from "../../src/reasoning/model.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { ANSWER_TAG } from "../../nodes/synthesize.js";
import { Node } from "../../nodes/names.js";
import { scriptedServersPerTest, type ScriptedResponse } from "../fakes/fake-openai-server.js";
import { interruptValues, tempDir, threadConfig, tripInput } from "../fakes/graph-harness.js";

// Issue 11 item 3: with a model, SYNTHESIZE writes the answer streamed token by token (LangGraph's `messages`
// stream mode) and sends results that do not answer the request back to replanning, within the revision caps.
// The real ChatOpenAI talks to the scripted server on 127.0.0.1, which streams each answer in pieces.

const { serve } = scriptedServersPerTest();
const tmp = tempDir();
const closers: (() => void)[] = [];
afterAll(() => {
  for (const close of closers) close();
  tmp.cleanup();
});

async function modelAgent(script: ScriptedResponse[]) {
  const { fake, baseUrl } = await serve(script);
  const model = createChatModel({ apiKey: "test-key", baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
  const persistence = openPersistence(tmp.dbPath);
  closers.push(() => persistence.close());
  const decisionLog = memoryDecisionLog();
  const graph = compileAgent(
    {
      toolkits: [travelToolkit({ latencyMs: 0 })],
      reasoner: new LlmReasoner({ model, fallback: new RulesReasoner() }),
      decisionLog,
    },
    persistence,
  );
  return { graph, fake, decisionLog };
}

const FLIGHTS = FLIGHTS_MODEL_PLAN;
const ANSWERED = { parts: [{ partId: "p1", answered: true, why: null }] };
const UNANSWERED = { parts: [{ partId: "p1", answered: false, why: "no departure time is given" }] };
// The flight the travel toolkit finds: an answer with another price would be corrected (answer-check.ts).
const ANSWER = "The cheapest flight from Madrid to Paris, Iberia IB895, leaves at 09:10 and costs $424.";

type MessageEvent = [AIMessageChunk, { tags?: string[]; langgraph_node?: string }];

describe("SYNTHESIZE with a model streams the answer", () => {
  it("the answer's tokens arrive in the messages stream as they are written, tagged, and add up to the answer", async () => {
    const a = await modelAgent([{ json: FLIGHTS }, { json: ANSWERED }, ANSWER]);
    const stream = await a.graph.stream(tripInput("find flights from Madrid to Paris"), {
      ...threadConfig("stream-answer"),
      streamMode: ["messages", "values"],
    });
    const messages: MessageEvent[] = [];
    let last: { answer?: string | null; status?: string } = {};
    for await (const [mode, data] of stream as AsyncIterable<[string, unknown]>) {
      if (mode === "messages") messages.push(data as MessageEvent);
      else last = data as typeof last;
    }
    const answerTokens = messages.filter(([, meta]) => meta.tags?.includes(ANSWER_TAG));
    // Token by token: the server sends the answer in several pieces, and each is its own event.
    expect(answerTokens.length).toBeGreaterThan(1);
    expect(answerTokens.every(([, meta]) => meta.langgraph_node === Node.SYNTHESIZE)).toBe(true);
    expect(answerTokens.map(([m]) => m.text).join("")).toBe(ANSWER);
    expect(last).toMatchObject({ answer: ANSWER, status: "completed" });
    // The review is Candor's JSON, not the user's text: none of it reaches the messages stream.
    expect(messages.some(([m]) => typeof m.content === "string" && m.content.includes("partId"))).toBe(false);
    expect(a.fake.requests.at(-1)!.body.stream).toBe(true);
  });

  it("results that never answer the request go back to replanning until the strategies run out, not forever", async () => {
    // Every review says the flight result does not answer: each goes back to select_strategy as incomplete_result.
    // RETRY_DIFFERENT_AGENT's flight step is judged the same, SWAP_TOOL finds no other flight tool, and SKIP ends
    // it: the part is then missing, so no third review is asked (nothing it could change; the fake server fails the
    // test on a call its script did not expect), and the answer says what is missing.
    const a = await modelAgent([
      { json: FLIGHTS },
      { json: UNANSWERED },
      { json: UNANSWERED },
      "No flight could be confirmed.",
    ]);
    const done = await a.graph.invoke(tripInput("find flights from Madrid to Paris"), threadConfig("synth-skip"));
    expect(done.revisions.map((r) => `${r.strategy}:${r.failedTaskId}:${r.failureClass}`)).toEqual([
      "RETRY_DIFFERENT_AGENT:s1:incomplete_result",
      "SKIP:s1_retry:incomplete_result",
    ]);
    expect(done.status).toBe("failed");
    expect(done.answer).toMatch(/^No flight could be confirmed\.\nMissing from this answer:\n- Find flights/);
  });

  it("the revision cap stops the loop too: past it, a person decides", async () => {
    const a = await modelAgent([{ json: FLIGHTS }, { json: UNANSWERED }, { json: UNANSWERED }]);
    const out = await a.graph.invoke(
      tripInput("find flights from Madrid to Paris", { maxRevisions: 1 }),
      threadConfig("synth-capped"),
    );
    const [payload] = interruptValues(out);
    expect(FailureEscalationRequest.parse(payload)).toMatchObject({ kind: "max_revisions", taskId: "s1_retry" });
    expect(out.revisions.map((r) => r.strategy)).toEqual(["RETRY_DIFFERENT_AGENT"]);
  });
});
