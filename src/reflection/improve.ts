import type { ReflectionDraft } from "../domain/reflection.js";
import type { Result } from "../result.js";
import type { ModelUsage, Reasoner } from "../reasoning/types.js";
import { validateReflection, type QualityContext, type QualityVerdict } from "./quality.js";
import { reflectWithRules, type ReflectionInput } from "./rules-reflection.js";

/** Model attempts of the improvement loop (seed 001 scenario 7). */
const MAX_REFLECTION_ATTEMPTS = 3;

/** What the improvement loop produced: the last draft judged, its verdict, and how it got there. */
export interface LoopOutcome {
  draft: ReflectionDraft;
  verdict: QualityVerdict;
  /** Who wrote `draft`. */
  source: "rules" | "llm";
  /** Model attempts made (0 when the rules wrote it without asking a model). */
  iterations: number;
  /** Every model call's tokens, for the cost ledger. */
  usage: ModelUsage[];
  /** Why the model's reflection was not used, when it was not. */
  degraded: "budget" | "model" | null;
  /** What happened on the way, in plain language (fallbacks, failed attempts). */
  notes: string[];
  /** The model's drafts the gate refused, each with why: never stored, but logged. */
  refused: { attempt: number; quality: number; violations: string[] }[];
}

export interface LoopOptions {
  signal?: AbortSignal;
  /**
   * Asked before each model call (the cost budget): `ok: false` stops the loop, with its reason, and the rules
   * reflect instead.
   */
  beforeModelCall?: (attempt: number) => Result<void>;
  /** Told after each model call, with its tokens, so cost is recorded even when the loop goes on. */
  afterModelCall?: (usage: ModelUsage) => void;
}

/**
 * ReflectionImprovementLoop.generate_quality_reflection: with a model reasoner, up to three attempts — the standard
 * prompt, then with quality guidance and the violations, then with an example too — each judged by the quality
 * gate; the first that passes is used. When none passes, the model cannot be asked (budget) or its answer is
 * unusable, the rules reflect instead, and their reflection is judged by the same gate. With the rules reasoner,
 * one deterministic reflection (asking again would give the same). Cancellation through `signal` propagates.
 */
export async function generateQualityReflection(
  reasoner: Reasoner,
  input: ReflectionInput,
  ctx: QualityContext,
  opts: LoopOptions = {},
): Promise<LoopOutcome> {
  const usage: ModelUsage[] = [];
  const notes: string[] = [];
  const refused: LoopOutcome["refused"] = [];
  let degraded: LoopOutcome["degraded"] = null;
  let iterations = 0;
  if (reasoner.kind === "llm" && reasoner.reflect) {
    let previous: { draft: ReflectionDraft; violations: string[]; quality: number } | null = null;
    for (let attempt = 1; attempt <= MAX_REFLECTION_ATTEMPTS; attempt++) {
      const gate = opts.beforeModelCall?.(attempt);
      if (gate && !gate.ok) {
        notes.push(gate.reason);
        degraded = "budget";
        break;
      }
      opts.signal?.throwIfAborted();
      const answer = await reasoner.reflect({
        input,
        attempt: attempt as 1 | 2 | 3,
        previous,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      iterations = attempt;
      if (!answer.ok) {
        notes.push(`Attempt ${attempt}: ${answer.reason}.`);
        degraded = "model";
        break;
      }
      if (answer.value.usage) {
        usage.push(answer.value.usage);
        opts.afterModelCall?.(answer.value.usage);
      }
      const verdict = validateReflection(answer.value.draft, ctx);
      if (verdict.valid)
        return { draft: answer.value.draft, verdict, source: "llm", iterations, usage, degraded, notes, refused };
      refused.push({ attempt, quality: verdict.scores.quality, violations: verdict.violations });
      notes.push(
        `Attempt ${attempt}: quality ${verdict.scores.quality}${verdict.violations.length > 0 ? ` (${verdict.violations.join("; ")})` : ""}.`,
      );
      previous = { draft: answer.value.draft, violations: verdict.violations, quality: verdict.scores.quality };
    }
    if (degraded === null) degraded = "model";
    notes.push("The rules reflected instead.");
  }
  const draft = reflectWithRules(input);
  return {
    draft,
    verdict: validateReflection(draft, ctx),
    source: "rules",
    iterations,
    usage,
    degraded,
    notes,
    refused,
  };
}
