import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { planOf } from "../src/domain/plan-state.js";
import { finalStatus } from "../src/reflection/reflect.js";
import { buildReport } from "../src/transparency/report.js";
import { notification } from "../src/transparency/notify.js";
import { stateFieldsOf } from "../src/replay.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import { AgentState, type AgentStateUpdate, type AgentStateValue } from "./state.js";

type MainNode = (state: AgentStateValue, config: LangGraphRunnableConfig) => Promise<AgentStateUpdate>;

/**
 * FINALIZE: ends a run that has no plan to reflect on (UNDERSTAND could not plan, or the request was refused). A
 * run with a plan ends in REFLECT, which calls `finalizeRun` itself.
 */
export function finalizeNode(deps: NodeDeps) {
  return async (state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> =>
    finalizeRun(deps, state, config);
}

/**
 * Writes the post-execution report into state and tells the user how the run ended. Pure but for the decision log
 * and the stream, so REFLECT can end a run in its own superstep: a separate node after it was one more superstep
 * (a checkpoint and its writes, 2–3 ms) on every run, and a window where a killed run had reflected but had no report.
 */
function finalizeRun(deps: NodeDeps, state: AgentStateValue, config: LangGraphRunnableConfig): AgentStateUpdate {
  // The same rule REFLECT applies: a status is never assumed "completed", it is derived from the steps.
  const plan = planOf(state);
  const status = finalStatus(state.status, plan);
  const report = buildReport({
    request: state.request.userIntent,
    plan,
    feedback: state.feedback,
    revisions: state.revisions,
    confidenceHistory: state.confidenceHistory,
    status,
    failureReason: state.failureReason,
    lessons: state.reflection?.lessons ?? [],
    startedAt: state.startedAt ?? new Date().toISOString(),
    tokens: state.tokens,
    tokenBudget: state.request.constraints.tokenBudget,
  });
  const ok = status === "completed";
  const n = notification({
    severity: ok ? "INFO" : status === "partial" ? "WARNING" : "ERROR",
    kind: "outcome",
    title: `Run ${status}: ${report.summary.outcome.replace(/^\w+[:.]\s*/, "")}`,
    details: `candor report ${threadIdOf(config) ?? "<thread>"}`,
  });
  emitNotifications(config, [n]);
  deps.decisionLog.record({
    operation: "report",
    planId: report.planId,
    threadId: threadIdOf(config),
    input: `${state.feedback.length} feedback entries`,
    decision: status,
    reasoning: report.summary.outcome,
    confidenceAfter: plan?.confidence ?? null,
    ...(report.summary.tokens
      ? {
          cost: report.summary.tokens.costUsd,
          tokens: {
            input: report.summary.tokens.inputTokens,
            output: report.summary.tokens.outputTokens,
            costUsd: report.summary.tokens.costUsd,
          },
        }
      : {}),
  });
  // The run has ended: a message to the thread later starts nothing (routeAfterConverse).
  return { report, status, next: { kind: "end" }, notifications: [n] };
}

/** The state's lists an update appends to (the `append` fields of nodes/state.ts), not puts in place. */
const APPENDED: ReadonlySet<string> = new Set(
  Object.entries(stateFieldsOf(AgentState))
    .filter(([, field]) => field === "appended")
    .map(([key]) => key),
);

/**
 * `node`, then the run's end (`finalizeRun`) in the same superstep, on the state as `node`'s update leaves it. What
 * REFLECT is built with: the report then counts everything the reflection wrote (its confidence point, and the
 * tokens of any model call, when `node` is metered).
 */
export function endingRun(deps: NodeDeps, node: MainNode): MainNode {
  return async (state, config) => {
    const update = await node(state, config);
    const after: Record<string, unknown> = { ...state };
    for (const [key, value] of Object.entries(update) as [string, unknown][]) {
      if (value === undefined) continue;
      const current = after[key];
      after[key] =
        APPENDED.has(key) && Array.isArray(current) && Array.isArray(value)
          ? [...(current as unknown[]), ...(value as unknown[])]
          : value;
    }
    const ending = finalizeRun(deps, after as AgentStateValue, config);
    return {
      ...update,
      ...ending,
      notifications: [
        ...((update.notifications as AgentStateValue["notifications"] | undefined) ?? []),
        ...(ending.notifications as AgentStateValue["notifications"]),
      ],
    };
  };
}
