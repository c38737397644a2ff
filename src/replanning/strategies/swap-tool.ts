import { requestFacts } from "../../planning/rules-planner.js";
import { requiredInputs, type ToolSpec } from "../../tools/types.js";
import { freshId, replaceStep } from "../plan-edit.js";
import { hintedParams, neededOutputs, successorFor, triedTools, workerFor } from "./hint.js";
import {
  revise,
  successorOf,
  type Strategy,
  type StrategyHint,
  type StrategyInput,
  type StrategyOutcome,
} from "./types.js";

/**
 * Parameters for `tool` doing the failed step's job: the step's own parameters when the tool accepts them, else
 * the ones its schema knows, completed from the request through the tool's `extractParams`. Null when neither
 * passes the tool's schema (a swap that would fail validation is no recovery).
 */
export function paramsFor(input: StrategyInput, tool: ToolSpec): Record<string, unknown> | null {
  const own = input.failure.step.params;
  // What the request gives the tool comes in under the step's own values: a step valid only by its tool's defaults
  // ({} for a report) still gets the title the request gave.
  const fromRequest =
    input.request && tool.extractParams ? tool.extractParams(requestFacts(input.request, input.registry)) : {};
  const merged = { ...fromRequest, ...own };
  if (tool.schema.safeParse(merged).success) return merged;
  return tool.schema.safeParse(own).success ? own : null;
}

/**
 * SWAP_TOOL (seed 003): another tool with the same purpose — it produces everything the step must produce and
 * needs no input the step does not have — inside the failed step's worker's grant, never a tool that already
 * failed the step's lineage. The step `<id>_swap` replaces the failed one on the same worker. Confidence −0.08.
 *
 * With a model's hint the tool is the one it names, on the worker it names when that worker may use it (else the
 * step's own, else any that may): it must be registered, not have failed the step and produce the step's outputs.
 */
export const swapTool: Strategy = (input) => {
  if (input.hint) return toHintedTool(input, input.hint);
  const { plan, failure, registry } = input;
  const failed = failure.step;
  const current = registry.tool(failed.tools[0] ?? "");
  const needed = failed.expectedOutputs.length > 0 ? failed.expectedOutputs : (current?.produces ?? []);
  if (needed.length === 0)
    return {
      applies: false,
      reason: `${failed.id} declares no output, so no other tool can be shown to serve the same purpose`,
    };
  const triedTools = new Set([
    ...failed.tools.slice(0, 1),
    ...failure.history.map((f) => f.tool).filter((t): t is string => t !== null),
  ]);
  const available = new Set(
    plan.steps.filter((s) => failed.dependsOn.includes(s.id)).flatMap((s) => s.expectedOutputs),
  );
  const grant = registry.grant(failed.workerType);
  const rejected: string[] = [];
  for (const tool of grant) {
    if (triedTools.has(tool.name) || !needed.every((o) => tool.produces.includes(o))) continue;
    const missing = requiredInputs(tool).filter((c) => !available.has(c));
    if (missing.length > 0) {
      rejected.push(`${tool.name} needs ${missing.join(", ")}`);
      continue;
    }
    const params = paramsFor(input, tool);
    if (!params) {
      rejected.push(`${tool.name} does not accept the step's parameters`);
      continue;
    }
    const step = successorOf(
      failed,
      freshId(
        plan,
        failed.id,
        "swap",
        input.feedback.map((f) => f.taskId),
      ),
      {
        tools: [tool.name],
        params,
        estimates: tool.estimates,
        description: tool.describeStep?.(params) ?? failed.description,
      },
    );
    return revise(input, "SWAP_TOOL", replaceStep(plan, failed.id, step), {
      rationale: `${current?.name ?? failed.tools[0] ?? "The step's tool"} failed ${failed.id} (${failure.failureClass}: ${failure.error}); ${tool.name} produces the same ${needed.join(", ")} and ${failed.workerType} may use it.`,
      changes: [
        `Swap tool for task ${failed.id}: ${failed.tools[0] ?? "none"} → ${tool.name} as ${step.id} (same output: ${needed.join(", ")})`,
      ],
      newStepIds: [step.id],
      removedStepIds: [failed.id],
    });
  }
  const tried = [...triedTools].join(", ") || "none";
  return {
    applies: false,
    reason: `No other tool in ${failed.workerType}'s grant produces ${needed.join(", ")} (already failed: ${tried}${rejected.length > 0 ? `; unusable: ${rejected.join("; ")}` : ""})`,
  };
};

/** SWAP_TOOL to the tool a model suggested. */
function toHintedTool(input: StrategyInput, hint: StrategyHint): StrategyOutcome {
  const { failure, registry } = input;
  const failed = failure.step;
  const refuse = (reason: string): StrategyOutcome => ({ applies: false, reason });
  const name = hint.tool;
  if (name === null) return refuse("SWAP_TOOL needs a tool to swap to, and none was given");
  const tool = registry.tool(name);
  if (!tool) return refuse(`SWAP_TOOL names tool "${name}", which is not registered`);
  const tried = triedTools(failure);
  if (tried.includes(tool.name)) return refuse(`SWAP_TOOL names ${tool.name}, which already failed this step`);
  const missing = neededOutputs(failed, registry).filter((o) => !tool.produces.includes(o));
  if (missing.length > 0) return refuse(`SWAP_TOOL names ${tool.name}, which does not produce ${missing.join(", ")}`);
  const worker = workerFor(input, tool, hint.workerType);
  if (!worker) return refuse(`SWAP_TOOL names ${tool.name}, which no worker type may use`);
  const params = hintedParams(tool, hint.params, failure.params, "SWAP_TOOL");
  if ("reason" in params) return refuse(params.reason);
  const step = successorFor(input, "swap", {
    workerType: worker,
    tools: [tool.name],
    params: params.value,
    estimates: tool.estimates,
    description: tool.describeStep?.(params.value) ?? failed.description,
  });
  return revise(input, "SWAP_TOOL", replaceStep(input.plan, failed.id, step), {
    rationale: hint.rationale,
    changes: [
      `Swap ${tried[tried.length - 1] ?? "the failed tool"} for ${tool.name} on task ${failed.id} (worker ${worker}) as ${step.id}`,
    ],
    newStepIds: [step.id],
    removedStepIds: [failed.id],
  });
}
