import { END, START, StateGraph } from "@langchain/langgraph";
import type { NodeDeps } from "../nodes/deps.js";
import { AgentLoopInput, AgentLoopOutput, AgentLoopState, WorkerOutput, WorkerState } from "../nodes/state.js";
import {
  agentFinishNode,
  AgentLoopNode,
  agentModelNode,
  agentToolNode,
  routeAfterAgentModel,
  routeAfterAgentTool,
} from "../nodes/worker-agent.js";
import { workerActNode } from "../nodes/worker-act.js";
import { meteredLoopModel } from "../nodes/usage.js";
import { routeWorkerStart, WorkerNode, workerGateNode, type WorkerStart } from "../nodes/worker-gate.js";

/**
 * The worker subgraph: runs one step with only the tools its worker type and the step grant. Its output schema
 * is narrow (new feedback and notifications only) so the parent's append-only lists are never duplicated.
 *
 * A step whose call the plan does not determine (with a worker model configured: see `isModelDriven`) goes
 * START → agent, the model-driven loop below. A determined call whose tool is irreversible or needs approval goes
 * START → gate → act; every other step goes straight to act, so ordinary steps pay no extra superstep. The gate
 * calls `interrupt()` with a `tool_approval` payload (HumanInterrupt + ToolApprovalRequest); on resume only the
 * gate re-runs, and act runs (or fails the denied step) after it.
 *
 * Finding the pending tool approval: the parent's `pendingInterrupt` stays null for it (it is the worker's, not
 * the main graph's). Read it from the snapshot's tasks instead:
 *   const snap = await graph.getState(config, { subgraphs: true });
 *   snap.tasks.filter((t) => t.name === "worker").flatMap((t) => t.interrupts)   // [{ id, value: payload }]
 * (`t.state` is the worker's own snapshot, whose `gate` task carries the same interrupt.) With several
 * parallel steps waiting, answer each by its interrupt id: `new Command({ resume: { [id]: { decision: "approve" } } })`.
 */
export function buildWorkerGraph(deps: NodeDeps) {
  const workers = deps.reasoner.workerModel;
  const graph = new StateGraph(WorkerState, { output: WorkerOutput })
    .addNode(WorkerNode.GATE, workerGateNode(deps))
    .addNode(WorkerNode.ACT, workerActNode(deps))
    .addNode(WorkerNode.AGENT, buildAgentLoopGraph(deps).compile())
    .addConditionalEdges(START, (state): WorkerStart => routeWorkerStart(state, deps.registry, workers), [
      WorkerNode.GATE,
      WorkerNode.ACT,
      WorkerNode.AGENT,
    ])
    .addEdge(WorkerNode.GATE, WorkerNode.ACT)
    .addEdge(WorkerNode.ACT, END)
    .addEdge(WorkerNode.AGENT, END);
  return graph;
}

/**
 * A model-driven step's loop, its own subgraph: model → tool (one call per pass, as many passes as the answer has
 * calls) → model …, until the model answers without a tool call or its calls per step are spent, then finish; a model that answered
 * without the evidence its step needs is told so and asked again (model → model), at most MAX_NUDGES times. A
 * call that needs approval interrupts inside `tool`, so a resume re-runs only that call's pass; the conversation
 * is checkpointed, so the model is not asked again for what it already answered.
 */
function buildAgentLoopGraph(deps: NodeDeps) {
  const maxModelCalls = deps.reasoner.workerModel?.maxModelCalls ?? 0;
  return new StateGraph(AgentLoopState, { input: AgentLoopInput, output: AgentLoopOutput })
    .addNode(AgentLoopNode.MODEL, meteredLoopModel(deps, agentModelNode(deps)))
    .addNode(AgentLoopNode.TOOL, agentToolNode(deps))
    .addNode(AgentLoopNode.FINISH, agentFinishNode(deps))
    .addEdge(START, AgentLoopNode.MODEL)
    .addConditionalEdges(AgentLoopNode.MODEL, routeAfterAgentModel, [
      AgentLoopNode.TOOL,
      AgentLoopNode.MODEL,
      AgentLoopNode.FINISH,
    ])
    .addConditionalEdges(AgentLoopNode.TOOL, (state) => routeAfterAgentTool(state, maxModelCalls), [
      AgentLoopNode.TOOL,
      AgentLoopNode.MODEL,
      AgentLoopNode.FINISH,
    ])
    .addEdge(AgentLoopNode.FINISH, END);
}
