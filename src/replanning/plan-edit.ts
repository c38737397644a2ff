import type { Plan, TaskStep } from "../domain/plan.js";
import { assignOrder } from "../planning/validate.js";

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
    steps.push(step.dependsOn.includes(oldId) ? { ...step, dependsOn: step.dependsOn.map((d) => (d === oldId ? replacement.id : d)) } : step);
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
      reset.has(s.id) && s.status !== "pending" ? { ...s, status: "pending" as const, result: null, attempts: 0, skipReason: null, skipCause: null } : s,
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
