import { Command } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { compileAgent } from "../../graphs/agent.js";
import { TokenBudgetRequest } from "../../src/domain/approval.js";
import type { PlanInput } from "../../src/domain/plan.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { meterModel } from "../../src/reasoning/usage.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { renderReport } from "../../src/transparency/report.js";
import { countingToolkits, interruptValues, tempDir, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { notesToolkit, PlannedReasoner } from "../fakes/notes-toolkit.js";
import { ScriptedChatModel, type ScriptedTurn } from "../fakes/scripted-chat-model.js";
import { planOf } from "../../src/domain/plan-state.js";

const tmp = tempDir();
const closers: (() => void)[] = [];
afterAll(() => {
  for (const close of closers) close();
  tmp.cleanup();
});

/** USD per million tokens: 1 per input token-million, 2 per output, so figures are easy to check. */
const PRICES = { "*": { input: 1, output: 2 } };

const COUNT_STEP = {
  id: "count",
  description: "Count the words of the readme note",
  workerType: "writer",
  tools: [],
  expectedOutputs: ["analysis"],
};

const THREE_TURNS: ScriptedTurn[] = [
  { calls: [["read_note", { name: "readme" }]] },
  { calls: [["count_words", {}]] },
  "The readme has 5 words.",
];

function agent(steps: PlanInput["steps"], model: ScriptedChatModel) {
  const persistence = openPersistence(tmp.dbPath);
  closers.push(() => persistence.close());
  const { toolkits, calls } = countingToolkits([notesToolkit()]);
  const decisionLog = memoryDecisionLog();
  // The fake reasoner plans and writes the answer without a model; its worker model is metered as LlmReasoner does.
  meterModel(model, "test-model", PRICES);
  const reasoner = new PlannedReasoner(steps, model);
  const graph = compileAgent({ toolkits, decisionLog, reasoner }, persistence);
  return { graph, calls, decisionLog };
}

function withTokenBudget(intent: string, tokenBudget: number) {
  const input = tripInput(intent);
  return { ...input, request: { ...input.request, constraints: { tokenBudget } } };
}

describe("tokens and cost of model calls", () => {
  it("records each call of a model-driven step against the step, sums them, and shows them in the report and the log", async () => {
    const model = new ScriptedChatModel(THREE_TURNS, {}, { usage: { input: 1000, output: 200 } });
    const a = agent([COUNT_STEP], model);
    const done = await a.graph.invoke(tripInput("count the words of the readme note"), threadConfig("tok-sum"));
    model.assertConsumed();
    expect(done.status).toBe("completed");
    const calls = done.tokens.filter((e) => e.type === "call");
    expect(calls).toHaveLength(3);
    expect(calls.every((c) => c.site === "worker" && c.taskId === "count" && c.model === "test-model")).toBe(true);
    // 1000 input tokens at $1/M and 200 output at $2/M: $0.0014 a call.
    expect(calls[0]).toMatchObject({ inputTokens: 1000, outputTokens: 200, costUsd: 0.0014 });
    const report = done.report!;
    expect(report.summary.tokens).toMatchObject({ calls: 3, inputTokens: 3000, outputTokens: 600, costUsd: 0.0042 });
    expect(report.summary.tokens!.bySite.worker).toMatchObject({ calls: 3 });
    expect(report.tasks.find((t) => t.id === "count")!.tokens).toMatchObject({ calls: 3, inputTokens: 3000 });
    const text = renderReport(report);
    expect(text).toContain("Model: 3 call(s) · 3,600 tokens (3,000 in, 600 out) · $0.0042 — worker 3 call(s)");
    expect(text).toContain("3 model call(s), 3,600 tokens (3,000 in, 600 out) · $0.0042");
    const logged = a.decisionLog.entries.filter((d) => d.operation === "model_call");
    expect(logged.map((d) => d.tokens)).toEqual(Array(3).fill({ input: 1000, output: 200, costUsd: 0.0014 }));
    expect(a.decisionLog.entries.find((d) => d.operation === "report")!.tokens).toEqual({
      input: 3000,
      output: 600,
      costUsd: 0.0042,
    });
  });

  it("refuses at planning a plan whose estimate exceeds the token budget, with what to change, before any call", async () => {
    const model = new ScriptedChatModel([], {}, { usage: { input: 1000, output: 200 } });
    const a = agent([COUNT_STEP], model);
    const done = await a.graph.invoke(
      withTokenBudget("count the words of the readme note", 2000),
      threadConfig("tok-plan"),
    );
    model.assertConsumed();
    expect(done.status).toBe("failed");
    expect(done.failureReason).toMatch(
      /estimated to use \d+ model tokens \(1 model-driven step\(s\) \(count\).*but the token budget is 2000\. Raise the token budget to at least \d+/,
    );
    expect(done.notifications.some((n) => n.message.includes("INSUFFICIENT_RESOURCES"))).toBe(true);
    expect(a.calls.all()).toEqual({});
  });

  it("asks before a call that would exceed the budget mid-run; resuming with a larger budget goes on", async () => {
    // Each call takes 5,000 tokens. The plan's estimate (3 calls of ~1,800 and ~3,500 for the answer) fits 9,000;
    // after the first call, the next is expected to take what the first did and would reach 10,000.
    const model = new ScriptedChatModel(THREE_TURNS, {}, { usage: { input: 4000, output: 1000 } });
    const a = agent([COUNT_STEP], model);
    const config = threadConfig("tok-ask");
    const out = await a.graph.invoke(withTokenBudget("count the words of the readme note", 9000), config);
    const [asked] = interruptValues(out);
    const request = TokenBudgetRequest.parse(asked);
    expect(request).toMatchObject({ taskId: "count", site: "worker", used: 5000, limit: 9000, estimate: 5000 });
    expect(request.question).toMatch(/used 5000 of its 9000-token budget.*Raise the budget to 25000/);
    expect(model.seen).toHaveLength(1);

    const done = await a.graph.invoke(
      new Command({ resume: { decision: "retry", params: { tokenBudget: 30000 } } }),
      config,
    );
    model.assertConsumed();
    expect(done.status).toBe("completed");
    expect(done.tokens.filter((e) => e.type === "budget")).toMatchObject([{ tokenBudget: 30000, stopped: false }]);
    expect(done.report!.summary).toMatchObject({ tokenBudget: 30000, tokens: { calls: 3, inputTokens: 12000 } });
    expect(renderReport(done.report!)).toContain("of a 30,000-token budget");
  });

  it("asks before SYNTHESIZE when the answer's review and synthesis together would exceed the budget", async () => {
    // Regression: the question before SYNTHESIZE estimated the synthesis call alone (~3,500), though a reviewing
    // model first reviews the answer (~1,500). Worker calls take 2,000 each: 6,000 used, then 6,000 + 3,500 fits
    // 10,500 but 6,000 + 1,500 + 3,500 does not, so the person is asked before either call.
    const model = new ScriptedChatModel(THREE_TURNS, {}, { usage: { input: 1600, output: 400 } });
    const persistence = openPersistence(tmp.dbPath);
    closers.push(() => persistence.close());
    meterModel(model, "test-model", PRICES);
    class ReviewingReasoner extends PlannedReasoner {
      reviews = 0;
      reviewAnswer() {
        this.reviews += 1;
        return Promise.resolve(null);
      }
    }
    const reasoner = new ReviewingReasoner([COUNT_STEP], model);
    const { toolkits } = countingToolkits([notesToolkit()]);
    const graph = compileAgent({ toolkits, reasoner, decisionLog: memoryDecisionLog() }, persistence);
    const config = threadConfig("tok-review");
    const out = await graph.invoke(withTokenBudget("count the words of the readme note", 10500), config);
    model.assertConsumed();
    const request = TokenBudgetRequest.parse(interruptValues(out)[0]);
    expect(request).toMatchObject({ site: "synthesis", used: 6000, limit: 10500, estimate: 5000 });
    expect(request.question).toMatch(/next synthesis call \(with its review\) takes about 5000 tokens/);
    expect(reasoner.reviews).toBe(0);
    const done = await graph.invoke(
      new Command({ resume: { decision: "retry", params: { tokenBudget: 20000 } } }),
      config,
    );
    expect(done.status).toBe("completed");
    expect(reasoner.reviews).toBe(1);
  });

  it("checks a plan made again with a person's guidance against the token budget too, and asks again when it does not fit", async () => {
    // Regression: PRE-PLAN-003 ran only at UNDERSTAND, so a guided replan could bring in more model-driven steps
    // than the budget allows and start spending. The first plan (1 model-driven step: ~5,400 + ~3,500 for the
    // answer) fits 9,000; the guided one (3 such steps) does not, so the person is asked again, told why.
    const model = new ScriptedChatModel([], {}, { usage: { input: 1000, output: 200 } });
    const persistence = openPersistence(tmp.dbPath);
    closers.push(() => persistence.close());
    meterModel(model, "test-model", PRICES);
    const more = [COUNT_STEP, { ...COUNT_STEP, id: "count2" }, { ...COUNT_STEP, id: "count3" }];
    class GrowingReasoner extends PlannedReasoner {
      plans = 0;
      override plan() {
        this.plans += 1;
        return this.plans === 1 ? super.plan() : new PlannedReasoner(more, model).plan();
      }
    }
    const reasoner = new GrowingReasoner([COUNT_STEP], model);
    const { toolkits, calls } = countingToolkits([notesToolkit()]);
    const graph = compileAgent({ toolkits, reasoner, decisionLog: memoryDecisionLog() }, persistence);
    const config = threadConfig("tok-replan");
    const input = withTokenBudget("count the words of the readme note", 9000);
    const waiting = await graph.invoke({ ...input, settings: { approvalThreshold: 0.99 } }, config);
    expect(interruptValues(waiting)[0]).toMatchObject({ kind: "plan_approval" });
    const again = await graph.invoke(
      new Command({ resume: { decision: "replan", guidance: "count every note, not just the readme" } }),
      config,
    );
    expect(reasoner.plans).toBe(2);
    const [asked] = interruptValues(again);
    expect(asked).toMatchObject({ kind: "plan_approval" });
    expect(JSON.stringify(asked)).toMatch(
      /did not work: The plan is estimated to use \d+ model tokens \(3 model-driven step\(s\).*but the token budget is 9000/,
    );
    expect(planOf(again)!.steps.map((s) => s.id)).toEqual(["count"]);
    expect(calls.all()).toEqual({});
    model.assertConsumed();
  });

  it("stops spending when the person says so: the step fails as policy_blocked and no further call is made", async () => {
    const model = new ScriptedChatModel(THREE_TURNS.slice(0, 1), {}, { usage: { input: 4000, output: 1000 } });
    const a = agent([COUNT_STEP], model);
    const config = threadConfig("tok-stop");
    const out = await a.graph.invoke(withTokenBudget("count the words of the readme note", 9000), config);
    expect(interruptValues(out)).toHaveLength(1);
    const done = await a.graph.invoke(new Command({ resume: { decision: "abort" } }), config);
    model.assertConsumed();
    const f = done.feedback.find((x) => x.taskId === "count")!;
    expect(f.failureClass).toBe("policy_blocked");
    expect(f.errors.join(" ")).toMatch(/a person chose to stop spending tokens/);
    expect(done.tokens.filter((e) => e.type === "budget")).toMatchObject([{ stopped: true }]);
    expect(["partial", "failed"]).toContain(done.status);
  });

  it("a run without a model records no tokens and its report shows no token figures", async () => {
    const persistence = openPersistence(tmp.dbPath);
    closers.push(() => persistence.close());
    const { toolkits } = countingToolkits([notesToolkit()]);
    const graph = compileAgent({ toolkits }, persistence);
    const done = await graph.invoke(tripInput("read the readme note"), threadConfig("tok-none"));
    expect(done.tokens).toEqual([]);
    expect(done.report!.summary.tokens).toBeNull();
    expect(renderReport(done.report!)).not.toMatch(/tokens|Model:/);
  });
});
