import { freshId, replaceStep } from "../plan-edit.js";
import { rankWorkers } from "../router.js";
import { canStandIn } from "../../tools/types.js";
import { hintedParams, neededOutputs, successorFor, triedTools } from "./hint.js";
import {
  revise,
  successorOf,
  type Strategy,
  type StrategyHint,
  type StrategyInput,
  type StrategyOutcome,
} from "./types.js";

/**
 * RETRY_DIFFERENT_AGENT (seed 000 scenario 4): the router ranks the workers able to do the step and the best one
 * that has not failed it takes over, as `<id>_retry` in the failed step's place, with the same inputs and
 * expected outputs and a retry policy of its own. Confidence −0.10.
 *
 * With a model's hint the worker is the one it names: registered, not one that failed the step, with a tool in
 * its grant that can stand in for the step's (the hint's tool when it is one).
 */
export const retryDifferentAgent: Strategy = (input) => {
  const failed = input.failure.step;
  // A step that names no tool and expects no tool's output (a model-driven step, such as a reactive run's) gives
  // nothing to match a stand-in against: every worker would "qualify" and its first tool would be a guess (once an
  // admin's delete tool for a reading task). Saying so lets the next strategy, or a person, take it.
  if (failed.tools.length === 0 && failed.expectedOutputs.length === 0) {
    return {
      applies: false,
      reason: `${failed.id} names no tool and expects no tool's output, so no other worker can be shown to do it: another worker's tool would be a guess`,
    };
  }
  if (input.hint) return withHintedWorker(input, input.hint);
  const { plan, failure, registry } = input;
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

/** RETRY_DIFFERENT_AGENT with the worker a model suggested. */
function withHintedWorker(input: StrategyInput, hint: StrategyHint): StrategyOutcome {
  const { failure, registry } = input;
  const failed = failure.step;
  const refuse = (reason: string): StrategyOutcome => ({ applies: false, reason });
  const name = hint.workerType;
  if (name === null) return refuse("RETRY_DIFFERENT_AGENT needs a worker type, and none was given");
  if (!registry.worker(name))
    return refuse(`RETRY_DIFFERENT_AGENT names worker type "${name}", which is not registered`);
  const failedWorkers = [
    ...new Set([
      ...failed.failedWorkers,
      failed.workerType,
      ...failure.history.map((f) => f.workerType).filter((w): w is string => w !== null),
    ]),
  ];
  if (failedWorkers.includes(name))
    return refuse(`RETRY_DIFFERENT_AGENT names ${name}, which already failed this step`);
  const outputs = neededOutputs(failed, registry);
  const received = registry.tool(failed.tools[0] ?? "")?.consumes ?? [];
  const producers = registry.grant(name).filter((t) => canStandIn(t, outputs, received));
  const tried = triedTools(failure);
  // The model's tool when the worker may use it; otherwise one that has not failed yet, then the failed one.
  const tool =
    (hint.tool !== null ? producers.find((t) => t.name === hint.tool) : undefined) ??
    producers.find((t) => !tried.includes(t.name)) ??
    producers[0];
  if (!tool)
    return refuse(
      `RETRY_DIFFERENT_AGENT names ${name}, whose tools do not produce ${outputs.join(", ") || "this step's output"}`,
    );
  const params = hintedParams(tool, hint.params, failure.params, "RETRY_DIFFERENT_AGENT");
  if ("reason" in params) return refuse(params.reason);
  const step = successorFor(input, "retry", {
    workerType: name,
    tools: [tool.name],
    params: params.value,
    estimates: tool.estimates,
    failedWorkers,
    // A backup gets one extra attempt after a pause, as without a hint.
    retry: { maxAttempts: 2, backoffMs: [500] },
  });
  return revise(input, "RETRY_DIFFERENT_AGENT", replaceStep(input.plan, failed.id, step), {
    rationale: hint.rationale,
    changes: [`Retry task ${failed.id} with agent ${name} using ${tool.name} as ${step.id}`],
    newStepIds: [step.id],
    removedStepIds: [failed.id],
  });
}
