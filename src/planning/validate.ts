import { CandorError, ErrorCode } from "../errors.js";
import { DEFAULT_STORAGE_BOUNDS, describeBound, howToSetBound } from "../domain/config.js";
import type { Plan, TaskStep } from "../domain/plan.js";
import type { PlanningRequest } from "../domain/request.js";
import type { ToolRegistry } from "../tools/registry.js";

/**
 * Seed 002's pre- and postconditions as pure functions. Each throws a CandorError whose message says what was
 * wrong and what to change; `validatePlan` runs them all in the order a reader would check them.
 */

/** PRE-PLAN-001: the request has an intent and sane limits. */
export function assertValidRequest(request: PlanningRequest): void {
  if (request.userIntent.trim().length === 0) {
    throw new CandorError(
      'The request is empty: say what you want done, e.g. "plan 3 days in Lisbon under $1500".',
      ErrorCode.INVALID_REQUEST,
    );
  }
}

/** POST-PLAN-001: at least one step, unique ids, every step names a worker. */
export function assertCompletePlan(plan: Pick<Plan, "steps">): void {
  if (plan.steps.length === 0) {
    throw new CandorError(
      "The plan has no steps. Rephrase the request or register a tool that can do it.",
      ErrorCode.NO_VALID_PLAN,
    );
  }
  const seen = new Set<string>();
  for (const step of plan.steps) {
    if (seen.has(step.id)) {
      throw new CandorError(
        `Two steps share the id "${step.id}". Give every step its own id.`,
        ErrorCode.PLAN_INVALID,
        { details: { stepId: step.id } },
      );
    }
    seen.add(step.id);
  }
}

/** POST-PLAN-002: dependencies reference existing steps. */
export function assertDependenciesExist(steps: readonly Pick<TaskStep, "id" | "dependsOn">[]): void {
  const ids = new Set(steps.map((s) => s.id));
  for (const step of steps) {
    for (const dep of step.dependsOn) {
      if (!ids.has(dep)) {
        throw new CandorError(
          `Step "${step.id}" depends on "${dep}", which is not in the plan. Remove the dependency or add the step.`,
          ErrorCode.PLAN_MISSING_DEPENDENCY,
          { details: { stepId: step.id, missing: dep } },
        );
      }
    }
  }
}

/** The first dependency cycle, as step ids from its start back to itself (e.g. [a, b, a]), or null. */
export function findCycle(steps: readonly Pick<TaskStep, "id" | "dependsOn">[]): string[] | null {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const state = new Map<string, "visiting" | "done">();
  const path: string[] = [];
  const visit = (id: string): string[] | null => {
    const mark = state.get(id);
    if (mark === "done") return null;
    if (mark === "visiting") return [...path.slice(path.indexOf(id)), id];
    state.set(id, "visiting");
    path.push(id);
    for (const dep of byId.get(id)?.dependsOn ?? []) {
      if (!byId.has(dep)) continue;
      const cycle = visit(dep);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(id, "done");
    return null;
  };
  for (const step of steps) {
    const cycle = visit(step.id);
    if (cycle) return cycle;
  }
  return null;
}

/** INV-PLAN-002: the dependency graph is acyclic; the error names the cycle. */
export function assertAcyclic(steps: readonly Pick<TaskStep, "id" | "dependsOn">[]): void {
  const cycle = findCycle(steps);
  if (cycle) {
    // Dependencies point backwards in time; print the cycle in execution order so it reads naturally.
    const forward = [...cycle].reverse();
    throw new CandorError(
      `Plan has a dependency cycle: ${forward.join(" → ")}. Remove one of these dependencies so the steps can run in order.`,
      ErrorCode.PLAN_CYCLE,
      { details: { cycle: forward } },
    );
  }
}

/** POST-PLAN-003: a step's dependencies come before it in `order`. */
export function assertLogicalOrder(steps: readonly Pick<TaskStep, "id" | "dependsOn" | "order">[]): void {
  const order = new Map(steps.map((s) => [s.id, s.order]));
  for (const step of steps) {
    for (const dep of step.dependsOn) {
      const depOrder = order.get(dep);
      if (depOrder !== undefined && depOrder >= step.order) {
        throw new CandorError(
          `Step "${step.id}" (order ${step.order}) depends on "${dep}" (order ${depOrder}), which would run after it. Renumber the steps so dependencies come first.`,
          ErrorCode.PLAN_ORDER,
          { details: { stepId: step.id, dependency: dep } },
        );
      }
    }
  }
}

/** Every step names a registered worker type, and every tool it lists exists and is granted to that worker. */
export function assertKnownReferences(steps: readonly TaskStep[], registry: ToolRegistry): void {
  for (const step of steps) {
    if (!registry.worker(step.workerType)) {
      throw new CandorError(
        `Step "${step.id}" uses worker type "${step.workerType}", which is not registered. Known worker types: ${[...registry.workers.keys()].join(", ")}.`,
        ErrorCode.PLAN_UNKNOWN_REFERENCE,
        { details: { stepId: step.id, workerType: step.workerType } },
      );
    }
    for (const tool of step.tools) {
      if (!registry.tool(tool)) {
        throw new CandorError(
          `Step "${step.id}" uses tool "${tool}", which is not registered. Known tools: ${[...registry.tools.keys()].join(", ")}.`,
          ErrorCode.PLAN_UNKNOWN_REFERENCE,
          { details: { stepId: step.id, tool } },
        );
      }
    }
  }
}

/**
 * A plan of `count` steps is within the request's maxSteps, or, when the request sets none, within the bound on steps
 * per plan (StorageBounds.maxPlanSteps: the registry's, as the app or the CLI set it, else the default): checked on
 * the raw count before any step is built, so a model's 5,000-step plan is refused in milliseconds instead of being
 * checkpointed (it took 250 s and 3.5 GB, and left a database whose thread list failed with "string or blob too big").
 */
export function assertPlanSize(
  count: number,
  request: PlanningRequest,
  maxPlanSteps: number = DEFAULT_STORAGE_BOUNDS.maxPlanSteps,
): void {
  const asked = request.constraints.maxSteps;
  if (asked !== undefined && count > asked) {
    throw new CandorError(
      `The plan needs ${count} steps but the limit is ${asked}. Raise maxSteps or ask for less.`,
      ErrorCode.INSUFFICIENT_RESOURCES,
      { details: { constraint: "maxSteps", limit: asked, actual: count } },
    );
  }
  if (asked === undefined && count > maxPlanSteps) {
    throw new CandorError(
      `The plan has ${count} steps, more than the ${describeBound("maxPlanSteps", maxPlanSteps)} a plan may have (maxPlanSteps, the bound on steps per plan when the request's constraints.maxSteps sets none; set by ${howToSetBound("maxPlanSteps")}). Nothing was run or stored; ask for less, split the request, or set constraints.maxSteps.`,
      ErrorCode.LIMIT_EXCEEDED,
      { details: { constraint: "maxPlanSteps", limit: maxPlanSteps, actual: count } },
    );
  }
}

/**
 * POST-PLAN-004: within maxSteps (else `maxPlanSteps`), timeoutMs and budget; the error says which limit and by how
 * much.
 */
export function assertWithinConstraints(
  plan: Pick<Plan, "steps" | "estimatedDurationMs" | "estimatedCost">,
  request: PlanningRequest,
  maxPlanSteps: number = DEFAULT_STORAGE_BOUNDS.maxPlanSteps,
): void {
  const c = request.constraints;
  assertPlanSize(plan.steps.length, request, maxPlanSteps);
  if (c.timeoutMs !== undefined && plan.estimatedDurationMs > c.timeoutMs) {
    throw new CandorError(
      `The plan is estimated to take ${Math.round(plan.estimatedDurationMs)} ms but the limit is ${c.timeoutMs} ms. Raise the time limit or simplify the request.`,
      ErrorCode.INSUFFICIENT_RESOURCES,
      { details: { constraint: "timeoutMs", limit: c.timeoutMs, actual: plan.estimatedDurationMs } },
    );
  }
  // Seed 002's budget is a token budget for the planner's own operations; tool costs count against it too.
  if (c.budget !== undefined && plan.estimatedCost > c.budget) {
    throw new CandorError(
      `The plan's own operations are estimated to cost ${plan.estimatedCost.toFixed(2)} but the budget is ${c.budget}. Increase the budget or simplify the request.`,
      ErrorCode.INSUFFICIENT_RESOURCES,
      { details: { constraint: "budget", limit: c.budget, actual: plan.estimatedCost } },
    );
  }
}

/**
 * Runs every check. Pass the registry to also check worker types and tools, and to hold the plan to the registry's
 * bound on steps per plan (without one, the default bound).
 */
export function validatePlan(plan: Plan, request: PlanningRequest, registry?: ToolRegistry): void {
  assertCompletePlan(plan);
  assertDependenciesExist(plan.steps);
  assertAcyclic(plan.steps);
  assertLogicalOrder(plan.steps);
  if (registry) assertKnownReferences(plan.steps, registry);
  assertWithinConstraints(plan, request, registry?.bounds.maxPlanSteps);
}

/** Longest dependency chain of estimated durations: what a parallel executor needs at best. */
export function criticalPathMs<S extends Pick<TaskStep, "id" | "dependsOn" | "estimates">>(
  steps: readonly S[],
  /** Only these steps count (the rest, and edges to them, are left out), e.g. the steps still to run. */
  counts: (step: S) => boolean = () => true,
): number {
  const byId = new Map<string, S>();
  for (const s of steps) if (counts(s)) byId.set(s.id, s);
  const memo = new Map<string, number>();
  const finish = (id: string, guard: Set<string>): number => {
    const cached = memo.get(id);
    if (cached !== undefined) return cached;
    const step = byId.get(id);
    if (!step || guard.has(id)) return 0;
    guard.add(id);
    let start = 0;
    for (const d of step.dependsOn) start = Math.max(start, finish(d, guard));
    guard.delete(id);
    const value = start + step.estimates.durationMs;
    memo.set(id, value);
    return value;
  };
  let longest = 0;
  const guard = new Set<string>();
  for (const id of byId.keys()) longest = Math.max(longest, finish(id, guard));
  return longest;
}

/** Recomputes `order` from the dependencies (a topological layering), so plans from models need not number steps. */
export function assignOrder<S extends Pick<TaskStep, "id" | "dependsOn" | "order">>(steps: readonly S[]): S[] {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const depth = new Map<string, number>();
  const level = (id: string, guard: Set<string>): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (guard.has(id)) return 0;
    guard.add(id);
    const deps = byId.get(id)?.dependsOn.filter((d) => byId.has(d)) ?? [];
    const value = deps.length === 0 ? 0 : 1 + Math.max(...deps.map((d) => level(d, guard)));
    depth.set(id, value);
    return value;
  };
  const layered = steps.map((s, i) => ({ s, l: level(s.id, new Set()), i }));
  layered.sort((a, b) => a.l - b.l || a.i - b.i);
  return layered.map(({ s }, i) => ({ ...s, order: i + 1 }));
}
