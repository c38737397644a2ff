import { Command } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { compileAgent } from "../../graphs/agent.js";
import { ConfidenceCalibrator } from "../../src/confidence/calibrator.js";
import { Plan } from "../../src/domain/plan.js";
import type { PlanningRequest } from "../../src/domain/request.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { fallbackPlan } from "../../src/planning/parse.js";
import type { PlanResult, Reasoner, SynthesisInput, WorkerModel } from "../../src/reasoning/types.js";
import { openEffectLedger } from "../../src/tools/effects.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { renderReport } from "../../src/transparency/report.js";
import { countingToolkits, interruptValues, tempDir, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { notesToolkit } from "../fakes/notes-toolkit.js";
import { ScriptedChatModel } from "../fakes/scripted-chat-model.js";
import { planOf } from "../../src/domain/plan-state.js";
import { workerPrompt } from "../../prompts/worker.js";

const tmp = tempDir();
const closers: (() => void)[] = [];
afterAll(() => {
  for (const close of closers) close();
  tmp.cleanup();
});

/** How the test reasoner plans: a plan it is given, an error it throws, or "never asked" (the test fails if it is). */
type Planning = { plan: (request: PlanningRequest) => Plan } | { throws: CandorError } | "never";

/** A reasoner whose planning the test decides, lending a scripted model to the workers (or none). */
class TestReasoner implements Reasoner {
  readonly kind = "llm" as const;
  readonly workerModel?: WorkerModel;
  planCalls = 0;
  constructor(
    private readonly planning: Planning,
    model: ScriptedChatModel | null,
  ) {
    if (model) this.workerModel = { model, maxModelCalls: 6, prompt: workerPrompt };
  }
  plan(request: PlanningRequest): Promise<PlanResult> {
    this.planCalls += 1;
    if (this.planning === "never") throw new Error("test reasoner: plan() was not meant to be called");
    if ("throws" in this.planning) return Promise.reject(this.planning.throws);
    return Promise.resolve({ plan: this.planning.plan(request), notes: [] });
  }
  synthesize(input: SynthesisInput): Promise<string> {
    return Promise.resolve(`Answer: ${JSON.stringify(input.results)}`);
  }
  proposeRecovery(): Promise<null> {
    return Promise.resolve(null);
  }
}

function agent(reasoner: TestReasoner) {
  const persistence = openPersistence(tmp.dbPath);
  closers.push(() => persistence.close());
  const { toolkits, calls } = countingToolkits([notesToolkit()]);
  const decisionLog = memoryDecisionLog();
  const ledger = openEffectLedger(persistence.store.db);
  const graph = compileAgent({ toolkits, reasoner, decisionLog, ledger }, persistence);
  return { graph, calls, decisionLog, persistence };
}

/** The model reads a note, counts its words and answers: two tool calls, then the answer. */
const READ_AND_COUNT = [
  { calls: [["read_note", { name: "readme" }]] as [string, Record<string, unknown>][] },
  { calls: [["count_words", {}]] as [string, Record<string, unknown>][] },
  "The readme note has 5 words.",
];

describe("reactive mode: no plan, one general worker loop with every tool", () => {
  it("settings.planner false runs the request as one model loop over every tool, without asking the planner", async () => {
    const model = new ScriptedChatModel(READ_AND_COUNT);
    const reasoner = new TestReasoner("never", model);
    const a = agent(reasoner);
    const done = await a.graph.invoke(
      tripInput("count the words of the readme note", { planner: false }),
      threadConfig("reactive-asked"),
    );
    model.assertConsumed();
    expect(reasoner.planCalls).toBe(0);
    expect(done.status).toBe("completed");
    expect(a.calls.all()).toEqual({ read_note: 1, count_words: 1 });
    // Every tool of every toolkit, the admin's too: the general worker's whole grant.
    expect(model.offered[0]!.sort()).toEqual(["count_words", "delete_notes", "publish_note", "read_note"]);
    expect(done.plan).toMatchObject({ createdBy: "reactive", steps: [{ id: "reactive", workerType: "general" }] });
    // The step's result is the evidence, each tool's last successful output; the model's words are kept beside it.
    expect(planOf(done)!.steps[0]!.result).toMatchObject({ read_note: { name: "readme" }, count_words: { words: 5 } });
    expect(done.answer).toContain('{"words":5}');
    const announced = done.notifications.filter((n) => n.kind === "plan");
    expect(announced.map((n) => n.title)).toEqual(["Reactive mode: no plan; one general worker runs the request"]);
    expect(done.report!.reactive).toMatch(/^Reactive mode was asked for/);
    const text = renderReport(done.report!);
    expect(text).toMatch(/^Report for reactive run plan-/);
    expect(text).toContain("Mode: reactive mode, no plan");
    expect(a.decisionLog.entries.find((d) => d.operation === "plan")!.decision).toBe(
      "reactive mode, no plan: one general worker loop",
    );
    // Its 0.5 was nobody's rating of a plan, so the outcome must not calibrate later plans' confidence.
    const userId = done.request.userContext.userId;
    expect(await new ConfidenceCalibrator(a.persistence.store, userId).outcomes()).toEqual([]);
  });

  it("settings.planner false from the assistant's context (Studio, the SDK) runs reactive too", async () => {
    const model = new ScriptedChatModel(READ_AND_COUNT);
    const reasoner = new TestReasoner("never", model);
    const a = agent(reasoner);
    const done = await a.graph.invoke(tripInput("count the words of the readme note"), {
      ...threadConfig("reactive-context"),
      context: { planner: false },
    });
    model.assertConsumed();
    expect(reasoner.planCalls).toBe(0);
    expect(done.status).toBe("completed");
    expect(done.settings.planner).toBe(false);
    expect(planOf(done)!.createdBy).toBe("reactive");
    const announced = done.notifications.find((n) => n.kind === "plan")!;
    expect(announced.message).toContain("from the assistant's configuration: planner false");
  });

  it("a call that needs approval inside the reactive loop still asks a person, and runs once when approved", async () => {
    const model = new ScriptedChatModel([
      { calls: [["publish_note", { title: "readme" }]] },
      "Published the readme note.",
    ]);
    const a = agent(new TestReasoner("never", model));
    const config = threadConfig("reactive-approval");
    const [payload] = interruptValues(
      await a.graph.invoke(tripInput("publish the readme note", { planner: false }), config),
    );
    expect(payload).toMatchObject({ kind: "tool_approval" });
    expect(a.calls.count("publish_note")).toBe(0);
    const done = await a.graph.invoke(new Command({ resume: { decision: "approve" } }), config);
    model.assertConsumed();
    expect(a.calls.count("publish_note")).toBe(1);
    expect(done.status).toBe("completed");
  });

  it("without a worker model, settings.planner false is refused with a coded error before anything runs", async () => {
    const reasoner = new TestReasoner("never", null);
    const a = agent(reasoner);
    const run = a.graph.invoke(tripInput("count the words", { planner: false }), threadConfig("reactive-no-model"));
    await expect(run).rejects.toSatisfy(
      (e) => CandorError.hasCode(e, ErrorCode.CONFIGURATION) && /needs a chat model.*--model/.test(e.message),
    );
    expect(reasoner.planCalls).toBe(0);
    expect(a.calls.all()).toEqual({});
  });
});

describe("reactive mode as the fallback when planning fails", () => {
  it("a planner that finds no plan falls back to reactive mode, says so, and the loop answers", async () => {
    const model = new ScriptedChatModel(READ_AND_COUNT);
    const noPlan = new CandorError("No tool matches the request.", ErrorCode.NO_VALID_PLAN);
    const a = agent(new TestReasoner({ throws: noPlan }, model));
    const done = await a.graph.invoke(tripInput("count the words of the readme note"), threadConfig("fallback-throw"));
    model.assertConsumed();
    expect(done.status).toBe("completed");
    expect(a.calls.all()).toEqual({ read_note: 1, count_words: 1 });
    const announced = done.notifications.find((n) => n.kind === "plan")!;
    expect(announced).toMatchObject({
      severity: "WARNING",
      title: "Planning failed: No tool matches the request; running in reactive mode",
    });
    expect(done.report!.reactive).toBe(
      "Planning failed: No tool matches the request; running in reactive mode instead of a plan.",
    );
  });

  it("seed 004's one-step fallback plan (every planner failed) runs as reactive mode instead of failing 'names no tool'", async () => {
    const model = new ScriptedChatModel(READ_AND_COUNT);
    const why = "The model's plan was rejected: it is not JSON. The rules planner found no plan either.";
    const a = agent(new TestReasoner({ plan: (request) => fallbackPlan(request, why) }, model));
    const done = await a.graph.invoke(tripInput("count the words of the readme note"), threadConfig("fallback-plan"));
    model.assertConsumed();
    expect(done.status).toBe("completed");
    // Not the old path: no approval asked for a plan in name only, no "names no tool" failure, no replanning.
    expect(done.revisions).toEqual([]);
    expect(done.feedback.map((f) => f.feedbackType)).toEqual(["SUCCESS"]);
    expect(planOf(done)!.createdBy).toBe("reactive");
    expect(done.notifications.find((n) => n.kind === "plan")!.title).toBe(
      "Planning failed: The model's plan was rejected: it is not JSON. The rules planner found no plan either; running in reactive mode",
    );
  });

  it("without a worker model the fallback does not apply: no plan fails the run as before", async () => {
    const noPlan = new CandorError("No tool matches the request.", ErrorCode.NO_VALID_PLAN);
    const a = agent(new TestReasoner({ throws: noPlan }, null));
    const done = await a.graph.invoke(tripInput("frobnicate the quux"), threadConfig("fallback-no-model"));
    expect(done.status).toBe("failed");
    expect(done.plan).toBeNull();
    expect(done.notifications.map((n) => n.title)).toContain("No plan could be made: No tool matches the request.");
  });

  it("a refusal (a budget no plan can meet) is not a planning failure: reactive mode does not get around it", async () => {
    const model = new ScriptedChatModel([]);
    const refused = new CandorError(
      "The plan needs 900 tokens, over the budget of 100.",
      ErrorCode.INSUFFICIENT_RESOURCES,
    );
    const a = agent(new TestReasoner({ throws: refused }, model));
    const done = await a.graph.invoke(tripInput("summarise the notes"), threadConfig("fallback-refused"));
    model.assertConsumed();
    expect(done.status).toBe("failed");
    expect(done.failureReason).toBe("The plan needs 900 tokens, over the budget of 100.");
  });
});
