import { freshId, replaceStep } from "../plan-edit.js";
import { rankWorkers } from "../router.js";
import { revise, successorOf, type Strategy } from "./types.js";

/**
 * RETRY_DIFFERENT_AGENT (seed 000 scenario 4): the router ranks the workers able to do the step and the best one
 * that has not failed it takes over, as `<id>_retry` in the failed step's place, with the same inputs and
 * expected outputs and a retry policy of its own. Confidence −0.10.
 */
export const retryDifferentAgent: Strategy = (input) => {
  const { plan, failure, registry } = input;
  const failed = failure.step;
  const exclude = [...new Set([...failed.failedWorkers, failed.workerType])];
  const failedTools = [...new Set(failure.history.map((f) => f.tool).filter((t): t is string => t !== null))];
  const [best] = rankWorkers(registry, failed, exclude, failedTools);
  if (!best) {
    return {
      applies: false,
      reason: `No other worker can produce ${failed.expectedOutputs.join(", ") || "this step's output"} with a tool that has not failed it (already tried: ${[...exclude, ...failedTools].join(", ")})`,
    };
  }
  const retry = successorOf(
    failed,
    freshId(
      plan,
      failed.id,
      "retry",
      input.feedback.map((f) => f.taskId),
    ),
    {
      workerType: best.worker.name,
      tools: [best.tool.name],
      // A backup gets one extra attempt after a pause: enough for a blip, not for a dead service.
      retry: { maxAttempts: 2, backoffMs: [500] },
      estimates: best.tool.estimates,
      failedWorkers: exclude,
    },
  );
  return revise(input, "RETRY_DIFFERENT_AGENT", replaceStep(plan, failed.id, retry), {
    rationale: `${failed.id} failed on ${failed.workerType} (${failure.failureClass}: ${failure.error}); ${best.worker.name} can do the same step (${best.reasons.join(", ")}).`,
    changes: [`Retry task ${failed.id} with agent ${best.worker.name} using ${best.tool.name} as ${retry.id}`],
    newStepIds: [retry.id],
    removedStepIds: [failed.id],
  });
};
