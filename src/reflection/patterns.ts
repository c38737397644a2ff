import type { Episode } from "../domain/report.js";
import type { Pattern } from "../domain/reflection.js";
import { knobFor, show, type Knob } from "./knobs.js";

/**
 * Patterns mined from one user's episodes (seed 001 scenarios 2, 11, 18): answers rejected for the same setting
 * of the same tool, and tools that failed the same way. A pattern is used only when it holds: at least
 * MIN_OCCURRENCES episodes show it, and it held in at least MIN_VALIDITY of the episodes where it could have.
 */

export const MIN_OCCURRENCES = 3;
const MIN_VALIDITY = 0.75;

/** Failure classes that say something about the tool itself, not about the request. */
const TOOL_FAULTS: ReadonlySet<string> = new Set(["timeout", "agent_unavailable", "unknown"]);

/** Pure. PatternValidator.validate: validity and why, from how many episodes show it of how many could have. */
export function validatePattern(occurrences: number, total: number): Pick<Pattern, "validity" | "valid" | "reason"> {
  if (occurrences < MIN_OCCURRENCES)
    return {
      validity: 0,
      valid: false,
      reason: `Insufficient data (${occurrences} < ${MIN_OCCURRENCES} min_occurrences)`,
    };
  const validity = Math.round((occurrences / Math.max(total, occurrences)) * 100) / 100;
  if (validity < MIN_VALIDITY)
    return {
      validity,
      valid: false,
      reason: `Does not hold: validity ${validity.toFixed(2)} < ${MIN_VALIDITY} (${occurrences} of ${total} episodes)`,
    };
  return { validity, valid: true, reason: `${occurrences} of ${total} episodes (validity ${validity.toFixed(2)})` };
}

/** The seed's class name, for readers coming from it. */
export const PatternValidator = { validate: validatePattern } as const;

/**
 * Pure. Every candidate pattern in the episodes (valid or not), most occurrences first. Rejections group by what
 * the evaluation blamed (`Evaluation.blamed`, read from the reason's content, so differently worded reasons for
 * the same thing count together); the denominator adds the accepted episodes in which the blamed condition held
 * (`conditionOf`): only they speak against the pattern. Failures group by tool and failure class, over the
 * episodes whose plan used the tool.
 */
export function minePatterns(episodes: readonly Episode[], knobs: readonly Knob[]): Pattern[] {
  const out: Pattern[] = [];
  // Only a person's verdict says whether a choice suited them; a run's own failures are mined below.
  const judged = episodes.filter((e) => e.evaluation?.source === "user");
  const blamed = new Map<string, Episode[]>();
  for (const e of judged)
    if (e.evaluation?.verdict === "rejected")
      for (const b of e.evaluation.blamed) blamed.set(b, [...(blamed.get(b) ?? []), e]);
  for (const [key, support] of blamed) {
    const [target, value] = splitBlamed(key);
    const [tool, param] = target.split(".") as [string, string];
    const knob = knobFor(knobs, tool, param);
    const held = conditionOf(tool, param, value, knob, support);
    // Evidence against a pattern is an accepted answer given under the very condition the rejections blame; an
    // accepted answer that already was what the user wants (a nonstop flight, another airline, a hotel rated above
    // every rejected one) says nothing about it, and a rejection for another reason says nothing either.
    const against = judged.filter((e) => e.evaluation?.verdict === "accepted" && held(e)).length;
    const total = support.length + against;
    out.push({
      key: `rejected:${key}`,
      text: rejectionText(tool, param, value, knob, support),
      occurrences: support.length,
      total,
      target,
      ...validatePattern(support.length, total),
    });
  }
  const failed = new Map<string, Episode[]>();
  for (const e of episodes) {
    const keys = new Set(e.failures.flatMap((f) => (f.tool ? [`${f.tool}:${f.failureClass}`] : [])));
    for (const k of keys) failed.set(k, [...(failed.get(k) ?? []), e]);
  }
  for (const [key, support] of failed) {
    const [tool, failureClass] = key.split(":") as [string, string];
    const total = episodes.filter((e) => e.plan.steps.some((s) => s.tools.includes(tool))).length;
    out.push({
      key: `failed:${key}`,
      text: `${tool} failed with ${failureClass.replaceAll("_", " ")} in ${support.length} of ${Math.max(total, support.length)} runs that used it`,
      occurrences: support.length,
      total: Math.max(total, support.length),
      target: TOOL_FAULTS.has(failureClass) ? tool : null,
      ...validatePattern(support.length, Math.max(total, support.length)),
    });
  }
  return out.sort((a, b) => b.occurrences - a.occurrences || a.key.localeCompare(b.key));
}

/**
 * Pure. Whether an episode's run of `tool` was under the condition a rejection pattern blames: the tool ran with no
 * learned adjustment of the setting, and — by the knob's kind — ranked other than the way asked for and, when the
 * option names the field that shows it, gave an answer no better than the best rejected one (choice), gave
 * a result whose field is no higher than in some rejected answer (minimum), was not already what the flag asks
 * (flag, when the knob says which result field shows it), or gave the value to avoid (exclude).
 */
function conditionOf(
  tool: string,
  param: string,
  value: string | null,
  knob: Knob | undefined,
  support: readonly Episode[],
): (e: Episode) => boolean {
  const l = knob?.learn;
  const field = (e: Episode, f: string) => e.choices?.find((c) => c.tool === tool)?.result[f];
  // The best value of a field among the rejected answers: an accepted answer better than it was not at stake.
  const rejected = (f: string) =>
    support.map((e) => field(e, f)).filter((v): v is number => typeof v === "number" && Number.isFinite(v));
  const highestOf = (f: string) => Math.max(...rejected(f));
  const lowestOf = (f: string | undefined) => (f === undefined ? Number.NaN : Math.min(...rejected(f)));
  const highestRejected = l?.kind === "minimum" ? highestOf(l.field) : Number.NaN;
  return (e) => {
    const choice = e.choices?.find((c) => c.tool === tool);
    if (!choice) return false;
    if (
      (e.applied ?? []).some(
        (a) => a.summary.startsWith(`${tool} ${param} `) || a.summary.startsWith(`${tool} results`),
      )
    )
      return false;
    switch (l?.kind) {
      case "choice": {
        if (value !== null && show(choice.params[param] ?? l.default) === value) return false;
        const shows = value === null ? undefined : l.options[value]?.shows;
        const v = shows ? choice.result[shows.field] : undefined;
        const bound = shows?.better === "higher" ? highestOf(shows.field) : lowestOf(shows?.field);
        if (!shows || typeof v !== "number" || !Number.isFinite(bound)) return true;
        return shows.better === "higher" ? v <= bound : v >= bound;
      }
      case "minimum": {
        const v = choice.result[l.field];
        return !Number.isFinite(highestRejected) || typeof v !== "number" || v <= highestRejected;
      }
      case "flag": {
        if (choice.params[param] === true) return false;
        const w = l.satisfiedWhen;
        return !w || choice.result[w.field] !== w.equals;
      }
      case "exclude": {
        const v = choice.result[l.field];
        return value === null || typeof v !== "string" || v.toLowerCase() === value.toLowerCase();
      }
      default:
        return true;
    }
  };
}

/** "search_hotels.priority=quality" → ["search_hotels.priority", "quality"]. */
export function splitBlamed(key: string): [string, string | null] {
  const i = key.indexOf("=");
  return i < 0 ? [key, null] : [key.slice(0, i), key.slice(i + 1)];
}

function rejectionText(
  tool: string,
  param: string,
  value: string | null,
  knob: Knob | undefined,
  support: readonly Episode[],
): string {
  const n = support.length;
  const l = knob?.learn;
  const times = `${n} answer${n === 1 ? "" : "s"} rejected`;
  if (l?.kind === "choice" && value !== null) {
    const from = mostCommon(
      support.map((e) => show(e.choices?.find((c) => c.tool === tool)?.params[param] ?? l.default)),
    );
    const says = l.options[from]?.says ?? from;
    return `Whenever ${tool} ranks by '${from}' (${says}), the user rejects the answer for ${l.about} and wants '${value}' (${l.options[value]?.says ?? value}): ${times}`;
  }
  if (l?.kind === "minimum") {
    const seen = support.flatMap((e) => {
      const v = e.choices?.find((c) => c.tool === tool)?.result[l.field];
      return typeof v === "number" ? [v] : [];
    });
    const worst = seen.length > 0 ? ` (${l.field} ${Math.max(...seen)} or lower)` : "";
    return `The user rejects ${tool} results for ${l.about}${worst}: ${times}`;
  }
  if (l?.kind === "flag")
    return `Whenever ${tool} runs without ${param}, the user rejects the answer (${l.about}): ${times}`;
  if (l?.kind === "exclude" && value !== null)
    return `The user rejects ${tool} results whose ${l.field} is '${value}' (${l.about}): ${times}`;
  return `The user rejects answers over ${tool}.${param}: ${times}`;
}

function mostCommon(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? "";
}
