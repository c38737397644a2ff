import type { ReflectionDraft, ReflectionScores } from "../domain/reflection.js";
import { isActionable } from "./adjustments.js";
import { normalize } from "./diagnose.js";
import { offRunViolations, type RunScope } from "./relevance.js";

/**
 * The quality gate (seed 001 scenarios 5–7, 17): a reflection is scored on completeness, depth, actionability and
 * relevance, and one that fails is not stored. The scores are heuristics over the text, deterministic and cheap,
 * so the same gate judges the rules and the model.
 */

/** What the gate needs besides the reflection. */
export interface QualityContext {
  /** Words of what is being reflected on (the rejection reason, the errors, the tools and steps): relevance. */
  evidence: readonly string[];
  /** The user's first reflection (no past experience): no patterns are expected and 0.6 passes (scenario 17). */
  first?: boolean;
  /**
   * Whether memory holds a valid pattern the reflection could cite (default: yes unless `first`). A reflection is
   * not incomplete for leaving out patterns that do not exist yet.
   */
  patternsExpected?: boolean;
  /**
   * The run's tools and steps and what the complaint is about: a reflection that blames anything else is about
   * another run, however well written, and is refused (see relevance.ts). Absent: not checked.
   */
  scope?: RunScope;
}

export interface QualityVerdict {
  valid: boolean;
  scores: ReflectionScores;
  /** In the seed's words, e.g. "Shallow reflection: depth=0.3 < 0.7". */
  violations: string[];
}

/** Minimums (seed 001 RT-010). */
export const QUALITY_THRESHOLDS = {
  quality: 0.8,
  /** Scenario 17: a user's first reflection has only the current failure to go on. */
  firstQuality: 0.6,
  depth: 0.7,
  actionability: 0.8,
  completeness: 0.9,
  /** Seed 001 scenario 4. */
  learningChars: 50,
} as const;

/** Words that name a strategy or an assumption: what a root cause is made of, as opposed to a symptom. */
const ROOT_WORDS = [
  "strategy",
  "assum",
  "approach",
  "default",
  "priorit",
  "preference",
  "policy",
  "rank",
  "heuristic",
  "expect",
  "relied",
  "relying",
  "rule",
  "conflict",
];
const STOP = new Set(
  "the a an and or of to in on for with was were is are be been it its this that you your user i my me not no at by from as but they them their".split(
    " ",
  ),
);

/**
 * Pure. Scores a reflection:
 * - completeness: share of the parts present — analysis, adjustments, a learning of ≥ 50 characters, and patterns
 *   (only when memory has a valid one to cite);
 * - depth: 0.3 for saying what happened, 0.2 for a why, 0.4 for a root cause that names a strategy or assumption
 *   (0.15 for one that does not), 0.1 for being specific (a number or a quoted value);
 * - actionability: per adjustment 1 in an actionable form, else 0.4; the mean (0 with none);
 * - relevance: share of the evidence words the reflection uses (of at most 4), 0.5 with no evidence;
 * - quality: the mean of the four.
 */
export function scoreReflection(r: ReflectionDraft, ctx: QualityContext): ReflectionScores {
  const a = r.analysis;
  const present = [
    a.whatHappened.trim().length > 0,
    r.strategyAdjustments.some((s) => s.trim().length > 0),
    r.learning.trim().length >= QUALITY_THRESHOLDS.learningChars,
    ...((ctx.patternsExpected ?? !ctx.first) ? [r.patternsIdentified.length > 0] : []),
  ];
  const completeness = present.filter(Boolean).length / present.length;

  const all = [a.whatHappened, a.why, a.rootCause].join(" ");
  let depth = 0;
  if (a.whatHappened.trim().length > 0) depth += 0.3;
  if (a.why.trim().length >= 15 && normalize(a.why) !== normalize(a.whatHappened)) depth += 0.2;
  if (a.rootCause.trim().length > 0) {
    const root = a.rootCause.toLowerCase();
    depth += ROOT_WORDS.some((w) => root.includes(w)) ? 0.4 : 0.15;
  }
  if (depth > 0 && /\d|'[^']+'|"[^"]+"/.test(all)) depth += 0.1;

  const adjustments = r.strategyAdjustments.filter((s) => s.trim().length > 0);
  const actionability =
    adjustments.length === 0
      ? 0
      : adjustments.reduce((sum, s) => sum + (isActionable(s) ? 1 : 0.4), 0) / adjustments.length;

  const evidence = [...new Set(ctx.evidence.flatMap((e) => contentWords(e)))];
  const text = normalize([all, ...r.patternsIdentified, ...adjustments, r.learning].join(" "));
  const used = evidence.filter((w) => text.includes(` ${w} `) || text.includes(` ${w}s `)).length;
  const relevance = evidence.length === 0 ? 0.5 : Math.min(1, used / Math.min(4, evidence.length));

  const scores = {
    completeness: round(completeness),
    depth: round(Math.min(1, depth)),
    actionability: round(actionability),
    relevance: round(relevance),
  };
  const quality = round((scores.completeness + scores.depth + scores.actionability + scores.relevance) / 4);
  return { quality, ...scores };
}

/**
 * Pure. ReflectionQualityValidator.validate_reflection: the scores, the violations in the seed's words, and
 * whether it may be stored (quality at least 0.8, or 0.6 for a first reflection, and no violation). A reflection
 * outside its run (`ctx.scope`) has relevance 0 and says why, whatever its style.
 */
export function validateReflection(r: ReflectionDraft, ctx: QualityContext): QualityVerdict {
  const offRun = ctx.scope ? offRunViolations(r, ctx.scope) : [];
  const styled = scoreReflection(r, ctx);
  const scores =
    offRun.length === 0
      ? styled
      : {
          ...styled,
          relevance: 0,
          quality: round((styled.completeness + styled.depth + styled.actionability) / 4),
        };
  const t = QUALITY_THRESHOLDS;
  const violations: string[] = [];
  if (scores.depth < t.depth) violations.push(`Shallow reflection: depth=${scores.depth} < ${t.depth}`);
  if (scores.actionability < t.actionability)
    violations.push(`Not actionable: ${scores.actionability} < ${t.actionability}`);
  if (scores.completeness < t.completeness)
    violations.push(`Incomplete reflection: ${scores.completeness} < ${t.completeness}`);
  violations.push(...offRun);
  const minimum = ctx.first ? t.firstQuality : t.quality;
  return { valid: violations.length === 0 && scores.quality >= minimum, scores, violations };
}

/** Words of four letters or more that carry content. */
function contentWords(text: string): string[] {
  return normalize(text)
    .trim()
    .split(" ")
    .filter((w) => w.length >= 4 && !STOP.has(w) && !/^\d+$/.test(w));
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
