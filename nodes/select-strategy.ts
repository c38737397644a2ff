import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { FailureEscalationRequest } from "../src/domain/approval.js";
import { planChanges } from "../src/domain/plan-changes.js";
import { planOf } from "../src/domain/plan-state.js";
import type { Plan } from "../src/domain/plan.js";
import type { StrategyType } from "../src/domain/revision.js";
import { askReasonerForRecovery } from "../src/replanning/ask-reasoner.js";
import { failureToAskAbout, selectStrategy } from "../src/replanning/select.js";
import { escalationNotification } from "../src/transparency/explain.js";
import { estimatedDelay, notification, detailsPointer } from "../src/transparency/notify.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import { Node } from "./names.js";
import { nextOf } from "../src/domain/next.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";

/**
 * Picks the recovery for the next failed step, or escalates to a human when a cap is hit. A failure no rule
 * recognises is first put to the reasoner (5 s, validated) as a hint for the strategy it proposes. Each candidate
 * strategy is built once; the chosen one's revision is handed to the strategy node, which applies it.
 */
export function selectStrategyNode(deps: NodeDeps) {
  return async (state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> => {
    const plan = planOf(state)!;
    const args = {
      plan,
      feedback: state.feedback,
      settings: state.settings,
      revisionCount: state.revisionCount,
      registry: deps.registry,
      request: state.request,
      revisions: state.revisions,
    };
    // A failure no rule recognises is put to the reasoner first; selection then runs once, with its advice.
    const unknown = failureToAskAbout(args);
    const advice = unknown ? await askReasonerForRecovery(adviceQuestion(deps, state, config, unknown)) : undefined;
    const selection = selectStrategy(advice ? { ...args, advice } : args);
    // Nothing left to recover: the plan drives again.
    if (!selection) return { next: { kind: "execute" } };
    if (selection.kind === "escalate") return escalated(deps, config, plan, selection.request);
    const step = plan.steps.find((s) => s.id === selection.taskId)!;
    const n = notification({
      severity: "INFO",
      kind: "strategy",
      taskId: selection.taskId,
      title: `Strategy for ${selection.taskId}: ${selection.strategy}${selection.source === "model" ? " (proposed by the reasoner)" : ""}`,
      message: selection.reasoning,
      recoveryStrategy: selection.strategy,
      estimatedDelay: estimatedDelay(selection.strategy, step),
      details: detailsPointer(selection.taskId, deps.logFile),
    });
    emitNotifications(config, [n]);
    deps.decisionLog.record({
      operation: "strategy",
      planId: plan.planId,
      taskId: selection.taskId,
      threadId: threadIdOf(config),
      input: selection.failureClass,
      decision: selection.strategy,
      reasoning: selection.reasoning,
      confidenceBefore: plan.confidence,
    });
    // The revision built while the strategy was tested; its node applies it as it is. Only what it changes is
    // carried: a plan of a thousand steps is not checkpointed again for the one step a recovery touches.
    const proposed = { changes: planChanges(plan, selection.outcome.plan), revision: selection.outcome.revision };
    return {
      next: {
        kind: "recover",
        strategy: selection.strategy,
        taskId: selection.taskId,
        failureClass: selection.failureClass,
        reasoning: selection.reasoning,
        proposed,
      },
      notifications: [n],
    };
  };
}

/** What the reasoner is asked about a failure no rule recognises: the failure, the plan, its history, a time limit. */
function adviceQuestion(
  deps: NodeDeps,
  state: AgentStateValue,
  config: LangGraphRunnableConfig,
  failure: NonNullable<ReturnType<typeof failureToAskAbout>>,
): Parameters<typeof askReasonerForRecovery>[0] {
  return {
    reasoner: deps.reasoner,
    failure,
    plan: planOf(state)!,
    registry: deps.registry,
    feedback: state.feedback,
    revisionNumber: state.revisionCount + 1,
    ...(config.signal ? { signal: config.signal } : {}),
  };
}

/** A cap was hit: a person decides, told why; the escalation is logged. */
function escalated(
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  plan: Plan,
  request: FailureEscalationRequest,
): AgentStateUpdate {
  const n = escalationNotification(request, deps.logFile);
  emitNotifications(config, [n]);
  deps.decisionLog.record({
    operation: "escalation",
    planId: plan.planId,
    taskId: request.taskId,
    threadId: threadIdOf(config),
    input: request.errors.join(" | "),
    decision: `escalate (${request.kind})`,
    reasoning: request.reason,
    confidenceBefore: plan.confidence,
    confidenceAfter: plan.confidence,
  });
  return { pendingInterrupt: request, next: { kind: "ask" }, status: "awaiting_approval", notifications: [n] };
}

export const STRATEGY_NODES: Record<StrategyType, (typeof Node)[keyof typeof Node]> = {
  RETRY_DIFFERENT_AGENT: Node.RETRY_DIFFERENT_AGENT,
  RETRY_WITH_PARAMS: Node.RETRY_WITH_PARAMS,
  SWAP_TOOL: Node.SWAP_TOOL,
  DECOMPOSE: Node.DECOMPOSE,
  ADJUST_PARAMETERS: Node.ADJUST_PARAMETERS,
  FIX_DEPENDENCIES: Node.FIX_DEPENDENCIES,
  FIND_WORKAROUND: Node.FIND_WORKAROUND,
  SKIP: Node.SKIP,
};

export type AfterSelectStrategy =
  | typeof Node.HUMAN_INTERRUPT
  | typeof Node.RETRY_DIFFERENT_AGENT
  | typeof Node.RETRY_WITH_PARAMS
  | typeof Node.SWAP_TOOL
  | typeof Node.DECOMPOSE
  | typeof Node.ADJUST_PARAMETERS
  | typeof Node.FIX_DEPENDENCIES
  | typeof Node.FIND_WORKAROUND
  | typeof Node.SKIP
  | typeof Node.SYNTHESIZE;

/**
 * The conditional edges that select a replanning strategy: one node per strategy, or a human when capped. With
 * nothing left to recover, back to synthesize (nothing new ran, so nothing needs executing first).
 * SELECT_STRATEGY sets only those; another kind comes from an edited state and goes back the same way.
 */
export function routeAfterSelectStrategy(state: AgentStateValue): AfterSelectStrategy {
  const next = nextOf(state);
  switch (next.kind) {
    case "ask":
      return Node.HUMAN_INTERRUPT;
    case "recover":
      return STRATEGY_NODES[next.strategy] as AfterSelectStrategy;
    case "execute":
    case "choose_recovery":
    case "replan":
    case "end":
      return Node.SYNTHESIZE;
  }
}
