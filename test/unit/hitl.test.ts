import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  DecisionName,
  InterruptKind,
  type FailureEscalationRequest,
  type HumanApprovalRequest,
  type InterruptRequest,
  type ToolApprovalRequest,
} from "../../src/domain/approval.js";
import { DECISION_INPUT, decisionMeaning, INTERRUPT_TABLE, kindTitle } from "../../src/domain/decisions.js";
import { interruptPayload, parseDecision } from "../../src/replanning/human-decision.js";
import { travelPlan, travelRegistry } from "../fakes/toolkit-fixtures.js";

/*
 * agent-chat-ui's own types for LangChain v1's HITL request and decisions, ported to zod: langchain-ai/agent-chat-ui,
 * src/components/thread/agent-inbox/types.ts at commit 3b5ea3e4fcff8e2b73235ea8dae741c3bdc3094f (ActionRequest,
 * ReviewConfig, HITLRequest, Decision). Strict objects where agent-chat-ui reads every field.
 */
const UiDecisionType = z.enum(["approve", "edit", "reject"]);
const UiActionRequest = z.object({
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
  description: z.string().optional(),
  diff: z.string().optional(),
  summary: z.string().optional(),
});
const UiReviewConfig = z.object({
  action_name: z.string(),
  allowed_decisions: z.array(UiDecisionType),
  args_schema: z.record(z.string(), z.unknown()).optional(),
});
const UiHitlRequest = z.object({ action_requests: z.array(UiActionRequest), review_configs: z.array(UiReviewConfig) });

const plan = travelPlan(undefined, travelRegistry());
const approval: HumanApprovalRequest = {
  kind: "plan_approval",
  planId: plan.planId,
  confidence: 0.4,
  threshold: 0.5,
  reasons: ["low"],
  recommendedAction: "REVIEW_AND_ADJUST",
  plan,
  decisions: ["approve", "reject", "adjust", "replan"],
  question: "Approve the plan?",
};
const escalation = (
  kind: FailureEscalationRequest["kind"],
  decisions: string[] = ["skip", "retry", "replan", "abort"],
): FailureEscalationRequest => ({
  kind,
  planId: plan.planId,
  taskId: "flight",
  failureCount: 3,
  revisionCount: 3,
  confidence: 0.5,
  errors: ["timed out"],
  reason: "It kept failing.",
  params: { origin: "Madrid", maxPrice: 200 },
  suggestedActions: [],
  decisions,
  question: "What now?",
});
const toolApproval: ToolApprovalRequest = {
  kind: "tool_approval",
  planId: plan.planId,
  taskId: "booking",
  tool: "book_trip",
  args: { tripId: "t-1" },
  sideEffect: "irreversible",
  question: "Book it?",
  decisions: ["approve", "deny"],
};

/** The v1 review config of a request's payload. */
function allowed(request: InterruptRequest): string[] {
  const payload = interruptPayload(request);
  const ui = UiHitlRequest.parse(payload);
  return ui.review_configs[0]!.allowed_decisions;
}

describe("the interrupt table", () => {
  it("describes every interrupt kind: a title, the decisions it may offer, and what each does", () => {
    expect(Object.keys(INTERRUPT_TABLE).sort()).toEqual([...InterruptKind.options].sort());
    for (const kind of InterruptKind.options) {
      const entry = INTERRUPT_TABLE[kind];
      expect(kindTitle(kind)).toBe(entry.title);
      expect(Object.keys(entry.does).sort()).toEqual([...entry.offers].sort());
      for (const d of entry.offers) {
        expect(DecisionName.options).toContain(d);
        expect(decisionMeaning(d, { kind })).not.toBe(d);
      }
    }
    expect(Object.keys(DECISION_INPUT).sort()).toEqual([...DecisionName.options].sort());
    expect(new Set(Object.values(DECISION_INPUT).map((i) => i.key)).size).toBe(DecisionName.options.length);
  });
});

/** A model-driven step's next call would go past the run's token budget. */
const tokenBudget: InterruptRequest = {
  kind: "token_budget",
  planId: "p1",
  taskId: "count",
  site: "worker",
  used: 5000,
  limit: 9000,
  estimate: 5000,
  retryWith: { tokenBudget: 25000 },
  question: "Raise the budget to 25000, or stop spending?",
  decisions: ["retry", "abort"],
};

describe("a token budget question is answered in every dialect", () => {
  it("accept raises the budget as proposed, edit to the person's figure, ignore stops; a note is refused", () => {
    expect(parseDecision({ type: "accept", args: null }, tokenBudget)).toMatchObject({
      ok: true,
      decision: { decision: "retry", params: { tokenBudget: 25000 } },
    });
    expect(
      parseDecision(
        { type: "edit", args: { action: "raise_token_budget", args: { tokenBudget: 40000 } } },
        tokenBudget,
      ),
    ).toMatchObject({ ok: true, decision: { decision: "retry", params: { tokenBudget: 40000 } } });
    expect(parseDecision({ type: "ignore", args: null }, tokenBudget)).toMatchObject({
      ok: true,
      decision: { decision: "abort" },
    });
    expect(parseDecision({ decisions: [{ type: "reject" }] }, tokenBudget)).toMatchObject({
      ok: true,
      decision: { decision: "abort" },
    });
    expect(parseDecision({ type: "response", args: "more please" }, tokenBudget)).toMatchObject({ ok: false });
    expect(allowed(tokenBudget)).toEqual(["approve", "edit", "reject"]);
  });
});

describe("interrupt payloads speak LangChain v1's HITL request (agent-chat-ui), in both casings", () => {
  it("every kind's payload passes agent-chat-ui's types, with one action named as in the HumanInterrupt", () => {
    const requests: InterruptRequest[] = [
      approval,
      toolApproval,
      ...(["max_revisions", "step_failures", "low_confidence", "infeasible_constraint", "request_change"] as const).map(
        (k) => escalation(k),
      ),
      escalation("unknown_outcome", ["retry", "skip", "abort"]),
      tokenBudget,
    ];
    for (const request of requests) {
      const payload = interruptPayload(request);
      const ui = UiHitlRequest.parse(payload);
      expect(ui.action_requests).toHaveLength(1);
      expect(ui.action_requests[0]!.name).toBe(payload.action_request.action);
      expect(ui.action_requests[0]!.args).toEqual(payload.action_request.args);
      expect(ui.review_configs[0]!.action_name).toBe(ui.action_requests[0]!.name);
      expect(payload.actionRequests).toEqual(payload.action_requests);
      expect(payload.reviewConfigs).toEqual(
        payload.review_configs.map((c) => ({ actionName: c.action_name, allowedDecisions: c.allowed_decisions })),
      );
      // Candor's own request and the HumanInterrupt are still there.
      expect(payload.candor).toEqual(request);
      expect(payload.config).toBeDefined();
    }
  });

  it("allows what the request offers: a plan may be approved, edited or rejected; a tool call approved or rejected", () => {
    expect(allowed(approval)).toEqual(["approve", "edit", "reject"]);
    expect(allowed(toolApproval)).toEqual(["approve", "reject"]);
    expect(allowed(escalation("step_failures"))).toEqual(["approve", "edit", "reject"]);
    expect(allowed({ ...escalation("step_failures"), params: {} })).toEqual(["approve", "reject"]);
    // A call whose failures are spent can only be skipped (or the run aborted): no approve (= run it again).
    expect(allowed(escalation("unknown_outcome", ["skip", "abort"]))).toEqual(["reject"]);
    const described = interruptPayload(toolApproval).action_requests[0]!.description!;
    expect(described).toContain("approve: let the step make this call");
    expect(described).toContain("reject: refuse the call");
  });
});

describe("a resume with {decisions: [...]} (LangChain v1)", () => {
  const decide = (raw: unknown, request: InterruptRequest) => parseDecision(raw, request);

  it("approve and reject mean the kind's decisions for them; reject's message is the reason", () => {
    expect(decide({ decisions: [{ type: "approve" }] }, approval)).toMatchObject({
      ok: true,
      decision: { decision: "approve" },
    });
    expect(decide({ decisions: [{ type: "reject", message: "too dear" }] }, approval)).toMatchObject({
      ok: true,
      decision: { decision: "reject", comment: "too dear" },
    });
    expect(decide({ decisions: [{ type: "reject", message: "not now" }] }, toolApproval)).toMatchObject({
      ok: true,
      decision: { decision: "deny", comment: "not now" },
    });
    expect(decide({ decisions: [{ type: "approve" }] }, escalation("max_revisions"))).toMatchObject({
      ok: true,
      decision: { decision: "retry" },
    });
    expect(decide({ decisions: [{ type: "reject" }] }, escalation("max_revisions"))).toMatchObject({
      ok: true,
      decision: { decision: "skip", comment: null },
    });
    // A bare v1 decision, without the list, is read the same way.
    expect(decide({ type: "approve" }, toolApproval)).toMatchObject({ ok: true, decision: { decision: "approve" } });
  });

  it("edit adjusts a plan (steps sent back as text by a form are read as JSON) and retries a step with new parameters", () => {
    const steps = interruptPayload(approval).action_requests[0]!.args.steps as Record<string, Record<string, unknown>>;
    const hotel = Object.keys(steps).find((id) => id === "hotel")!;
    const edited = {
      ...steps,
      [hotel]: { ...steps[hotel], params: { ...(steps[hotel]!.params as object), nights: 3 } },
    };
    const asText = { name: "approve_plan", args: { planId: plan.planId, steps: JSON.stringify(edited) } };
    expect(decide({ decisions: [{ type: "edit", edited_action: asText }] }, approval)).toMatchObject({
      ok: true,
      decision: { decision: "adjust", adjustments: [{ taskId: "hotel", field: "params", newValue: { nights: 3 } }] },
    });
    const retry = { name: "recover_step", args: { params: { origin: "Madrid", maxPrice: 300 } } };
    expect(decide({ decisions: [{ type: "edit", editedAction: retry }] }, escalation("step_failures"))).toMatchObject({
      ok: true,
      decision: { decision: "retry", params: { maxPrice: 300 } },
    });
  });

  it("refuses what does not fit, saying what would: a tool call's edit, several decisions, an unknown type", () => {
    const edit = { type: "edit", edited_action: { name: "book_trip", args: { tripId: "t-2" } } };
    const refused = decide({ decisions: [edit] }, toolApproval);
    expect(refused).toEqual({
      ok: false,
      error: "A tool_approval request cannot be edited: approve or reject it. Send one of: approve, deny.",
    });
    expect(decide({ decisions: [{ type: "approve" }, { type: "approve" }] }, approval)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^"decisions" must hold exactly one decision/),
    });
    expect(decide({ decisions: [{ type: "maybe" }] }, approval)).toMatchObject({ ok: false });
    // A v1 approve that stands for a decision the request no longer offers is refused like that decision.
    expect(decide({ decisions: [{ type: "approve" }] }, escalation("unknown_outcome", ["skip", "abort"]))).toEqual({
      ok: false,
      error: `"retry" does not answer a unknown_outcome request. Send one of: skip, abort.`,
    });
  });
});
