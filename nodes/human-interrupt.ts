import { interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { ApprovalRecord } from "../src/domain/approval.js";
import { confidencePoint } from "../src/confidence/update.js";
import { parseDecision } from "../src/replanning/human-decision.js";
import { applyStrategy } from "../src/replanning/select.js";
import { explainRevision } from "../src/transparency/explain.js";
import { notification } from "../src/transparency/notify.js";
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
    if (!request) return {};
    let payload: Record<string, unknown> = { ...request };
    let decision = null;
    for (let ask = 0; ask < MAX_ASKS && !decision; ask++) {
      const parsed = parseDecision(interrupt(payload), request);
      if (parsed.ok) decision = parsed.decision;
      else payload = { ...request, error: parsed.error };
    }
    if (!decision) return {};
    const plan = state.plan!;
    const record: ApprovalRecord = { kind: request.kind, decision: decision.decision, comment: decision.comment, by: decision.by, at: new Date().toISOString(), confidence: plan.confidence };
    const log = (what: string, reasoning: string) =>
      deps.decisionLog.record({ operation: "human_decision", planId: plan.planId, taskId: "taskId" in request ? request.taskId : null, threadId: threadIdOf(config), input: request.kind, decision: what, reasoning, confidenceBefore: plan.confidence, confidenceAfter: plan.confidence });
    const tell = (title: string, severity: "INFO" | "WARNING" | "ERROR" = "INFO") => {
      const n = notification({ severity, kind: "approval", title, message: decision.comment ?? "" });
      emitNotifications(config, [n]);
      return [n];
    };
    const base = { approval: record, pendingInterrupt: null };

    switch (decision.decision) {
      case "approve":
        log("approve", `Plan ${plan.planId} approved by human despite confidence ${plan.confidence.toFixed(2)}`);
        return { ...base, status: "executing", notifications: tell(`Plan ${plan.planId} approved by a human despite confidence ${plan.confidence.toFixed(2)}; executing.`) };
      case "reject": {
        const reason = `Plan ${plan.planId} was rejected by a human${decision.comment ? `: ${decision.comment}` : ""}.`;
        log("reject", reason);
        return { ...base, status: "rejected", failureReason: reason, notifications: tell(reason, "WARNING") };
      }
      case "abort": {
        const reason = request.kind === "plan_approval" ? "Aborted by a human." : `${request.reason} A human chose to abort.`;
        log("abort", reason);
        return { ...base, status: "failed", failureReason: reason, notifications: tell(`Run stopped: ${reason}`, "ERROR") };
      }
      case "retry": {
        if (request.kind === "plan_approval") return base;
        // One more try beyond the cap that stopped the run; the other caps still hold.
        const settings = { ...state.settings };
        if (request.kind === "max_revisions") settings.maxRevisions = state.revisionCount + 1;
        if (request.kind === "step_failures") settings.maxStepFailures = request.failureCount + 1;
        if (request.kind === "low_confidence") settings.abortBelow = 0;
        log("retry", `a human allowed one more attempt after: ${request.reason}`);
        return { ...base, settings, status: "replanning", notifications: tell(`A human allowed one more recovery attempt for ${request.taskId}.`) };
      }
      case "skip": {
        if (request.kind === "plan_approval") return base;
        const outcome = applyStrategy("SKIP", { plan, feedback: state.feedback, revisionCount: state.revisionCount, registry: deps.registry, taskId: request.taskId });
        const step = plan.steps.find((s) => s.id === request.taskId)!;
        const explanation = explainRevision(outcome.revision, step, request.errors.at(-1) ?? "unknown error", deps.logFile);
        emitNotifications(config, [explanation]);
        log("skip", `a human chose to skip ${request.taskId}`);
        return {
          ...base,
          plan: outcome.plan,
          revisions: [outcome.revision],
          revisionCount: state.revisionCount + 1,
          confidenceHistory: [confidencePoint(outcome.revision.confidenceAfter, `human chose SKIP for ${request.taskId}`)],
          status: "executing",
          notifications: [explanation],
        };
      }
    }
  };
}

export type AfterHumanInterrupt = typeof Node.EXECUTE | typeof Node.SELECT_STRATEGY | typeof Node.REFLECT | typeof Node.HUMAN_INTERRUPT;

/** Approved or skipped → execute; retry → select_strategy; rejected or aborted → reflect (then finalize). */
export function routeAfterHumanInterrupt(state: AgentStateValue): AfterHumanInterrupt {
  if (state.status === "rejected" || state.status === "failed" || state.status === "aborted") return Node.REFLECT;
  if (state.pendingInterrupt) return Node.HUMAN_INTERRUPT;
  if (state.status === "replanning") return Node.SELECT_STRATEGY;
  return Node.EXECUTE;
}
