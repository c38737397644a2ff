import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Plan } from "../src/domain/plan.js";
import { missingSteps, resultsById } from "../src/planning/schedule.js";
import { threadIdOf, type NodeDeps } from "./deps.js";
import { Node } from "./names.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";

/** SYNTHESIZE: with failures pending, hand over to replanning; otherwise compose the answer from the results. */
export function synthesizeNode(deps: NodeDeps) {
  return async (state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> => {
    const plan = state.plan!;
    const failed = plan.steps.filter((s) => s.status === "failed");
    if (failed.length > 0) {
      deps.decisionLog.record({ operation: "route", planId: plan.planId, threadId: threadIdOf(config), input: `${failed.length} failed step(s)`, decision: "replan", reasoning: `failed: ${failed.map((s) => s.id).join(", ")}`, confidenceBefore: plan.confidence, confidenceAfter: plan.confidence });
      return { status: "replanning" };
    }
    const missing = missingSteps(plan).map((s) => ({ id: s.id, description: s.description, reason: withRanWithout(plan, s.id, s.skipReason ?? "skipped") }));
    const answer = await deps.reasoner.synthesize({ request: state.request, plan, results: resultsById(plan), missing });
    deps.decisionLog.record({ operation: "synthesize", planId: plan.planId, threadId: threadIdOf(config), input: `${plan.steps.length} steps`, decision: missing.length ? `answer without ${missing.map((m) => m.id).join(", ")}` : "answer", reasoning: `${deps.reasoner.kind} synthesis` });
    return { answer, status: "reflecting" };
  };
}

/**
 * A missing step's reason, plus the steps that ran without its result (it was an optional input of theirs): their
 * results are real but partial, and the answer must not let them pass for complete.
 */
function withRanWithout(plan: Plan, id: string, reason: string): string {
  // `?? []`: a thread checkpointed before steps recorded missingInputs has none.
  const without = (s: Plan["steps"][number]) => (s.missingInputs ?? []).filter((m) => m.from === id);
  const ran = plan.steps.filter((s) => s.status === "done" && without(s).length > 0);
  if (ran.length === 0) return reason;
  const inputs = [...new Set(ran.flatMap((s) => without(s).map((m) => m.input)))];
  return `${reason}; ${ran.map((s) => s.id).join(", ")} ran without its ${inputs.join(", ")}`;
}

export type AfterSynthesize = typeof Node.SELECT_STRATEGY | typeof Node.REFLECT;

/** Failed steps → select_strategy; everything settled → reflect. */
export function routeAfterSynthesize(state: AgentStateValue): AfterSynthesize {
  return state.plan?.steps.some((s) => s.status === "failed") ? Node.SELECT_STRATEGY : Node.REFLECT;
}
