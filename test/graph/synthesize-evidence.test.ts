import { Command } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { compileAgent } from "../../graphs/agent.js";
import type { PlanInput } from "../../src/domain/plan.js";
import { openPersistence } from "../../src/memory/persistence.js";
import type { SynthesisInput } from "../../src/reasoning/types.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { countingToolkits, interruptValues, tempDir, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { notesToolkit, PlannedReasoner } from "../fakes/notes-toolkit.js";
import { ScriptedChatModel } from "../fakes/scripted-chat-model.js";

/*
 * Regression (issue 22 item 3): SYNTHESIZE printed a model's answer as it was written, so an invented figure, a
 * side effect no call made ("published"), or an answer giving no result at all reached the user as the run's answer.
 * On the real graph, a reasoner that answers dishonestly now has its answer corrected, each correction said.
 */

const tmp = tempDir();
const closers: (() => void)[] = [];
afterAll(() => {
  for (const close of closers) close();
  tmp.cleanup();
});

/** Plans the given steps and answers with a fixed text, whatever the results: a model that does not read them. */
class DishonestReasoner extends PlannedReasoner {
  readonly written: SynthesisInput[] = [];
  constructor(
    steps: PlanInput["steps"],
    private readonly answer: string,
    private readonly model = new ScriptedChatModel([]),
  ) {
    super(steps, model);
  }
  override synthesize(input: SynthesisInput): Promise<string> {
    this.written.push(input);
    return Promise.resolve(this.answer);
  }
  assertNoModelCall(): void {
    this.model.assertConsumed();
    expect(this.model.seen).toEqual([]);
  }
}

function agent(steps: PlanInput["steps"], answer: string) {
  const persistence = openPersistence(tmp.dbPath);
  closers.push(() => persistence.close());
  const { toolkits, calls } = countingToolkits([notesToolkit()]);
  const decisionLog = memoryDecisionLog();
  const reasoner = new DishonestReasoner(steps, answer);
  const graph = compileAgent({ toolkits, decisionLog, reasoner }, persistence);
  return { graph, calls, decisionLog, reasoner };
}

const READ = { id: "read", description: "Read the readme note", workerType: "writer", tools: ["read_note"] };
const COUNT = {
  id: "count",
  description: "Count the readme's words",
  workerType: "writer",
  tools: ["count_words"],
  dependsOn: ["read"],
};
const PUBLISH = {
  id: "publish",
  description: "Publish the readme note",
  workerType: "writer",
  tools: ["publish_note"],
  params: { title: "Readme" },
  expectedOutputs: ["receipt"],
};

describe("SYNTHESIZE corrects an answer the runs do not back", () => {
  it("an invented count and a publication nobody made are taken out; the real count is added; each is said", async () => {
    const steps = [
      { ...READ, params: { name: "readme" }, expectedOutputs: ["text"] },
      { ...COUNT, expectedOutputs: ["analysis"] },
    ];
    const a = agent(
      steps,
      "The readme note says: Candor plans and runs steps. It has 17 words. The note was published for everyone.",
    );
    const done = await a.graph.invoke(tripInput("count the words of the readme note"), threadConfig("dishonest"));
    a.reasoner.assertNoModelCall();
    expect(a.reasoner.written).toHaveLength(1);
    expect(a.calls.count("publish_note")).toBe(0);
    expect(done.status).toBe("completed");
    const figure =
      "removed a sentence with the figure 17: it is in no step's result, in the request or in what was understood of it.";
    const effect = "removed a sentence saying publish_note took effect: publish_note was not called in this run.";
    const added = `the answer as written leaves out what "Count the readme's words" (count) produced, so it is listed from the steps' own results.`;
    expect(done.answer).toBe(
      [
        "The readme note says: Candor plans and runs steps.",
        "From the results:",
        '- Count the readme\'s words: {"words":5}',
        `Corrected: ${figure}`,
        `Corrected: ${effect}`,
        `Corrected: ${added}`,
      ].join("\n"),
    );
    const warnings = done.notifications.filter((n) => n.title.startsWith("The answer was corrected"));
    expect(warnings.map((n) => [n.severity, n.kind])).toEqual([
      ["WARNING", "outcome"],
      ["WARNING", "outcome"],
      ["WARNING", "outcome"],
    ]);
    expect(warnings[0]!.title).toContain('The sentence was: "It has 17 words."');
    const logged = a.decisionLog.entries.filter((d) => d.decision.startsWith("correct the answer"));
    expect(logged.map((d) => [d.decision, d.reasoning])).toEqual([
      ["correct the answer (figure)", figure],
      ["correct the answer (effect)", effect],
      ["correct the answer (unanswered)", added],
    ]);
  });

  it("a publication a person denied is not 'published' because the answer says so; it is listed as missing", async () => {
    const steps = [{ ...READ, params: { name: "readme" }, expectedOutputs: ["text"] }, PUBLISH];
    const a = agent(steps, "Candor plans and runs steps. Your note is published under the title Readme.");
    const config = threadConfig("denied-publish");
    const asked = interruptValues(await a.graph.invoke(tripInput("read the readme note and publish it"), config));
    expect(asked[0]).toMatchObject({ kind: "tool_approval", tool: "publish_note" });
    const done = await a.graph.invoke(new Command({ resume: { decision: "deny", comment: "not yet" } }), config);
    a.reasoner.assertNoModelCall();
    expect(a.calls.count("publish_note")).toBe(0);
    expect(done.status).toBe("partial");
    const lines = done.answer!.split("\n");
    expect(lines[0]).toBe("Candor plans and runs steps.");
    expect(done.answer).not.toMatch(/is published/);
    expect(done.answer).toMatch(/\nMissing from this answer:\n- Publish the readme note \(publish\): /);
    expect(done.answer).toMatch(/\(publish\): Skipped after it failed: A human denied publish_note/);
    expect(lines.at(-1)).toBe(
      'Corrected: removed a sentence saying publish_note took effect: no call of publish_note succeeded in this run (step publish, "Publish the readme note", was skipped).',
    );
  });

  it("'Done, everything looks good.' gets the results from the steps themselves", async () => {
    const steps = [
      { ...READ, params: { name: "readme" }, expectedOutputs: ["text"] },
      { ...COUNT, expectedOutputs: ["analysis"] },
    ];
    const a = agent(steps, "Done, everything looks good.");
    const done = await a.graph.invoke(tripInput("count the words of the readme note"), threadConfig("done-only"));
    expect(done.answer).toBe(
      [
        "Done, everything looks good.",
        "work with notes",
        '- Read the readme note: {"name":"readme","text":"Candor plans and runs steps"}',
        '- Count the readme\'s words: {"words":5}',
        "Corrected: the answer as written gives none of the results, so they are listed from the steps' own results.",
      ].join("\n"),
    );
  });
});
