import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { askToolApproval } from "./ask.js";
import type { ToolCallDecision } from "../src/domain/approval.js";
import type { WorkerModel } from "../src/reasoning/types.js";
import type { ToolRegistry } from "../src/tools/registry.js";
import { isModelDriven } from "../src/tools/model-driven.js";
import { callNeedingApproval } from "../src/tools/pending-call.js";
import { recordedCall } from "../src/execution/values.js";
import { threadIdOf, type NodeDeps } from "./deps.js";
import type { WorkerStateValue } from "./state.js";

/** Node ids of the worker subgraph. */
export const WorkerNode = { GATE: "gate", ACT: "act", AGENT: "agent" } as const;

export type WorkerStart = typeof WorkerNode.GATE | typeof WorkerNode.ACT | typeof WorkerNode.AGENT;

/**
 * A step whose call the plan does not determine runs as the model-driven loop (which asks for approval per call
 * itself); a determined call that needs a person's approval goes through the gate; the rest skip it (one
 * superstep fewer).
 */
export function routeWorkerStart(
  state: WorkerStateValue,
  registry: ToolRegistry,
  workers: WorkerModel | undefined,
): WorkerStart {
  if (isModelDriven(state.step, registry, workers)) return WorkerNode.AGENT;
  return callNeedingApproval(state.step, registry, state.context.values) ? WorkerNode.GATE : WorkerNode.ACT;
}

/**
 * The worker's gate (issue 4 item 3): asks a person to approve or deny the exact call before an irreversible or
 * approval-gated tool runs. It is its own node so that a resume re-runs only the gate, never the call; nothing
 * before `interrupt()` has side effects (reading the ledger is a read). A malformed answer is asked again with
 * the error, as human_interrupt does.
 */
export function workerGateNode(deps: NodeDeps) {
  return async (state: WorkerStateValue, config: LangGraphRunnableConfig) => {
    const { step } = state;
    const call = callNeedingApproval(step, deps.registry, state.context.values);
    if (!call) return {};
    const threadId = threadIdOf(config);
    const recorded = await recordedCall(deps.ledger, threadId, step, call, state.inputs, state.context.lineage);
    if (recorded.kind === "same") {
      // The approved call already ran (a replay, or a resume after it finished): act reuses its recorded result.
      const recorded: ToolCallDecision = {
        decision: "recorded",
        tool: call.tool.name,
        args: call.args,
        comment: null,
        by: null,
      };
      return { toolDecision: recorded };
    }
    const { decision, told } = askToolApproval(deps, config, {
      step,
      planId: state.planId,
      inputs: state.inputs,
      tool: call.tool,
      args: call.args,
      ...(recorded.kind === "other" ? { why: recorded.why } : {}),
    });
    return { toolDecision: decision, notifications: [told] };
  };
}
