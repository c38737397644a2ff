import type { Episode } from "../domain/report.js";
import type { Evaluation, Pattern, ReflectionDraft, StepChoice } from "../domain/reflection.js";
import type { ToolRegistry } from "../tools/registry.js";
import { adjustmentText, alternativeTo, removeToolText } from "./adjustments.js";
import type { Diagnosis, KnobMatch } from "./diagnose.js";
import { knobKey, show, type Knob } from "./knobs.js";
import { MIN_OCCURRENCES, splitBlamed } from "./patterns.js";

/** Everything a reasoner reflects on: the episode as judged, what the judgement points at, and the user's memory. */
export interface ReflectionInput {
  episode: Episode;
  evaluation: Evaluation;
  trigger: "rejection" | "failure";
  diagnosis: Diagnosis;
  /** The user's episodes the patterns were mined from, this one included. */
  history: readonly Episode[];
  /** Every candidate pattern of the user's episodes, valid or not (only valid ones may be cited). */
  patterns: readonly Pattern[];
  knobs: readonly Knob[];
  registry: ToolRegistry;
  /** The user has no stored reflection yet (seed 001 scenario 17). */
  first: boolean;
}

/** Failure classes that are the tool's own fault (another tool may do better), not the request's. */
const TOOL_FAULTS: ReadonlySet<string> = new Set(["timeout", "agent_unavailable", "unknown"]);

/**
 * Pure and deterministic. A reflection from the episode, the evaluation and memory alone: what happened (the
 * choices or the failures), why (the settings the tools ran with), the root cause (the strategy of trusting those
 * defaults, or a tool, for this user), the valid patterns, adjustments in the actionable forms, and how to apply
 * it next time. With a valid pattern behind a setting, the adjustment is set from every rejected answer it covers
 * (seed 001 scenario 18: more aggressive) and the learning says it applies from now on.
 */
export function reflectWithRules(input: ReflectionInput): ReflectionDraft {
  return input.trigger === "rejection" ? onRejection(input) : onFailure(input);
}

function onRejection(input: ReflectionInput): ReflectionDraft {
  const { episode, evaluation, diagnosis } = input;
  const choices = episode.choices ?? [];
  const blamedTools = new Set([...diagnosis.namedTools, ...diagnosis.matches.map((m) => m.knob.tool)]);
  const shown = blamedTools.size > 0 ? choices.filter((c) => blamedTools.has(c.tool)) : choices;
  const whatHappened = `You rejected the answer to "${episode.request}"${evaluation.reason ? `: "${evaluation.reason}"` : ""}. ${
    shown.length > 0 ? `${shown.map(describeChoice).join("; ")}.` : "No step had produced a result."
  }`;
  const valid = input.patterns.filter((p) => p.valid);
  const patternsIdentified = valid.map(
    (p) => `${p.text} (validity ${p.validity.toFixed(2)}, ${p.occurrences} of ${p.total})`,
  );
  const tools = [...new Set(shown.map((c) => c.tool))];
  if (diagnosis.matches.length === 0) {
    const abouts = [...new Set(input.knobs.filter((k) => tools.includes(k.tool)).map((k) => k.learn.about))];
    return {
      analysis: {
        whatHappened,
        why: `The reason names nothing Candor can change in ${list(tools) || "the plan"}: ${
          abouts.length > 0
            ? `none of their adjustable settings (${abouts.join("; ")}) shares a word with it`
            : "they have no setting that feedback may change"
        }.`,
        rootCause: `The plan assumed the default choices of ${list(tools) || "its tools"} suit this user; the feedback says they do not, without saying which setting to change, so no strategy can be corrected yet.`,
      },
      patternsIdentified,
      strategyAdjustments: [
        `Add constraint: before repeating a request like "${episode.request}", ask which of ${abouts.length > 0 ? abouts.join(", ") : "the choices"} fell short`,
      ],
      learning: `This rejection gives no setting to change. For this user, say in the answer which ${abouts.length > 0 ? abouts.join(" and ") : "choices"} were made, so that the next rejection can name what fell short; a reason that does (e.g. a word about ${abouts[0] ?? "a choice"}) is learned from.`,
    };
  }
  const matches = diagnosis.matches.map((m) => strengthen(m, input));
  const why = matches.map(whyOf).join(" ");
  const abouts = [...new Set(matches.map((m) => m.match.knob.learn.about))];
  const matchedTools = [...new Set(matches.map((m) => m.match.knob.tool))];
  const backing = matches.map((m) => m.pattern).filter((p): p is Pattern => p !== null);
  const count = Math.max(...matches.map((m) => m.occurrences));
  const rootCause = `The strategy of running ${list(matchedTools)} with ${matchedTools.length > 1 ? "their" : "its"} default settings assumed they suit every user; for this user that conflicts with a preference about ${abouts.join(" and ")}${
    backing.length > 0
      ? `, and the pattern holds: ${backing[0]!.text} (validity ${backing[0]!.validity.toFixed(2)})`
      : input.first
        ? ", said for the first time in this user's memory"
        : `, said ${count} time${count === 1 ? "" : "s"} so far`
  }.`;
  const strategyAdjustments = matches.map((m) => adjustmentText(m.match));
  const steps = matches.map((m) => describeSetting(m.match)).join("; ");
  const learning =
    backing.length > 0
      ? `For this user, ${abouts.join(" and ")} matter${abouts.length > 1 ? "" : "s"} more than the defaults of ${list(matchedTools)}. Always, from the next run on: ${steps}. Each is announced with the plan and can be revoked.`
      : `For this user, ${abouts.join(" and ")} may matter more than the defaults of ${list(matchedTools)}. Next time: ${steps}. This applies once the same reason has been given ${MIN_OCCURRENCES} times (${count} so far), so that one remark does not change every later run.`;
  return { analysis: { whatHappened, why, rootCause }, patternsIdentified, strategyAdjustments, learning };
}

function onFailure(input: ReflectionInput): ReflectionDraft {
  const { episode, diagnosis } = input;
  const failures = episode.failures;
  const whatHappened = `The run for "${episode.request}" ended ${episode.status}: ${failures
    .map(
      (f) =>
        `${f.taskId}${f.tool ? ` (${f.tool})` : ""} failed with ${f.failureClass.replaceAll("_", " ")}: ${f.error}`,
    )
    .join("; ")}.`;
  const faulty = [...new Set(failures.filter((f) => f.tool && TOOL_FAULTS.has(f.failureClass)).map((f) => f.tool!))];
  const replaced = faulty.flatMap((tool) => {
    const instead = alternativeTo(tool, input.registry);
    return instead ? [{ tool, instead }] : [];
  });
  const valid = input.patterns.filter((p) => p.valid);
  const patternsIdentified = valid.map(
    (p) => `${p.text} (validity ${p.validity.toFixed(2)}, ${p.occurrences} of ${p.total})`,
  );
  const whys: string[] = [];
  const roots: string[] = [];
  for (const { tool, instead } of replaced) {
    whys.push(`${tool} itself misbehaved, and the plan relied on it although ${instead} produces the same thing.`);
    roots.push(`The planning strategy assumed ${tool} is reliable for this user's requests; it was not`);
  }
  for (const m of diagnosis.matches) whys.push(whyOf({ match: m, pattern: null, occurrences: 1 }));
  if (diagnosis.matches.length > 0)
    roots.push(
      `The plan assumed the default settings of ${list([...new Set(diagnosis.matches.map((m) => m.knob.tool))])} fit the request's limits; they did not`,
    );
  return {
    analysis: { whatHappened, why: whys.join(" "), rootCause: `${roots.join("; ")}.` },
    patternsIdentified,
    strategyAdjustments: [
      ...replaced.map(({ tool, instead }) => removeToolText(tool, instead)),
      ...diagnosis.matches.map(adjustmentText),
    ],
    learning: `For this user's requests, ${[
      ...replaced.map(({ tool, instead }) => `plan ${instead} rather than ${tool}`),
      ...diagnosis.matches.map(describeSetting),
    ].join(
      "; ",
    )}. This applies once the same failure has been seen ${MIN_OCCURRENCES} times, so one bad day of a tool does not change every later run.`,
  };
}

/** Whether a failure reflection has anything to say: a tool with an alternative, or a setting the errors point at. */
export function failureIsReflectable(input: Pick<ReflectionInput, "episode" | "diagnosis" | "registry">): boolean {
  if (input.diagnosis.matches.length > 0) return true;
  return input.episode.failures.some(
    (f) => f.tool !== null && TOOL_FAULTS.has(f.failureClass) && alternativeTo(f.tool, input.registry) !== null,
  );
}

interface Strengthened {
  match: KnobMatch;
  /** The valid pattern behind this setting, if any. */
  pattern: Pattern | null;
  /** Rejections for this setting so far, this one included. */
  occurrences: number;
}

/**
 * A match with the valid pattern behind it, if any. A minimum backed by a pattern is set above the worst value of
 * every rejected answer the pattern covers, not only this one's.
 */
function strengthen(match: KnobMatch, input: ReflectionInput): Strengthened {
  const key = knobKey(match.knob);
  const related = input.patterns.filter((p) => p.key.startsWith("rejected:") && splitBlamed(p.key.slice(9))[0] === key);
  const pattern =
    related.find((p) => p.valid && (splitBlamed(p.key.slice(9))[1] ?? String(match.value)) === String(match.value)) ??
    null;
  const occurrences = Math.max(1, ...related.map((p) => p.occurrences));
  const l = match.knob.learn;
  if (pattern && l.kind === "minimum") {
    const seen = rejectedValues(input.history, match.knob, l.field);
    const worst = Math.max(...seen, typeof match.chosen === "number" ? match.chosen : l.floor - l.step);
    const value = Math.min(l.max, Math.max(l.floor, Math.floor(worst) + l.step, Number(match.value)));
    return { match: { ...match, value }, pattern, occurrences };
  }
  return { match, pattern, occurrences };
}

/** A field's values in the answers rejected for a knob. */
function rejectedValues(history: readonly Episode[], knob: Knob, field: string): number[] {
  return history.flatMap((e) => {
    if (e.evaluation?.verdict !== "rejected" || !e.evaluation.blamed.includes(knobKey(knob))) return [];
    const v = e.choices?.find((c) => c.tool === knob.tool)?.result[field];
    return typeof v === "number" ? [v] : [];
  });
}

function whyOf(s: Strengthened): string {
  const m = s.match;
  const { tool, param } = m.knob;
  const l = m.knob.learn;
  switch (l.kind) {
    case "choice": {
      const from = show(m.current);
      return `${tool} ran with ${param} '${from}' (${l.options[from]?.says ?? from}), so it chose by that and not by what the reason asks for: '${String(m.value)}' (${m.says ?? ""}).`;
    }
    case "minimum":
      return m.current === null
        ? `${tool} ran with no minimum ${l.field}, so a result with ${l.field} ${m.chosen ?? "unknown"} was accepted.`
        : `${tool} ran with ${param} ${show(m.current)}, which still let through a result the reason objects to.`;
    case "flag":
      return `${tool} ran without ${param}, so it was free to pick an option against ${l.about}.`;
    case "exclude":
      return `${tool} may pick any ${l.field}, so it picked '${String(m.value)}', the one the reason objects to.`;
  }
}

/** What the next run does about a match, in words. */
function describeSetting(m: KnobMatch): string {
  const { tool, param } = m.knob;
  const l = m.knob.learn;
  switch (l.kind) {
    case "choice":
      return `${tool} ranks by '${String(m.value)}' (${m.says ?? ""})`;
    case "minimum":
      return `${tool} keeps only results with ${l.field} of at least ${String(m.value)}`;
    case "flag":
      return `${tool} runs with ${param} on (${l.about})`;
    case "exclude":
      return `${tool} leaves out ${l.field} '${String(m.value)}'`;
  }
}

/** "s2 (search_hotels) chose <summary>". */
function describeChoice(c: StepChoice): string {
  const summary = typeof c.result.summary === "string" ? c.result.summary : JSON.stringify(c.result);
  return `${c.stepId} (${c.tool}) chose ${summary}`;
}

function list(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}
