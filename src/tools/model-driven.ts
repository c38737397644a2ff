import type { TaskStep } from "../domain/plan.js";
import { generalToolkit } from "./general.js";
import { defaultedText } from "./args.js";
import { ToolRegistry } from "./registry.js";
import type { Toolkit, ToolSpec } from "./types.js";

/** Whether a worker model is configured (the reasoner's `workerModel`): all these rules need to know of it. */
type WorkerModelPresence = object | undefined;

/**
 * Whether a step runs as a model-driven tool loop rather than one direct call. The rule: a model is configured
 * for workers, and the plan does not fully determine the call — the step names no tool (the loop gets its worker's
 * whole grant), or its first tool is granted but the planned parameters do not satisfy that tool's schema or leave
 * out a text parameter the tool would fill with its default (a model plan that left them to the worker; the loop
 * gets the step's granted tools): a folder the request names is not ".", a report's title is not "Candor report".
 * Left-out switches and numbers with defaults (nonstop, a page size) are the tool's to decide. A determined call (a
 * rules plan, or a model plan with its text parameters) stays a direct call: fast and free. A step naming a tool its worker may not
 * use also stays direct: runStep refuses it in code, and replanning (SWAP_TOOL, RETRY_DIFFERENT_AGENT) fixes the
 * plan, which a model could only paper over.
 */
export function isModelDriven(step: TaskStep, registry: ToolRegistry, workers: WorkerModelPresence): boolean {
  if (!workers) return false;
  const first = step.tools[0];
  if (first === undefined) return registry.grant(step.workerType).length > 0;
  if (step.tools.some((t) => !registry.isGranted(step.workerType, t))) return false;
  const tool = registry.tool(first);
  if (tool === undefined) return false;
  return !tool.schema.safeParse(step.params).success || defaultedText(tool, step.params).length > 0;
}

/**
 * Which steps of a plan the agent built from these toolkits and this reasoner runs model-driven, for views that
 * have no graph (the CLI's plan view). The registry is made as buildAgentGraph makes it (the `general` fallback
 * worker added unless a toolkit has one), so both answer alike.
 */
export function modelDrivenPredicate(
  toolkits: readonly Toolkit[],
  workers: WorkerModelPresence,
): (step: TaskStep) => boolean {
  if (!workers) return () => false;
  const hasGeneral = toolkits.some((k) => k.workers.some((w) => w.name === "general"));
  const registry = ToolRegistry.create(hasGeneral ? toolkits : [...toolkits, generalToolkit()]);
  return (step) => isModelDriven(step, registry, workers);
}

/** The tools a model-driven step may call: the step's own list within its worker's grant, or the whole grant. */
export function loopTools(step: TaskStep, registry: ToolRegistry): ToolSpec[] {
  return step.tools.length > 0 ? registry.toolsForStep(step) : registry.grant(step.workerType);
}
