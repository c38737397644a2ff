import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { CandorError, ErrorCode } from "../src/errors.js";
import { callNeedingApproval, deniedFeedback, runStep } from "../src/tools/run-step.js";
import {
  failureNotification,
  retryNotification,
  successNotification,
  type RecordedCall,
} from "../src/transparency/notify.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import type { WorkerStateValue } from "./state.js";

/**
 * The worker's act node: run the step with its granted tools (or fail it without a call when a person denied
 * it) and announce the outcome the moment it is known (a failure is announced here, before any replanning, so
 * nobody waits to hear about it).
 */
export function workerActNode(deps: NodeDeps) {
  return async (state: WorkerStateValue, config: LangGraphRunnableConfig) => {
    const { step, toolDecision } = state;
    const threadId = threadIdOf(config);
    if (!toolDecision && callNeedingApproval(step, deps.registry)) {
      throw new CandorError(
        `Step ${step.id} reached act without the gate's decision on a call that needs approval; the call was not made.`,
        ErrorCode.CONFIGURATION,
      );
    }
    const retries: ReturnType<typeof retryNotification>[] = [];
    // Set by the ledger's callback during runStep (an object, so the assignment is visible to the type checker).
    const ledger: { recorded: RecordedCall | null } = { recorded: null };
    const feedback =
      toolDecision?.decision === "deny"
        ? deniedFeedback(step, step.dispatches, toolDecision, toolDecision.comment)
        : await runStep({
            step,
            inputs: state.inputs,
            registry: deps.registry,
            dispatch: step.dispatches,
            signal: config.signal,
            ...(deps.ledger ? { ledger: deps.ledger, threadId } : {}),
            onRecordedResult: (info) => {
              ledger.recorded = info;
            },
            onAttemptFailed: (info) => {
              const n = retryNotification(step, info, deps.logFile);
              retries.push(n);
              emitNotifications(config, [n]);
            },
          });
    if (toolDecision && toolDecision.decision !== "recorded") {
      // Carried to the parent, which records it as the thread's latest approval.
      feedback.approval = {
        decision: toolDecision.decision,
        comment: toolDecision.comment,
        by: toolDecision.by,
        at: toolDecision.at ?? feedback.at,
      };
    }
    const ok = feedback.feedbackType === "SUCCESS" || feedback.feedbackType === "PARTIAL_SUCCESS";
    const recorded = ledger.recorded;
    const outcome = ok
      ? successNotification(step, feedback, recorded)
      : failureNotification(step, feedback, deps.logFile);
    emitNotifications(config, [outcome]);
    const done = recorded
      ? `${recorded.tool} was not called again: the effect ledger holds the result of attempt ${recorded.attempt} (recorded ${recorded.at})`
      : `finished in ${Math.round(feedback.durationMs)} ms after ${feedback.attempt} attempt(s)`;
    deps.decisionLog.record({
      operation: "step_result",
      planId: state.planId,
      taskId: step.id,
      threadId,
      input: `${step.description} with ${feedback.tool ?? "no tool"} ${JSON.stringify(step.params)}`,
      decision: feedback.feedbackType,
      reasoning: ok ? done : `${feedback.failureClass}: ${feedback.errors.join(" | ")}`,
      cost: feedback.cost,
    });
    return { feedback: [feedback], notifications: [...retries, outcome] };
  };
}
