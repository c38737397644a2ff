import { isOptionalDependency } from "../../planning/schedule.js";
import { revise, type Strategy, type StrategyInput, type StrategyOutcome } from "./types.js";

/**
 * SKIP: give up on the failed step and finish what can be finished. Dependents that need its result are then
 * skipped as DEPENDENCY_FAILURE by execute; dependents for which it is only an optional input run without it
 * and say so. Either way the final status and report say what is missing. A hint gives the reason, and says
 * whether a person chose it.
 */
export const skip: Strategy = (input) =>
  skipWithReason(
    input,
    input.hint?.rationale ?? `No recovery fits ${input.failure.failureClass} for ${input.failure.step.id}.`,
    input.hint?.by === "person" ? "person" : "rules",
  );

/** Who gave up on the step: the rules (no recovery fitted) or a person answering an escalation. */
export type SkippedBy = "rules" | "person";

export function skipWithReason(input: StrategyInput, why: string, by: SkippedBy = "rules"): StrategyOutcome {
  const failed = input.failure.step;
  const reason = `${by === "person" ? "Skipped by a person" : "Skipped"} after it failed: ${input.failure.error}`;
  const plan = {
    ...input.plan,
    steps: input.plan.steps.map((s) =>
      s.id === failed.id ? { ...s, status: "skipped" as const, skipReason: reason, skipCause: "failed" as const } : s,
    ),
  };
  const outputs = failed.expectedOutputs.join(", ") || "its result";
  // Said now, with the skip: which dependents still run (without this input) and which cannot.
  const dependents = plan.steps.filter((s) => s.dependsOn.includes(failed.id) && s.status === "pending");
  const without = dependents
    .filter((s) => s.condition.type === "success" && isOptionalDependency(failed, input.registry.inputsOf(s)))
    .map((s) => s.id);
  const blocked = dependents.filter((s) => s.condition.type === "success" && !without.includes(s.id)).map((s) => s.id);
  const runWithout =
    without.length > 0
      ? `${without.join(", ")} still run without ${outputs} (an optional input of theirs) and say what they left out`
      : null;
  const downstream = [runWithout, blocked.length > 0 ? `${blocked.join(", ")} cannot run without it` : null].filter(
    (d): d is string => d !== null,
  );
  return revise(input, "SKIP", plan, {
    rationale: `${why} The rest of the plan continues without ${failed.id}; what it would have produced will be missing${downstream.length > 0 ? ` (${downstream.join("; ")})` : ""}.`,
    changes: [
      `Skip task ${failed.id} (${failed.description}); the answer will not include ${outputs}`,
      ...(without.length > 0 ? [`Run ${without.join(", ")} without ${outputs}; their results say so`] : []),
    ],
    modifiedStepIds: [failed.id],
  });
}
