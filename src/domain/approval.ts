import { z } from "zod";
import { Plan } from "./plan.js";
import { openQuestions } from "./understanding.js";

/** Why a run is waiting for a person. */
export const InterruptKind = z.enum([
  "plan_approval",
  "max_revisions",
  "step_failures",
  "low_confidence",
  "infeasible_constraint",
  "unknown_outcome",
  "request_change",
  "tool_approval",
  "token_budget",
]);
export type InterruptKind = z.infer<typeof InterruptKind>;

/** Seed 000 scenario 14: asked before any step runs when the plan's confidence is below the threshold. */
export const HumanApprovalRequest = z.object({
  kind: z.literal("plan_approval"),
  planId: z.string(),
  confidence: z.number(),
  threshold: z.number(),
  reasons: z.array(z.string()),
  recommendedAction: z.literal("REVIEW_AND_ADJUST"),
  plan: Plan,
  /** The decisions this request accepts (e.g. ["approve", "reject"]). */
  decisions: z.array(z.string()),
  question: z.string(),
  /**
   * Parts of the request no step can do, values not used as given, and text that served nothing (the plan's
   * understanding record, which the plan carries in full): a person hears about each before anything runs.
   */
  openQuestions: z.array(z.string()).optional(),
});
export type HumanApprovalRequest = z.infer<typeof HumanApprovalRequest>;

/**
 * Seed 000 scenarios 11, 12, 16: the run cannot continue on its own — the revision cap, a step that keeps
 * failing, confidence below the abort threshold, or a constraint that no recovery can meet (even the cheapest
 * options break the limit: scenario 6 with nothing left to adjust), or a call with a side effect that may have
 * taken effect (stopped before it answered), which only a person can check.
 */
export const FailureEscalationRequest = z.object({
  kind: z.enum([
    "max_revisions",
    "step_failures",
    "low_confidence",
    "infeasible_constraint",
    "unknown_outcome",
    "request_change",
  ]),
  planId: z.string(),
  taskId: z.string(),
  failureCount: z.number().int(),
  revisionCount: z.number().int(),
  confidence: z.number(),
  errors: z.array(z.string()),
  reason: z.string(),
  /**
   * The failed step's parameters, so a person can retry it with some of them changed (`--retry --set`). Absent
   * in requests made before it existed, hence optional.
   */
  params: z.record(z.string(), z.unknown()).optional(),
  /**
   * Parameters a retry needs to have a chance, when replanning knows them (the limit that would fit, for an
   * infeasible constraint): the CLI prints the retry command with them.
   */
  retryWith: z.record(z.string(), z.unknown()).optional(),
  suggestedActions: z.array(z.string()),
  decisions: z.array(z.string()),
  question: z.string(),
});
export type FailureEscalationRequest = z.infer<typeof FailureEscalationRequest>;

/**
 * Issue 4 item 3: asked by the worker before it calls a tool with an irreversible side effect or one marked as
 * needing approval, with the exact call (tool and validated arguments). A denial fails the step as
 * policy_blocked, which goes through replanning like any failure.
 */
export const ToolApprovalRequest = z.object({
  kind: z.literal("tool_approval"),
  planId: z.string(),
  taskId: z.string(),
  tool: z.string(),
  /** The exact validated arguments the tool will be called with. */
  args: z.record(z.string(), z.unknown()),
  /**
   * What the call works on besides its arguments: the outputs of earlier steps it consumes (book_trip books the
   * itinerary), each as a one-line summary, so a person approves the booking they can see, not `book_trip({})`.
   */
  inputs: z.record(z.string(), z.string()).optional(),
  sideEffect: z.enum(["none", "reversible", "irreversible"]),
  question: z.string(),
  decisions: z.array(z.string()),
});
export type ToolApprovalRequest = z.infer<typeof ToolApprovalRequest>;

/**
 * Asked before a model call that would take the run past its token budget (`constraints.tokenBudget`): raise the
 * budget and go on (a plain retry raises it to `retryWith.tokenBudget`; `params.tokenBudget` names another figure),
 * or stop spending (abort: the step fails as policy_blocked and no further model call is made in this run).
 */
export const TokenBudgetRequest = z.object({
  kind: z.literal("token_budget"),
  planId: z.string(),
  /** The step whose model call waits (a model-driven step), or the run's own phase (`synthesis`). */
  taskId: z.string(),
  site: z.string(),
  used: z.number().int().min(0),
  limit: z.number().int().positive(),
  /** Tokens the next call is expected to take. */
  estimate: z.number().int().min(0),
  /** The budget a plain retry raises to. */
  retryWith: z.object({ tokenBudget: z.number().int().positive() }),
  question: z.string(),
  decisions: z.array(z.string()),
});
export type TokenBudgetRequest = z.infer<typeof TokenBudgetRequest>;

/** The decisions a token budget question accepts: go on with a larger budget, or stop spending. */
export const TOKEN_BUDGET_DECISIONS = ["retry", "abort"] as const;

/** The decisions a tool approval accepts. */
export const TOOL_APPROVAL_DECISIONS = ["approve", "deny"] as const;

export const InterruptRequest = z.discriminatedUnion("kind", [
  HumanApprovalRequest,
  FailureEscalationRequest.extend({ kind: z.literal("max_revisions") }),
  FailureEscalationRequest.extend({ kind: z.literal("step_failures") }),
  FailureEscalationRequest.extend({ kind: z.literal("low_confidence") }),
  FailureEscalationRequest.extend({ kind: z.literal("infeasible_constraint") }),
  FailureEscalationRequest.extend({ kind: z.literal("unknown_outcome") }),
  /** A recovery would change a value the user asked for (travellers, nights, a city): a person accepts it or not. */
  FailureEscalationRequest.extend({ kind: z.literal("request_change") }),
  ToolApprovalRequest,
  TokenBudgetRequest,
]);
export type InterruptRequest = z.infer<typeof InterruptRequest>;

/** Plan fields a person may change before the plan runs; `params.<key>` changes one parameter. */
export const EDITABLE_STEP_FIELDS = [
  "description",
  "workerType",
  "tools",
  "params",
  "dependsOn",
  "condition",
  "retry",
  "timeoutMs",
  "expectedOutputs",
] as const;

/** Seed 000 scenario 15: one edit of an ADJUST decision (`{taskId: "hotel", field: "params.nights", newValue: 3}`). */
export const PlanAdjustment = z.object({
  taskId: z.string().min(1),
  field: z.string().min(1),
  newValue: z.unknown(),
});
export type PlanAdjustment = z.infer<typeof PlanAdjustment>;

/** The decisions a plan approval accepts, in the order the CLI lists them. */
export const PLAN_APPROVAL_DECISIONS = ["approve", "reject", "adjust", "replan"] as const;

/** The approval a plan below the threshold waits for (UNDERSTAND, and a plan re-made with a person's guidance). */
export function planApprovalRequest(plan: Plan, threshold: number): HumanApprovalRequest {
  const open = openQuestions(plan.understanding);
  const why =
    open.length > 0
      ? `${open.length} thing(s) in the request will not be done as asked: ${open.join("; ")}.`
      : `Plan ${plan.planId} has confidence ${plan.confidence.toFixed(2)} (below ${threshold.toFixed(2)}).`;
  return {
    kind: "plan_approval",
    planId: plan.planId,
    confidence: plan.confidence,
    threshold,
    reasons:
      plan.confidenceReasons.length > 0 ? plan.confidenceReasons : ["the planner is unsure this plan fits the request"],
    recommendedAction: "REVIEW_AND_ADJUST",
    plan,
    decisions: [...PLAN_APPROVAL_DECISIONS],
    question: `${why} Approve it to run${open.length > 0 ? " without them" : ""}, adjust it, replan it with your guidance, or reject it?`,
    openQuestions: open,
  };
}

/** The call a tool approval asks about, its inputs already described for a person (src/transparency/inputs.ts). */
export interface ToolCallToApprove {
  planId: string;
  taskId: string;
  tool: { name: string; sideEffect: ToolApprovalRequest["sideEffect"] };
  args: Record<string, unknown>;
  /** One line per input the call consumes. */
  inputs: Record<string, string>;
  /** Why the person is asked again about a call the ledger already holds (another request, arguments or inputs). */
  why?: string;
}

/** The approval one call waits for (the gate, or a model-driven loop): the exact call, what it consumes, and why. */
export function toolApprovalRequest(call: ToolCallToApprove): ToolApprovalRequest {
  const { tool, args, inputs } = call;
  const on = Object.entries(inputs).map(([k, v]) => `${k}: ${v}`);
  return {
    kind: "tool_approval",
    planId: call.planId,
    taskId: call.taskId,
    tool: tool.name,
    args,
    inputs,
    sideEffect: tool.sideEffect,
    question: `${call.why ? `${call.why} ` : ""}Step ${call.taskId} wants to call ${tool.name}(${JSON.stringify(args)})${on.length > 0 ? ` on ${on.join("; ")}` : ""}, which ${tool.sideEffect === "irreversible" ? "cannot be undone" : "needs a person's approval"}. Approve or deny this call?`,
    decisions: [...TOOL_APPROVAL_DECISIONS],
  };
}

/** A plan waits for a person when its confidence is below the threshold or its understanding has open questions. */
export function needsPlanApproval(plan: Plan, threshold: number): boolean {
  return plan.confidence < threshold || openQuestions(plan.understanding).length > 0;
}

/** Every decision a person can give; which ones a request takes is in the interrupt table (src/domain/decisions.ts). */
export const DecisionName = z.enum(["approve", "adjust", "reject", "skip", "retry", "replan", "abort", "deny"]);
export type DecisionName = z.infer<typeof DecisionName>;

/**
 * A person's answer, given as the resume value. `approve`/`adjust`/`reject` answer a plan approval; `skip` (give
 * up on the failed step, finish the rest), `retry` (one more attempt beyond the cap, with `params` replacing some
 * of the failed step's parameters), `replan` (plan the unfinished work again, following `guidance`) and `abort`
 * answer an escalation; `approve`/`deny` answer a tool approval. `adjustments` goes with `adjust` only, `params`
 * with `retry` only, `guidance` with `replan` only (and is required there).
 */
export const HumanDecision = z.object({
  decision: DecisionName,
  comment: z.string().nullable().default(null),
  by: z.string().nullable().default(null),
  adjustments: z.array(PlanAdjustment).nullable().default(null),
  params: z.record(z.string(), z.unknown()).nullable().default(null),
  guidance: z.string().trim().min(1, "guidance must not be empty").nullable().default(null),
});
export type HumanDecision = z.infer<typeof HumanDecision>;

/** What the thread recorded about the latest human decision. */
export const ApprovalRecord = z.object({
  kind: InterruptKind,
  decision: HumanDecision.shape.decision,
  comment: z.string().nullable(),
  by: z.string().nullable(),
  at: z.string(),
  confidence: z.number(),
  /** The edits an ADJUST applied, so the report and Studio show what the human changed. */
  adjustments: z.array(PlanAdjustment).nullable().default(null),
  /** The parameters a retry changed. */
  params: z.record(z.string(), z.unknown()).nullable().default(null),
  /** The guidance a replan followed. */
  guidance: z.string().nullable().default(null),
});
export type ApprovalRecord = z.infer<typeof ApprovalRecord>;

/*
 * LangGraph's human-in-the-loop convention (`@langchain/langgraph/prebuilt` HumanInterrupt / HumanResponse), so
 * Agent Inbox, agent-chat-ui and Studio can answer Candor's interrupts. Mirrored in zod because resume values
 * arrive untrusted; a unit test checks these stay assignable to the prebuilt types.
 */
export const ActionRequest = z.object({ action: z.string(), args: z.record(z.string(), z.unknown()) });
export type ActionRequest = z.infer<typeof ActionRequest>;

export const HumanInterruptConfig = z.object({
  allow_ignore: z.boolean(),
  allow_respond: z.boolean(),
  allow_edit: z.boolean(),
  allow_accept: z.boolean(),
});
export type HumanInterruptConfig = z.infer<typeof HumanInterruptConfig>;

export const HumanInterrupt = z.object({
  action_request: ActionRequest,
  config: HumanInterruptConfig,
  description: z.string().optional(),
});
export type HumanInterrupt = z.infer<typeof HumanInterrupt>;

export const HumanResponse = z.object({
  type: z.enum(["accept", "ignore", "response", "edit"]),
  args: z.union([z.null(), z.string(), ActionRequest]),
});
export type HumanResponse = z.infer<typeof HumanResponse>;

/*
 * LangChain v1's human-in-the-loop request (`humanInTheLoopMiddleware`), which agent-chat-ui renders: the actions
 * to review and, per action, the decisions a person may take. Python and agent-chat-ui spell it in snake_case, the
 * JavaScript middleware in camelCase: payloads carry both. A resume answers with `{decisions: [...]}`, one per
 * action.
 */
export const HitlDecisionType = z.enum(["approve", "edit", "reject"]);
export type HitlDecisionType = z.infer<typeof HitlDecisionType>;

export const HitlActionRequest = z.object({
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
  description: z.string().optional(),
});
export const HitlReviewConfig = z.object({
  action_name: z.string(),
  allowed_decisions: z.array(HitlDecisionType),
});
export const HitlRequest = z.object({
  action_requests: z.array(HitlActionRequest),
  review_configs: z.array(HitlReviewConfig),
  actionRequests: z.array(HitlActionRequest),
  reviewConfigs: z.array(z.object({ actionName: z.string(), allowedDecisions: z.array(HitlDecisionType) })),
});
export type HitlRequest = z.infer<typeof HitlRequest>;

/** One v1 decision, in either casing (`edited_action` or `editedAction`). */
export const HitlDecision = z.discriminatedUnion("type", [
  z.object({ type: z.literal("approve") }),
  z.object({ type: z.literal("reject"), message: z.string().optional() }),
  z.object({
    type: z.literal("edit"),
    edited_action: z.object({ name: z.string(), args: z.record(z.string(), z.unknown()) }).optional(),
    editedAction: z.object({ name: z.string(), args: z.record(z.string(), z.unknown()) }).optional(),
  }),
]);
export type HitlDecision = z.infer<typeof HitlDecision>;

/**
 * What `interrupt()` carries: a HumanInterrupt (Agent Inbox), LangChain v1's HITL request (agent-chat-ui), Candor's
 * request both spread at the top level (what the CLI and existing clients read) and whole under `candor`, and the
 * error of the previous answer when it was refused.
 */
export type InterruptPayload = HumanInterrupt &
  HitlRequest &
  InterruptRequest & { candor: InterruptRequest; error?: string };

/** The editable view of each step, as a plan approval shows it and as an edit sends it back. */
export function editableSteps(plan: Plan): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    plan.steps.map((s) => [s.id, Object.fromEntries(EDITABLE_STEP_FIELDS.map((f) => [f, s[f]]))]),
  );
}

/**
 * What the worker's gate decided about a call that needs approval: approved or denied by a person, or already
 * `recorded` in the effect ledger (a replay or a resume after the call finished), so nobody is asked twice.
 */
export const ToolCallDecision = z.object({
  decision: z.enum(["approve", "deny", "recorded"]),
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  comment: z.string().nullable(),
  by: z.string().nullable(),
  /** When a person answered (absent for `recorded`). */
  at: z.string().optional(),
});
export type ToolCallDecision = z.infer<typeof ToolCallDecision>;
