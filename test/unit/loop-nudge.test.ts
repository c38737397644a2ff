import { AIMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TaskStep } from "../../src/domain/plan.js";
import { loopNudge, MAX_NUDGES, type LoopRecord } from "../../src/execution/agent-step.js";
import { succeededCall, type CallRecord } from "../../src/execution/evidence.js";
import { defineTool } from "../../src/tools/types.js";

// loopNudge, the pure decision behind "told so and asked again": a model that answered without the evidence its
// step needs, with calls left, is told what is missing; in every other case its answer stands.

const readNote = defineTool({
  name: "read_note",
  description: "Read a note",
  category: "notes",
  keywords: [],
  consumes: [],
  produces: ["text"],
  sideEffect: "none",
  needsApproval: false,
  schema: z.object({ name: z.string() }),
  estimates: { durationMs: 1, cost: 0 },
  run: async () => Promise.resolve({ text: "hi" }),
});
const step = TaskStep.parse({
  id: "read",
  description: "Read the note",
  workerType: "writer",
  tools: ["read_note"],
  expectedOutputs: ["text"],
  status: "running",
});

function record(over: Partial<LoopRecord> = {}): LoopRecord {
  return {
    step,
    tools: [readNote],
    messages: [new AIMessage("Done, the note is read.")],
    calls: [],
    modelCalls: 1,
    maxModelCalls: 6,
    durationMs: 1,
    cost: 0,
    ...over,
  };
}

const failed = (failureClass: "constraint_violated" | "unknown"): CallRecord => ({
  tool: "read_note",
  args: { name: "x" },
  produces: ["text"],
  sideEffect: "none",
  outcome: { kind: "failed", error: "it failed", failureClass, errorType: null, outputs: {} },
});

describe("loopNudge", () => {
  it("an answer with no successful call, calls left: told what is missing and which tool produces it", () => {
    expect(loopNudge(record(), 0)).toMatch(/^Not done yet: .*produces text \(from read_note\)/);
  });

  it("stands once the model was told MAX_NUDGES times, or when its model calls are spent", () => {
    expect(loopNudge(record(), MAX_NUDGES)).toBeNull();
    expect(loopNudge(record({ modelCalls: 6 }), 0)).toBeNull();
  });

  it("stands when the evidence is there: a successful call produced what the step needs", () => {
    const calls = [succeededCall(readNote, { name: "x" }, { text: "hi" }, null)];
    expect(loopNudge(record({ calls }), 0)).toBeNull();
  });

  it("stands when a tool's known failure decides the step (its class goes to recovery), not when it is unknown", () => {
    expect(loopNudge(record({ calls: [failed("constraint_violated")] }), 0)).toBeNull();
    expect(loopNudge(record({ calls: [failed("unknown")] }), 0)).not.toBeNull();
  });
});
