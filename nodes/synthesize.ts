import type { LangGraphRunnableConfig } from "@langchain/langgraph";
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
    const missing = missingSteps(plan).map((s) => ({ id: s.id, description: s.description, reason: s.skipReason ?? "skipped" }));
    const answer = await deps.reasoner.synthesize({ request: state.request, plan, results: resultsById(plan), missing });
    deps.decisionLog.record({ operation: "synthesize", planId: plan.planId, threadId: threadIdOf(config), input: `${plan.steps.length} steps`, decision: missing.length ? `answer without ${missing.map((m) => m.id).join(", ")}` : "answer", reasoning: `${deps.reasoner.kind} synthesis` });
    return { answer, status: "reflecting" };
  };
}

export type AfterSynthesize = typeof Node.SELECT_STRATEGY | typeof Node.REFLECT;

/** Failed steps → select_strategy; everything settled → reflect. */
export function routeAfterSynthesize(state: AgentStateValue): AfterSynthesize {
  return state.plan?.steps.some((s) => s.status === "failed") ? Node.SELECT_STRATEGY : Node.REFLECT;
}
