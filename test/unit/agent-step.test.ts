import { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { CallRecord } from "../../src/execution/evidence.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { planLines } from "../../src/cli/render.js";
import { readEnv } from "../../src/env.js";
import { LlmReasoner } from "../../src/reasoning/llm.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { TaskStep, type TaskStepInput } from "../../src/domain/plan.js";
import type { WorkerModel } from "../../src/reasoning/types.js";
import { STRATEGY_PREFERENCES } from "../../src/replanning/select.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { defineTool, type Toolkit } from "../../src/tools/types.js";
import { isModelDriven, loopTools, modelDrivenPredicate } from "../../src/tools/model-driven.js";
import { loopFeedback, nextToolCall, toolDefinitions } from "../../src/execution/agent-step.js";
import { planWith } from "../fakes/graph-harness.js";
import { ScriptedChatModel } from "../fakes/scripted-chat-model.js";
import { workerPrompt } from "../../prompts/worker.js";

const kit: Toolkit = {
  name: "kit",
  tools: [
    defineTool({
      name: "read_note",
      description: "Read a note",
      category: "notes",
      keywords: [],
      consumes: [],
      produces: ["text"],
      sideEffect: "none",
      needsApproval: false,
      schema: z.object({ name: z.string().min(1), max: z.number().default(10) }),
      estimates: { durationMs: 1, cost: 0 },
      run: async () => Promise.resolve({}),
    }),
    defineTool({
      name: "wipe",
      description: "Wipe",
      category: "admin",
      keywords: [],
      consumes: [],
      produces: ["wiped"],
      sideEffect: "irreversible",
      needsApproval: false,
      schema: z.looseObject({}),
      estimates: { durationMs: 1, cost: 0 },
      run: async () => Promise.resolve({}),
    }),
  ],
  workers: [
    { name: "writer", description: "notes", categories: ["notes"] },
    { name: "admin", description: "admin", categories: ["admin"] },
  ],
};
const registry = ToolRegistry.create([kit]);
const workers: WorkerModel = { model: new ScriptedChatModel([]), maxModelCalls: 6, prompt: workerPrompt };
const step = (s: Partial<TaskStepInput> = {}) =>
  TaskStep.parse({ id: "s1", description: "Read a note", workerType: "writer", ...s });

describe("which steps are model-driven", () => {
  it.each([
    ["no tool named", {}, true],
    ["a tool whose planned parameters are incomplete", { tools: ["read_note"], params: {} }, true],
    ["a fully determined call", { tools: ["read_note"], params: { name: "todo" } }, false],
    ["a tool the worker may not use (refused by the direct call)", { tools: ["wipe"], params: {} }, false],
  ])("%s", (_name, s, expected) => {
    expect(isModelDriven(step(s), registry, workers)).toBe(expected);
  });

  it("never without a worker model: every step is the direct call, as before", () => {
    expect(isModelDriven(step(), registry, undefined)).toBe(false);
    expect(isModelDriven(step({ tools: ["read_note"] }), registry, undefined)).toBe(false);
  });

  it("offers exactly the step's granted tools, or the worker's whole grant when it names none", () => {
    expect(loopTools(step(), registry).map((t) => t.name)).toEqual(["read_note"]);
    expect(loopTools(step({ workerType: "admin" }), registry).map((t) => t.name)).toEqual(["wipe"]);
  });

  it("describes a parameter with a default as optional to the model", () => {
    const [def] = toolDefinitions(loopTools(step(), registry));
    expect(def!.function.parameters).toMatchObject({ required: ["name"] });
  });

  it("the plan view marks model-driven steps", () => {
    const plan = planWith([
      { id: "a", description: "Read something", workerType: "writer" },
      { id: "b", description: "Read todo", workerType: "writer", tools: ["read_note"], params: { name: "todo" } },
    ]);
    const lines = planLines(plan, "", modelDrivenPredicate([kit], workers));
    expect(lines[0]).toMatch(/Read something \[writer, model-driven\]$/);
    expect(lines[1]).toMatch(/Read todo \[writer\]$/);
    expect(planLines(plan, "", modelDrivenPredicate([kit], undefined))[0]).toMatch(/\[writer\]$/);
  });
});

describe("a loop's outcome is decided by the evidence rule, never by the model's words", () => {
  const read = (result: unknown): CallRecord => ({
    tool: "read_note",
    args: { name: "todo" },
    produces: ["text"],
    sideEffect: "none",
    outcome: { kind: "succeeded", result, reused: null },
  });
  const record = (messages: (AIMessage | ToolMessage)[], calls: CallRecord[], expectedOutputs: string[]) => ({
    step: step({ expectedOutputs }),
    tools: loopTools(step(), registry),
    messages,
    calls,
    modelCalls: messages.filter((m) => AIMessage.isInstance(m)).length,
    maxModelCalls: 6,
    durationMs: 5,
    cost: 0,
  });

  it("a model that answers without a tool call fails as no_tool_call, which the strategy table knows", () => {
    const f = loopFeedback(record([new AIMessage("I could not find it.")], [], ["text"]));
    expect(f).toMatchObject({ feedbackType: "FAILURE", failureClass: "no_tool_call", tool: null, evidence: null });
    expect(f.errors[0]).toBe(
      "The writer worker's model answered \"I could not find it.\" without a successful tool call, so nothing shows the step was done (a model's words are not evidence).",
    );
    expect(STRATEGY_PREFERENCES.no_tool_call.at(-1)).toBe("SKIP");
  });

  it("an output no tool produces is the last successful call's result, the model's answer kept beside it", () => {
    const unproven = loopFeedback(record([new AIMessage("It says: write the tests")], [], ["summary"]));
    expect(unproven).toMatchObject({ feedbackType: "FAILURE", failureClass: "no_tool_call" });
    const answered = loopFeedback(
      record([new AIMessage("It says: write the tests")], [read("write the tests")], ["summary"]),
    );
    expect(answered).toMatchObject({
      feedbackType: "SUCCESS",
      outputs: { result: "write the tests", answer: "It says: write the tests" },
      evidence: { tool: "read_note" },
    });
    const produced = loopFeedback(record([new AIMessage("done")], [read({ name: "todo" })], ["text", "summary"]));
    expect(produced.outputs.result).toEqual({ text: { name: "todo" }, summary: { name: "todo" } });
  });

  it("finds the next unanswered call, numbering calls across the loop", () => {
    const ai1 = new AIMessage({ content: "", tool_calls: [{ id: "a", name: "read_note", args: {} }] });
    const ai2 = new AIMessage({
      content: "",
      tool_calls: [
        { id: "b", name: "read_note", args: {} },
        { id: "c", name: "wipe", args: {} },
      ],
    });
    const reply = (id: string) => new ToolMessage({ tool_call_id: id, content: "ok" });
    expect(nextToolCall([ai1])).toMatchObject({ index: 1, call: { id: "a" } });
    expect(nextToolCall([ai1, reply("a"), ai2, reply("b")])).toMatchObject({ index: 3, call: { id: "c" } });
    expect(nextToolCall([ai1, reply("a")])).toBeNull();
  });
});

describe("the cap on model calls per step is configurable", () => {
  it("defaults to 6, takes CANDOR_MAX_MODEL_CALLS, and 0 turns model-driven workers off", () => {
    const model = new ScriptedChatModel([]);
    const reasoner = (n?: number) =>
      new LlmReasoner({
        model,
        fallback: new RulesReasoner(),
        ...(n === undefined ? {} : { maxModelCallsPerStep: n }),
      });
    expect(reasoner().workerModel?.maxModelCalls).toBe(6);
    expect(reasoner(readEnv({ CANDOR_MAX_MODEL_CALLS: "3" }).CANDOR_MAX_MODEL_CALLS).workerModel?.maxModelCalls).toBe(
      3,
    );
    expect(reasoner(0).workerModel).toBeUndefined();
    expect(() => readEnv({ CANDOR_MAX_MODEL_CALLS: "-1" })).toThrow(/CANDOR_MAX_MODEL_CALLS is invalid/);
    expect(() => reasoner(1.5)).toThrow(/maxModelCallsPerStep must be a whole number/);
  });
});
