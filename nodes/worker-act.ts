import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { runStep } from "../src/tools/run-step.js";
import { failureNotification, retryNotification, successNotification } from "../src/transparency/notify.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import type { WorkerStateValue } from "./state.js";

/**
 * The worker's one node: run the step with its granted tools and announce the outcome the moment it is known
 * (a failure is announced here, before any replanning, so nobody waits to hear about it).
 */
export function workerActNode(deps: NodeDeps) {
  return async (state: WorkerStateValue, config: LangGraphRunnableConfig) => {
    const { step } = state;
    const retries: ReturnType<typeof retryNotification>[] = [];
    const feedback = await runStep({
      step,
      inputs: state.inputs,
      registry: deps.registry,
      dispatch: step.dispatches,
      signal: config.signal,
      onAttemptFailed: (info) => {
        const n = retryNotification(step, info, deps.logFile);
        retries.push(n);
        emitNotifications(config, [n]);
      },
    });
    const ok = feedback.feedbackType === "SUCCESS" || feedback.feedbackType === "PARTIAL_SUCCESS";
    const outcome = ok ? successNotification(step, feedback) : failureNotification(step, feedback, deps.logFile);
    emitNotifications(config, [outcome]);
    deps.decisionLog.record({
      operation: "step_result",
      planId: state.planId,
      taskId: step.id,
      threadId: threadIdOf(config),
      input: `${step.description} with ${feedback.tool ?? "no tool"} ${JSON.stringify(step.params)}`,
      decision: feedback.feedbackType,
      reasoning: ok ? `finished in ${Math.round(feedback.durationMs)} ms after ${feedback.attempt} attempt(s)` : `${feedback.failureClass}: ${feedback.errors.join(" | ")}`,
      cost: feedback.cost,
    });
    return { feedback: [feedback], notifications: [...retries, outcome] };
  };
}
