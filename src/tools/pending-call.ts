import type { TaskStep } from "../domain/plan.js";
import type { RecordedValue } from "../domain/step-context.js";
import { applyRecordedValues } from "./args.js";
import type { ToolRegistry } from "./registry.js";
import type { ToolSpec } from "./types.js";

/** A call that must wait for a person: the tool, and the exact validated arguments it would get. */
export interface PendingToolCall {
  tool: ToolSpec;
  args: Record<string, unknown>;
}

/**
 * The call a step is about to make, when its tool has an irreversible side effect or is marked as needing
 * approval (issue 4 item 3). Null when no approval is needed, and also when the call could not be made anyway
 * (no tool, not granted, invalid arguments): runStep fails those steps without calling anything, so there is
 * nothing for a person to approve. Pure: the worker's gate calls it before `interrupt()`.
 */
export function callNeedingApproval(
  step: TaskStep,
  registry: ToolRegistry,
  values: readonly RecordedValue[] = [],
): PendingToolCall | null {
  const name = step.tools[0];
  if (name === undefined || step.tools.some((t) => !registry.isGranted(step.workerType, t))) return null;
  const tool = registry.tool(name);
  if (!tool || (tool.sideEffect !== "irreversible" && !tool.needsApproval)) return null;
  // The person approves the call that will be made: with the values the request's record gives applied.
  const parsed = tool.schema.safeParse(applyRecordedValues(step.params, values, tool).args);
  if (!parsed.success) return null;
  const args =
    parsed.data !== null && typeof parsed.data === "object" && !Array.isArray(parsed.data)
      ? (parsed.data as Record<string, unknown>)
      : { value: parsed.data };
  return { tool, args };
}
