import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import type { PlanningContext, PlanResult } from "../../src/reasoning/types.js";
import type { PlanningRequest } from "../../src/domain/request.js";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent } from "../../graphs/agent.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { Node } from "../../nodes/names.js";
import { ConfidenceCalibrator } from "../../src/confidence/calibrator.js";
import type { AgentStateValue } from "../../nodes/state.js";
import {
  EASY_TRIP,
  TEST_LATENCY_MS,
  interruptValues,
  agentsOnTempDb,
  threadConfig,
  tripInput,
  type Agent,
} from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";

/*
 * Issue 4 item 2: an escalation answered with `retry` and new parameters, or with `replan` and guidance. The
 * hotel search is fully booked once, and a revision cap of 0 escalates at the first failure instead of recovering.
 */
const { agent, dbPath } = agentsOnTempDb({ faults: ["search_hotels=unavailable*1"] });

async function escalated(a: Agent, thread: string) {
  const out = await a.graph.invoke(tripInput(EASY_TRIP, { maxRevisions: 0 }), threadConfig(thread));
  const [payload] = interruptValues(out);
  expect(payload).toMatchObject({
    kind: "max_revisions",
    taskId: "hotel",
    decisions: ["skip", "retry", "replan", "abort"],
    params: { city: "Paris", radiusKm: 0 },
  });
  return payload!;
}

describe("retry with new parameters", () => {
  it("runs the failed step again with the person's parameters and finishes, without re-running finished steps", async () => {
    const a = agent();
    const config = threadConfig("retry-set");
    await escalated(a, "retry-set");
    const done = await a.graph.invoke(new Command({ resume: { decision: "retry", params: { radiusKm: 20 } } }), config);
    expect(done.status).toBe("completed");
    expect(done.revisions.map((r) => `${r.strategy}:${r.failedTaskId}`)).toEqual(["RETRY_WITH_PARAMS:hotel"]);
    expect(planOf(done)!.steps.find((s) => s.id === "hotel_retry")).toMatchObject({
      status: "done",
      params: { radiusKm: 20 },
    });
    expect(done.approval).toMatchObject({ kind: "max_revisions", decision: "retry", params: { radiusKm: 20 } });
    expect(a.calls.all()).toMatchObject({ search_flights: 1, search_activities: 1, search_hotels: 2 });
    expect(
      done.notifications.some((n) => n.title.includes("A human retried hotel with new parameters (radiusKm=20)")),
    ).toBe(true);
  });

  it("keeps the thread waiting, with the reason, when the tool would refuse the parameters", async () => {
    const a = agent();
    const config = threadConfig("retry-bad");
    await escalated(a, "retry-bad");
    const again = await a.graph.invoke(
      new Command({ resume: { decision: "retry", params: { radiusKm: 500 } } }),
      config,
    );
    const [payload] = interruptValues(again);
    expect(payload!.error).toMatch(/search_hotels would refuse these parameters \(radiusKm: /);
    expect(a.calls.count("search_hotels")).toBe(1);
    // Still answerable: a valid retry goes through.
    const done = await a.graph.invoke(new Command({ resume: { decision: "retry", params: { radiusKm: 10 } } }), config);
    expect(done.status).toBe("completed");
  });
});

describe("replan with guidance on a plan not yet approved", () => {
  it("makes the plan again with memory and calibration, runs it once above the threshold, and calibration learns from the plan that ran", async () => {
    const a = agent({ faults: [] });
    const config = threadConfig("plan-replan");
    const user = "plan_replan_user";
    const [payload] = interruptValues(
      await a.graph.invoke(tripInput("Plan a 4-day trip to Atlantis from Paris", {}, user), config),
    );
    expect(payload).toMatchObject({
      kind: "plan_approval",
      confidence: 0,
      decisions: ["approve", "reject", "adjust", "replan"],
    });
    const done = await a.graph.invoke(
      new Command({ resume: { decision: "replan", guidance: "Go to Rome instead" } }),
      config,
    );
    expect(done.status).toBe("completed");
    expect(done.request.userIntent).toBe("Go to Rome instead. Plan a 4-day trip to Atlantis from Paris");
    expect(planOf(done)!.steps.find((s) => s.id === "hotel")!.params.city).toBe("Rome");
    expect(done.plannedConfidence).toBe(0.85);
    const [outcome] = await new ConfidenceCalibrator(a.persistence.store, user).outcomes();
    expect(outcome).toMatchObject({ planId: planOf(done)!.planId, confidence: 0.85, success: true });
  });
});

describe("replan with guidance", () => {
  it("plans the unfinished work again with the guidance, keeping finished steps and their results", async () => {
    const a = agent();
    const config = threadConfig("replan");
    await escalated(a, "replan");
    const waiting = (await a.graph.getState(config)).values as AgentStateValue;
    const before = planOf(waiting)!.steps.find((s) => s.id === "flight")!.result;
    const done = await a.graph.invoke(
      new Command({ resume: { type: "response", args: "Keep it under 5000 dollars" } }),
      config,
    );
    expect(done.status).toBe("completed");
    const revision = done.revisions.at(-1)!;
    expect(revision).toMatchObject({ strategy: "REPLAN_WITH_GUIDANCE", failedTaskId: "hotel" });
    expect(revision.changes[1]).toMatch(/Keep 2 finished step\(s\)/);
    expect(done.approval).toMatchObject({ decision: "replan", guidance: "Keep it under 5000 dollars" });
    // The guidance reached the plan: the budget check now has the person's budget.
    expect(planOf(done)!.steps.find((s) => s.tools[0] === "check_budget")!.params.budget).toBe(5000);
    // Finished searches were not repeated; the hotel ran again under a new id (the failed one is never reused).
    expect(a.calls.all()).toMatchObject({ search_flights: 1, search_activities: 1, search_hotels: 2 });
    expect(planOf(done)!.steps.find((s) => s.id === "flight")!.result).toEqual(before);
    expect(planOf(done)!.steps.some((s) => s.id === "hotel_g2" && s.status === "done")).toBe(true);
    expect(done.next).toEqual({ kind: "end" });
  });

  it("asks the person again, naming what is open, when the guided plan leaves part of the request unserved", async () => {
    // Regression: a guided plan whose understanding record had an open question ran without asking anyone.
    const a = agent();
    const config = threadConfig("replan-open");
    await escalated(a, "replan-open");
    const again = await a.graph.invoke(
      new Command({
        resume: { decision: "replan", guidance: "any hotel will do, and translate the menu into German" },
      }),
      config,
    );
    const [payload] = interruptValues(again);
    expect(payload).toMatchObject({ kind: "max_revisions", taskId: "hotel" });
    expect(JSON.stringify(payload)).toMatch(/leaves 1 thing\(s\) open: .*translate/);
    expect(a.calls.count("search_hotels")).toBe(1);
  });

  it("asks the person again, saying why, when no plan can be made from the guidance", async () => {
    class FailsToReplan extends RulesReasoner {
      calls = 0;
      override async plan(request: PlanningRequest, ctx: PlanningContext): Promise<PlanResult> {
        if (++this.calls > 1) throw new CandorError("no tool matches the request", ErrorCode.NO_VALID_PLAN);
        return super.plan(request, ctx);
      }
    }
    const persistence = openPersistence(dbPath);
    // The hotel is always booked out, and the reasoner plans once (the first plan) but not again.
    const booked = travelToolkit({ latencyMs: TEST_LATENCY_MS });
    const toolkit = {
      ...booked,
      tools: booked.tools.map((t) =>
        t.name === "search_hotels" ? { ...t, run: () => Promise.reject(new Error("search_hotels: fully booked")) } : t,
      ),
    };
    const g2 = compileAgent({ toolkits: [toolkit], reasoner: new FailsToReplan() }, persistence);
    try {
      const cfg = threadConfig("replan-fails");
      interruptValues(await g2.invoke(tripInput(EASY_TRIP, { maxRevisions: 0 }), cfg));
      const again = await g2.invoke(
        new Command({ resume: { decision: "replan", guidance: "any hotel will do" } }),
        cfg,
      );
      const [payload] = interruptValues(again);
      expect(payload).toMatchObject({ kind: "max_revisions", taskId: "hotel" });
      expect(payload!.reason).toMatch(/^Replanning with "any hotel will do" did not work: no tool matches the request/);
      const state = await g2.getState(cfg);
      expect(state.next).toEqual([Node.HUMAN_INTERRUPT]);
      expect((state.values as AgentStateValue).notifications.at(-1)!.title).toMatch(
        /^Replanning with your guidance did not work: no tool matches the request/,
      );
      // A second failed replan replaces the first one's sentence instead of stacking it.
      const twice = interruptValues(
        await g2.invoke(new Command({ resume: { decision: "replan", guidance: "a hostel is fine" } }), cfg),
      );
      expect(twice[0]!.reason).toMatch(
        /^Replanning with "a hostel is fine" did not work: no tool matches the request Before that: /,
      );
      expect(twice[0]!.reason).not.toContain("any hotel will do");
      const aborted = await g2.invoke(new Command({ resume: "abort" }), cfg);
      expect(aborted.status).toBe("failed");
    } finally {
      persistence.close();
    }
  });
});
