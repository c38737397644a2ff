import type { ExecutionFeedback } from "../domain/feedback.js";
import type { Plan, TaskStep } from "../domain/plan.js";
import {
  applyFeedback,
  dependencyFailureFeedback,
  dependencyInputs,
  markDispatched,
  readySteps,
  settleBlockedSteps,
  type InputsOf,
  type Settlement,
} from "./schedule.js";

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
  onDispatched?: (step: TaskStep, plan: Plan) => void;
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
 * step that a strategy must recover first). The scheduling rules are schedule.ts's pure functions; this only
 * decides when to apply them. A failure does not stop independent branches: they run on, and the failure is
 * recovered when the pass ends.
 */
export async function runEagerly(initial: Plan, hooks: EagerHooks): Promise<EagerOutcome> {
  let plan = initial;
  const feedback: ExecutionFeedback[] = [];
  // Finished launches wait here until the loop takes them; `wake` resolves the loop's wait when one arrives.
  type Arrival = { id: string; feedback: ExecutionFeedback } | { id: string; error: unknown };
  const finished: Arrival[] = [];
  let wake: (() => void) | null = null;
  let inFlight = 0;
  const arrive = (arrival: Arrival) => {
    finished.push(arrival);
    wake?.();
  };

  for (;;) {
    const settled = settleBlockedSteps(plan, hooks.inputsOf);
    plan = settled.plan;
    if (settled.skipped.length > 0) {
      for (const { step, reason, dependencyFailure } of settled.skipped)
        if (dependencyFailure) feedback.push(dependencyFailureFeedback(step, reason));
      hooks.onSkipped?.(settled.skipped, plan);
    }
    const ready = readySteps(plan, hooks.inputsOf);
    if (ready.length > 0) {
      plan = markDispatched(
        plan,
        ready.map((s) => s.id),
        hooks.inputsOf,
      );
      const byId = new Map(plan.steps.map((s) => [s.id, s]));
      for (const { id } of ready) {
        const step = byId.get(id)!;
        hooks.onDispatched?.(step, plan);
        if (hooks.deferred(step)) continue;
        inFlight++;
        hooks.launch(step, dependencyInputs(plan, step)).then(
          (f) => arrive({ id, feedback: f }),
          (error: unknown) => arrive({ id, error }),
        );
      }
    }
    if (inFlight === 0) return { plan, feedback };
    while (finished.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    wake = null;
    // Everything that has arrived is folded in one outcome at a time, so each is reported on its own.
    for (const arrival of finished.splice(0)) {
      inFlight--;
      // A launch rejects only for a bug or a configuration error (a step failure is feedback): the pass stops.
      if ("error" in arrival) throw arrival.error;
      plan = applyFeedback(plan, [arrival.feedback]);
      feedback.push(arrival.feedback);
      hooks.onSettled?.(
        plan.steps.find((s) => s.id === arrival.id)!,
        arrival.feedback,
        plan,
      );
    }
  }
}
