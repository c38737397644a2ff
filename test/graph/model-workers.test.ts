import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { compileAgent } from "../../graphs/agent.js";
import { ToolApprovalRequest } from "../../src/domain/approval.js";
import type { PlanInput } from "../../src/domain/plan.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { openEffectLedger } from "../../src/tools/effects.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { countingToolkits, interruptValues, tempDir, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { scriptedServersPerTest } from "../fakes/fake-openai-server.js";
import { ScriptedChatModel } from "../fakes/scripted-chat-model.js";
import { NOTES, notesToolkit, PlannedReasoner, PUBLISH_STEP } from "../fakes/notes-toolkit.js";
import { createChatModel } from "../../src/reasoning/model.js";
import { planOf } from "../../src/domain/plan-state.js";

const { serve } = scriptedServersPerTest();
const tmp = tempDir();
const closers: (() => void)[] = [];
afterAll(() => {
  for (const close of closers) close();
  tmp.cleanup();
});

function agent(steps: PlanInput["steps"], model: BaseChatModel, maxModelCalls = 6) {
  const persistence = openPersistence(tmp.dbPath);
  closers.push(() => persistence.close());
  const { toolkits, calls } = countingToolkits([notesToolkit()]);
  const ledger = openEffectLedger(persistence.store.db);
  const decisionLog = memoryDecisionLog();
  const reasoner = new PlannedReasoner(steps, model, maxModelCalls);
  const graph = compileAgent({ toolkits, decisionLog, ledger, reasoner }, persistence);
  return { graph, calls, ledger, decisionLog };
}

/** The tool replies a model call was shown, as [name, status, content]. */
function toolRepliesSeen(model: ScriptedChatModel, call: number): [string, string, string][] {
  return model.seen[call]!.filter((m): m is ToolMessage => ToolMessage.isInstance(m)).map((m) => [
    m.name ?? "",
    m.status ?? "",
    typeof m.content === "string" ? m.content : JSON.stringify(m.content),
  ]);
}

const COUNT_STEP = {
  id: "count",
  description: "Count the words of the readme note",
  workerType: "writer",
  tools: [],
  expectedOutputs: ["analysis"],
};

describe("model-driven workers (a step whose call the plan does not determine)", () => {
  it("calls two granted tools in turn, the second working on what the first produced, and produces the step's output", async () => {
    const model = new ScriptedChatModel([
      { calls: [["read_note", { name: "readme" }]] },
      { calls: [["count_words", {}]] },
      "The readme has 5 words.",
    ]);
    const a = agent([COUNT_STEP], model);
    const done = await a.graph.invoke(tripInput("count the words of the readme note"), threadConfig("two-tools"));
    model.assertConsumed();
    expect(done.status).toBe("completed");
    expect(a.calls.all()).toEqual({ read_note: 1, count_words: 1 });
    // Offered exactly the writer's grant (no step tools named): never admin's delete_notes.
    expect(model.offered[0]!.sort()).toEqual(["count_words", "publish_note", "read_note"]);
    const f = done.feedback.find((x) => x.taskId === "count")!;
    expect(f).toMatchObject({ feedbackType: "SUCCESS", tool: "count_words", attempt: 3 });
    expect(f.outputs).toEqual({ result: { words: 5 }, answer: "The readme has 5 words." });
    expect(planOf(done)!.steps[0]!.result).toEqual({ words: 5 });
    // The model saw the first result before it asked for the second tool.
    expect(toolRepliesSeen(model, 1)).toEqual([
      ["read_note", "success", JSON.stringify({ name: "readme", text: NOTES.readme })],
    ]);
  });

  it("refuses a tool outside the grant in code, tells the model, and never runs it", async () => {
    const model = new ScriptedChatModel([
      { calls: [["delete_notes", {}]] },
      { calls: [["read_note", { name: "todo" }]] },
      "Read the todo note.",
    ]);
    const a = agent(
      [{ ...COUNT_STEP, id: "read", description: "Read the todo note", expectedOutputs: ["text"] }],
      model,
    );
    const done = await a.graph.invoke(tripInput("read the todo note"), threadConfig("refused"));
    model.assertConsumed();
    expect(a.calls.count("delete_notes")).toBe(0);
    const [refusal] = toolRepliesSeen(model, 1);
    expect(refusal).toEqual([
      "delete_notes",
      "error",
      expect.stringMatching(
        /^Tool delete_notes is not granted to the writer worker for step read, so the call was refused and nothing ran\. You may use: /,
      ),
    ]);
    expect(done.notifications.some((n) => /asked for delete_notes.*refused, nothing ran/.test(n.title))).toBe(true);
    expect(a.decisionLog.entries.some((d) => d.decision === "refuse delete_notes")).toBe(true);
    expect(done.feedback.find((f) => f.taskId === "read")).toMatchObject({
      feedbackType: "SUCCESS",
      outputs: { result: { name: "todo", text: NOTES.todo } },
    });
    expect(done.status).toBe("completed");
  });

  it("gives a tool's error back to the model, which corrects the call", async () => {
    const model = new ScriptedChatModel([
      { calls: [["read_note", { name: "read-me" }]] },
      { calls: [["read_note", { name: "readme" }]] },
      "Read the readme note.",
    ]);
    const a = agent(
      [{ ...COUNT_STEP, id: "read", description: "Read the readme note", expectedOutputs: ["text"] }],
      model,
    );
    const done = await a.graph.invoke(tripInput("read the readme note"), threadConfig("corrected"));
    model.assertConsumed();
    expect(toolRepliesSeen(model, 1)).toEqual([
      ["read_note", "error", expect.stringContaining('no note named "read-me"; the notes are: readme, todo')],
    ]);
    expect(a.calls.count("read_note")).toBe(2);
    expect(done.feedback.filter((f) => f.taskId === "read").map((f) => f.feedbackType)).toEqual(["SUCCESS"]);
    expect(done.status).toBe("completed");
  });

  it("a loop that spends its model calls without the output fails as no_result, and replanning takes it up", async () => {
    const model = new ScriptedChatModel([
      // The writer's loop: three calls, none producing the text.
      { calls: [["read_note", { name: "notes" }]] },
      { calls: [["read_note", { name: "all" }]] },
      { calls: [["read_note", { name: "*" }]] },
      // The step again on another worker (the general fallback, as RETRY_DIFFERENT_AGENT chose): it reads it.
      { calls: [["read_note", { name: "todo" }]] },
      "Read the todo note.",
    ]);
    const step = {
      ...COUNT_STEP,
      id: "read",
      description: "Read the note",
      tools: ["read_note"],
      expectedOutputs: ["text"],
    };
    const a = agent([step], model, 3);
    const done = await a.graph.invoke(tripInput("read the note"), threadConfig("cap"));
    model.assertConsumed();
    const failed = done.feedback.find((f) => f.taskId === "read")!;
    expect(failed).toMatchObject({ feedbackType: "FAILURE", failureClass: "no_result", attempt: 3, tool: null });
    expect(failed.errors[0]).toMatch(
      /^The writer worker's model used its 3 model calls without producing text \(from read_note\): it made no successful tool call\.$/,
    );
    expect(done.revisions.map((r) => [r.strategy, r.failedTaskId, r.failureClass])).toEqual([
      ["RETRY_DIFFERENT_AGENT", "read", "no_result"],
    ]);
    const retry = planOf(done)!.steps.find((s) => s.replaces === "read")!;
    expect(retry).toMatchObject({ workerType: "general", tools: ["read_note"], status: "done" });
    expect(a.calls.count("read_note")).toBe(4);
    expect(done.status).toBe("completed");
  });

  it("an approval-gated call inside the loop is asked once and run once, and the effect ledger records it", async () => {
    const model = new ScriptedChatModel([{ calls: [["publish_note", { title: "Readme" }]] }, "Published Readme."]);
    const a = agent([PUBLISH_STEP], model);
    const config = threadConfig("gated");
    const first = await a.graph.invoke(tripInput("publish the readme note"), config);
    const [payload, ...more] = interruptValues(first);
    expect(more).toEqual([]);
    expect(ToolApprovalRequest.parse(payload)).toMatchObject({
      kind: "tool_approval",
      taskId: "publish",
      tool: "publish_note",
      args: { title: "Readme" },
      sideEffect: "irreversible",
    });
    expect(a.calls.count("publish_note")).toBe(0);
    const done = await a.graph.invoke(new Command({ resume: { decision: "approve", by: "ops" } }), config);
    model.assertConsumed();
    expect(a.calls.count("publish_note")).toBe(1);
    expect(done.status).toBe("completed");
    expect(done.feedback.find((f) => f.taskId === "publish")).toMatchObject({
      feedbackType: "SUCCESS",
      outputs: { result: { published: "Readme" } },
      approval: { decision: "approve", by: "ops" },
    });
    expect(done.approval).toMatchObject({ kind: "tool_approval", decision: "approve", by: "ops" });
    expect(await a.ledger.verdict({ threadId: "gated", stepId: "publish.call1", dispatch: 1 })).toMatchObject({
      kind: "done",
    });
  });

  it("a denied call inside the loop is never made; the model is told, and the step fails as policy_blocked, not no_result", async () => {
    const model = new ScriptedChatModel([
      { calls: [["publish_note", { title: "Readme" }]] },
      "A person denied publishing, so nothing was published.",
    ]);
    const a = agent([PUBLISH_STEP], model);
    const config = threadConfig("denied");
    interruptValues(await a.graph.invoke(tripInput("publish the readme note"), config));
    const done = await a.graph.invoke(new Command({ resume: { decision: "deny", comment: "not yet" } }), config);
    model.assertConsumed();
    expect(a.calls.count("publish_note")).toBe(0);
    expect(toolRepliesSeen(model, 1)).toEqual([
      [
        "publish_note",
        "error",
        expect.stringMatching(
          /^A human denied publish_note\(\{"title":"Readme"\}\) \(not yet\); the tool was not called/,
        ),
      ],
    ]);
    const failed = done.feedback.find((f) => f.taskId === "publish")!;
    expect(failed).toMatchObject({
      failureClass: "policy_blocked",
      errorType: "HUMAN_DENIED",
      approval: { decision: "deny", comment: "not yet" },
    });
    expect(done.revisions.map((r) => r.strategy)).toEqual(["SKIP"]);
    expect(done.status).not.toBe("completed");
  });

  it("runs over the real ChatOpenAI wire (fake OpenAI server): tools offered as functions, results sent back as tool messages", async () => {
    const { fake, baseUrl } = await serve([
      { toolCall: { name: "read_note", arguments: { name: "readme" } } },
      // The fake gives every call the same id; the loop still answers each call once.
      { toolCall: { name: "count_words", arguments: {} } },
      "The readme has 5 words.",
    ]);
    const model = createChatModel({ apiKey: "test-key", baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
    const a = agent([COUNT_STEP], model);
    const done = await a.graph.invoke(tripInput("count the words of the readme note"), threadConfig("wire"));
    expect(done.status).toBe("completed");
    expect(planOf(done)!.steps[0]!.result).toEqual({ words: 5 });
    expect(a.calls.all()).toEqual({ read_note: 1, count_words: 1 });
    const offered = fake.requests[0]!.body.tools!.map((t) => t.function.name).sort();
    expect(offered).toEqual(["count_words", "publish_note", "read_note"]);
    const third = fake.requests[2]!.body.messages!;
    expect(third.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      JSON.stringify({ name: "readme", text: NOTES.readme }),
      JSON.stringify({ words: 5 }),
    ]);
    expect(fake.promptOf(1)).toMatch(/<must_produce>\n- analysis \(from a successful call of count_words\)/);
  });
});
