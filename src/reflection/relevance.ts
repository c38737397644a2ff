import type { Episode } from "../domain/report.js";
import type { Evaluation, ReflectionDraft } from "../domain/reflection.js";
import type { ToolRegistry } from "../tools/registry.js";
import { mentionedValues, normalize, subjectOf, termsIn, type Diagnosis } from "./diagnose.js";
import { knobsOf, type Knob } from "./knobs.js";

/**
 * Whether a reflection is about the run it reflects on. A model writes fluent reflections about anything: one that
 * blames search_flights for "the hotel was a dump", or search_hotels for a slow workspace run, reads well and scores
 * well on style, and would teach the wrong lesson. The quality gate therefore also checks substance: the tools and
 * steps the reflection's cause, adjustments and learning blame must be ones the run used, and, when the complaint
 * names what it is about, ones it names. Tools are recognised by their registered names (an adjustment must name
 * its tool to be applied at all), steps by ids that cannot be ordinary words.
 */

/** What a reflection may blame: the run's tools and steps, and the tools the complaint is about. */
export interface RunScope {
  /** Every tool the run's plan used (a step's tools, a failure's tool, a choice's tool). */
  tools: string[];
  /** The run's step ids. */
  steps: string[];
  /** Every tool the registry knows: a name outside `tools` is a tool the run did not use. */
  known: string[];
  /**
   * Tools that produce what one of the run's tools produced: a reflection may name one as the replacement of a tool
   * that misbehaved ("plan backup_flight_agent instead") without blaming it.
   */
  standIns: string[];
  /**
   * The tools a person's complaint is about (named by their words or a value of their result, or holding a setting
   * the complaint's words point at); null when it names none (any tool of the run may be blamed) or the run judged
   * itself.
   */
  complaintTools: string[] | null;
  /** The complaint in the user's words, for the violation's message. */
  complaint: string | null;
  /**
   * The run's tools the complaint shares a word with (their own words, their settings' words, a value of their
   * result). When the complaint names no tool, an adjustment may change only these: a change the complaint gives
   * no word for is a guess about another subject.
   */
  mentioned: string[];
}

/** Pure. The scope of a judged episode, from what the reason was read as (the diagnosis) and the registry. */
export function runScope(
  episode: Episode,
  evaluation: Evaluation,
  diagnosis: Diagnosis,
  registry: ToolRegistry,
): RunScope {
  const tools = new Set([
    ...episode.plan.steps.flatMap((s) => s.tools),
    ...episode.failures.flatMap((f) => (f.tool ? [f.tool] : [])),
    ...(episode.choices ?? []).map((c) => c.tool),
  ]);
  const fromUser = evaluation.source === "user";
  // A stand-in for a tool the complaint is about is about the same thing (the backup flight search for "Iberia").
  const about = fromUser ? [...new Set([...diagnosis.namedTools, ...diagnosis.matches.map((m) => m.knob.tool)])] : [];
  const standInsOf = (names: Iterable<string>) =>
    [...names].flatMap((t) => {
      const produces = registry.tool(t)?.produces ?? [];
      return produces.length === 0 ? [] : registry.producersOf(produces).map((p) => p.name);
    });
  const standIns = standInsOf(tools);
  const text = normalize(evaluation.reason ?? "");
  const knobs = knobsOf(registry);
  const mentioned = fromUser
    ? [...tools].filter((t) => {
        const words = [...subjectOf(t, knobs, registry), ...knobs.filter((k) => k.tool === t).flatMap(knobWords)];
        const choice = (episode.choices ?? []).find((c) => c.tool === t);
        return termsIn(text, words).length > 0 || (choice !== undefined && mentionedValues(text, choice).length > 0);
      })
    : [...tools];
  return {
    mentioned,
    tools: [...tools],
    steps: episode.plan.steps.map((s) => s.id),
    known: [...registry.tools.keys()],
    standIns: [...new Set(standIns)].filter((t) => !tools.has(t)),
    complaintTools: about.length > 0 ? [...new Set([...about, ...standInsOf(about)])] : null,
    complaint: fromUser ? evaluation.reason : null,
  };
}

/**
 * Pure. The gate's violations of a reflection outside its run, in the seed's style ("Irrelevant reflection: …",
 * "Off-subject reflection: …"); empty when it stays inside. What happened and the patterns are not checked: the
 * first may describe every step, the second cite other runs of the user.
 */
export function offRunViolations(r: ReflectionDraft, scope: RunScope): string[] {
  const text = [r.analysis.why, r.analysis.rootCause, ...r.strategyAdjustments, r.learning].join("\n");
  const blamed = scope.known.filter((t) => mentions(text, t));
  const out: string[] = [];
  const unused = blamed.filter((t) => !scope.tools.includes(t) && !scope.standIns.includes(t));
  if (unused.length > 0)
    out.push(
      `Irrelevant reflection: blames ${unused.join(", ")}, which this run did not use (it used ${scope.tools.join(", ") || "no tool"})`,
    );
  const steps = stepMentions(text).filter((s) => !scope.steps.includes(s));
  if (steps.length > 0)
    out.push(
      `Irrelevant reflection: names step ${steps.join(", ")}, which this run did not have (its steps: ${scope.steps.join(", ") || "none"})`,
    );
  if (!scope.complaintTools && scope.complaint) {
    const unmentioned = r.strategyAdjustments.flatMap((a) =>
      scope.known.filter((t) => mentions(a, t) && scope.tools.includes(t) && !scope.mentioned.includes(t)),
    );
    if (unmentioned.length > 0)
      out.push(
        `Off-subject reflection: changes ${[...new Set(unmentioned)].join(", ")}, which the complaint ("${scope.complaint}") does not mention`,
      );
  }
  if (scope.complaintTools) {
    const offSubject = blamed.filter(
      (t) => (scope.tools.includes(t) || scope.standIns.includes(t)) && !scope.complaintTools!.includes(t),
    );
    if (offSubject.length > 0)
      out.push(
        `Off-subject reflection: blames ${offSubject.join(", ")}, but the complaint${scope.complaint ? ` ("${scope.complaint}")` : ""} is about ${scope.complaintTools.join(", ")}`,
      );
  }
  return out;
}

/** Whether `text` names `tool` as a whole word ("search_hotels", not "search_hotels_v2"). */
function mentions(text: string, tool: string): boolean {
  return new RegExp(`(?<![\\w])${tool.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w])`, "i").test(text);
}

/** Step ids a text names as steps: "step s4", "steps budget_status" — ids with a digit or "_", never plain words. */
function stepMentions(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/\bsteps?\s+[`'"]?([A-Za-z][\w-]*)/gi)) {
    const id = m[1]!;
    if (/[\d_]/.test(id)) out.add(id);
  }
  return [...out];
}

/** The words people use for a setting: its terms, or a choice's options' terms. */
function knobWords(k: Knob): string[] {
  const l = k.learn;
  return l.kind === "choice" ? Object.values(l.options).flatMap((o) => o.terms) : l.terms;
}
