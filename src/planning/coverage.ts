import type { ExecutionFeedback } from "../domain/feedback.js";
import type { Plan, TaskStep } from "../domain/plan.js";
import type { RequestPart } from "../domain/understanding.js";
import { missingSteps, whyMissing } from "./schedule.js";

/**
 * SYNTHESIZE's judgement of a finished plan against what was asked: a requested part is answered only when every
 * step serving it (or the steps that replaced it) succeeded. A part no tool can do, text the planner could not
 * read and values it would not use are never answered. Pure, so the node, REFLECT and the report agree.
 */

interface PartOutcome {
  part: RequestPart;
  answered: boolean;
  /** Why not, in plain language; null when answered. */
  why: string | null;
}

export interface Coverage {
  parts: PartOutcome[];
  /** Everything asked that the answer does not give: unanswered parts, refused values, unaccounted text. */
  missing: { id: string; text: string; why: string }[];
}

/** The steps that stand for `id` now: itself, or the steps that replaced it (a retry, a decomposition). */
function descendantsOf(plan: Plan, id: string): TaskStep[] {
  return plan.steps.filter((s) => s.id === id || s.lineage.includes(id));
}

/** Whether the step `id` (through its replacements) produced its result. */
function stepAnswered(plan: Plan, id: string, gaps: ReadonlySet<string>): { ok: boolean; why: string | null } {
  const now = descendantsOf(plan, id);
  if (now.length === 0) return { ok: false, why: `step ${id} is no longer in the plan` };
  const gap = now.find((s) => gaps.has(s.id));
  if (gap)
    return {
      ok: false,
      why: `${gap.description} (${gap.id}) ${whyMissing(gap)}`,
    };
  if (!now.some((s) => s.status === "done")) return { ok: false, why: `step ${id} did not finish` };
  return { ok: true, why: null };
}

export function coverageOf(plan: Plan): Coverage {
  const u = plan.understanding;
  const gaps = new Set(missingSteps(plan).map((s) => s.id));
  const parts: PartOutcome[] = u.parts.map((part) => {
    if (part.status === "excluded") return { part, answered: true, why: null };
    if (part.status === "unsupported") return { part, answered: false, why: part.why ?? "no tool can do it" };
    if (part.status === "not_understood")
      return { part, answered: false, why: `not understood: ${part.why ?? "the planner could not read it"}` };
    const failed = part.stepIds.map((id) => stepAnswered(plan, id, gaps)).find((r) => !r.ok);
    return failed ? { part, answered: false, why: failed.why } : { part, answered: true, why: null };
  });
  const missing = [
    ...parts
      .filter((p) => !p.answered)
      .map((p) => ({ id: p.part.id, text: p.part.text, why: p.why ?? "not answered" })),
    ...u.refused.map((r, i) => ({ id: `refused${i + 1}`, text: r.text, why: `not used as ${r.name}: ${r.why}` })),
    ...u.unaccounted.map((x, i) => ({
      id: `unread${i + 1}`,
      text: x.text,
      why: `not understood (${x.kind}): ${x.why}`,
    })),
  ];
  return { parts, missing };
}

/**
 * The parts a model's review can say something about: served parts whose steps all succeeded. A part no step
 * answered (its step was skipped, it is unsupported) is missing whatever a model says, and an excluded part has no
 * result to judge, so asking about them costs tokens and can only be overruled. Empty: no review call is worth making.
 */
export function partsToReview(plan: Plan): Plan["understanding"]["parts"] {
  return coverageOf(plan)
    .parts.filter((p) => p.answered && p.part.status === "served")
    .map((p) => p.part);
}

/** Parts of the request the answer lacks, beyond steps that are missing (those are reported as steps already). */
export function unansweredByUnderstanding(plan: Plan): Coverage["missing"] {
  const c = coverageOf(plan);
  const stepGaps = new Set(c.parts.filter((p) => !p.answered && p.part.status === "served").map((p) => p.part.id));
  return c.missing.filter((m) => !stepGaps.has(m.id));
}

/** A model's review of the answer: for each part of the request, whether the results answer it. */
export interface AnswerReview {
  parts: { partId: string; answered: boolean; why: string | null }[];
}

export interface ReviewVerdict {
  /** Parts the model said are answered though no step served them: the record wins, and says so. */
  overruled: { partId: string; text: string; why: string }[];
  /** Parts whose steps succeeded yet the model found unanswered: the step to fail as `incomplete_result`. */
  incomplete: { partId: string; text: string; stepId: string; why: string }[];
}

/**
 * Weighs a model's review against the record. The record decides what was served: a model cannot answer a part
 * by saying so. It can find that a served part's results do not answer it, which sends the part's last step back
 * to replanning. Parts the review does not mention keep the record's verdict.
 */
export function judgeReview(plan: Plan, review: AnswerReview): ReviewVerdict {
  const verdict: ReviewVerdict = { overruled: [], incomplete: [] };
  const outcomes = new Map(coverageOf(plan).parts.map((p) => [p.part.id, p]));
  for (const r of review.parts) {
    const outcome = outcomes.get(r.partId);
    if (!outcome) continue;
    if (r.answered && !outcome.answered) {
      verdict.overruled.push({
        partId: r.partId,
        text: outcome.part.text,
        why: `the model said it is answered, but ${outcome.why ?? "no step served it"}`,
      });
    } else if (!r.answered && outcome.answered && outcome.part.status === "served") {
      const serving = outcome.part.stepIds.flatMap((id) => descendantsOf(plan, id)).filter((s) => s.status === "done");
      const last = serving.sort((a, b) => b.order - a.order)[0];
      if (last)
        verdict.incomplete.push({
          partId: r.partId,
          text: outcome.part.text,
          stepId: last.id,
          why: r.why ?? "the results do not answer it",
        });
    }
  }
  return verdict;
}

/** What the answer must say is missing: steps that did not run (and what ran without them), and unserved parts. */
export function missingFromAnswer(plan: Plan): { id: string; description: string; reason: string }[] {
  return [
    ...missingSteps(plan).map((s) => ({
      id: s.id,
      description: s.description,
      reason: withRanWithout(plan, s.id, s.status === "done" ? whyMissing(s) : (s.skipReason ?? "skipped")),
    })),
    ...unansweredByUnderstanding(plan).map((m) => ({ id: m.id, description: `"${m.text}"`, reason: m.why })),
  ];
}

/**
 * The steps whose results a review found do not answer their part, failed as `incomplete_result` so that
 * select_strategy recovers them like any failure: the revised plan and one feedback per step, in order.
 */
export function failIncompleteSteps(
  plan: Plan,
  gaps: ReviewVerdict["incomplete"],
): { plan: Plan; feedback: ExecutionFeedback[] } {
  const feedback: ExecutionFeedback[] = [];
  let revised = plan;
  for (const gap of gaps) {
    const step = revised.steps.find((s) => s.id === gap.stepId)!;
    feedback.push({
      taskId: step.id,
      feedbackType: "FAILURE",
      outputs: {},
      errors: [`its result does not answer "${gap.text}": ${gap.why}`],
      failureClass: "incomplete_result",
      durationMs: 0,
      cost: 0,
      at: new Date().toISOString(),
      attempt: step.attempts,
      dispatch: step.dispatches,
      workerType: step.workerType,
      tool: step.tools[0] ?? null,
      params: step.params,
      attempts: [],
      errorType: "INCOMPLETE_RESULT",
      trace: null,
      evidence: null,
      limits: [],
    });
    revised = {
      ...revised,
      steps: revised.steps.map((s) => (s.id === step.id ? { ...s, status: "failed" as const, result: null } : s)),
    };
  }
  return { plan: revised, feedback };
}

/**
 * A missing step's reason, plus the steps that ran without its result (it was an optional input of theirs): their
 * results are real but partial, and the answer must not let them pass for complete.
 */
function withRanWithout(plan: Plan, id: string, reason: string): string {
  // `?? []`: a thread checkpointed before steps recorded missingInputs has none.
  const without = (s: Plan["steps"][number]) => (s.missingInputs ?? []).filter((m) => m.from === id);
  const ran = plan.steps.filter((s) => s.status === "done" && without(s).length > 0);
  if (ran.length === 0) return reason;
  const inputs = [...new Set(ran.flatMap((s) => without(s).map((m) => m.input)))];
  return `${reason}; ${ran.map((s) => s.id).join(", ")} ran without its ${inputs.join(", ")}`;
}

/**
 * The answer with every missing item listed as the record lists it ("- description (id): reason"), unless that line
 * is there already (the rules' template writes it). A model's answer that merely names an item is not enough: the
 * name may sit in a claim that it was done ("Book the trip: done"), so the record's list follows it.
 */
export function withMissingListed(
  answer: string,
  missing: readonly { id: string; description: string; reason: string }[],
): string {
  const unnamed = missing.filter((m) => !answer.includes(`- ${m.description} (${m.id}):`));
  if (unnamed.length === 0) return answer;
  return [
    answer.trimEnd(),
    "Missing from this answer:",
    ...unnamed.map((m) => `- ${m.description} (${m.id}): ${m.reason}`),
  ].join("\n");
}
