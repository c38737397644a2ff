import type { TaskStep } from "../../domain/plan.js";
import { resetForRerun } from "../plan-edit.js";
import { revise, type Strategy } from "./types.js";

/** Facts a constraint violation carries: the limit, the actual value and what each output contributed. */
export interface ViolationFacts {
  total: number;
  limit: number;
  breakdown: Record<string, number>;
  /**
   * The least each part can cost (the cheapest option its step could return), when the check reported it: a cap
   * below a part's floor finds nothing. Absent when the check reported none.
   */
  floors?: Record<string, number>;
}

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** The entries of a record that are numbers passing `keep`; null when it is not a record. */
function numbers(raw: unknown, keep: (n: number) => boolean): Record<string, number> | null {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return null;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    const n = num(v);
    if (n !== null && keep(n)) out[k] = n;
  }
  return out;
}

/** Reads a violation's facts from a failure's outputs (total/budget/breakdown, or actual/limit; optional floors). */
export function violationFacts(outputs: Record<string, unknown>): ViolationFacts | null {
  const total = num(outputs.total) ?? num(outputs.actual) ?? num(outputs.total_cost);
  const limit = num(outputs.budget) ?? num(outputs.limit);
  const breakdown = numbers(outputs.breakdown, (n) => n > 0);
  if (total === null || limit === null || breakdown === null || Object.keys(breakdown).length === 0) return null;
  const floors = numbers(outputs.floors, (n) => n >= 0);
  return { total, limit, breakdown, ...(floors && Object.keys(floors).length > 0 ? { floors } : {}) };
}

const money = (n: number) => `$${Math.round(n).toLocaleString("en-US")}`;
const listed = (names: readonly string[]) =>
  names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;

/** A limit no adjustment can meet: the floors the check reported already add up to more. */
export interface Infeasibility {
  /** The sum of the reported floors: the least the result can cost. */
  least: number;
  limit: number;
  floors: Record<string, number>;
  /** What the user is told, with the figures and what to do. */
  reason: string;
}

/**
 * Whether a violation is beyond any price cap: the cheapest option of each part (the floors its check reported)
 * already costs more than the limit together. A part without a floor counts as free, so the verdict never
 * overstates. Null when the floors fit, or when the check reported none (then nobody can tell).
 */
export function infeasibility(outputs: Record<string, unknown>): Infeasibility | null {
  const facts = violationFacts(outputs);
  if (!facts?.floors) return null;
  const least = Object.values(facts.floors).reduce((sum, n) => sum + n, 0);
  if (least <= facts.limit) return null;
  const parts = Object.entries(facts.floors)
    .map(([part, n]) => `${part} ${money(n)}`)
    .join(", ");
  return {
    least,
    limit: facts.limit,
    floors: facts.floors,
    reason: `Even the cheapest options cost ${money(least)} (${parts}), over the ${money(facts.limit)} limit: no price cap can fit; raise the budget to at least ${money(least)} or change the request`,
  };
}

interface Contributor {
  step: TaskStep;
  part: string;
  amount: number;
  /** What this part cannot cost less than (0 when the check did not say). */
  floor: number;
  param: string;
}

/** What capping a part can save at most: what it cost above its floor. */
const room = (c: Contributor) => c.amount - c.floor;
const roomOf = (cs: readonly Contributor[]) => cs.reduce((sum, c) => sum + room(c), 0);

/**
 * ADJUST_PARAMETERS (seed 000 scenario 6): a result broke a limit. The steps that caused it are found from the
 * violation's breakdown (each part is matched to the step that produced it), the largest contributors whose
 * tool can be steered get a cap (their tool's `costCapParam`) that shares the overage in proportion to what each
 * can save, and they re-run together with the check that failed. When the check reports floors (each part's
 * cheapest option), no cap goes below one, and a limit even the floors exceed is refused at once: a cap nothing
 * can meet would only fail and burn revisions. Confidence −0.08.
 */
export const adjustParameters: Strategy = (input) => {
  const { plan, failure, registry } = input;
  const facts = violationFacts(failure.outputs);
  if (!facts)
    return {
      applies: false,
      reason: `The violation in ${failure.step.id} did not say what each part cost, so no step can be adjusted`,
    };
  const overage = facts.total - facts.limit;
  if (overage <= 0)
    return {
      applies: false,
      reason: `The reported total ${money(facts.total)} is within the limit ${money(facts.limit)}`,
    };
  const hopeless = infeasibility(failure.outputs);
  if (hopeless) return { applies: false, reason: hopeless.reason };

  const contributors: Contributor[] = [];
  for (const [part, amount] of Object.entries(facts.breakdown)) {
    // A part several steps produced (a flight per leg) is shared between them by their own results' costs and
    // floors when they report them, else evenly.
    const steps = plan.steps.filter((s) => s.status === "done" && s.expectedOutputs.includes(part));
    const own = (s: TaskStep, key: string) => num((s.result as Record<string, unknown> | null)?.[key]);
    const known = steps.every((s) => own(s, "cost") !== null);
    for (const step of steps) {
      const param = registry.tool(step.tools[0] ?? "")?.costCapParam;
      if (!param) continue;
      const mine = steps.length === 1 || !known ? amount / steps.length : (own(step, "cost") ?? 0);
      const partFloor = facts.floors?.[part] ?? 0;
      const floor = steps.length === 1 ? partFloor : (own(step, "cheapestCost") ?? partFloor / steps.length);
      contributors.push({ step, part, amount: mine, floor: Math.min(floor, mine), param });
    }
  }
  if (contributors.length === 0)
    return {
      applies: false,
      reason: `None of ${Object.keys(facts.breakdown).join(", ")} comes from a step whose cost can be capped`,
    };
  // The two largest parts (seed 000: flight and hotel) usually hold the room to save; more would churn the plan,
  // so a smaller part is capped only when the larger ones, held above their floors, cannot cover the overage.
  const candidates = contributors.filter((c) => room(c) > 0).sort((a, b) => b.amount - a.amount);
  if (candidates.length === 0) {
    return {
      applies: false,
      reason: `${listed(contributors.map((c) => c.step.id))} already cost their cheapest option, so no cap can lower the total`,
    };
  }
  let chosen = candidates.slice(0, 2);
  for (let n = 3; n <= candidates.length && roomOf(chosen) < overage; n++) chosen = candidates.slice(0, n);
  const share = roomOf(chosen);
  const names = chosen.map((c) => c.step.id);
  const floored = facts.floors !== undefined;
  if (share < overage) {
    return {
      applies: false,
      reason: floored
        ? `Capping ${listed(names)} cannot remove the ${money(overage)} overage: above their cheapest options they can save only ${money(share)}`
        : `Capping ${listed(names)} cannot remove the ${money(overage)} overage: together they cost only ${money(share)}`,
    };
  }

  const changes: string[] = [];
  const capped = new Map<string, TaskStep>();
  for (const c of chosen) {
    // Each takes its part of the overage in proportion to what it can save, plus 1% headroom so rounding cannot
    // leave the total just over; never below its floor, where the search would find nothing.
    const cut = Math.min(room(c), (overage * room(c)) / share + room(c) * 0.01);
    const previous = typeof c.step.params[c.param] === "number" ? (c.step.params[c.param] as number) : null;
    let cap = Math.max(Math.ceil(c.floor), Math.floor(Math.min(previous ?? Infinity, c.amount - cut)));
    // A part whose cheapest option is free (floor 0) can be asked to cost almost nothing: a cap of 1 still finds
    // the free options, so a limit exactly at the floors' sum is met. Without floors nobody knows that.
    if (cap < 1 && floored && c.floor < 1) cap = 1;
    if (cap < 1) {
      return {
        applies: false,
        reason: `Capping ${listed(names)} cannot remove the ${money(overage)} overage: ${c.step.id} would have to cost nothing`,
      };
    }
    capped.set(c.step.id, { ...c.step, params: { ...c.step.params, [c.param]: cap } });
    const least = floored ? `; its cheapest option costs ${money(c.floor)}` : "";
    changes.push(
      `Adjust parameters of ${c.step.id}: ${c.param} ${previous === null ? "unset" : money(previous)} → ${money(cap)} (it cost ${money(c.amount)} of a ${money(facts.total)} total over the ${money(facts.limit)} limit${least})`,
    );
  }
  changes.push(`Re-run ${failure.step.id} to check the limit again`);
  const adjusted = { ...plan, steps: plan.steps.map((s) => capped.get(s.id) ?? s) };
  const rerun = resetForRerun(adjusted, [...capped.keys(), failure.step.id]);
  return revise(input, "ADJUST_PARAMETERS", rerun, {
    rationale: `${failure.step.id} found ${failure.error}. The overage of ${money(overage)} comes mostly from ${listed(names)}, so they search again with a price cap${floored ? " no lower than their cheapest option" : ""}; results may be cheaper options.`,
    changes,
    modifiedStepIds: [...capped.keys(), failure.step.id],
  });
};
