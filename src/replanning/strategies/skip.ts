import { revise, type Strategy, type StrategyInput, type StrategyOutcome } from "./types.js";

/**
 * SKIP: give up on the failed step and finish what can be finished. Its dependents are then skipped as
 * DEPENDENCY_FAILURE by execute, and the final status and report say what is missing.
 */
export const skip: Strategy = (input) => skipWithReason(input, `No recovery fits ${input.failure.failureClass} for ${input.failure.step.id}.`);

export function skipWithReason(input: StrategyInput, why: string): StrategyOutcome {
  const failed = input.failure.step;
  const reason = `Skipped after it failed: ${input.failure.error}`;
  const plan = { ...input.plan, steps: input.plan.steps.map((s) => (s.id === failed.id ? { ...s, status: "skipped" as const, skipReason: reason, skipCause: "failed" as const } : s)) };
  return revise(input, "SKIP", plan, {
    rationale: `${why} The rest of the plan continues without ${failed.id}; what it would have produced will be missing.`,
    changes: [`Skip task ${failed.id} (${failed.description}); the answer will not include ${failed.expectedOutputs.join(", ") || "its result"}`],
    modifiedStepIds: [failed.id],
  });
}
