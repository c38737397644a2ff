import type { TaskStep } from "../../domain/plan.js";
import type { ToolRegistry } from "../../tools/registry.js";
import type { ToolSpec } from "../../tools/types.js";
import type { FailureContext } from "../../domain/feedback.js";
import { freshId } from "../plan-edit.js";
import { successorOf, type StrategyInput } from "./types.js";

/**
 * Checks the strategies share when they build a revision from a model's hint (StrategyInput.hint): a model may
 * name anything, so every tool, worker and parameter it names is checked against the registry and the tool's
 * schema before it reaches the plan.
 */

/** A fresh step in the failed step's place, with its lineage and a clean slate. */
export function successorFor(input: StrategyInput, suffix: string, changes: Partial<TaskStep>): TaskStep {
  const failed = input.failure.step;
  return successorOf(
    failed,
    freshId(
      input.plan,
      failed.id,
      suffix,
      input.feedback.map((f) => f.taskId),
    ),
    changes,
  );
}

/** What the replacement must produce: the step's expected outputs, else what its tool produces. */
export function neededOutputs(step: TaskStep, registry: ToolRegistry): string[] {
  return step.expectedOutputs.length > 0 ? step.expectedOutputs : (registry.tool(step.tools[0] ?? "")?.produces ?? []);
}

/** The tools that already failed the step: those its failures name, else its own. */
export function triedTools(failure: FailureContext): string[] {
  const tools = [...failure.history.map((f) => f.tool), failure.tool].filter((t): t is string => t !== null);
  return [...new Set(tools.length > 0 ? tools : failure.step.tools.slice(0, 1))];
}

/** The model's worker when it may use the tool, else the step's own worker, else the registry's best for the tool. */
export function workerFor(input: StrategyInput, tool: ToolSpec, asked: string | null): string | undefined {
  const { registry } = input;
  if (asked !== null && registry.worker(asked) && registry.isGranted(asked, tool.name)) return asked;
  const own = input.failure.step.workerType;
  if (registry.isGranted(own, tool.name)) return own;
  return registry.workerForTool(tool.name)?.name;
}

/** The hint's params when given (they must fit the tool); otherwise the failed ones, if the tool accepts them. */
export function hintedParams(
  tool: ToolSpec,
  given: Record<string, unknown> | null,
  previous: Record<string, unknown>,
  strategy: string,
): { value: Record<string, unknown> } | { reason: string } {
  if (given !== null) {
    const invalid = schemaProblem(tool, given);
    return invalid ? { reason: `${strategy}: ${invalid}` } : { value: given };
  }
  const invalid = schemaProblem(tool, previous);
  return invalid
    ? { reason: `${strategy} gave no parameters, and the failed step's do not fit ${tool.name}: ${invalid}` }
    : { value: previous };
}

/** Why `params` do not fit the tool's schema (its first three issues), or null when they do. */
export function schemaProblem(tool: ToolSpec, params: Record<string, unknown>, prefix = ""): string | null {
  const result = tool.schema.safeParse(params);
  if (result.success) return null;
  const issues = result.error.issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join(".") || "(root)"}: ${i.message}`);
  return `${prefix}parameters ${JSON.stringify(params)} are not valid for ${tool.name} (${issues.join("; ")})`;
}

export function sameParams(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return canonical(a) === canonical(b);
}

/** A value as JSON with its keys sorted and undefined fields left out: equal for parameters that mean the same. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort()
      .filter((k) => record[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
