import type { ExecutionFeedback } from "../domain/feedback.js";
import type { MissingInput, Plan, TaskStep } from "../domain/plan.js";
import type { StepInputs } from "../tools/registry.js";
import { evaluateCondition } from "./condition.js";

/**
 * The scheduling rules of EXECUTE as pure functions over a plan: fold worker feedback into step statuses,
 * settle steps that cannot run (dependency failed, condition false), and pick the steps ready to dispatch.
 */

/**
 * What a step's tools consume, required and optional (`ToolRegistry.inputsOf`). The scheduler's only view of
 * tools: with it, a step runs although a dependency that provides only optional inputs was skipped.
 */
export type InputsOf = (step: TaskStep) => StepInputs;

/** Every input required: a skipped dependency always blocks (plans checked without a registry). */
const ALL_REQUIRED: InputsOf = () => ({ required: [], optional: [] });

const isSettled = (s: TaskStep) => s.status === "done" || s.status === "skipped";

/** The input names a dependency provides a step: its expected outputs, and its id (see dependencyInputs). */
const provided = (dep: TaskStep) => [dep.id, ...dep.expectedOutputs];

/**
 * Whether a step can run without this dependency: everything it would have provided that the step consumes is an
 * optional input. A dependency providing nothing the step names (an ordering edge) counts as required, as before.
 */
export function isOptionalDependency(dep: TaskStep, inputs: StepInputs): boolean {
  const used = provided(dep).filter((name) => inputs.required.includes(name) || inputs.optional.includes(name));
  return used.length > 0 && used.every((name) => inputs.optional.includes(name));
}

/**
 * The skipped dependencies that stop a step needing success: all of them, less those providing only optional
 * inputs. A fallback (condition `failure`) still sees every skipped dependency: it exists for exactly that.
 */
function blockingSkips(step: TaskStep, deps: readonly TaskStep[], inputsOf: InputsOf): TaskStep[] {
  const skipped = deps.filter((d) => d.status === "skipped");
  if (step.condition.type !== "success") return skipped;
  const inputs = inputsOf(step);
  return skipped.filter((d) => !isOptionalDependency(d, inputs));
}

/** Results of the plan's finished steps, by step id (what conditions and synthesis see). */
export function resultsById(plan: Plan): Record<string, unknown> {
  return Object.fromEntries(plan.steps.filter((s) => s.status === "done").map((s) => [s.id, s.result]));
}

export interface Settlement {
  plan: Plan;
  /** Steps skipped now, with the reason, so execute can record DEPENDENCY_FAILURE feedback and tell the user. */
  skipped: { step: TaskStep; reason: string; dependencyFailure: boolean }[];
}

/** What a pending step can do now: wait for a dependency, run, or be skipped (with why). */
export type StepVerdict =
  { kind: "wait" } | { kind: "ready" } | { kind: "skip"; reason: string; dependencyFailure: boolean };

/**
 * The one rule settleBlockedSteps and readySteps share, for one pending step: it waits while a dependency is
 * unsettled (a `failed` one is being recovered); once all are settled it runs if its condition holds over the
 * results so far (a skipped dependency providing only optional inputs does not count as failed), else it is
 * skipped. `results` is asked for only when a condition needs them.
 */
export function judgeStep(
  step: TaskStep,
  byId: ReadonlyMap<string, TaskStep>,
  results: () => Record<string, unknown>,
  inputsOf: InputsOf = ALL_REQUIRED,
): StepVerdict {
  if (step.status !== "pending") return { kind: "wait" };
  const deps = step.dependsOn.map((d) => byId.get(d)).filter((d): d is TaskStep => d !== undefined);
  if (!deps.every(isSettled)) return { kind: "wait" };
  const failedDeps = blockingSkips(step, deps, inputsOf);
  const verdict = evaluateCondition(step.condition, {
    anyDependencyFailed: failedDeps.length > 0,
    get results() {
      return results();
    },
  });
  if (verdict.run) return { kind: "ready" };
  const dependencyFailure = step.condition.type === "success" && failedDeps.length > 0;
  const reason = dependencyFailure
    ? `Dependency ${failedDeps.map((d) => d.id).join(", ")} failed, so this step could not run`
    : verdict.reason;
  return { kind: "skip", reason, dependencyFailure };
}

/** A pending step marked skipped, with why. */
export function skippedStep(step: TaskStep, reason: string, dependencyFailure: boolean): TaskStep {
  return { ...step, status: "skipped" as const, skipReason: reason, skipCause: verdictCause(dependencyFailure) };
}

/**
 * Skips pending steps that can no longer run: a dependency was skipped and the step needs success (unless that
 * dependency provides only optional inputs: then the step runs without them), or its condition is false once its
 * dependencies are settled. Repeats until nothing changes (skips cascade). A dependency that is `failed` is still
 * being recovered, so its dependents wait rather than skip, whether the input is optional or not.
 */
export function settleBlockedSteps(plan: Plan, inputsOf: InputsOf = ALL_REQUIRED): Settlement {
  let steps = plan.steps;
  const skipped: Settlement["skipped"] = [];
  for (let changed = true; changed;) {
    changed = false;
    const byId = new Map(steps.map((s) => [s.id, s]));
    const results = lazyResults(() => ({ ...plan, steps }));
    steps = steps.map((step) => {
      const verdict = judgeStep(step, byId, results, inputsOf);
      if (verdict.kind !== "skip") return step;
      changed = true;
      skipped.push({ step, reason: verdict.reason, dependencyFailure: verdict.dependencyFailure });
      return skippedStep(step, verdict.reason, verdict.dependencyFailure);
    });
  }
  return { plan: { ...plan, steps }, skipped };
}

/** resultsById, computed once and only if asked for. */
function lazyResults(plan: () => Plan): () => Record<string, unknown> {
  let results: Record<string, unknown> | null = null;
  return () => (results ??= resultsById(plan()));
}

function verdictCause(dependencyFailure: boolean): TaskStep["skipCause"] {
  return dependencyFailure ? "dependency_failed" : "condition_false";
}

/**
 * Steps whose result is missing from the answer, whole or in part: failed, given up on, blocked by a missing
 * dependency, or done with a result that names its limits (a cut read is real, but it does not answer as if whole).
 */
export function missingSteps(plan: Plan): TaskStep[] {
  // A limited result that a later step worked from is that step's to answer for: it carries the limits it could
  // not make up for (a count streams the whole file a read had cut), so only the last limited result counts.
  const usedByDone = new Set(plan.steps.filter((s) => s.status === "done").flatMap((s) => s.dependsOn));
  return plan.steps.filter(
    (s) =>
      s.status === "failed" ||
      (s.status === "skipped" && s.skipCause !== "condition_false") ||
      (s.status === "done" && s.limits.length > 0 && !usedByDone.has(s.id)),
  );
}

/** Why a step is missing from the answer, in plain language (see missingSteps). */
export function whyMissing(s: TaskStep): string {
  if (s.status === "done") return `its result is not whole: ${s.limits.join("; ")}`;
  if (s.status === "failed") return "failed";
  return `was skipped: ${s.skipReason ?? "no reason given"}`;
}

/** The record of a step that never ran because a dependency's result is missing (seed 000's DEPENDENCY_FAILURE). */
export function dependencyFailureFeedback(step: TaskStep, reason: string): ExecutionFeedback {
  return {
    taskId: step.id,
    feedbackType: "DEPENDENCY_FAILURE",
    outputs: {},
    errors: [reason],
    failureClass: "dependency_failed",
    durationMs: 0,
    cost: 0,
    at: new Date().toISOString(),
    attempt: 0,
    dispatch: step.dispatches,
    workerType: step.workerType,
    tool: step.tools[0] ?? null,
    params: step.params,
    attempts: [],
    errorType: null,
    trace: null,
    evidence: null,
    limits: [],
  };
}

/** Pending steps whose dependencies are settled and whose condition holds: they can all run at once. */
export function readySteps(plan: Plan, inputsOf: InputsOf = ALL_REQUIRED): TaskStep[] {
  const byId = new Map(plan.steps.map((s) => [s.id, s]));
  const results = lazyResults(() => plan);
  return plan.steps.filter(
    (step) => step.dependsOn.every((d) => byId.has(d)) && judgeStep(step, byId, results, inputsOf).kind === "ready",
  );
}

/**
 * The optional inputs a step would run without now, each with why: the dependency providing it was skipped (its
 * own skip reason), or no dependency provides it at all. Empty when it has them all.
 */
export function missingInputs(
  plan: Plan | ReadonlyMap<string, TaskStep>,
  step: TaskStep,
  inputsOf: InputsOf = ALL_REQUIRED,
): MissingInput[] {
  const byId = "steps" in plan ? new Map(plan.steps.map((s) => [s.id, s])) : plan;
  const deps = step.dependsOn.map((d) => byId.get(d)).filter((d): d is TaskStep => d !== undefined);
  return inputsOf(step).optional.flatMap((input): MissingInput[] => {
    const from = deps.find((d) => provided(d).includes(input));
    // An optional input no step of the plan provides is one the plan chose not to have (the request ruled it out,
    // and the understanding record says so): not missing.
    if (!from) return [];
    if (from.status === "done") return [];
    const root = rootSkip(byId, from);
    const reason = root.skipReason ?? `${root.id} did not finish`;
    return [
      { input, from: from.id, reason: root === from ? reason : `${reason} (${root.id}, so ${from.id} could not run)` },
    ];
  });
}

/**
 * The skip a cascade started from: a step skipped only because a dependency was is no reason a person can act
 * on, so the reason given is the first skipped step up its chain that was given up on (or skipped) itself.
 */
function rootSkip(byId: ReadonlyMap<string, TaskStep>, step: TaskStep, seen = new Set<string>()): TaskStep {
  if (step.skipCause !== "dependency_failed" || seen.has(step.id)) return step;
  seen.add(step.id);
  const upstream = step.dependsOn.map((d) => byId.get(d)).find((s) => s?.status === "skipped");
  return upstream ? rootSkip(byId, upstream, seen) : step;
}

/**
 * Outputs of a step's dependencies, keyed by each dependency's output names (and its step id). An output produced
 * by several dependencies (a flight per leg of a multi-city trip) arrives as the list of their results, in order.
 */
export function dependencyInputs(plan: Plan | ReadonlyMap<string, TaskStep>, step: TaskStep): Record<string, unknown> {
  const inputs: Record<string, unknown> = {};
  const byId = "steps" in plan ? new Map(plan.steps.map((s) => [s.id, s])) : plan;
  const done = step.dependsOn
    .map((id) => byId.get(id))
    .filter((d): d is TaskStep => d !== undefined && d.status === "done");
  for (const dep of done) {
    inputs[dep.id] = dep.result;
    for (const name of dep.expectedOutputs) {
      const producers = done.filter((d) => d.expectedOutputs.includes(name));
      inputs[name] = producers.length > 1 ? producers.map((d) => d.result) : dep.result;
    }
  }
  return inputs;
}

/**
 * Marks steps as running and counts the dispatch, so their feedback can be matched to this run of them; each
 * records the optional inputs it runs without, so its tool, its feedback and the answer can say what is missing.
 */
export function markDispatched(plan: Plan, ids: readonly string[], inputsOf: InputsOf = ALL_REQUIRED): Plan {
  const byId = new Map(plan.steps.map((s) => [s.id, s]));
  return { ...plan, steps: plan.steps.map((s) => (ids.includes(s.id) ? dispatched(s, byId, inputsOf) : s)) };
}

/** A step marked running for one more dispatch, with the optional inputs it runs without. */
export function dispatched(step: TaskStep, byId: ReadonlyMap<string, TaskStep>, inputsOf: InputsOf): TaskStep {
  return {
    ...step,
    status: "running" as const,
    dispatches: step.dispatches + 1,
    missingInputs: missingInputs(byId, step, inputsOf),
  };
}

/**
 * The pending steps of `plan`, in the order EXECUTE calls their tasks: by depth among the pending steps (0: no
 * pending dependency; else one more than its deepest pending dependency), then plan order. A task's identity is
 * its place in this order, so it must depend on the plan alone — never on which step finished first — or a resumed
 * pass would match saved results to the wrong steps. By depth, not plan order alone, because a ready step's task
 * is called only after every task before it: in plan order, a step ready at the start behind a long chain (c1→…→c5,
 * then d1) had the whole chain's tasks made first, each one a LangGraph task to schedule before the first tool
 * started. By depth, the steps ready at the start come first.
 */
export function callOrder(plan: Plan): string[] {
  const pending = new Map(plan.steps.filter((s) => s.status === "pending").map((s) => [s.id, s]));
  const depth = new Map<string, number>();
  const depthOf = (id: string, seen: ReadonlySet<string>): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    // A cycle cannot pass plan validation; if one did, its steps never become ready, and any order will do.
    if (seen.has(id)) return 0;
    const inner = new Set(seen).add(id);
    const deps = pending.get(id)!.dependsOn.filter((d) => pending.has(d));
    const d = deps.length === 0 ? 0 : 1 + Math.max(...deps.map((dep) => depthOf(dep, inner)));
    depth.set(id, d);
    return d;
  };
  const ids = [...pending.keys()];
  const index = new Map(ids.map((id, i) => [id, i]));
  return ids
    .map((id) => ({ id, depth: depthOf(id, new Set()) }))
    .sort((a, b) => a.depth - b.depth || index.get(a.id)! - index.get(b.id)!)
    .map((s) => s.id);
}

/**
 * How far ahead of the running steps EXECUTE may make tasks: fed each step that starts ("running") or ends, it
 * answers the furthest position in `order` (callOrder's) whose step can start next — pending, every dependency
 * done or running — or -1. Only the dependents of the step just fed are looked at, so a pass costs O(edges).
 */
export function lookahead(plan: Plan, order: readonly string[]): (id: string, status: TaskStep["status"]) => number {
  const byId = new Map(plan.steps.map((s) => [s.id, s]));
  const status = new Map(plan.steps.map((s) => [s.id, s.status]));
  const position = new Map(order.map((id, i) => [id, i]));
  const dependents = new Map<string, string[]>();
  for (const s of plan.steps)
    for (const d of s.dependsOn) (dependents.get(d) ?? dependents.set(d, []).get(d)!).push(s.id);
  const underway = (id: string) => status.get(id) === "done" || status.get(id) === "running";
  let furthest = -1;
  return (id, now) => {
    status.set(id, now);
    for (const next of dependents.get(id) ?? []) {
      const at = position.get(next);
      if (at === undefined || at <= furthest || status.get(next) !== "pending") continue;
      if (byId.get(next)!.dependsOn.every(underway)) furthest = at;
    }
    return furthest;
  };
}
