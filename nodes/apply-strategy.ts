import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { withChanges } from "../src/domain/plan-changes.js";
import { planOf, planWrites } from "../src/domain/plan-state.js";
import type { Plan, TaskStep } from "../src/domain/plan.js";
import { nextOf, type Next } from "../src/domain/next.js";
import type { PlanRevision, StrategyType } from "../src/domain/revision.js";
import { confidencePoint } from "../src/confidence/update.js";
import { recoverOrSkip } from "../src/replanning/recover.js";
import { explainRevision } from "../src/transparency/explain.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import { Node } from "./names.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";

/**
 * One node per strategy: applies the revision select_strategy built with the pure strategy (only the failed step
 * and its dependents change), records it, and explains it to the user in plain language.
 */
export function strategyNode(strategy: StrategyType, deps: NodeDeps) {
  return async (state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> => {
    const plan = planOf(state)!;
    // The strategy select_strategy chose for this node, with the revision it built. An edited state that routes
    // here without one: the first failed step is recovered, its revision built now.
    const chosen = state.next?.kind === "recover" && state.next.strategy === strategy ? state.next : null;
    const taskId = chosen?.taskId ?? plan.steps.find((s) => s.status === "failed")?.id;
    const failedStep = plan.steps.find((s) => s.id === taskId);
    if (!taskId || !failedStep || failedStep.status !== "failed") return { next: nextAfterRevision(plan) };
    const outcome = chosen
      ? { plan: withChanges(plan, chosen.proposed.changes), revision: chosen.proposed.revision }
      : recoverOrSkip(strategy, {
          plan,
          feedback: state.feedback,
          revisionCount: state.revisionCount,
          registry: deps.registry,
          taskId,
          request: state.request,
        });
    return {
      ...revisionUpdate(state, deps, config, failedStep, outcome),
      next: nextAfterRevision(outcome.plan),
      status: "executing",
    };
  };
}

/** The state update, explanation and decision-log entry of one applied revision (rules or a reasoner's proposal). */
function revisionUpdate(
  state: AgentStateValue,
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  failedStep: TaskStep,
  outcome: { plan: Plan; revision: PlanRevision },
) {
  const { revision } = outcome;
  const taskId = failedStep.id;
  const error =
    state.feedback
      .filter((f) => f.taskId === taskId)
      .at(-1)
      ?.errors.at(-1) ?? "unknown error";
  const explanation = explainRevision(revision, failedStep, error, deps.logFile);
  emitNotifications(config, [explanation]);
  deps.decisionLog.record({
    operation: "revision",
    planId: outcome.plan.planId,
    taskId,
    threadId: threadIdOf(config),
    input: `${revision.failureClass}: ${error}`,
    decision: `${revision.strategy}: ${revision.changes.join("; ")}`,
    reasoning: revision.rationale,
    confidenceBefore: revision.confidenceBefore,
    confidenceAfter: revision.confidenceAfter,
  });
  return {
    ...planWrites(state, outcome.plan),
    revisions: [revision],
    revisionCount: state.revisionCount + 1,
    confidenceHistory: [
      confidencePoint(revision.confidenceAfter, `${revision.revisionId} ${revision.strategy} for ${taskId}`),
    ],
    notifications: [explanation],
  } satisfies AgentStateUpdate;
}

export type AfterRevision = typeof Node.SELECT_STRATEGY | typeof Node.EXECUTE;

/**
 * Another step that failed in the same wave is recovered before anything runs again, so the replacements of
 * both are dispatched together (one superstep) rather than one wave after the other.
 */
function nextAfterRevision(plan: Plan): Next {
  return plan.steps.some((s) => s.status === "failed") ? { kind: "choose_recovery" } : { kind: "execute" };
}

/** Where the revised plan goes, as the strategy node decided it (`next`). */
export function routeAfterRevision(state: AgentStateValue): AfterRevision {
  return nextOf(state).kind === "choose_recovery" ? Node.SELECT_STRATEGY : Node.EXECUTE;
}
