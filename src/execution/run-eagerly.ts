import type { ExecutionFeedback } from "../domain/feedback.js";
import type { Plan, TaskStep } from "../domain/plan.js";
import {
  dependencyFailureFeedback,
  dependencyInputs,
  dispatched,
  judgeStep,
  skippedStep,
  type InputsOf,
  type Settlement,
} from "../planning/schedule.js";
import { settleStep } from "./evidence.js";

export interface EagerHooks {
  inputsOf: InputsOf;
  /** Runs a dispatched step (status running, dispatch counted) with its dependencies' outputs; never rejects for a step failure. */
  launch: (step: TaskStep, inputs: Record<string, unknown>) => Promise<ExecutionFeedback>;
  /**
   * Steps that must not run here (a call that needs a person's approval goes to the worker subgraph's gate): they
   * are dispatched and left `running`, and what depends on them waits for the next pass.
   */
  deferred: (step: TaskStep) => boolean;
  /** Called as each step is dispatched, before it starts. */
  onDispatched?: (step: TaskStep) => void;
  /** Called the moment a step's outcome is known, with the plan that includes it. */
  onSettled?: (step: TaskStep, feedback: ExecutionFeedback, plan: Plan) => void;
  /** Called when steps are skipped (a dependency failed for good, a condition is false), with the plan after. */
  onSkipped?: (skipped: Settlement["skipped"], plan: Plan) => void;
}

export interface EagerOutcome {
  /** The plan when nothing more can start: every launched step done or failed, deferred steps still running. */
  plan: Plan;
  /** The outcomes of this pass, in the order they were known (DEPENDENCY_FAILURE records for skipped steps too). */
  feedback: ExecutionFeedback[];
}

/**
 * Runs a plan eagerly: a step starts the moment its last dependency settles, never waiting for a sibling, and the
 * pass ends when nothing more can start (every step finished, failed, skipped, deferred, or waiting on a failed
 * step that a strategy must recover first). The rules are schedule.ts's (judgeStep: the same ones
 * settleBlockedSteps and readySteps apply to a whole plan); this decides when to apply them, and applies them
 * only to the steps an outcome can change — the dependents of what just settled — so a pass over n steps costs
 * O(n + edges) judgements, not O(n²). A failure does not stop independent branches: they run on, and the failure
 * is recovered when the pass ends.
 */
export async function runEagerly(initial: Plan, hooks: EagerHooks): Promise<EagerOutcome> {
  // The working plan: a map in plan order, changed in place; `view()` is the Plan the hooks and the result see.
  const steps = new Map(initial.steps.map((s) => [s.id, s]));
  const view = (): Plan => ({ ...initial, steps: [...steps.values()] });
  const order = new Map(initial.steps.map((s, i) => [s.id, i]));
  const dependents = new Map<string, string[]>();
  for (const s of initial.steps) for (const d of s.dependsOn) dependents.set(d, [...(dependents.get(d) ?? []), s.id]);
  const results: Record<string, unknown> = {};
  for (const s of initial.steps) if (s.status === "done") results[s.id] = s.result;

  const feedback: ExecutionFeedback[] = [];
  // Finished launches wait here until the loop takes them; `wake` resolves the loop's wait when one arrives.
  type Arrival = { id: string; feedback: ExecutionFeedback } | { id: string; error: unknown };
  const finished: Arrival[] = [];
  let wake: (() => void) | null = null;
  let underWay = 0;
  const arrive = (arrival: Arrival) => {
    finished.push(arrival);
    wake?.();
  };

  // Steps whose verdict may have changed; at first every step.
  let candidates = new Set(initial.steps.map((s) => s.id));
  for (;;) {
    // Settle, then dispatch, in plan order; a skip makes its dependents candidates again (skips cascade).
    const skipped: Settlement["skipped"] = [];
    const ready: TaskStep[] = [];
    while (candidates.size > 0) {
      const batch = [...candidates].sort((a, b) => order.get(a)! - order.get(b)!);
      candidates = new Set();
      for (const id of batch) {
        const step = steps.get(id)!;
        const verdict = judgeStep(step, steps, () => results, hooks.inputsOf);
        if (verdict.kind === "ready" && step.dependsOn.every((d) => steps.has(d))) ready.push(step);
        if (verdict.kind !== "skip") continue;
        steps.set(id, skippedStep(step, verdict.reason, verdict.dependencyFailure));
        skipped.push({ step, reason: verdict.reason, dependencyFailure: verdict.dependencyFailure });
        for (const next of dependents.get(id) ?? []) candidates.add(next);
      }
    }
    if (skipped.length > 0) {
      for (const { step, reason, dependencyFailure } of skipped)
        if (dependencyFailure) feedback.push(dependencyFailureFeedback(step, reason));
      hooks.onSkipped?.(skipped, view());
    }
    for (const judged of ready) {
      // Its dependencies are settled, so nothing later in the scan changed what it runs without.
      const step = dispatched(judged, steps, hooks.inputsOf);
      steps.set(step.id, step);
      hooks.onDispatched?.(step);
      if (hooks.deferred(step)) continue;
      underWay++;
      const { id } = step;
      hooks.launch(step, dependencyInputs(steps, step)).then(
        (f) => arrive({ id, feedback: f }),
        (error: unknown) => arrive({ id, error }),
      );
    }
    if (underWay === 0) return { plan: view(), feedback };
    while (finished.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    wake = null;
    // Everything that has arrived is folded in one outcome at a time, so each is reported on its own.
    for (const arrival of finished.splice(0)) {
      underWay--;
      // A launch rejects only for a bug or a configuration error (a step failure is feedback): the pass stops.
      if ("error" in arrival) throw arrival.error;
      const step = settleStep(steps.get(arrival.id)!, arrival.feedback);
      steps.set(step.id, step);
      if (step.status === "done") results[step.id] = step.result;
      feedback.push(arrival.feedback);
      hooks.onSettled?.(step, arrival.feedback, view());
      for (const next of dependents.get(step.id) ?? []) candidates.add(next);
    }
  }
}
