import { StepDefinition, StepRun, type Plan, type PlanDefinition, type PlanRuns, type TaskStep } from "./plan.js";
import type { ExecutionFeedback } from "./feedback.js";

/*
 * The state keeps a step's definition (`plan`) and its run-state (`runs`) apart, so a node that only runs steps
 * writes their run-state, not the plan again, and a reader of a checkpoint sees what was decided apart from what
 * happened. Code reads the two joined (`planView`), as a `Plan`; a node turns the plan it ends with back into
 * writes with `planWrites`.
 */

const RUN_KEYS = Object.keys(StepRun.shape) as (keyof StepRun)[];
const DEFINITION_KEYS = Object.keys(StepDefinition.shape) as (keyof StepDefinition)[];

/** A step that has not run: StepRun's defaults, made fresh each time (its arrays are never shared). */
function notRun(): StepRun {
  return {
    status: "pending",
    result: null,
    attempts: 0,
    dispatches: 0,
    skipReason: null,
    skipCause: null,
    missingInputs: [],
    limits: [],
  };
}

/** The named fields of a step, in that order: its run-state (RUN_KEYS) or its definition (DEFINITION_KEYS). */
function pick<K extends keyof TaskStep>(step: Partial<TaskStep>, keys: readonly K[]): Pick<TaskStep, K> {
  const out = {} as Record<K, unknown>;
  for (const key of keys) out[key] = step[key];
  return out as Pick<TaskStep, K>;
}

/** A plan as the state stores it: without its steps' run-state. */
export function definitionOf(plan: Plan): PlanDefinition {
  return { ...plan, steps: plan.steps.map((s) => pick(s, DEFINITION_KEYS)) };
}

/** The run-state of every step of a plan, as the state stores it. */
export function runsOf(plan: Plan): PlanRuns {
  return { planId: plan.planId, steps: Object.fromEntries(plan.steps.map((s) => [s.id, pick(s, RUN_KEYS)])) };
}

/**
 * A plan's definition joined with its run-state: what every function over a plan reads. A step with no run-state
 * for this plan has not run; a plan from a checkpoint written before the two were apart carries its run-state in
 * its steps, and that is what it is read with.
 */
export function planView(definition: PlanDefinition | Plan, runs: PlanRuns | null | undefined): Plan {
  const own = runs && runs.planId === definition.planId ? runs.steps : undefined;
  return { ...definition, steps: definition.steps.map((step) => joined(step, own?.[step.id])) };
}

/**
 * One step of a view, its fields in the order TaskStep's schema gives them (definition, then run-state): every step
 * object of a run then has one shape, which the per-step loops over a large plan (progress, scheduling) rely on to
 * stay fast. Without run-state of its own, a step uses what it carries (a plan from before the split) or has not run.
 */
function joined(step: StepDefinition | TaskStep, run: StepRun | undefined): TaskStep {
  const out = {} as Record<string, unknown>;
  const carried = step as Partial<TaskStep>;
  const fallback = run ? undefined : notRun();
  for (const key of DEFINITION_KEYS) out[key] = step[key];
  for (const key of RUN_KEYS) out[key] = run ? run[key] : (carried[key] ?? fallback![key]);
  return out as TaskStep;
}

/** The state's two plan fields (or a checkpoint's values). */
export interface PlanState {
  plan: PlanDefinition | Plan | null;
  runs?: PlanRuns | null;
}

// A state's view is read by its node and by the router after it; it is the same while the two values are.
const views = new WeakMap<object, { runs: PlanRuns | null | undefined; view: Plan }>();

/** The plan of a state (or a checkpoint's values), joined with its run-state; null before a plan is made. */
export function planOf(state: PlanState): Plan | null {
  const { plan, runs } = state;
  if (!plan) return null;
  const cached = views.get(plan);
  if (cached && cached.runs === runs) return cached.view;
  const view = planView(plan, runs);
  views.set(plan, { runs, view });
  return view;
}

/** The state's plan fields for a plan that was written whole (a new plan, or a checkpoint edited by a person). */
export function planFields(plan: Plan): { plan: PlanDefinition; runs: PlanRuns } {
  return { plan: definitionOf(plan), runs: { ...runsOf(plan), whole: true } };
}

/**
 * What a node writes when it ends with `after`, having started from `state` (whose plan it read with `planOf`): the
 * whole plan when its steps were revised; the definition when only the plan's own fields changed (a new
 * confidence); the run-state of the steps whose run changed — nothing when nothing did.
 * Steps are compared field by field, by reference first: a function that changes a step's status copies the step,
 * not its definition's arrays, so the common case costs a few comparisons per step.
 */
export function planWrites(state: PlanState, after: Plan): { plan?: PlanDefinition; runs?: PlanRuns } {
  const before = planOf(state);
  if (!before || before.planId !== after.planId) return planFields(after);
  const writes: { plan?: PlanDefinition; runs?: PlanRuns } = {};
  const steps = sameSteps(before, after);
  if (!steps || !samePlanFields(before, after)) {
    // New or revised steps are written whole, every step's run-state with them (a step the revision dropped
    // leaves none behind), and so is any new definition of a plan stored before the two were apart, whose steps
    // carried their run-state with them.
    if (!steps || state.plan!.steps.some((s) => "status" in s)) return planFields(after);
    writes.plan = definitionOf(after);
  }
  const previous = new Map(before.steps.map((s) => [s.id, s]));
  const changed: Record<string, StepRun> = {};
  let any = false;
  for (const step of after.steps) {
    const was = previous.get(step.id);
    if (was && RUN_KEYS.every((k) => same(was[k], step[k]))) continue;
    changed[step.id] = pick(step, RUN_KEYS);
    any = true;
  }
  if (any) writes.runs = { planId: after.planId, steps: changed };
  return writes;
}

/** The plan's own fields (objective, confidence…) are the same. */
function samePlanFields(a: Plan, b: Plan): boolean {
  if (Object.keys(a).length !== Object.keys(b).length) return false;
  return (Object.keys(b) as (keyof Plan)[]).every((key) => key === "steps" || same(a[key], b[key]));
}

/** The same steps, in the same order, with the same definitions. */
function sameSteps(a: Plan, b: Plan): boolean {
  if (a.steps.length !== b.steps.length) return false;
  return b.steps.every((step, i) => {
    const was = a.steps[i]!;
    return was === step || DEFINITION_KEYS.every((k) => same(was[k], step[k]));
  });
}

/** Equal values: the same reference, or the same JSON (values in a plan are JSON). */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The state's `runs` reducer: writes for the same plan are merged step by step; a write for another plan, or one
 * written with the plan whole, replaces them. A left fold, so the result does not depend on how writes are batched
 * (a DeltaValue's reducer must not).
 */
export function mergeRuns(current: PlanRuns | null, writes: readonly PlanRuns[]): PlanRuns | null {
  return writes.reduce<PlanRuns | null>(
    (runs, w) =>
      runs?.planId === w.planId && !w.whole ? { planId: w.planId, steps: { ...runs.steps, ...w.steps } } : w,
    current,
  );
}

/**
 * The feedback a pass keeps in the state: a success's result is already the step's run-state (`runs`), so it is not
 * stored a second time in its feedback (each result is stored once). Only where the run-state holds that very
 * result: the step is done by this dispatch. Failures keep their outputs, which recovery reads; so does feedback
 * that is the only record of its result (a worker subgraph's, which is how its result reaches EXECUTE).
 * `resultOfFeedback` reads a dispatch's result either way.
 */
export function feedbackToStore(feedback: readonly ExecutionFeedback[], plan: Plan): ExecutionFeedback[] {
  const byId = new Map(plan.steps.map((s) => [s.id, s]));
  return feedback.map((f) => {
    if (!("result" in f.outputs) || !holdsResultOf(byId.get(f.taskId), f)) return f;
    const { result: _stored, ...outputs } = f.outputs;
    return { ...f, outputs };
  });
}

/** A dispatch's result: in its feedback, or (stored once) in the run-state of the step it made done. */
export function resultOfFeedback(f: ExecutionFeedback, step: TaskStep | undefined): unknown {
  if ("result" in f.outputs) return f.outputs.result;
  return step && holdsResultOf(step, f) ? step.result : undefined;
}

const holdsResultOf = (step: TaskStep | undefined, f: ExecutionFeedback): step is TaskStep =>
  step !== undefined &&
  step.status === "done" &&
  step.dispatches === f.dispatch &&
  (f.feedbackType === "SUCCESS" || f.feedbackType === "PARTIAL_SUCCESS") &&
  (!("result" in f.outputs) || step.result === f.outputs.result);
