import { END, START, StateGraph } from "@langchain/langgraph";
import type { NodeDeps } from "../nodes/deps.js";
import { WorkerOutput, WorkerState } from "../nodes/state.js";
import { workerActNode } from "../nodes/worker-act.js";
import { routeWorkerStart, WorkerNode, workerGateNode, type WorkerStart } from "../nodes/worker-gate.js";

/**
 * The worker subgraph: runs one step with only the tools its worker type and the step grant. Its output schema
 * is narrow (new feedback and notifications only) so the parent's append-only lists are never duplicated.
 *
 * A step whose tool is irreversible or needs approval goes START → gate → act; every other step goes straight
 * to act, so ordinary steps pay no extra superstep. The gate calls `interrupt()` with a `tool_approval` payload
 * (HumanInterrupt + ToolApprovalRequest); on resume only the gate re-runs, and act runs (or fails the denied
 * step) after it.
 *
 * Finding the pending tool approval: the parent's `pendingInterrupt` stays null for it (it is the worker's, not
 * the main graph's). Read it from the snapshot's tasks instead:
 *   const snap = await graph.getState(config, { subgraphs: true });
 *   snap.tasks.filter((t) => t.name === "worker").flatMap((t) => t.interrupts)   // [{ id, value: payload }]
 * (`t.state` is the worker's own snapshot, whose `gate` task carries the same interrupt.) With several
 * parallel steps waiting, answer each by its interrupt id: `new Command({ resume: { [id]: { decision: "approve" } } })`.
 */
export function buildWorkerGraph(deps: NodeDeps) {
  return new StateGraph(WorkerState, { output: WorkerOutput })
    .addNode(WorkerNode.GATE, workerGateNode(deps))
    .addNode(WorkerNode.ACT, workerActNode(deps))
    .addConditionalEdges(START, (state): WorkerStart => routeWorkerStart(state, deps.registry), [
      WorkerNode.GATE,
      WorkerNode.ACT,
    ])
    .addEdge(WorkerNode.GATE, WorkerNode.ACT)
    .addEdge(WorkerNode.ACT, END);
}
