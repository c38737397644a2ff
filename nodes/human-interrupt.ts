import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { planOf, planWrites } from "../src/domain/plan-state.js";
import type { ApprovalRecord, HumanDecision, InterruptRequest } from "../src/domain/approval.js";
import type { Result } from "../src/result.js";
import type { Plan } from "../src/domain/plan.js";
import type { Notification } from "../src/domain/notification.js";
import { askUntilAccepted } from "./ask.js";
import { nextAfterEdit, nextOf, type Next } from "../src/domain/next.js";
import { abortBelowApproval, checkAbortBelow } from "../src/confidence/abort-below.js";
import { confidencePoint } from "../src/confidence/update.js";
import {
  applyAdjustments,
  decisionEffect,
  type AdjustedPlan,
  type DecisionEffect,
} from "../src/replanning/human-decision.js";
import { retryWithHumanParams, type HumanRetry } from "../src/replanning/human-guidance.js";
import { approvalNotification, explainRevision } from "../src/transparency/explain.js";
import { notification } from "../src/transparency/notify.js";
import { answerFromChat } from "../src/chat/conversation.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import { Node } from "./names.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";

/** A malformed answer is asked again with the error; after this many, the last error stands and the run waits. */
const MAX_ASKS = 20;

/**
 * HUMAN_INTERRUPT: shows what is pending and waits. Nothing before `interrupt()` has side effects, because the
 * node runs again from the top when the thread resumes.
 */
export function humanInterruptNode(deps: NodeDeps) {
  return async (state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> => {
    const request = state.pendingInterrupt;
    // Nothing shown to a person: an edited state cleared the request (Studio's fork that records a decision as
    // human_interrupt writes `pendingInterrupt: null` and a status). The run goes on as that edit says.
    if (!request) return { next: nextAfterEdit(state.status) };
    const plan = planOf(state)!;
    // A chat client's reply comes as a message, not a resume: it answers the first ask (src/chat/conversation.ts).
    const fromChat = answerFromChat(state.messages, request);
    const answered = askUntilAccepted(request, (d) => checkedDecision(deps, state, request, d), {
      ...(fromChat?.ok ? { given: fromChat.value.decision } : {}),
      ...(fromChat && !fromChat.ok ? { givenError: fromChat.reason } : {}),
      maxAsks: MAX_ASKS,
    });
    if (!answered) return { next: { kind: "ask" } };
    const { decision, adjusted, retried } = answered;
    const effect = decisionEffect({
      request,
      decision,
      plan,
      settings: state.settings,
      revisionCount: state.revisionCount,
      feedback: state.feedback,
      registry: deps.registry,
      adjusted,
      retried: retried?.outcome,
    });
    const taskId = "taskId" in request ? request.taskId : null;
    const told = decisionTold(deps, config, plan, request, decision, effect);
    const { revision, notifications } = revisionOf(deps, state, { request, effect, adjusted, told });
    const stop = abortStop(state, effect, taskId);
    if (stop) notifications.push(approvalNotification(stop));
    emitNotifications(config, notifications);
    return {
      ...revision,
      approval: approvalRecord(plan, request, decision),
      pendingInterrupt: stop,
      next: stop ? { kind: "ask" } : nextAfter(effect, request),
      status: stop ? "awaiting_approval" : effect.status,
      failureReason: effect.failureReason ?? state.failureReason,
      ...(effect.settings ? { settings: effect.settings } : {}),
      notifications,
    };
  };
}

/** The decision as the thread records it (`approval`). */
function approvalRecord(plan: Plan, request: InterruptRequest, decision: HumanDecision): ApprovalRecord {
  return {
    kind: request.kind,
    decision: decision.decision,
    comment: decision.comment,
    by: decision.by,
    at: new Date().toISOString(),
    confidence: plan.confidence,
    adjustments: decision.adjustments,
    params: decision.params,
    guidance: decision.guidance,
  };
}

/** The decision logged, and said to the person in what it does. */
function decisionTold(
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  plan: Plan,
  request: InterruptRequest,
  decision: HumanDecision,
  effect: DecisionEffect,
): Notification {
  const taskId = "taskId" in request ? request.taskId : null;
  deps.decisionLog.record({
    operation: "human_decision",
    planId: plan.planId,
    taskId,
    threadId: threadIdOf(config),
    input: request.kind,
    decision: decision.decision,
    reasoning: effect.reasoning,
    confidenceBefore: plan.confidence,
    confidenceAfter: effect.skip?.revision.confidenceAfter ?? plan.confidence,
  });
  return notification({
    severity: effect.severity,
    kind: "approval",
    taskId,
    title: effect.message,
    message: decision.comment ?? "",
  });
}

/**
 * The plan the decision leaves: an adjusted plan is a new plan (its confidence point says so), a step re-run after a
 * person's check is not; a skip is a revision like a strategy's, explained.
 */
function revisionOf(
  deps: NodeDeps,
  state: AgentStateValue,
  d: {
    request: InterruptRequest;
    effect: DecisionEffect;
    adjusted: CheckedDecision["adjusted"];
    told: Notification;
  },
): { revision: AgentStateUpdate; notifications: Notification[] } {
  const { request, effect, adjusted } = d;
  const plan = planOf(state)!;
  const taskId = "taskId" in request ? request.taskId : null;
  const notifications = [d.told];
  let revision: AgentStateUpdate = {};
  if (effect.plan) {
    const point = adjusted
      ? [confidencePoint(effect.plan.confidence, `plan adjusted by a human (${adjusted.changes.length} change(s))`)]
      : null;
    revision = point ? { ...planWrites(state, effect.plan), confidenceHistory: point } : planWrites(state, effect.plan);
  }
  if (effect.skip && taskId) {
    const step = plan.steps.find((s) => s.id === taskId)!;
    const error = "errors" in request ? (request.errors.at(-1) ?? "unknown error") : "unknown error";
    notifications.push(explainRevision(effect.skip.revision, step, error, deps.logFile));
    const { revision: skipped } = effect.skip;
    revision = {
      ...planWrites(state, effect.skip.plan),
      revisions: [skipped],
      revisionCount: state.revisionCount + 1,
      confidenceHistory: [confidencePoint(skipped.confidenceAfter, `human chose ${skipped.strategy} for ${taskId}`)],
    };
  }
  return { revision, notifications };
}

/**
 * A person's skip or retry with new parameters lowers the confidence by the revision's delta, which they did not see:
 * below --abort-below, the run stops again and asks whether to go on at that confidence (the request), else null.
 */
function abortStop(state: AgentStateValue, effect: DecisionEffect, taskId: string | null) {
  if (!effect.skip) return null;
  const abortBelow = effect.settings?.abortBelow ?? state.settings.abortBelow;
  const { revision } = effect.skip;
  const abort = checkAbortBelow(
    {
      from: revision.confidenceBefore,
      to: revision.confidenceAfter,
      why: `a person chose ${revision.strategy} for ${taskId ?? "a step"}`,
    },
    abortBelow,
  );
  return abort.ok ? null : abortBelowApproval(effect.skip.plan, abort.reason, abortBelow);
}

/** A decision that parsed, with what checking it built: an adjusted plan, or a retry with new parameters. */
interface CheckedDecision {
  decision: HumanDecision;
  adjusted: Extract<AdjustedPlan, { ok: true }> | undefined;
  retried: Extract<HumanRetry, { ok: true }> | undefined;
}

/**
 * A person's decision checked before anything changes, free of side effects (the node replays it on resume): an
 * `adjust` must apply to the plan, a `retry` with parameters must pass the tool's schema; a refused one is asked
 * again with the reason.
 */
function checkedDecision(
  deps: NodeDeps,
  state: AgentStateValue,
  request: InterruptRequest,
  decision: HumanDecision,
): Result<CheckedDecision> {
  const plan = planOf(state)!;
  let adjusted: CheckedDecision["adjusted"];
  let retried: CheckedDecision["retried"];
  if (decision.decision === "adjust") {
    const result = applyAdjustments(plan, decision.adjustments ?? [], state.request, deps.registry);
    if (!result.ok) return { ok: false, reason: result.error };
    adjusted = result;
  }
  if (decision.decision === "retry" && decision.params && "taskId" in request) {
    const result = retryWithHumanParams({
      plan,
      feedback: state.feedback,
      revisionCount: state.revisionCount,
      registry: deps.registry,
      taskId: request.taskId,
      params: decision.params,
    });
    if (!result.ok) return { ok: false, reason: result.error };
    retried = result;
  }
  return { ok: true, value: { decision, adjusted, retried } };
}

export type AfterHumanInterrupt =
  | typeof Node.EXECUTE
  | typeof Node.SELECT_STRATEGY
  | typeof Node.REPLAN_WITH_GUIDANCE
  | typeof Node.REFLECT
  | typeof Node.HUMAN_INTERRUPT;

/** Where a person's decision leads: the question they answered goes with a replan, to be asked again if it fails. */
function nextAfter(effect: DecisionEffect, request: InterruptRequest): Next {
  if (effect.guidance) return { kind: "replan", ...effect.guidance, request };
  switch (effect.status) {
    case "rejected":
    case "failed":
      return { kind: "end" };
    case "replanning":
      return { kind: "choose_recovery" };
    case "executing":
      return { kind: "execute" };
  }
}

/**
 * Approved, skipped or retried with new parameters → execute; retry → select_strategy; replan → replan_with_guidance;
 * rejected or aborted → reflect (which ends the run); still waiting (a malformed answer, or a confidence below
 * --abort-below after the decision) → human_interrupt again. A strategy to apply comes only from an edited state:
 * select_strategy chooses again.
 */
export function routeAfterHumanInterrupt(state: AgentStateValue): AfterHumanInterrupt {
  const next = nextOf(state);
  switch (next.kind) {
    case "end":
      return Node.REFLECT;
    case "ask":
      return Node.HUMAN_INTERRUPT;
    case "replan":
      return Node.REPLAN_WITH_GUIDANCE;
    case "choose_recovery":
    case "recover":
      return Node.SELECT_STRATEGY;
    case "execute":
      return Node.EXECUTE;
  }
}
