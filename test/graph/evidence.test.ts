import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { compileAgent } from "../../graphs/agent.js";
import { Plan, type PlanInput } from "../../src/domain/plan.js";
import { forkFrom, listCheckpoints } from "../../src/replay.js";
import { planOf } from "../../src/domain/plan-state.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { openEffectLedger } from "../../src/tools/effects.js";
import { defineTool, type Toolkit } from "../../src/tools/types.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { countingToolkits, interruptValues, tempDir, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { notesToolkit, PlannedReasoner } from "../fakes/notes-toolkit.js";
import { ScriptedChatModel } from "../fakes/scripted-chat-model.js";

/*
 * The evidence rule on the real graph with a scripted model: a step is done only when a tool call succeeded and
 * produced what it must; a model's words ("booked", "done") never make it so, and a tool's failure class inside a
 * worker loop reaches recovery as if the call had been direct.
 */

const tmp = tempDir();
const closers: (() => void)[] = [];
afterAll(() => {
  for (const close of closers) close();
  tmp.cleanup();
});

/** A shop whose order service is down and whose total is over any budget under 150. */
function shopToolkit(): Toolkit {
  return {
    name: "shop",
    tools: [
      defineTool({
        name: "place_order",
        description: "Place the order (cannot be undone)",
        category: "shop",
        keywords: [],
        consumes: [],
        produces: ["receipt"],
        sideEffect: "irreversible",
        needsApproval: true,
        schema: z.object({ item: z.string().min(1) }),
        estimates: { durationMs: 1, cost: 0 },
        run: async () => Promise.reject(new Error("the order service is unavailable (HTTP 503)")),
      }),
      defineTool({
        name: "check_total",
        description: "Compare the order's total with the budget",
        category: "shop",
        keywords: [],
        consumes: [],
        produces: ["budget_status"],
        sideEffect: "none",
        needsApproval: false,
        schema: z.object({ budget: z.number() }),
        estimates: { durationMs: 1, cost: 0 },
        run: async ({ budget }) =>
          Promise.reject(
            new CandorError(`Total cost $150 exceeds budget $${budget}`, ErrorCode.CONSTRAINT_VIOLATION, {
              details: { total: 150, budget, overage: 150 - budget, breakdown: [] },
            }),
          ),
      }),
      defineTool({
        name: "hold_budget",
        description: "Hold a budget for the order",
        category: "shop",
        keywords: [],
        consumes: [],
        produces: ["hold"],
        sideEffect: "none",
        needsApproval: false,
        schema: z.object({ budget: z.number() }),
        estimates: { durationMs: 1, cost: 0 },
        run: async ({ budget }) => Promise.resolve({ held: budget }),
      }),
      defineTool({
        name: "buy",
        description: "Buy the item (cannot be undone)",
        category: "shop",
        keywords: [],
        consumes: [],
        produces: ["receipt"],
        sideEffect: "irreversible",
        needsApproval: true,
        schema: z.object({ item: z.string().min(1) }),
        estimates: { durationMs: 1, cost: 0 },
        run: async ({ item }) => Promise.resolve({ bought: item }),
      }),
    ],
    workers: [{ name: "clerk", description: "Orders things", categories: ["shop"] }],
  };
}

/** Plans the given steps with an understanding record, as a model's plan carries one. */
class RecordedReasoner extends PlannedReasoner {
  constructor(
    steps: PlanInput["steps"],
    model: ScriptedChatModel,
    private readonly understanding: PlanInput["understanding"],
  ) {
    super(steps, model, 4);
  }
  override async plan() {
    const { plan, notes } = await super.plan();
    return { plan: Plan.parse({ ...plan, understanding: this.understanding }), notes };
  }
}

function agent(steps: PlanInput["steps"], model: ScriptedChatModel, understanding?: PlanInput["understanding"]) {
  const persistence = openPersistence(tmp.dbPath);
  closers.push(() => persistence.close());
  const { toolkits, calls } = countingToolkits([notesToolkit(), shopToolkit()]);
  const ledger = openEffectLedger(persistence.store.db);
  const decisionLog = memoryDecisionLog();
  const reasoner = understanding
    ? new RecordedReasoner(steps, model, understanding)
    : new PlannedReasoner(steps, model, 4);
  const graph = compileAgent({ toolkits, decisionLog, ledger, reasoner }, persistence);
  return { graph, calls, ledger, decisionLog };
}

/** No revision: a failed step goes straight to a person, so each test sees the failure itself. */
const NO_REVISIONS = { maxRevisions: 0 };

describe("the evidence rule on the real graph", () => {
  it("regression: an approved order whose call failed is not 'ordered' because the model says so", async () => {
    const model = new ScriptedChatModel([
      { calls: [["place_order", { item: "lamp" }]] },
      "Your order is placed: confirmation LAMP-42. Every step succeeded.",
    ]);
    const step = { id: "order", description: "Order the lamp", workerType: "clerk", tools: ["place_order"] };
    const a = agent([{ ...step, expectedOutputs: ["receipt"] }], model);
    const config = threadConfig("failed-order");
    const asked = interruptValues(await a.graph.invoke(tripInput("order the lamp", NO_REVISIONS), config));
    expect(asked[0]).toMatchObject({ kind: "tool_approval", tool: "place_order" });
    const out = await a.graph.invoke(new Command({ resume: { decision: "approve" } }), config);
    model.assertConsumed();
    const state = await a.graph.getState(config);
    const f = state.values.feedback.find((x: { taskId: string }) => x.taskId === "order");
    expect(f).toMatchObject({ feedbackType: "FAILURE", failureClass: "agent_unavailable", tool: "place_order" });
    expect(f.evidence).toBeNull();
    expect(f.errors[0]).toContain("place_order failed: the order service is unavailable (HTTP 503)");
    expect(f.errors[0]).toContain("contradicted");
    expect(planOf(state.values)!.steps[0]!.status).toBe("failed");
    // The ledger and the step agree: the call failed, and the run stops for a person instead of answering.
    const ledgerRows = await a.ledger.recordsFor({ threadId: "failed-order", stepId: "order.call1", dispatch: 1 });
    expect(ledgerRows.map((r) => r.status)).toEqual(["failed"]);
    expect(interruptValues(out)[0]).toMatchObject({ kind: "max_revisions" });
    expect(state.values.answer ?? "").not.toMatch(/placed|succeeded/);
  });

  it("a reactive model's 'Done, everything looks good' with no tool call is told it is not done, then fails as no_tool_call", async () => {
    // Its first answer and its answers to each of the two replies saying what is missing (MAX_NUDGES).
    const model = new ScriptedChatModel([
      "Done, everything looks good.",
      "Done, everything looks good.",
      "Done, everything looks good.",
    ]);
    const a = agent([], model);
    const config = threadConfig("reactive-done");
    const out = await a.graph.invoke(
      tripInput("count the words of the readme note", { planner: false, ...NO_REVISIONS }),
      config,
    );
    model.assertConsumed();
    expect(a.calls.total()).toBe(0);
    const state = await a.graph.getState(config);
    const f = state.values.feedback.find((x: { taskId: string }) => x.taskId === "reactive");
    expect(f).toMatchObject({ feedbackType: "FAILURE", failureClass: "no_tool_call", evidence: null });
    expect(f.errors[0]).toContain('answered "Done, everything looks good." without a successful tool call');
    // The model was told, in the conversation, what is missing; and the person saw that it was.
    const told = model.seen.at(-1)!.filter((m) => HumanMessage.isInstance(m) && m.text.startsWith("Not done yet"));
    expect(told).toHaveLength(2);
    expect(told[0]!.text).toContain("a successful tool call");
    const shown = (state.values.notifications as { title: string }[]).filter((n) =>
      n.title.includes("told so and asked again"),
    );
    expect(shown.map((n) => n.title.slice(-8))).toEqual(["1 of 2).", "2 of 2)."]);
    expect(interruptValues(out)[0]).toMatchObject({ kind: "max_revisions" });
    expect(state.values.status).not.toBe("completed");
  });

  it("a model that says 'done' before its call is told what is missing, calls, and the step is done on that call", async () => {
    const model = new ScriptedChatModel([
      "Done, the note is read.",
      { calls: [["read_note", { name: "readme" }]] },
      "Read the readme note.",
    ]);
    const step = { id: "read", description: "Read the readme note", workerType: "writer", tools: ["read_note"] };
    const a = agent([{ ...step, expectedOutputs: ["text"] }], model);
    const config = threadConfig("nudged");
    const done = await a.graph.invoke(tripInput("read the readme note"), config);
    model.assertConsumed();
    expect(a.calls.total()).toBe(1);
    const told = model.seen[1]!.at(-1)!.text;
    expect(told).toMatch(/^Not done yet: .*produces text \(from read_note\)/);
    expect(done.feedback.find((f: { taskId: string }) => f.taskId === "read")).toMatchObject({
      feedbackType: "SUCCESS",
      evidence: { tool: "read_note" },
    });
    const shown = (done.notifications as { title: string }[]).filter((n) =>
      n.title.includes("told so and asked again"),
    );
    expect(shown).toHaveLength(1);
    expect(done.status).toBe("completed");
  });

  it("an over-budget check inside a worker loop keeps its class, constraint_violated, for recovery", async () => {
    const model = new ScriptedChatModel([{ calls: [["check_total", { budget: 100 }]] }, "The total is checked."]);
    const step = { id: "budget", description: "Check the total", workerType: "clerk", tools: ["check_total"] };
    const a = agent([{ ...step, expectedOutputs: ["budget_status"] }], model);
    const config = threadConfig("budget-loop");
    await a.graph.invoke(tripInput("check the total against a budget of 100", NO_REVISIONS), config);
    model.assertConsumed();
    const state = await a.graph.getState(config);
    const f = state.values.feedback.find((x: { taskId: string }) => x.taskId === "budget");
    expect(f).toMatchObject({
      feedbackType: "CONSTRAINT_VIOLATION",
      failureClass: "constraint_violated",
      tool: "check_total",
      outputs: { total: 150, budget: 100, overage: 50 },
    });
  });

  it("a repeated identical call gets the first result back; the tool runs once and the repeat is shown", async () => {
    const model = new ScriptedChatModel([
      { calls: [["read_note", { name: "readme" }]] },
      { calls: [["read_note", { name: "readme" }]] },
      { calls: [["count_words", {}]] },
      "Counted.",
    ]);
    const step = { id: "count", description: "Count the readme", workerType: "writer", tools: [] };
    const a = agent([{ ...step, expectedOutputs: ["analysis"] }], model);
    const done = await a.graph.invoke(tripInput("count the words of the readme note"), threadConfig("repeat"));
    model.assertConsumed();
    expect(done.status).toBe("completed");
    expect(a.calls.all()).toEqual({ read_note: 1, count_words: 1 });
    const repeat = done.notifications.find((n) => /repeated read_note/.test(n.title));
    expect(repeat?.title).toContain("the tool was not run again");
    expect(
      a.decisionLog.entries.some((d) => d.decision === "reuse the result of the identical earlier call of read_note"),
    ).toBe(true);
  });

  it("the value used is the value recorded: a converted budget the plan did not apply is applied and named", async () => {
    const model = new ScriptedChatModel([]);
    const step = { id: "hold", description: "Hold the budget", workerType: "clerk", tools: ["hold_budget"] };
    const understanding = {
      by: "llm" as const,
      changes: [
        {
          name: "budget",
          from: "1,000,000 JPY",
          to: 6962,
          source: "1,000,000 yen",
          why: "converted to USD at the day's rate",
          stepIds: ["hold"],
        },
      ],
    };
    const a = agent([{ ...step, params: { budget: 1_000_000 }, expectedOutputs: ["hold"] }], model, understanding);
    const done = await a.graph.invoke(tripInput("hold a budget of 1,000,000 yen"), threadConfig("converted"));
    expect(done.status).toBe("completed");
    expect(planOf(done)!.steps[0]!.result).toEqual({ held: 6962 });
    const named = done.notifications.find((n) => n.title.includes("uses the values the request's record gives"));
    expect(named?.title).toContain(
      'budget = 6962 as the request\'s record says ("1,000,000 JPY" ("1,000,000 yen") changed',
    );
    expect(named?.title).toContain("the call had 1000000, the value before the change");
  });

  it("a side effect belongs to its request: a fork with another request asks again before the call, saying why", async () => {
    const model = new ScriptedChatModel([]);
    const step = { id: "buy", description: "Buy it", workerType: "clerk", tools: ["buy"], params: { item: "lamp" } };
    const a = agent([{ ...step, expectedOutputs: ["receipt"] }], model);
    const thread = "fork-lineage";
    const request = tripInput("buy the lamp");
    interruptValues(await a.graph.invoke(request, threadConfig(thread)));
    await a.graph.invoke(new Command({ resume: { decision: "approve" } }), threadConfig(thread));
    expect(a.calls.count("buy")).toBe(1);
    const start = (await listCheckpoints(a.graph, thread)).find((c) => c.next.includes("understand"))!;
    const changed = { ...request.request, userIntent: "buy the lamp for my sister" };
    await forkFrom(a.graph, thread, start.id, { request: changed });
    const state = await a.graph.getState(threadConfig(thread), { subgraphs: true });
    const pending = state.tasks.flatMap((t) => t.interrupts).map((i) => i.value as { question: string; kind: string });
    expect(pending[0]).toMatchObject({ kind: "tool_approval" });
    expect(pending[0]!.question).toMatch(/^buy already ran for step "buy" \(recorded .*\) for another request/);
    expect(a.calls.count("buy")).toBe(1);
    await a.graph.invoke(new Command({ resume: { decision: "approve" } }), threadConfig(thread));
    expect(a.calls.count("buy")).toBe(2);
  });
});
