import { Command } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent } from "../../graphs/agent.js";
import { HumanApprovalRequest } from "../../src/domain/approval.js";
import type { ModelPlan } from "../../src/domain/plan.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { LlmReasoner } from "../../src/reasoning/llm.js";
import { createChatModel } from "../../src/reasoning/model.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { scriptedServersPerTest } from "../fakes/fake-openai-server.js";
import { agentsOnTempDb, interruptValues, tempDir, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";

const { agent } = agentsOnTempDb();

describe("understanding → approval → partial (rules)", () => {
  it.each([
    ["find flights from Madrid to Paris and translate the restaurant menu into German", /translate/],
    ["Plan 3 days in Rome from Paris and call the hotel to confirm", /call/],
    ["3 days in Paris from Madrid next Friday", /next Friday/],
  ])(
    "a part no step can do stops the run before anything runs, named; approved, the run is partial: %s",
    async (text, named) => {
      const a = agent();
      const config = threadConfig(`understand-${text.length}`);
      // Even a threshold that would never ask for confidence asks for what will not be done.
      const [payload] = interruptValues(await a.graph.invoke(tripInput(text, { approvalThreshold: 0 }), config));
      const request = HumanApprovalRequest.parse(payload);
      expect(request.openQuestions!.join(" ")).toMatch(named);
      expect(request.question).toMatch(/will not be done as asked/);
      expect(request.plan.understanding.by).toBe("rules");
      expect(a.calls.total()).toBe(0);
      const plan = a.decisionLog.entries.find((e) => e.operation === "plan")!;
      expect(plan.understanding).toEqual(request.plan.understanding);

      const done = await a.graph.invoke(new Command({ resume: { decision: "approve" } }), config);
      expect(planOf(done)!.steps.every((s) => s.status === "done")).toBe(true);
      expect(done.status).toBe("partial");
      expect(done.answer).toMatch(/Missing from this answer:/);
      expect(done.answer).toMatch(named);
      expect(done.report!.missing.join(" ")).toMatch(named);
      expect(done.report!.summary.outcome).toMatch(
        /^Partly completed: every step succeeded, but part of the request was not done/,
      );
    },
  );

  it.each([
    "3 days in Paris from Madrid for 2, no hotel",
    "just a hotel in Rome for 3 nights",
    "flight only from Paris to London",
  ])("a request understood whole completes without asking: %s", async (text) => {
    const a = agent();
    const done = await a.graph.invoke(tripInput(text), threadConfig(`whole-${text.length}`));
    expect(done.status).toBe("completed");
    expect(planOf(done)!.understanding.parts.length).toBeGreaterThan(0);
  });
});

describe("a multi-city trip runs its legs in parallel and ends in one itinerary", () => {
  it.each([
    ["Madrid to Paris then Rome, 6 days for 2", "Madrid → Paris → Rome → Madrid"],
    ["Prague and Vienna from Berlin, 5 days", "Berlin → Prague → Vienna → Berlin"],
    ["2 days in Lisbon and 3 days in Barcelona from London", "London → Lisbon → Barcelona → London"],
  ])("%s", async (text, route) => {
    const a = agent();
    const done = await a.graph.invoke(tripInput(text), threadConfig(`multi-${text.length}`));
    expect(done.status).toBe("completed");
    const legs = planOf(done)!.steps.filter((s) => s.tools[0] === "search_flights");
    expect(legs).toHaveLength(3);
    // Every search was dispatched in the first wave: none waited for another.
    const firstWave = done.feedback.filter(
      (f) => f.taskId.startsWith("flight_") || f.taskId.startsWith("hotel_") || f.taskId.startsWith("activities_"),
    );
    expect(new Set(firstWave.map((f) => f.dispatch))).toEqual(new Set([1]));
    const itinerary = planOf(done)!.steps.find((s) => s.id === "itinerary")!.result as {
      itinerary: string;
      days: string[];
    };
    expect(itinerary.itinerary.split("\n")[0]).toMatch(new RegExp(`^${route}`));
    expect(itinerary.days.filter((d) => /Check in at/.test(d))).toHaveLength(2);
    const budget = planOf(done)!.steps.find((s) => s.id === "budget_status")!.result as {
      breakdown: { flight: number };
    };
    expect(budget.breakdown.flight).toBe(legs.reduce((n, s) => n + (s.result as { cost: number }).cost, 0));
  });
});

const { serve } = scriptedServersPerTest();
const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** The travel agent planning and reviewing with a model on the fake server (rules as its fallback). */
async function modelAgent(script: Parameters<typeof serve>[0]) {
  const { fake, baseUrl } = await serve(script);
  const model = createChatModel({ apiKey: "test-key", baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
  const persistence = openPersistence(tmp.dbPath);
  const decisionLog = memoryDecisionLog();
  const graph = compileAgent(
    {
      toolkits: [travelToolkit({ latencyMs: 5 })],
      reasoner: new LlmReasoner({ model, fallback: new RulesReasoner() }),
      decisionLog,
    },
    persistence,
  );
  return { graph, fake, decisionLog, close: () => persistence.close() };
}

const TRANSLATE = "find flights from Madrid to Paris and translate the restaurant menu into German";
const flightStep = {
  id: "s1",
  description: "Find flights Madrid → Paris",
  workerType: "flight_agent",
  tools: ["search_flights"],
  paramsJson: '{"origin":"Madrid","destination":"Paris","travellers":1}',
  dependsOn: [],
  expectedOutputs: ["flight"],
};
/** A model's plan with the one flight step, and the understanding record it sends (none by default). */
const flightsPlan = (understanding: ModelPlan["understanding"] = null): ModelPlan => ({
  objective: "Flights",
  contextSummary: null,
  confidence: 0.9,
  steps: [flightStep],
  understanding,
});

describe("the model path is checked against the request (fake OpenAI server)", () => {
  it.each([
    ["a record that leaves the part out", null],
    [
      "a record that claims it with no step",
      {
        parts: [
          {
            text: "find flights from Madrid to Paris",
            description: "flights",
            kind: "task",
            status: "served",
            stepIds: ["s1"],
            why: null,
          },
          {
            text: "translate the restaurant menu into German",
            description: "translation",
            kind: "task",
            status: "served",
            stepIds: [],
            why: null,
          },
        ],
        values: [],
        assumptions: [],
        changes: [],
      },
    ],
    [
      "a record that claims the flight step translates",
      {
        parts: [
          { text: TRANSLATE, description: "everything", kind: "task", status: "served", stepIds: ["s1"], why: null },
          {
            text: "translate the restaurant menu into German",
            description: "translation",
            kind: "task",
            status: "served",
            stepIds: ["s1"],
            why: null,
          },
        ],
        values: [],
        assumptions: [],
        changes: [],
      },
    ],
  ])("a model plan that leaves a part unserved is caught: %s", async (_name, understanding) => {
    const plan = flightsPlan(understanding as ModelPlan["understanding"]);
    const a = await modelAgent([{ json: plan }]);
    try {
      const [payload] = interruptValues(
        await a.graph.invoke(tripInput(TRANSLATE), threadConfig(`model-plan-${_name.length}`)),
      );
      const request = HumanApprovalRequest.parse(payload);
      expect(request.plan.createdBy).toBe("llm");
      expect(request.confidence).toBeLessThan(0.5);
      expect(request.openQuestions!.join(" ")).toMatch(/translate the restaurant menu into German/);
    } finally {
      a.close();
    }
  });

  it("a model synthesis that claims a missing part is overruled: the run is partial and the part listed", async () => {
    const plan = flightsPlan();
    const review = {
      parts: [
        { partId: "p1", answered: true, why: null },
        { partId: "p2", answered: true, why: null },
      ],
    };
    const a = await modelAgent([
      { json: plan },
      { json: review },
      "Your flight is booked and the menu has been translated into German.",
    ]);
    try {
      const config = threadConfig("model-overruled");
      interruptValues(await a.graph.invoke(tripInput(TRANSLATE), config));
      const done = await a.graph.invoke(new Command({ resume: { decision: "approve" } }), config);
      expect(done.status).toBe("partial");
      expect(done.answer).toMatch(/Missing from this answer:\n- "translate the restaurant menu into German"/);
      expect(done.notifications.some((n) => /the model's review is overruled/.test(n.title))).toBe(true);
      expect(a.decisionLog.entries.some((e) => e.decision === "overrule the model")).toBe(true);
      expect(a.fake.requests.map((r) => r.body.response_format?.json_schema?.name ?? "text")).toEqual([
        "plan",
        "answer_review",
        "text",
      ]);
    } finally {
      a.close();
    }
  });

  it("a part the model finds unanswered goes back to select_strategy as incomplete_result", async () => {
    const plan = flightsPlan();
    const unanswered = { parts: [{ partId: "p1", answered: false, why: "no departure time is given" }] };
    const answered = { parts: [{ partId: "p1", answered: true, why: null }] };
    const a = await modelAgent([{ json: plan }, { json: unanswered }, { json: answered }, "Flights found."]);
    try {
      const done = await a.graph.invoke(
        tripInput("find flights from Madrid to Paris"),
        threadConfig("model-incomplete"),
      );
      const incomplete = done.feedback.find((f) => f.failureClass === "incomplete_result");
      expect(incomplete).toMatchObject({ taskId: "s1", feedbackType: "FAILURE" });
      expect(incomplete!.errors[0]).toMatch(
        /does not answer "find flights from Madrid to Paris": no departure time is given/,
      );
      expect(done.revisions[0]).toMatchObject({
        failedTaskId: "s1",
        failureClass: "incomplete_result",
        strategy: "RETRY_DIFFERENT_AGENT",
      });
      expect(done.status).toBe("completed");
    } finally {
      a.close();
    }
  });
});
