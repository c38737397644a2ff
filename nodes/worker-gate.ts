import { interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { TOOL_APPROVAL_DECISIONS, type ToolApprovalRequest, type ToolCallDecision } from "../src/domain/approval.js";
import { interruptPayload, parseDecision } from "../src/replanning/human-decision.js";
import type { ToolRegistry } from "../src/tools/registry.js";
import { inputsOf } from "../src/tools/types.js";
import { callNeedingApproval } from "../src/tools/run-step.js";
import { describeInputs } from "../src/transparency/inputs.js";
import { notification } from "../src/transparency/notify.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import type { WorkerStateValue } from "./state.js";

/** Node ids of the worker subgraph. */
export const WorkerNode = { GATE: "gate", ACT: "act" } as const;

export type WorkerStart = typeof WorkerNode.GATE | typeof WorkerNode.ACT;

/** Steps whose call needs a person's approval go through the gate; the rest skip it (one superstep fewer). */
export function routeWorkerStart(state: WorkerStateValue, registry: ToolRegistry): WorkerStart {
  return callNeedingApproval(state.step, registry) ? WorkerNode.GATE : WorkerNode.ACT;
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
    const call = callNeedingApproval(step, deps.registry);
    if (!call) return {};
    const threadId = threadIdOf(config);
    const key = { threadId: threadId ?? "", stepId: step.id, dispatch: step.dispatches };
    if (deps.ledger && threadId && (await deps.ledger.verdict(key)).kind === "done") {
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
    const inputs = describeInputs(state.inputs, inputsOf(call.tool));
    const on = Object.entries(inputs).map(([k, v]) => `${k}: ${v}`);
    const request: ToolApprovalRequest = {
      kind: "tool_approval",
      planId: state.planId,
      taskId: step.id,
      tool: call.tool.name,
      args: call.args,
      inputs,
      sideEffect: call.tool.sideEffect,
      question: `Step ${step.id} wants to call ${call.tool.name}(${JSON.stringify(call.args)})${on.length > 0 ? ` on ${on.join("; ")}` : ""}, which ${call.tool.sideEffect === "irreversible" ? "cannot be undone" : "needs a person's approval"}. Approve or deny this call?`,
      decisions: [...TOOL_APPROVAL_DECISIONS],
    };
    let payload = interruptPayload(request);
    // Each pass either gets the next stored resume value or throws the interrupt, so this loop always ends.
    for (;;) {
      const parsed = parseDecision(interrupt(payload), request);
      if (!parsed.ok) {
        payload = interruptPayload(request, parsed.error);
        continue;
      }
      const { decision: answer, comment, by } = parsed.decision;
      const decision: ToolCallDecision = {
        decision: answer === "approve" ? "approve" : "deny",
        tool: call.tool.name,
        args: call.args,
        comment,
        by,
        at: new Date().toISOString(),
      };
      const verb = decision.decision === "approve" ? "approved" : "denied";
      deps.decisionLog.record({
        operation: "human_decision",
        planId: state.planId,
        taskId: step.id,
        threadId,
        input: `tool_approval ${call.tool.name}(${JSON.stringify(call.args)})`,
        decision: decision.decision,
        reasoning: `a human ${verb} the call${comment ? `: ${comment}` : ""}`,
      });
      const told = notification({
        severity: decision.decision === "approve" ? "INFO" : "WARNING",
        kind: "approval",
        taskId: step.id,
        title: `A human ${verb} ${call.tool.name} for ${step.id}${decision.decision === "deny" ? "; the tool will not be called" : ""}.`,
        message: comment ?? "",
      });
      emitNotifications(config, [told]);
      return { toolDecision: decision, notifications: [told] };
    }
  };
}
