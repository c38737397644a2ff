import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { runWorkerStep } from "../src/execution/worker-step.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import type { WorkerStateValue } from "./state.js";

/**
 * The worker's act node, after the approval gate: run the step (or fail it without a call when a person denied
 * it) and announce the outcome the moment it is known. Steps that need no approval run the same function as a
 * task inside EXECUTE instead.
 */
export function workerActNode(deps: NodeDeps) {
  return async (state: WorkerStateValue, config: LangGraphRunnableConfig) => {
    const { feedback, notifications } = await runWorkerStep(deps, {
      step: state.step,
      inputs: state.inputs,
      planId: state.planId,
      context: state.context,
      threadId: threadIdOf(config),
      toolDecision: state.toolDecision,
      ...(config.signal ? { signal: config.signal } : {}),
      emit: (n) => emitNotifications(config, [n]),
    });
    return { feedback: [feedback], notifications };
  };
}
