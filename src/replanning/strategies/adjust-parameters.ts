import type { TaskStep } from "../../domain/plan.js";
import { resetForRerun } from "../plan-edit.js";
import { revise, type Strategy } from "./types.js";

/** Facts a constraint violation carries: the limit, the actual value and what each output contributed. */
export interface ViolationFacts {
  total: number;
  limit: number;
  breakdown: Record<string, number>;
}

/** Reads a violation's facts from a failure's outputs (total/budget/breakdown, or actual/limit). */
export function violationFacts(outputs: Record<string, unknown>): ViolationFacts | null {
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
  const total = num(outputs.total) ?? num(outputs.actual) ?? num(outputs.total_cost);
  const limit = num(outputs.budget) ?? num(outputs.limit);
  const raw = outputs.breakdown;
  if (total === null || limit === null || !raw || typeof raw !== "object") return null;
  const breakdown: Record<string, number> = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    const n = num(v);
    if (n !== null && n > 0) breakdown[k] = n;
  }
  return Object.keys(breakdown).length > 0 ? { total, limit, breakdown } : null;
}

const money = (n: number) => `$${Math.round(n)}`;

/**
 * ADJUST_PARAMETERS (seed 000 scenario 6): a result broke a limit. The steps that caused it are found from the
 * violation's breakdown (each part is matched to the step that produced it), the largest contributors whose
 * tool can be steered get a cap (their tool's `costCapParam`) that shares the overage in proportion to what
 * they spent, and they re-run together with the check that failed. Confidence −0.08.
 */
export const adjustParameters: Strategy = (input) => {
  const { plan, failure, registry } = input;
  const facts = violationFacts(failure.outputs);
  if (!facts) return { applies: false, reason: `The violation in ${failure.step.id} did not say what each part cost, so no step can be adjusted` };
  const overage = facts.total - facts.limit;
  if (overage <= 0) return { applies: false, reason: `The reported total ${money(facts.total)} is within the limit ${money(facts.limit)}` };

  const contributors: { step: TaskStep; amount: number; param: string }[] = [];
  for (const [output, amount] of Object.entries(facts.breakdown)) {
    const step = plan.steps.find((s) => s.status === "done" && s.expectedOutputs.includes(output));
    const param = step ? registry.tool(step.tools[0] ?? "")?.costCapParam : undefined;
    if (step && param) contributors.push({ step, amount, param });
  }
  contributors.sort((a, b) => b.amount - a.amount);
  // The two largest parts (seed 000: flight and hotel) usually hold the room to save; more would churn the plan.
  const chosen = contributors.slice(0, 2);
  if (chosen.length === 0) return { applies: false, reason: `None of ${Object.keys(facts.breakdown).join(", ")} comes from a step whose cost can be capped` };

  const share = chosen.reduce((sum, c) => sum + c.amount, 0);
  const changes: string[] = [];
  const capped = new Map<string, TaskStep>();
  for (const c of chosen) {
    // Each takes its proportional part of the overage plus 1% headroom, so rounding cannot leave it just over.
    const cut = (overage * c.amount) / share + c.amount * 0.01;
    const previous = typeof c.step.params[c.param] === "number" ? (c.step.params[c.param] as number) : null;
    const cap = Math.floor(Math.min(previous ?? Infinity, c.amount - cut));
    if (cap < 1) {
      return {
        applies: false,
        reason: `Capping ${chosen.map((x) => x.step.id).join(" and ")} cannot remove the ${money(overage)} overage: together they cost only ${money(share)}`,
      };
    }
    capped.set(c.step.id, { ...c.step, params: { ...c.step.params, [c.param]: cap } });
    changes.push(
      `Adjust parameters of ${c.step.id}: ${c.param} ${previous === null ? "unset" : money(previous)} → ${money(cap)} (it cost ${money(c.amount)} of a ${money(facts.total)} total over the ${money(facts.limit)} limit)`,
    );
  }
  changes.push(`Re-run ${failure.step.id} to check the limit again`);
  const adjusted = { ...plan, steps: plan.steps.map((s) => capped.get(s.id) ?? s) };
  const rerun = resetForRerun(adjusted, [...capped.keys(), failure.step.id]);
  return revise(input, "ADJUST_PARAMETERS", rerun, {
    rationale: `${failure.step.id} found ${failure.error}. The overage of ${money(overage)} comes mostly from ${chosen.map((c) => c.step.id).join(" and ")}, so they search again with a price cap; results may be cheaper options.`,
    changes,
    modifiedStepIds: [...capped.keys(), failure.step.id],
  });
};
