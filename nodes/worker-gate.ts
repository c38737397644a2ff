import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { askUntilAccepted } from "./ask.js";
import { TOOL_APPROVAL_DECISIONS, type ToolApprovalRequest, type ToolCallDecision } from "../src/domain/approval.js";
import type { Notification } from "../src/domain/notification.js";
import type { TaskStep } from "../src/domain/plan.js";
import type { Result } from "../src/result.js";
import type { WorkerModel } from "../src/reasoning/types.js";
import type { ToolRegistry } from "../src/tools/registry.js";
import { isModelDriven } from "../src/tools/model-driven.js";
import { inputsOf, type ToolSpec } from "../src/tools/types.js";
import { callNeedingApproval } from "../src/tools/pending-call.js";
import { argsHash } from "../src/tools/effects.js";
import { effectIdentity, staleRecordWhy } from "../src/execution/values.js";
import { describeInputs } from "../src/transparency/inputs.js";
import { notification } from "../src/transparency/notify.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
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
    const recorded = await recordedCall(deps, threadId, step, call, state.inputs, state.context.lineage);
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

/**
 * What the effect ledger holds for this dispatch's call: the same call (a replay or a resume after it finished:
 * reused), another one (a fork or replay with another request, arguments or inputs: asked again, saying why), or
 * nothing. Reading the ledger is a read, so it may come before `interrupt()`.
 */
export async function recordedCall(
  deps: NodeDeps,
  threadId: string | null,
  step: TaskStep,
  call: { tool: ToolSpec; args: Record<string, unknown> },
  inputs: Record<string, unknown>,
  lineage: string,
): Promise<{ kind: "same" } | { kind: "other"; why: string } | { kind: "none" }> {
  if (!deps.ledger || !threadId) return { kind: "none" };
  const verdict = await deps.ledger.verdict({ threadId, stepId: step.id, dispatch: step.dispatches });
  if (verdict.kind !== "done") return { kind: "none" };
  const identity = effectIdentity(call.tool, call.args, inputs, lineage);
  if (verdict.record.argsHash === argsHash(identity)) return { kind: "same" };
  return { kind: "other", why: staleRecordWhy(call.tool.name, step.id, verdict.record.at) };
}

/** One call that needs a person's approval, wherever it is about to be made (the gate, or a model-driven loop). */
export interface ApprovalQuestion {
  step: TaskStep;
  planId: string;
  /** The step's inputs, described to the person with the call. */
  inputs: Record<string, unknown>;
  tool: ToolSpec;
  args: Record<string, unknown>;
  /** Why the person is asked again about a call the ledger already holds (another request, arguments or inputs). */
  why?: string;
}

/**
 * Asks a person to approve or deny the exact call with `interrupt()`, asking again with the error when the
 * answer is malformed; records and announces the decision. Call it only where a resume may re-run everything
 * before it: nothing before it in its node may have side effects.
 */
export function askToolApproval(
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  q: ApprovalQuestion,
): { decision: ToolCallDecision; told: Notification } {
  const { step, tool, args } = q;
  const threadId = threadIdOf(config);
  const inputs = describeInputs(q.inputs, inputsOf(tool));
  const on = Object.entries(inputs).map(([k, v]) => `${k}: ${v}`);
  const request: ToolApprovalRequest = {
    kind: "tool_approval",
    planId: q.planId,
    taskId: step.id,
    tool: tool.name,
    args,
    inputs,
    sideEffect: tool.sideEffect,
    question: `${q.why ? `${q.why} ` : ""}Step ${step.id} wants to call ${tool.name}(${JSON.stringify(args)})${on.length > 0 ? ` on ${on.join("; ")}` : ""}, which ${tool.sideEffect === "irreversible" ? "cannot be undone" : "needs a person's approval"}. Approve or deny this call?`,
    decisions: [...TOOL_APPROVAL_DECISIONS],
  };
  const decision = askUntilAccepted(request, ({ decision: answer, comment, by }): Result<ToolCallDecision> => ({
    ok: true,
    value: {
      decision: answer === "approve" ? "approve" : "deny",
      tool: tool.name,
      args,
      comment,
      by,
      at: new Date().toISOString(),
    },
  }));
  const { comment } = decision;
  const verb = decision.decision === "approve" ? "approved" : "denied";
  deps.decisionLog.record({
    operation: "human_decision",
    planId: q.planId,
    taskId: step.id,
    threadId,
    input: `tool_approval ${tool.name}(${JSON.stringify(args)})`,
    decision: decision.decision,
    reasoning: `a human ${verb} the call${comment ? `: ${comment}` : ""}`,
  });
  const told = notification({
    severity: decision.decision === "approve" ? "INFO" : "WARNING",
    kind: "approval",
    taskId: step.id,
    title: `A human ${verb} ${tool.name} for ${step.id}${decision.decision === "deny" ? "; the tool will not be called" : ""}.`,
    message: comment ?? "",
  });
  emitNotifications(config, [told]);
  return { decision, told };
}
