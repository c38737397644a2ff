import { interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { planOf, planWrites } from "../src/domain/plan-state.js";
import type { ApprovalRecord, InterruptRequest } from "../src/domain/approval.js";
import { legacyNext, nextOf, type Next } from "../src/domain/next.js";
import { abortBelowApproval, checkAbortBelow } from "../src/confidence/abort-below.js";
import { confidencePoint } from "../src/confidence/update.js";
import {
  applyAdjustments,
  decisionEffect,
  interruptPayload,
  parseDecision,
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
    if (!request) return { next: legacyNext(state) };
    const plan = planOf(state)!;
    // A chat client's reply comes as a message, not a resume: it answers the first ask (src/chat/conversation.ts).
    const fromChat = answerFromChat(state.messages, request);
    let payload = interruptPayload(request, fromChat && !fromChat.ok ? fromChat.reason : undefined);
    let decision = null;
    let adjusted: Extract<AdjustedPlan, { ok: true }> | undefined;
    let retried: Extract<HumanRetry, { ok: true }> | undefined;
    for (let ask = 0; ask < MAX_ASKS && !decision; ask++) {
      const parsed = parseDecision(ask === 0 && fromChat?.ok ? fromChat.value.decision : interrupt(payload), request);
      if (!parsed.ok) {
        payload = interruptPayload(request, parsed.error);
        continue;
      }
      if (parsed.decision.decision === "adjust") {
        // Free of side effects, so re-running it when the node replays on resume is safe.
        const result = applyAdjustments(plan, parsed.decision.adjustments ?? [], state.request, deps.registry);
        if (!result.ok) {
          payload = interruptPayload(request, result.error);
          continue;
        }
        adjusted = result;
      }
      if (parsed.decision.decision === "retry" && parsed.decision.params && "taskId" in request) {
        // Checked against the tool's schema before anything changes; a value it would refuse is asked again.
        const result = retryWithHumanParams({
          plan,
          feedback: state.feedback,
          revisionCount: state.revisionCount,
          registry: deps.registry,
          taskId: request.taskId,
          params: parsed.decision.params,
        });
        if (!result.ok) {
          payload = interruptPayload(request, result.error);
          continue;
        }
        retried = result;
      }
      decision = parsed.decision;
    }
    if (!decision) return { next: { kind: "ask" } };
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
    const record: ApprovalRecord = {
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
    const told = notification({
      severity: effect.severity,
      kind: "approval",
      taskId,
      title: effect.message,
      message: decision.comment ?? "",
    });
    const notifications = [told];
    let revision: AgentStateUpdate = {};
    if (effect.plan) {
      // An adjusted plan is a new plan (its confidence point says so); a step re-run after a person's check is not.
      revision = adjusted
        ? {
            ...planWrites(state, effect.plan),
            confidenceHistory: [
              confidencePoint(
                effect.plan.confidence,
                `plan adjusted by a human (${adjusted.changes.length} change(s))`,
              ),
            ],
          }
        : planWrites(state, effect.plan);
    }
    if (effect.skip && taskId) {
      const step = plan.steps.find((s) => s.id === taskId)!;
      notifications.push(
        explainRevision(
          effect.skip.revision,
          step,
          "errors" in request ? (request.errors.at(-1) ?? "unknown error") : "unknown error",
          deps.logFile,
        ),
      );
      revision = {
        ...planWrites(state, effect.skip.plan),
        revisions: [effect.skip.revision],
        revisionCount: state.revisionCount + 1,
        confidenceHistory: [
          confidencePoint(
            effect.skip.revision.confidenceAfter,
            `human chose ${effect.skip.revision.strategy} for ${taskId}`,
          ),
        ],
      };
    }
    // A person's skip or retry with new parameters lowers the confidence by the revision's delta, which they did not
    // see: below --abort-below, the run stops again and asks whether to go on at that confidence.
    const abortBelow = effect.settings?.abortBelow ?? state.settings.abortBelow;
    const abort = effect.skip
      ? checkAbortBelow(
          {
            from: effect.skip.revision.confidenceBefore,
            to: effect.skip.revision.confidenceAfter,
            why: `a person chose ${effect.skip.revision.strategy} for ${taskId ?? "a step"}`,
          },
          abortBelow,
        )
      : ({ ok: true, value: null } as const);
    const stop = !abort.ok && effect.skip ? abortBelowApproval(effect.skip.plan, abort.reason, abortBelow) : null;
    if (stop) notifications.push(approvalNotification(stop));
    emitNotifications(config, notifications);
    return {
      ...revision,
      approval: record,
      pendingInterrupt: stop,
      next: stop ? { kind: "ask" } : nextAfter(effect, request),
      status: stop ? "awaiting_approval" : effect.status,
      failureReason: effect.failureReason ?? state.failureReason,
      ...(effect.settings ? { settings: effect.settings } : {}),
      notifications,
    };
  };
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
