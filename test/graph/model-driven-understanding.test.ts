import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compileAgent } from "../../graphs/agent.js";
import type { ModelPlan } from "../../src/domain/plan.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { LlmReasoner } from "../../src/reasoning/llm.js";
import { createChatModel } from "../../src/reasoning/model.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { workspaceToolkit } from "../../src/tools/builtin/workspace.js";
import { scriptedServersPerTest } from "../fakes/fake-openai-server.js";
import { tempDir, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { workspaceModelPlan } from "../fakes/model-plans.js";
import { planOf } from "../../src/domain/plan-state.js";

// Regression: with a model plan whose reading step left its arguments to the worker's model, "three" in "read the
// three largest files in src/ ..." was named as used by no step, so the run asked for plan approval even at
// approvalThreshold 0 and ended partial though every step was done (bench/models.ts, row b).

const { serve } = scriptedServersPerTest();
const tmp = tempDir();
const closers: (() => void)[] = [];
afterAll(() => {
  for (const close of closers) close();
  tmp.cleanup();
});

const REQUEST = "read the three largest files in src/ and write a report on what they do";
const FILES: [string, string][] = [
  ["src/engine.ts", "export function run(steps: string[]) {\n  return steps.map((s) => s.trim());\n}\n".repeat(6)],
  ["src/parser.ts", "export function parse(text: string) {\n  return text.split(/\\s+/);\n}\n".repeat(4)],
  ["src/format.ts", "export const format = (xs: string[]) => xs.join(', ');\n".repeat(3)],
  ["src/util.ts", "export const id = <T>(x: T) => x;\n"],
];

const plan = (readDescription: string): ModelPlan => workspaceModelPlan(readDescription);

async function workspaceAgent(script: Parameters<typeof serve>[0]) {
  const root = path.join(tmp.dir, `ws-${closers.length}`);
  mkdirSync(path.join(root, "src"), { recursive: true });
  for (const [p, text] of FILES) writeFileSync(path.join(root, p), text);
  const { fake, baseUrl } = await serve(script);
  const model = createChatModel({ apiKey: "test-key", baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
  const persistence = openPersistence(tmp.dbPath);
  closers.push(() => persistence.close());
  const graph = compileAgent(
    {
      toolkits: [workspaceToolkit({ root, reportsDir: "reports" })],
      reasoner: new LlmReasoner({ model, fallback: new RulesReasoner() }),
    },
    persistence,
  );
  return { graph, fake };
}

const READS = ["src/engine.ts", "src/parser.ts", "src/format.ts"].map((p) => ({
  toolCall: { name: "read_file", arguments: { path: p } },
}));
const REVIEW = {
  parts: [
    { partId: "p1", answered: true, why: null },
    { partId: "p2", answered: true, why: null },
  ],
};

describe("a model plan with a model-driven reading step, through the graph (fake OpenAI server)", () => {
  it("is accounted for fully: no open question, no plan approval at threshold 0, and the run completes", async () => {
    const a = await workspaceAgent([
      { json: plan("Read the three largest files in src/") },
      ...READS,
      "Read the engine, the parser and the formatter.",
      { json: REVIEW },
      "The three largest files are an engine, a parser and a formatter.",
    ]);
    const done = await a.graph.invoke(tripInput(REQUEST, { approvalThreshold: 0 }), threadConfig("md-three"));
    expect(planOf(done)!.understanding.unaccounted).toEqual([]);
    expect(planOf(done)!.confidenceReasons.join(" ")).not.toMatch(/served nothing/);
    // One invoke ran the whole plan: no approval was asked on the way.
    expect(done.pendingInterrupt).toBeNull();
    expect(planOf(done)!.steps.map((s) => s.status)).toEqual(["done", "done", "done", "done"]);
    expect(done.status).toBe("completed");
    a.fake.assertConsumed();
  });

  it("still names a number the model-driven step does not restate, and asks before running", async () => {
    const a = await workspaceAgent([{ json: plan("Read the largest files in src/") }]);
    const paused = await a.graph.invoke(tripInput(REQUEST, { approvalThreshold: 0 }), threadConfig("md-unsaid"));
    expect(planOf(paused)!.understanding.unaccounted).toEqual([
      { text: "three", kind: "number", why: "no step uses this number" },
    ]);
    expect(paused.status).toBe("awaiting_approval");
    a.fake.assertConsumed();
  });
});
