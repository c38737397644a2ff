import type * as Prebuilt from "@langchain/langgraph/prebuilt";
import { describe, expect, expectTypeOf, it } from "vitest";
import type {
  FailureEscalationRequest,
  HumanApprovalRequest,
  HumanInterrupt,
  HumanResponse,
  PlanAdjustment,
} from "../../src/domain/approval.js";
import { HumanDecision, HumanInterrupt as HumanInterruptSchema, InterruptRequest } from "../../src/domain/approval.js";
import { RunSettings } from "../../src/domain/request.js";
import {
  applyAdjustments,
  decisionEffect,
  interruptPayload,
  parseDecision,
} from "../../src/replanning/human-decision.js";
import { DEMO_REQUEST } from "../../examples/travel/index.js";
import { failStep, request, travelPlan, travelRegistry, withSteps } from "../fakes/toolkit-fixtures.js";

const registry = travelRegistry();
const base = travelPlan(undefined, registry);
const settings = RunSettings.parse({ maxRevisions: 3 });
const approval: HumanApprovalRequest = {
  kind: "plan_approval",
  planId: base.planId,
  confidence: 0.4,
  threshold: 0.5,
  reasons: ["low"],
  recommendedAction: "REVIEW_AND_ADJUST",
  plan: base,
  decisions: ["approve", "reject", "adjust"],
  question: "?",
};
const { plan: failed, feedback } = failStep(
  withSteps(base, { hotel: { status: "done" }, activities: { status: "done" } }),
  "flight",
  "search_flights timed out after 1200 ms",
  { failureClass: "timeout" },
);
const escalation = (kind: FailureEscalationRequest["kind"]): FailureEscalationRequest => ({
  kind,
  planId: base.planId,
  taskId: "flight",
  failureCount: 3,
  revisionCount: 3,
  confidence: 0.5,
  errors: ["e1", "e2", "e3"],
  reason: `Plan ${base.planId} exceeded 3 revisions.`,
  suggestedActions: [],
  decisions: ["skip", "retry", "abort"],
  question: "?",
});
const effect = (
  request: FailureEscalationRequest | HumanApprovalRequest,
  decision: string,
  comment: string | null = null,
) =>
  decisionEffect({
    request,
    decision: HumanDecision.parse({ decision, comment }),
    plan: failed,
    settings,
    revisionCount: 3,
    feedback: [feedback],
    registry,
  });

describe("decisionEffect", () => {
  it("approve executes and says it was approved despite the confidence", () => {
    const e = effect(approval, "approve");
    expect(e.status).toBe("executing");
    expect(e.message).toContain(`approved by a human despite confidence ${failed.confidence.toFixed(2)}`);
  });

  it("reject ends the run as rejected with the human's comment in the reason", () => {
    const e = effect(approval, "reject", "too expensive");
    expect(e).toMatchObject({
      status: "rejected",
      failureReason: `Plan ${base.planId} was rejected by a human: too expensive.`,
    });
  });

  it("retry lifts exactly the cap that stopped the run, by one", () => {
    expect(effect(escalation("max_revisions"), "retry").settings).toEqual({ ...settings, maxRevisions: 4 });
    expect(effect(escalation("step_failures"), "retry").settings).toEqual({ ...settings, maxStepFailures: 4 });
    // Regression: retry used to set abortBelow to 0, switching the low-confidence abort off for the rest of the run.
    // A replan starts a new plan whose confidence starts again: the abort threshold is left as it was.
    expect(
      decisionEffect({
        request: escalation("low_confidence"),
        decision: HumanDecision.parse({ decision: "replan", guidance: "go by train" }),
        plan: failed,
        settings,
        revisionCount: 3,
        feedback: [feedback],
        registry,
      }).settings!.abortBelow,
    ).toBe(settings.abortBelow);
    const relaxed = effect(escalation("low_confidence"), "retry").settings!;
    // Just under the lower of the plan's confidence and the escalation's (the confidence a proposed revision would
    // bring, since the threshold is checked the moment confidence would change: issue 9).
    const lower = Math.min(failed.confidence, 0.5);
    expect(relaxed.abortBelow).toBe(Math.round((lower - 0.01) * 100) / 100);
    expect(relaxed.abortBelow).toBeGreaterThan(lower - 0.05);
    expect(effect(escalation("max_revisions"), "retry").status).toBe("replanning");
  });

  it("skip revises the plan with SKIP on the escalated step", () => {
    const e = effect(escalation("step_failures"), "skip");
    expect(e.status).toBe("executing");
    expect(e.skip?.revision.strategy).toBe("SKIP");
    expect(e.skip?.plan.steps.find((s) => s.id === "flight")?.status).toBe("skipped");
  });

  it("a person's skip is recorded as theirs, not as 'no recovery fits' (issue 8 defect 10: what is missing says who chose it)", () => {
    const e = effect(escalation("step_failures"), "skip", "go without flights");
    expect(e.skip?.plan.steps.find((s) => s.id === "flight")?.skipReason).toBe(
      "Skipped by a person after it failed: search_flights timed out after 1200 ms",
    );
    expect(e.skip?.revision.rationale).toMatch(
      /^A person chose to skip flight: go without flights\. The rest of the plan continues without flight/,
    );
    expect(e.skip?.revision.rationale).not.toContain("No recovery fits");
  });

  it("abort fails the run and keeps the escalation's reason, so the report says why", () => {
    const e = effect(escalation("max_revisions"), "abort");
    expect(e.status).toBe("failed");
    expect(e.failureReason).toContain(`Plan ${base.planId} exceeded 3 revisions.`);
    expect(e.failureReason).toContain("A human chose to abort");
  });
});

const tripRequest = request(DEMO_REQUEST);
const adjust = (adjustments: PlanAdjustment[]) => applyAdjustments(base, adjustments, tripRequest, registry);
const errorOf = (r: { ok: boolean; error?: string }) => (r.ok ? "no error" : r.error);

describe("applyAdjustments (seed 000 scenario 15: ADJUST edits the plan, which is then held to the planner's rules)", () => {
  it("applies whole-field and params.<key> edits, marks the plan as the human's and leaves the original alone", () => {
    const r = adjust([
      { taskId: "hotel", field: "params.nights", newValue: 3 },
      { taskId: "flight", field: "timeoutMs", newValue: 5000 },
      { taskId: "activities", field: "description", newValue: "Find museums" },
    ]);
    if (!r.ok) throw new Error(r.error);
    const hotel = r.plan.steps.find((s) => s.id === "hotel")!;
    expect(hotel.params).toEqual({ ...base.steps.find((s) => s.id === "hotel")!.params, nights: 3 });
    expect(r.plan.steps.find((s) => s.id === "flight")!.timeoutMs).toBe(5000);
    expect(r.plan.createdBy).toBe("human");
    expect(r.plan.planId).toBe(base.planId);
    expect(r.changes).toEqual([
      "hotel.params.nights: 2 → 3",
      `flight.timeoutMs: ${base.steps.find((s) => s.id === "flight")!.timeoutMs} → 5000`,
      'activities.description: "' + base.steps.find((s) => s.id === "activities")!.description + '" → "Find museums"',
    ]);
    expect(base.steps.find((s) => s.id === "hotel")!.params.nights).toBe(2);
  });

  it("recomputes step order when dependencies change, so a person need not renumber", () => {
    const r = adjust([{ taskId: "flight", field: "dependsOn", newValue: ["hotel"] }]);
    if (!r.ok) throw new Error(r.error);
    const order = Object.fromEntries(r.plan.steps.map((s) => [s.id, s.order]));
    expect(order.flight).toBeGreaterThan(order.hotel!);
  });

  it.each([
    [
      "an unknown step",
      [{ taskId: "spa", field: "description", newValue: "x" }],
      /Adjustment 1 \(spa.description\): the plan has no step "spa". Steps: flight, hotel/,
    ],
    [
      "a field nobody may edit",
      [{ taskId: "hotel", field: "status", newValue: "done" }],
      /"status" is not a field a person can change. Editable fields: description, workerType/,
    ],
    [
      "the seed's priority, which Candor's steps do not have",
      [{ taskId: "flight", field: "priority", newValue: 10 }],
      /"priority" is not a field a person can change/,
    ],
    [
      "a value of the wrong type",
      [{ taskId: "flight", field: "timeoutMs", newValue: "soon" }],
      /Adjustment 1 \(flight.timeoutMs\): "soon" is not valid \(timeoutMs: /,
    ],
    ["a missing newValue", [{ taskId: "flight", field: "timeoutMs" }], /"newValue" is missing/],
    [
      "params. without a key",
      [{ taskId: "flight", field: "params.", newValue: 1 }],
      /name the parameter after "params."/,
    ],
    [
      "a dependency cycle",
      [{ taskId: "flight", field: "dependsOn", newValue: ["itinerary"] }],
      /The adjusted plan is not valid: Plan has a dependency cycle: .*flight/,
    ],
    [
      "a dependency on a missing step",
      [{ taskId: "flight", field: "dependsOn", newValue: ["visa"] }],
      /depends on "visa", which is not in the plan/,
    ],
    [
      "an unregistered worker type",
      [{ taskId: "flight", field: "workerType", newValue: "pilot" }],
      /worker type "pilot", which is not registered/,
    ],
    [
      "an unknown tool",
      [{ taskId: "flight", field: "tools", newValue: ["teleport"] }],
      /tool "teleport", which is not registered/,
    ],
    ["nothing to apply", [], /no adjustments/],
  ] as [string, PlanAdjustment[], RegExp][])("refuses %s with an error naming it", (_what, adjustments, error) => {
    expect(errorOf(adjust(adjustments))).toMatch(error);
  });
});

describe("parseDecision with ADJUST and LangGraph HumanResponse values", () => {
  const approvalCtx = { kind: "plan_approval" as const, decisions: ["approve", "reject", "adjust"], plan: base };
  const escalationCtx = { kind: "step_failures" as const, decisions: ["skip", "retry", "replan", "abort"] };
  const ok = (raw: unknown, ctx: Parameters<typeof parseDecision>[1] = approvalCtx) => {
    const r = parseDecision(raw, ctx);
    if (!r.ok) throw new Error(r.error);
    return r.decision;
  };
  const refused = (raw: unknown, ctx: Parameters<typeof parseDecision>[1] = approvalCtx) =>
    errorOf(parseDecision(raw, ctx));

  it("accepts Candor's adjust with its adjustments, and refuses adjust without them or adjustments on another decision", () => {
    const adjustments = [{ taskId: "hotel", field: "params.nights", newValue: 3 }];
    expect(ok({ decision: "adjust", adjustments })).toMatchObject({ decision: "adjust", adjustments });
    expect(refused({ decision: "adjust" })).toMatch(/"adjust" needs a non-empty "adjustments" list/);
    expect(refused({ decision: "adjust", adjustments: [] })).toMatch(/non-empty/);
    expect(refused({ decision: "approve", adjustments })).toMatch(
      /"adjustments" only go with "adjust", not with "approve"/,
    );
    expect(refused({ decision: "adjust", adjustments: [{ taskId: "hotel" }] })).toMatch(
      /is not valid \(adjustments.0.field: /,
    );
    expect(refused({ decision: "adjust", adjustments }, escalationCtx)).toBe(
      '"adjust" does not answer a step_failures request. Send one of: skip, retry, replan, abort.',
    );
  });

  it("maps HumanResponse on a plan approval: accept → approve, ignore → reject, response → reject with the text", () => {
    expect(ok({ type: "accept", args: null })).toMatchObject({ decision: "approve", comment: null });
    expect(ok({ type: "ignore", args: null })).toMatchObject({ decision: "reject" });
    expect(ok({ type: "response", args: "too expensive" })).toMatchObject({
      decision: "reject",
      comment: "too expensive",
    });
  });

  it("maps an edit of the shown steps to adjustments, one per changed field; an edit that changes nothing approves", () => {
    const shown = interruptPayload({ ...approval, plan: base }).action_request;
    const steps = structuredClone(shown.args.steps) as Record<string, Record<string, unknown>>;
    steps.hotel!.params = { ...(steps.hotel!.params as object), nights: 4 };
    steps.flight!.timeoutMs = 9000;
    expect(ok({ type: "edit", args: { action: shown.action, args: { ...shown.args, steps } } })).toMatchObject({
      decision: "adjust",
      adjustments: [
        { taskId: "flight", field: "timeoutMs", newValue: 9000 },
        {
          taskId: "hotel",
          field: "params",
          newValue: { ...base.steps.find((s) => s.id === "hotel")!.params, nights: 4 },
        },
      ],
    });
    expect(ok({ type: "edit", args: shown })).toMatchObject({ decision: "approve" });
    const adjustments = [{ taskId: "hotel", field: "params.nights", newValue: 3 }];
    expect(ok({ type: "edit", args: { action: "approve_plan", args: { adjustments } } })).toMatchObject({
      decision: "adjust",
      adjustments,
    });
  });

  it("maps HumanResponse on an escalation: accept → retry, ignore → skip, response → replan with the text as guidance, edit → retry with the changed params", () => {
    expect(ok({ type: "accept", args: null }, escalationCtx)).toMatchObject({ decision: "retry" });
    expect(ok({ type: "ignore", args: null }, escalationCtx)).toMatchObject({ decision: "skip" });
    expect(ok({ type: "response", args: "try the other airline" }, escalationCtx)).toMatchObject({
      decision: "replan",
      guidance: "try the other airline",
    });
    // Where replanning is not offered, the text is kept as a retry's comment.
    expect(
      ok({ type: "response", args: "try again" }, { ...escalationCtx, decisions: ["skip", "retry", "abort"] }),
    ).toMatchObject({ decision: "retry", comment: "try again" });
    const params = { origin: "Madrid", destination: "Paris", travellers: 2 };
    const ctx = { ...escalationCtx, params };
    // Only what the person changed is sent as new parameters; an unchanged edit is a plain retry.
    expect(
      ok(
        {
          type: "edit",
          args: { action: "recover_step", args: { taskId: "flight", params: { ...params, travellers: 3 } } },
        },
        ctx,
      ),
    ).toEqual(expect.objectContaining({ decision: "retry", params: { travellers: 3 } }));
    expect(
      ok({ type: "edit", args: { action: "recover_step", args: { taskId: "flight", params } } }, ctx),
    ).toMatchObject({ decision: "retry", params: null });
    expect(refused({ type: "edit", args: { action: "recover_step", args: { taskId: "flight" } } }, ctx)).toMatch(
      /needs args.args.params/,
    );
  });

  it.each([
    [
      "params with a decision other than retry",
      { decision: "skip", params: { a: 1 } },
      /"params" only go with "retry"/,
    ],
    ["empty params", { decision: "retry", params: {} }, /"params" is empty/],
    ["replan without guidance", { decision: "replan" }, /"replan" needs "guidance"/],
    ["blank guidance", { decision: "replan", guidance: "   " }, /guidance must not be empty/],
    [
      "guidance with a decision other than replan",
      { decision: "retry", guidance: "go by train" },
      /"guidance" only goes with "replan"/,
    ],
  ])("refuses %s on an escalation", (_what, raw, error) => {
    expect(refused(raw, escalationCtx)).toMatch(error);
  });

  it("maps a `response` on a plan approval to replan with the text as guidance where replanning is offered", () => {
    expect(
      ok(
        { type: "response", args: "we are 4 people" },
        { ...approvalCtx, decisions: ["approve", "reject", "adjust", "replan"] },
      ),
    ).toMatchObject({ decision: "replan", guidance: "we are 4 people" });
    expect(ok({ type: "response", args: "too expensive" })).toMatchObject({
      decision: "reject",
      comment: "too expensive",
    });
  });

  it("accepts a one-item array (Agent Inbox sends arrays) and refuses other lengths", () => {
    expect(ok([{ type: "accept", args: null }])).toMatchObject({ decision: "approve" });
    expect(refused([])).toMatch(/A list of 0 responses does not answer one request/);
    expect(
      refused([
        { type: "accept", args: null },
        { type: "ignore", args: null },
      ]),
    ).toMatch(/A list of 2 responses/);
  });

  it.each([
    ["an unknown type", { type: "maybe", args: null }, /not a valid HumanResponse \(type: /],
    ["a response without text", { type: "response", args: null }, /A "response" needs its text/],
    [
      "an edit without an action request",
      { type: "edit", args: "nights=3" },
      /An "edit" needs "args" to be \{action, args\}/,
    ],
    [
      "an edit without steps or adjustments",
      { type: "edit", args: { action: "approve_plan", args: {} } },
      /args.args.steps .* or args.args.adjustments/,
    ],
    [
      "an edit that drops a step",
      { type: "edit", args: { action: "approve_plan", args: { steps: {} } } },
      /leaves out step\(s\) flight, hotel/,
    ],
  ])("refuses %s with an error naming the problem", (_what, raw, error) => {
    expect(refused(raw)).toMatch(error);
  });
});

describe("interruptPayload (LangGraph's HumanInterrupt convention beside Candor's request)", () => {
  it("is a valid HumanInterrupt that still parses as Candor's request, with the request whole under `candor`", () => {
    const p = interruptPayload(approval, "bad answer");
    expect(HumanInterruptSchema.parse(p)).toMatchObject({
      action_request: { action: "approve_plan" },
      config: { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true },
    });
    expect(InterruptRequest.parse(p)).toEqual(approval);
    expect(p.candor).toEqual(approval);
    expect(p.error).toBe("bad answer");
    expect(p.description).toContain(approval.question);
    expect(Object.keys(p.action_request.args.steps as object)).toEqual(base.steps.map((s) => s.id));
  });

  it("offers edit on an escalation only when the failed step has parameters to change, and says what respond does", () => {
    const bare = interruptPayload(escalation("step_failures"));
    expect(bare).not.toHaveProperty("error");
    expect(bare.action_request).toEqual({
      action: "recover_step",
      args: {
        taskId: "flight",
        kind: "step_failures",
        failureCount: 3,
        errors: ["e1", "e2", "e3"],
        suggestedActions: [],
        params: {},
      },
    });
    expect(bare.config).toEqual({ allow_accept: true, allow_edit: false, allow_respond: true, allow_ignore: true });
    const params = { origin: "Madrid", destination: "Paris" };
    const p = interruptPayload({
      ...escalation("step_failures"),
      params,
      decisions: ["skip", "retry", "replan", "abort"],
    });
    expect(p.action_request.args.params).toEqual(params);
    expect(p.config).toEqual({ allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true });
    expect(p.description).toMatch(/respond plans the unfinished work again following your text/);
  });

  it("stays assignable to the prebuilt types Agent Inbox and agent-chat-ui use", () => {
    expectTypeOf<HumanInterrupt>().toExtend<Prebuilt.HumanInterrupt>();
    expectTypeOf<HumanResponse>().toExtend<Prebuilt.HumanResponse>();
  });
});

describe("decisionEffect for adjust", () => {
  it("executes the adjusted plan and lists the changes in the reasoning", () => {
    const adjusted = adjust([{ taskId: "hotel", field: "params.nights", newValue: 3 }]);
    if (!adjusted.ok) throw new Error(adjusted.error);
    const e = decisionEffect({
      request: approval,
      decision: HumanDecision.parse({
        decision: "adjust",
        adjustments: [{ taskId: "hotel", field: "params.nights", newValue: 3 }],
      }),
      plan: base,
      settings,
      revisionCount: 0,
      feedback: [],
      registry,
      adjusted,
    });
    expect(e).toMatchObject({ status: "executing", plan: adjusted.plan });
    expect(e.message).toContain(`Plan ${base.planId} adjusted by a human (1 change(s))`);
    expect(e.reasoning).toContain("hotel.params.nights: 2 → 3");
  });
});
