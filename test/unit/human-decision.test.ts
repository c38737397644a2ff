import { describe, expect, it } from "vitest";
import type { FailureEscalationRequest, HumanApprovalRequest } from "../../src/domain/approval.js";
import { HumanDecision } from "../../src/domain/approval.js";
import { RunSettings } from "../../src/domain/request.js";
import { decisionEffect } from "../../src/replanning/human-decision.js";
import { failStep, travelPlan, travelRegistry, withSteps } from "../fakes/toolkit-fixtures.js";

const registry = travelRegistry();
const base = travelPlan(undefined, registry);
const settings = RunSettings.parse({ maxRevisions: 3 });
const approval: HumanApprovalRequest = { kind: "plan_approval", planId: base.planId, confidence: 0.4, threshold: 0.5, reasons: ["low"], recommendedAction: "REVIEW_AND_ADJUST", plan: base, decisions: ["approve", "reject"], question: "?" };
const { plan: failed, feedback } = failStep(withSteps(base, { hotel: { status: "done" }, activities: { status: "done" } }), "flight", "search_flights timed out after 1200 ms", { failureClass: "timeout" });
const escalation = (kind: FailureEscalationRequest["kind"]): FailureEscalationRequest => ({
  kind, planId: base.planId, taskId: "flight", failureCount: 3, revisionCount: 3, confidence: 0.5, errors: ["e1", "e2", "e3"], reason: `Plan ${base.planId} exceeded 3 revisions.`, suggestedActions: [], decisions: ["skip", "retry", "abort"], question: "?",
});
const effect = (request: FailureEscalationRequest | HumanApprovalRequest, decision: string, comment: string | null = null) =>
  decisionEffect({ request, decision: HumanDecision.parse({ decision, comment }), plan: failed, settings, revisionCount: 3, feedback: [feedback], registry });

describe("decisionEffect", () => {
  it("approve executes and says it was approved despite the confidence", () => {
    const e = effect(approval, "approve");
    expect(e.status).toBe("executing");
    expect(e.message).toContain(`approved by a human despite confidence ${failed.confidence.toFixed(2)}`);
  });

  it("reject ends the run as rejected with the human's comment in the reason", () => {
    const e = effect(approval, "reject", "too expensive");
    expect(e).toMatchObject({ status: "rejected", failureReason: `Plan ${base.planId} was rejected by a human: too expensive.` });
  });

  it("retry lifts exactly the cap that stopped the run, by one", () => {
    expect(effect(escalation("max_revisions"), "retry").settings).toEqual({ ...settings, maxRevisions: 4 });
    expect(effect(escalation("step_failures"), "retry").settings).toEqual({ ...settings, maxStepFailures: 4 });
    expect(effect(escalation("low_confidence"), "retry").settings).toEqual({ ...settings, abortBelow: 0 });
    expect(effect(escalation("max_revisions"), "retry").status).toBe("replanning");
  });

  it("skip revises the plan with SKIP on the escalated step", () => {
    const e = effect(escalation("step_failures"), "skip");
    expect(e.status).toBe("executing");
    expect(e.skip?.revision.strategy).toBe("SKIP");
    expect(e.skip?.plan.steps.find((s) => s.id === "flight")?.status).toBe("skipped");
  });

  it("abort fails the run and keeps the escalation's reason, so the report says why", () => {
    const e = effect(escalation("max_revisions"), "abort");
    expect(e.status).toBe("failed");
    expect(e.failureReason).toContain(`Plan ${base.planId} exceeded 3 revisions.`);
    expect(e.failureReason).toContain("A human chose to abort");
  });
});
