import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { finalStatus } from "../src/reflection/reflect.js";
import { buildReport } from "../src/transparency/report.js";
import { notification } from "../src/transparency/notify.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";

/** Writes the post-execution report into state and tells the user how the run ended. */
export function finalizeNode(deps: NodeDeps) {
  return async (state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> => {
    // The same rule REFLECT applies: a status is never assumed "completed", it is derived from the steps.
    const status = finalStatus(state.status, state.plan);
    const report = buildReport({
      request: state.request.userIntent,
      plan: state.plan,
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
      confidenceAfter: state.plan?.confidence ?? null,
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
  };
}
