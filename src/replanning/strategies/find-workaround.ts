import type { TaskStep } from "../../domain/plan.js";
import { freshId, replaceStep } from "../plan-edit.js";
import { revise, successorOf, type Strategy } from "./types.js";

/**
 * FIND_WORKAROUND (seed 000 scenario 7): what the step needed is not available, so an alternative step produces
 * the same kind of output with a widened search (the tool's own `widen`), or, when the tool cannot widen, with
 * another tool that produces the same output. Confidence −0.15: workarounds are less reliable.
 */
export const findWorkaround: Strategy = (input) => {
  const { plan, failure, registry } = input;
  const failed = failure.step;
  const tool = registry.tool(failed.tools[0] ?? "");
  const widened = tool?.widen?.(failed.params) ?? null;
  let alternative: Pick<TaskStep, "workerType" | "tools" | "params" | "estimates" | "description">;
  let how: string;
  if (tool && widened) {
    alternative = {
      workerType: failed.workerType,
      tools: [tool.name],
      params: widened.params,
      estimates: tool.estimates,
      description: tool.describeStep?.(widened.params) ?? `Search alternatives: ${widened.description}`,
    };
    how = `search ${widened.description}`;
  } else {
    const other = registry
      .producersOf(failed.expectedOutputs)
      .find(
        (t) =>
          t.name !== tool?.name &&
          failed.expectedOutputs.every((o) => t.produces.includes(o)) &&
          registry.workerForTool(t.name),
      );
    if (!other)
      return {
        applies: false,
        reason: `${failed.tools[0] ?? "The step's tool"} cannot widen its search and no other tool produces ${failed.expectedOutputs.join(", ")}`,
      };
    alternative = {
      workerType: registry.workerForTool(other.name)!.name,
      tools: [other.name],
      params: failed.params,
      estimates: other.estimates,
      description: other.describeStep?.(failed.params) ?? `${failed.description} (via ${other.name})`,
    };
    how = `use ${other.name} instead of ${tool?.name ?? "the failed tool"}`;
  }
  const step = successorOf(
    failed,
    freshId(
      plan,
      failed.id,
      "alt",
      input.feedback.map((f) => f.taskId),
    ),
    alternative,
  );
  return revise(input, "FIND_WORKAROUND", replaceStep(plan, failed.id, step), {
    rationale: `A workaround was needed because ${failed.id} could not get what it looked for: ${failure.error}. Retrying the same search would fail the same way.`,
    changes: [`Workaround for ${failed.id}: ${how} as ${step.id} (same output: ${failed.expectedOutputs.join(", ")})`],
    newStepIds: [step.id],
    removedStepIds: [failed.id],
  });
};
