import { z } from "zod";
import type { Plan, TaskStep } from "../domain/plan.js";
import type { PlanningRequest } from "../domain/request.js";
import { CandorError } from "../errors.js";
import { assignOrder, validatePlan } from "../planning/validate.js";
import type { Result } from "../result.js";
import type { ToolRegistry } from "../tools/registry.js";

/**
 * Plan surgery shared by the strategies. Each edit touches only the failed step and what depends on it, so
 * the results of independent steps are kept (partial replanning).
 */

/** Puts `replacement` where `oldId` was, and points the old step's dependents at the replacement. */
export function replaceStep(plan: Plan, oldId: string, replacement: TaskStep): Plan {
  const steps: TaskStep[] = [];
  for (const step of plan.steps) {
    if (step.id === oldId) {
      steps.push(replacement);
      continue;
    }
    steps.push(
      step.dependsOn.includes(oldId)
        ? { ...step, dependsOn: step.dependsOn.map((d) => (d === oldId ? replacement.id : d)) }
        : step,
    );
  }
  return { ...plan, steps: assignOrder(steps) };
}

/** Every step that depends on any of `ids`, directly or through others. */
export function transitiveDependents(plan: Plan, ids: readonly string[]): string[] {
  const found = new Set<string>();
  const frontier = [...ids];
  while (frontier.length > 0) {
    const id = frontier.pop()!;
    for (const step of plan.steps) {
      if (step.dependsOn.includes(id) && !found.has(step.id)) {
        found.add(step.id);
        frontier.push(step.id);
      }
    }
  }
  return [...found];
}

/** Sends steps (and, through the dependency rules, their dependents) back to pending so they run again. */
export function resetForRerun(plan: Plan, ids: readonly string[]): Plan {
  const reset = new Set([...ids, ...transitiveDependents(plan, ids)]);
  return {
    ...plan,
    steps: plan.steps.map((s) =>
      reset.has(s.id) && s.status !== "pending"
        ? { ...s, status: "pending" as const, result: null, attempts: 0, skipReason: null, skipCause: null }
        : s,
    ),
  };
}

/**
 * An id never used in the run: `<base>_<suffix>`, then `<base>_<suffix>2`, … Steps the plan no longer has still
 * count: those its steps replaced (their lineage) and any other id in `used` (e.g. every step that got feedback).
 * The effect ledger keys calls by step id, so a reused id could be served an old step's recorded result.
 */
export function freshId(plan: Plan, base: string, suffix: string, used: Iterable<string> = []): string {
  const root = base.replace(new RegExp(`_${suffix}\\d*$`), "");
  const taken = new Set([...plan.steps.flatMap((s) => [s.id, ...s.lineage]), ...used]);
  let candidate = `${root}_${suffix}`;
  for (let n = 2; taken.has(candidate); n++) candidate = `${root}_${suffix}${n}`;
  return candidate;
}

type EditableStep = Pick<TaskStep, "id" | "description" | "workerType" | "tools" | "params">;

/**
 * The one check of a step a person edited (`resume --adjust`, `resume --retry --set`, `fork --set`), so an edit
 * is held to what the tool accepts before anything runs, not discovered at run time and "repaired" into
 * something else. When the worker or the tools changed, every tool must be registered and granted to the worker.
 * When the parameters or the tools changed, names the step's tool does not have are refused (its schema would
 * drop a misspelt one without a word) and the parameters must parse with the tool's schema; then, unless the
 * person wrote the description too, the tool's `describeStep` writes it again, so what the user reads is what
 * runs. A step whose tool and parameters were not touched is not re-checked: it passed when it was planned.
 */
export function checkEditedStep<S extends EditableStep>(
  step: S,
  before: EditableStep,
  registry: ToolRegistry,
): Result<S> {
  const toolChanged = JSON.stringify(step.tools) !== JSON.stringify(before.tools);
  // The grant is checked when the person changed who runs the step or with what; a planned step already passed it.
  if (toolChanged || step.workerType !== before.workerType) {
    if (!registry.worker(step.workerType)) {
      return {
        ok: false,
        reason: `worker type "${step.workerType}" is not registered; known worker types: ${[...registry.workers.keys()].join(", ")}.`,
      };
    }
    for (const name of step.tools) {
      if (!registry.tool(name))
        return {
          ok: false,
          reason: `tool "${name}" is not registered; known tools: ${[...registry.tools.keys()].join(", ")}.`,
        };
      if (!registry.isGranted(step.workerType, name)) {
        const granted = registry.grant(step.workerType).map((t) => t.name);
        return {
          ok: false,
          reason: `worker "${step.workerType}" may not use tool "${name}"; it may use ${granted.join(", ") || "no tool"}.`,
        };
      }
    }
  }
  const tool = registry.tool(step.tools[0] ?? "");
  const changed = Object.keys(step.params).filter(
    (k) => JSON.stringify(step.params[k]) !== JSON.stringify(before.params[k]),
  );
  const paramsChanged = changed.length > 0 || Object.keys(before.params).some((k) => !(k in step.params));
  if (!paramsChanged && !toolChanged) return { ok: true, value: step };
  if (!tool)
    return paramsChanged
      ? { ok: false, reason: `step ${step.id} names no tool, so it takes no parameters; give it a tool first.` }
      : { ok: true, value: step };
  const known = tool.schema instanceof z.ZodObject ? Object.keys(tool.schema.shape) : null;
  const unknown = known ? changed.filter((k) => !known.includes(k)) : [];
  if (known && unknown.length > 0) {
    return {
      ok: false,
      reason: `${tool.name} has no parameter ${unknown.map((k) => `"${k}"`).join(", ")}; its parameters are ${known.join(", ")}.`,
    };
  }
  const checked = tool.schema.safeParse(step.params);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const field = issue?.path.join(".") || "(arguments)";
    return {
      ok: false,
      reason: `${tool.name} would refuse these parameters (${field}: ${issue?.message}). Its parameters now: ${JSON.stringify(before.params)}.`,
    };
  }
  const describedByPerson = step.description !== before.description;
  if (!describedByPerson && tool.describeStep)
    return { ok: true, value: { ...step, description: tool.describeStep(step.params) } };
  return { ok: true, value: step };
}

/**
 * Checks a plan a person edited in place (`fork --set plan.steps.N.params.x=...`): every step they changed with
 * checkEditedStep, then the whole plan with validatePlan. A step that already ran keeps its parameters: new ones
 * would never be used, and the report would show parameters that did not produce its result. Reasons name the
 * step by its path and id.
 */
export function checkEditedPlan(
  before: Plan,
  after: Plan,
  request: PlanningRequest,
  registry: ToolRegistry,
): Result<Plan> {
  const steps: TaskStep[] = [];
  for (const [i, step] of after.steps.entries()) {
    const where = `plan.steps.${i} (${step.id})`;
    const old = before.steps.find((s) => s.id === step.id);
    // A step the plan did not have is checked as wholly new: its worker's grant and all of its parameters.
    const original = old ?? { ...step, workerType: "", tools: [], params: {}, description: "" };
    const touched =
      JSON.stringify([step.workerType, step.tools, step.params]) !==
      JSON.stringify([original.workerType, original.tools, original.params]);
    if (touched && old && old.status !== "pending") {
      return {
        ok: false,
        reason: `${where}: has already run (status ${old.status}) at this checkpoint, so a new worker, tool or parameters would never be used; fork from a checkpoint before it ran (see: history)`,
      };
    }
    const checked = checkEditedStep(step, original, registry);
    if (!checked.ok) return { ok: false, reason: `${where}: ${checked.reason}` };
    steps.push(checked.value);
  }
  const plan = { ...after, steps };
  try {
    validatePlan(plan, request, registry);
  } catch (e) {
    if (!CandorError.isInstance(e)) throw e;
    return { ok: false, reason: `plan: ${e.message}` };
  }
  return { ok: true, value: plan };
}
