import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { Node } from "../../nodes/names.js";
import { HumanApprovalRequest } from "../../src/domain/approval.js";
import {
  EASY_TRIP,
  interruptValues,
  notificationsOf,
  agentsOnTempDb,
  threadConfig,
  tripInput,
} from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";

const { agent } = agentsOnTempDb();
/** The rules plan's confidence is 0.85, so this threshold always asks. */
const ASK = { approvalThreshold: 0.99 };

describe("plan approval (a plan below the confidence threshold waits for a human)", () => {
  it("interrupts before any worker runs, with kind, confidence, reasons, recommended action and the plan", async () => {
    const a = agent();
    const config = threadConfig("approve");
    const out = await a.graph.invoke(tripInput(EASY_TRIP, ASK), config);
    const [payload, ...more] = interruptValues(out);
    expect(more).toEqual([]);
    const request = HumanApprovalRequest.parse(payload);
    expect(request).toMatchObject({
      kind: "plan_approval",
      confidence: 0.85,
      threshold: 0.99,
      recommendedAction: "REVIEW_AND_ADJUST",
      decisions: ["approve", "reject", "adjust", "replan"],
    });
    expect(request.reasons.length).toBeGreaterThan(0);
    expect(request.plan.steps.map((s) => s.id)).toEqual(planOf(out)!.steps.map((s) => s.id));
    expect(request.planId).toBe(planOf(out)!.planId);

    expect(out.feedback).toEqual([]);
    expect(a.calls.total()).toBe(0);
    expect(out.status).toBe("awaiting_approval");
    expect(notificationsOf(out, "approval")).toHaveLength(1);
    const waiting = await a.graph.getState(config);
    expect(waiting.next).toEqual([Node.HUMAN_INTERRUPT]);
    expect(waiting.tasks[0]!.interrupts[0]!.value).toEqual(payload);

    const done = await a.graph.invoke(new Command({ resume: { decision: "approve", by: "ops" } }), config);
    expect(done.status).toBe("completed");
    expect(done.approval).toMatchObject({ kind: "plan_approval", decision: "approve", by: "ops", confidence: 0.85 });
    expect(done.feedback.map((f) => f.feedbackType)).toEqual(Array(5).fill("SUCCESS"));
    expect(a.calls.total()).toBe(5);
  });

  it("REJECT ends the run as rejected without running a step", async () => {
    const a = agent();
    const config = threadConfig("reject");
    interruptValues(await a.graph.invoke(tripInput(EASY_TRIP, ASK), config));
    const done = await a.graph.invoke(new Command({ resume: { decision: "reject", comment: "too pricey" } }), config);
    expect(done.status).toBe("rejected");
    expect(done.feedback).toEqual([]);
    expect(a.calls.total()).toBe(0);
    expect(planOf(done)!.steps.every((s) => s.status === "pending")).toBe(true);
    expect(done.failureReason).toMatch(/rejected by a human: too pricey/);
    expect(done.report!.summary).toMatchObject({ status: "rejected", stepsSucceeded: 0 });
    // Regression (issue 12 item 11): the report and the stored episode said the plan "worked as designed".
    expect(done.report!.lessonsLearned.join(" ")).not.toMatch(/worked as designed/);
    expect(done.report!.lessonsLearned[0]).toMatch(/^No step ran/);
    // A plan nobody ran says nothing about its quality: confidence is left as planned.
    expect(planOf(done)!.confidence).toBe(0.85);
    expect((await a.graph.getState(config)).next).toEqual([]);
  });

  it("a malformed resume value keeps the thread waiting with an error in the new payload; a valid one then completes", async () => {
    const a = agent();
    const config = threadConfig("malformed");
    interruptValues(await a.graph.invoke(tripInput(EASY_TRIP, ASK), config));

    const [maybe] = interruptValues(await a.graph.invoke(new Command({ resume: { decision: "maybe" } }), config));
    expect(maybe).toMatchObject({ kind: "plan_approval", recommendedAction: "REVIEW_AND_ADJUST" });
    expect(maybe!.error).toMatch(/"maybe".*not valid.*Send one of: approve, reject/s);

    const [number] = interruptValues(await a.graph.invoke(new Command({ resume: 42 }), config));
    expect(number!.error).toMatch(/42 is not valid/);

    // A well-formed decision that does not answer a plan approval is refused too.
    const [refused] = interruptValues(await a.graph.invoke(new Command({ resume: "skip" }), config));
    expect(refused!.error).toMatch(/"skip" does not answer a plan_approval request/);

    // The pending interrupt is what says the thread waits. LangGraph 1.7.3 drops a task that has a resume write
    // from `next`, so after a refused answer `next` is [] although the thread is still waiting: never infer
    // "finished" from `next` alone.
    const waiting = await a.graph.getState(config);
    expect(waiting.tasks.map((t) => [t.name, t.interrupts.map((i) => i.value)])).toEqual([
      [Node.HUMAN_INTERRUPT, [refused]],
    ]);
    expect(waiting.next).toEqual([]);
    expect(waiting.values.status).toBe("awaiting_approval");
    expect(waiting.values.pendingInterrupt).toMatchObject({ kind: "plan_approval" });
    expect(waiting.values.approval).toBeNull();
    expect(a.calls.total()).toBe(0);

    const done = await a.graph.invoke(new Command({ resume: "approve" }), config);
    expect(done.status).toBe("completed");
    expect(done.approval).toMatchObject({ decision: "approve" });
    expect(a.calls.total()).toBe(5);
  });
});
