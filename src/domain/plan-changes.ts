import { z } from "zod";
import { CandorError, ErrorCode } from "../errors.js";
import { Plan, TaskStep } from "./plan.js";

/**
 * What a revision changes in a plan: the steps it adds or changes, the order of the revised plan's steps, and the
 * plan-level fields that differ (its confidence, reasons). `next` carries this from select_strategy to the strategy
 * node rather than the whole revised plan, so a recovery in a plan of a thousand steps checkpoints the few it
 * touched, not the thousand twice.
 */
const PLAN_FIELDS = Object.keys(Plan.shape).filter((k) => k !== "steps") as [keyof Plan, ...(keyof Plan)[]];

export const PlanChanges = z.object({
  /**
   * The plan-level fields the revision changed, as the revised plan has them. Keyed by Plan's own field names, each
   * value as the revised plan holds it: not Plan's schema made partial, whose defaults would fill in the fields the
   * revision left alone and overwrite them when applied.
   */
  fields: z.partialRecord(z.enum(PLAN_FIELDS), z.unknown()),
  /** The steps the revision added or changed, as the revised plan has them. */
  steps: z.array(TaskStep),
  /** Every step id of the revised plan, in its order: a step of the plan before that is not here was removed. */
  order: z.array(z.string()).min(1),
});
export type PlanChanges = z.infer<typeof PlanChanges>;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** What turns `before` into `after`: `withChanges(before, planChanges(before, after))` is `after`. */
export function planChanges(before: Plan, after: Plan): PlanChanges {
  const old = new Map(before.steps.map((s) => [s.id, s]));
  const { steps: _steps, ...afterFields } = after;
  const fields = Object.fromEntries(
    Object.entries(afterFields).filter(([key, value]) => !same(value, before[key as keyof Plan])),
  ) as PlanChanges["fields"];
  return {
    fields,
    steps: after.steps.filter((s) => !same(s, old.get(s.id))),
    order: after.steps.map((s) => s.id),
  };
}

/**
 * `plan` with `changes` applied.
 *
 * @throws CandorError INVALID_DECISION when the changes keep a step the plan does not have: they were made for
 *   another plan (an edited state), and applying them would invent a step.
 */
export function withChanges(plan: Plan, changes: PlanChanges): Plan {
  const changed = new Map(changes.steps.map((s) => [s.id, s]));
  const current = new Map(plan.steps.map((s) => [s.id, s]));
  const steps = changes.order.map((id) => {
    const step = changed.get(id) ?? current.get(id);
    if (!step)
      throw new CandorError(
        `The revision keeps step ${id}, which plan ${plan.planId} does not have: it was made for another plan, so it is not applied.`,
        ErrorCode.INVALID_DECISION,
      );
    return step;
  });
  return { ...plan, ...(changes.fields as Partial<Plan>), steps };
}
