import { END, START, StateGraph } from "@langchain/langgraph";
import type { NodeDeps } from "../nodes/deps.js";
import { WorkerOutput, WorkerState } from "../nodes/state.js";
import { workerActNode } from "../nodes/worker-act.js";

/**
 * The worker subgraph: runs one step with only the tools its worker type and the step grant. Its output schema
 * is narrow (new feedback and notifications only) so the parent's append-only lists are never duplicated.
 * One node on purpose: every extra node is a superstep per step (DESIGN.md performance notes).
 */
export function buildWorkerGraph(deps: NodeDeps) {
  return new StateGraph(WorkerState, { output: WorkerOutput })
    .addNode("act", workerActNode(deps))
    .addEdge(START, "act")
    .addEdge("act", END);
}
