import type { Result } from "../result.js";
import {
  DecisionName,
  editableSteps,
  PLAN_APPROVAL_DECISIONS,
  TOKEN_BUDGET_DECISIONS,
  TOOL_APPROVAL_DECISIONS,
  type FailureEscalationRequest,
  type HitlDecisionType,
  type HumanApprovalRequest,
  type HumanInterrupt,
  type HitlRequest,
  type InterruptKind,
  type InterruptRequest,
  type TokenBudgetRequest,
  type ToolApprovalRequest,
} from "./approval.js";

/*
 * The vocabulary of human decisions in one place. For each interrupt kind: its title, the decisions it may offer
 * and what each does, and the HumanInterrupt its payload carries (from which the v1 HITL request is derived). For
 * each decision: how it is typed at the terminal and on the command line. Both are keyed by enums, so adding a
 * kind or a decision fails the typecheck here until it is described, and in `decisionEffect` (what a decision does
 * to the run) and the resume flags until it is handled.
 */

/** The decisions an escalation offers (a request may offer fewer: no retry once a call's failures are spent). */
export const ESCALATION_DECISIONS = ["skip", "retry", "replan", "abort"] as const;
/** The decisions a possibly-made call offers: a person checks, then runs it again or skips it. */
export const UNKNOWN_OUTCOME_DECISIONS = ["retry", "skip", "abort"] as const;

/** One interrupt kind: what it is called, what each decision it may offer does, and its HumanInterrupt. */
interface KindSpec<R, D extends DecisionName> {
  title: string;
  offers: readonly D[];
  /** What choosing each decision does, in a few words (the CLI's menus and printed commands say it). */
  does: Record<D, (r: R) => string>;
  /** The Agent Inbox view of a request (HumanInterrupt). */
  humanInterrupt(r: R): HumanInterrupt;
  /**
   * What LangChain v1's three answers mean here: approve and reject each become one decision (reject's message is
   * its comment); edit becomes the decision `humanInterrupt`'s edit gives (null: no edit).
   */
  hitl: { approve: D; edit: D | null; reject: D };
}

const kind = <R, D extends DecisionName>(s: KindSpec<R, D>) => s;

const escalationDoes = (retry: string) => ({
  skip: (r: FailureEscalationRequest) => `give up on ${r.taskId} and finish the rest`,
  retry: () => retry,
  replan: () => "plan the unfinished work again, following your guidance; finished steps are kept",
  abort: () => "stop the run here",
});

/** A failed step that a person may retry (with changed parameters), skip, replan around, or abort on. */
function recoverStep(r: FailureEscalationRequest): HumanInterrupt {
  return {
    action_request: {
      action: "recover_step",
      args: {
        taskId: r.taskId,
        kind: r.kind,
        failureCount: r.failureCount,
        errors: r.errors,
        suggestedActions: r.suggestedActions,
        params: r.params ?? {},
      },
    },
    config: {
      allow_accept: true,
      allow_edit: Object.keys(r.params ?? {}).length > 0,
      allow_respond: true,
      allow_ignore: r.decisions.includes("skip"),
    },
    description: [
      r.question,
      "",
      ...r.errors.map((e) => `- ${e}`),
      "",
      `Accept retries once more, edit retries with the parameters you change, ignore skips the step, ${r.decisions.includes("replan") ? "respond plans the unfinished work again following your text" : "respond retries with your note recorded"}.`,
    ].join("\n"),
  };
}

const escalation = (title: string, retry: string) =>
  kind<FailureEscalationRequest, (typeof ESCALATION_DECISIONS)[number]>({
    title,
    offers: ESCALATION_DECISIONS,
    does: escalationDoes(retry),
    humanInterrupt: recoverStep,
    hitl: { approve: "retry", edit: "retry", reject: "skip" },
  });

const RETRY = "allow one more recovery attempt (add --set key=value to change the step's parameters)";

export const INTERRUPT_TABLE = {
  plan_approval: kind<HumanApprovalRequest, (typeof PLAN_APPROVAL_DECISIONS)[number]>({
    title: "approve the plan before it runs",
    offers: PLAN_APPROVAL_DECISIONS,
    does: {
      approve: () => "run the plan as it is",
      reject: () => "stop without running any step",
      adjust: () => "change steps (taskId, field such as params.<key>, newValue), then run the adjusted plan",
      replan: () => "make the plan again, following your guidance",
    },
    humanInterrupt: (r) => ({
      action_request: {
        action: "approve_plan",
        args: { planId: r.planId, confidence: r.confidence, steps: editableSteps(r.plan) },
      },
      config: { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true },
      description: [
        r.question,
        "",
        "Why the confidence is low:",
        ...r.reasons.map((reason) => `- ${reason}`),
        "",
        `Accept runs the plan, edit adjusts it (edit \`steps\`), ${r.decisions.includes("replan") ? "respond plans it again following your text, ignore rejects it" : "respond or ignore rejects it"}.`,
      ].join("\n"),
    }),
    hitl: { approve: "approve", edit: "adjust", reject: "reject" },
  }),
  max_revisions: escalation("the run used all its revisions", RETRY),
  step_failures: escalation("a step kept failing", RETRY),
  low_confidence: escalation("confidence fell too low to go on", RETRY),
  infeasible_constraint: escalation("a limit cannot be met", "check again with a limit that can be met"),
  request_change: escalation(
    "a recovery would change what you asked for",
    "accept the change: run the step with the new values shown",
  ),
  unknown_outcome: kind<FailureEscalationRequest, (typeof UNKNOWN_OUTCOME_DECISIONS)[number]>({
    title: "check whether a call took effect",
    offers: UNKNOWN_OUTCOME_DECISIONS,
    does: {
      retry: () => "it did not take effect: run the step again",
      skip: (r) => `give up on ${r.taskId} and finish the rest`,
      abort: () => "stop the run here",
    },
    humanInterrupt: (r) => ({
      action_request: {
        action: "check_call",
        args: {
          taskId: r.taskId,
          failureCount: r.failureCount,
          errors: r.errors,
          suggestedActions: r.suggestedActions,
        },
      },
      // Accept and ignore are the two answers a check can give; a free-text note would not say which.
      config: {
        allow_accept: r.decisions.includes("retry"),
        allow_edit: false,
        allow_respond: false,
        allow_ignore: true,
      },
      description: [
        r.question,
        "",
        ...r.errors.map((e) => `- ${e}`),
        "",
        r.decisions.includes("retry")
          ? "Accept if it did not take effect (the step runs again); ignore if it did (the step is skipped)."
          : "Ignore skips the step (it took effect, or is not wanted).",
      ].join("\n"),
    }),
    hitl: { approve: "retry", edit: null, reject: "skip" },
  }),
  tool_approval: kind<ToolApprovalRequest, (typeof TOOL_APPROVAL_DECISIONS)[number]>({
    title: "approve a tool call before it runs",
    offers: TOOL_APPROVAL_DECISIONS,
    does: {
      approve: () => "let the step make this call",
      deny: () => "refuse the call: the step fails as POLICY_BLOCKED and is replanned",
    },
    humanInterrupt: (r) => ({
      action_request: { action: r.tool, args: r.args },
      // The call is approved or denied as shown; edited arguments would bypass the plan's validation.
      config: { allow_accept: true, allow_edit: false, allow_respond: true, allow_ignore: true },
      description: [
        r.question,
        "",
        `Step ${r.taskId} will call ${r.tool}(${JSON.stringify(r.args)}) (side effect: ${r.sideEffect}).`,
        "",
        "Accept runs the call, ignore denies it, respond denies it with your note as the reason.",
      ].join("\n"),
    }),
    hitl: { approve: "approve", edit: null, reject: "deny" },
  }),
  token_budget: kind<TokenBudgetRequest, (typeof TOKEN_BUDGET_DECISIONS)[number]>({
    title: "the run would go over its token budget",
    offers: TOKEN_BUDGET_DECISIONS,
    does: {
      retry: () => "raise the token budget to the figure proposed (or to what --set tokenBudget=<n> says) and go on",
      abort: () => "stop spending tokens: the waiting step fails and no further model call is made in this run",
    },
    humanInterrupt: (r) => ({
      action_request: {
        action: "raise_token_budget",
        args: { tokenBudget: r.retryWith.tokenBudget, used: r.used, limit: r.limit, taskId: r.taskId },
      },
      config: { allow_accept: true, allow_edit: true, allow_respond: false, allow_ignore: true },
      description: [
        r.question,
        "",
        `Accept raises the budget to ${r.retryWith.tokenBudget} tokens, edit raises it to the tokenBudget you set, ignore stops spending.`,
      ].join("\n"),
    }),
    hitl: { approve: "retry", edit: "retry", reject: "abort" },
  }),
} as const satisfies Record<InterruptKind, { title: string; offers: readonly DecisionName[] }>;

/** The table's entry for a request, typed for any request (TypeScript cannot pair a kind with its own entry). */
function entryFor(r: { kind: string }): KindSpec<unknown, DecisionName> | undefined {
  return (INTERRUPT_TABLE as Record<string, KindSpec<unknown, DecisionName> | undefined>)[r.kind];
}

/** The Agent Inbox view of a request (its HumanInterrupt). */
export function humanInterruptOf(r: InterruptRequest): HumanInterrupt {
  return entryFor(r)!.humanInterrupt(r);
}

/** A one-line title for what a waiting thread asks (`candor threads` shows it too). */
export function kindTitle(kind: string): string {
  return entryFor({ kind })?.title ?? kind;
}

/** What choosing `decision` does for this request, in a few words; the decision itself when the kind lacks it. */
export function decisionMeaning(decision: string, request: { kind: string }): string {
  const does = entryFor(request)?.does as Partial<Record<string, (r: unknown) => string>> | undefined;
  return does?.[decision]?.(request) ?? decision;
}

/** How each decision is given: its key at the terminal prompt, and what follows its flag in a printed command. */
export const DECISION_INPUT: Record<DecisionName, { key: string; flagArg: string }> = {
  approve: { key: "a", flagArg: "" },
  reject: { key: "r", flagArg: "" },
  adjust: { key: "e", flagArg: ` '[{"taskId":"<step>","field":"params.<key>","newValue":<value>}]'` },
  skip: { key: "s", flagArg: "" },
  retry: { key: "t", flagArg: "" },
  replan: { key: "p", flagArg: ` "<guidance>"` },
  abort: { key: "x", flagArg: "" },
  deny: { key: "d", flagArg: "" },
};

/** What a v1 answer (approve, edit, reject) becomes for a request of this kind; null where the kind has no edit. */
export function hitlMeaning(kind: string, type: HitlDecisionType): DecisionName | null {
  return entryFor({ kind })?.hitl[type] ?? null;
}

/**
 * LangChain v1's HITL request for a request, derived from its HumanInterrupt so both clients show the same action:
 * approve and reject are allowed when the decisions they stand for are offered, edit when the HumanInterrupt
 * allows an edit. The description says what each answer does here.
 */
export function hitlRequestOf(r: InterruptRequest, human: HumanInterrupt): HitlRequest {
  const { hitl } = entryFor(r)!;
  const allowed = [
    ...(r.decisions.includes(hitl.approve) ? (["approve"] as const) : []),
    ...(hitl.edit !== null && human.config.allow_edit ? (["edit"] as const) : []),
    ...(r.decisions.includes(hitl.reject) ? (["reject"] as const) : []),
  ];
  const says = (type: HitlDecisionType, decision: DecisionName | null) =>
    decision !== null && allowed.includes(type)
      ? [
          `${type}: ${type === "edit" && decision === "retry" ? "retry with the parameters you change" : decisionMeaning(decision, r)}`,
        ]
      : [];
  const description = [
    r.question,
    "",
    ...says("approve", hitl.approve),
    ...says("edit", hitl.edit),
    ...says("reject", hitl.reject),
  ].join("\n");
  const action = { name: human.action_request.action, args: human.action_request.args, description };
  return {
    action_requests: [action],
    review_configs: [{ action_name: action.name, allowed_decisions: allowed }],
    actionRequests: [action],
    reviewConfigs: [{ actionName: action.name, allowedDecisions: allowed }],
  };
}

/** What a chat message answers: the decision it stands for, given `by: "chat"` so the reply can say it read it. */
export interface MessageDecision {
  decision: { decision: DecisionName; comment: string | null; by: string; guidance?: string };
}

/** Words a person types for yes and no (the first word counts; case and closing punctuation are ignored). */
const YES = new Set([
  "approve",
  "approved",
  "yes",
  "y",
  "yep",
  "yeah",
  "ok",
  "okay",
  "sure",
  "accept",
  "go",
  "proceed",
  "continue",
  "lgtm",
]);
const NO = new Set(["reject", "rejected", "no", "n", "nope", "decline"]);
const STOP = new Set(["abort", "stop", "cancel"]);

/**
 * A chat message read as the answer to a waiting request (issue 13 item 5): chat clients send a person's reply as
 * a new message, not as a resume. "approve", "yes", "ok" … give the request's v1 approve; "reject …", "no …" its
 * reject (the rest is the comment); "abort"/"stop" abort where offered; a decision's own name where offered
 * ("skip", "retry", "deny", "replan <guidance>"); any other text is guidance (replan) where a replan is offered,
 * the reason of a denial for a tool call, and otherwise not an answer (the reason says what to type).
 */
export function decisionFromMessage(
  text: string,
  request: { kind: InterruptKind; decisions: readonly string[] },
): Result<MessageDecision> {
  const said = text.trim();
  const [first = "", ...rest] = said.split(/\s+/);
  const word = first.toLowerCase().replace(/[.!,;:]+$/, "");
  const remainder = rest.join(" ").trim();
  const hitl = entryFor(request)?.hitl;
  const offered = (d: DecisionName | null | undefined): d is DecisionName =>
    d !== null && d !== undefined && request.decisions.includes(d);
  // The words after a yes or no are the comment ("reject too dear"); guidance and a denial's reason are the text.
  const answer = (
    decision: DecisionName,
    text: { guidance?: string; comment?: string | null } = {},
  ): Result<MessageDecision> => ({
    ok: true,
    value: {
      decision: {
        decision,
        comment: text.comment !== undefined ? text.comment : remainder || null,
        by: "chat",
        ...(text.guidance ? { guidance: text.guidance } : {}),
      },
    },
  });
  if (said.length === 0) return { ok: false, reason: "the message is empty" };
  if (YES.has(word) && offered(hitl?.approve)) return answer(hitl.approve);
  if (STOP.has(word) && offered("abort")) return answer("abort");
  if ((NO.has(word) || STOP.has(word)) && offered(hitl?.reject)) return answer(hitl.reject);
  if (word === "replan" && offered("replan") && remainder)
    return answer("replan", { guidance: remainder, comment: null });
  const named = DecisionName.safeParse(word);
  if (named.success && offered(named.data) && named.data !== "adjust" && named.data !== "replan")
    return answer(named.data);
  if (offered("replan")) return answer("replan", { guidance: said, comment: null });
  if (offered("deny")) return answer("deny", { comment: said });
  return {
    ok: false,
    reason: `"${said}" does not answer "${kindTitle(request.kind)}": reply with one of ${request.decisions.filter((d) => d !== "adjust").join(", ")}`,
  };
}
