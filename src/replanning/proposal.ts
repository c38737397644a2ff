import type { ExecutionFeedback } from "../domain/feedback.js";
import type { Plan } from "../domain/plan.js";
import { StrategyType } from "../domain/revision.js";
import type { RecoveryProposal } from "../reasoning/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { FailureContext } from "../domain/feedback.js";
import { recover } from "./recover.js";
import type { StrategyHint, StrategyInput, StrategyOutcome } from "./strategies/index.js";

/** Seed 003: a model's proposal below this confidence is not acted on (the caller skips or escalates). */
export const MIN_PROPOSAL_CONFIDENCE = 0.6;

/** Strategies whose planning needs facts only Candor's rules have (a violation breakdown, an upstream step, a widening). */
const RULES_ONLY: readonly StrategyType[] = ["ADJUST_PARAMETERS", "FIX_DEPENDENCIES", "FIND_WORKAROUND"];

/** A proposal that fits, as the revision it makes; or why it was refused (the caller then skips or escalates). */
export type ProposalVerdict =
  { ok: true; outcome: Extract<StrategyOutcome, { applies: true }> } | { ok: false; reason: string };

/**
 * Seed 003's validation of a model's recovery, then the revision it implies. Refuses an unknown strategy, a
 * confidence below MIN_PROPOSAL_CONFIDENCE and the strategies only the rules may choose; the rest is the
 * strategy's own: the proposal's modifications become the hint `recover` builds the revision from, refusing
 * modifications that do not fit (unregistered tools or workers, params the tool's schema rejects, a swap or
 * substeps that do not produce the step's outputs, the call that already failed, a tool without its inputs).
 * Pure: no model call, no mutation of `plan`.
 */
export function validateProposal(
  proposal: RecoveryProposal,
  failure: FailureContext,
  plan: Plan,
  registry: ToolRegistry,
  revisionNumber: number,
  feedback: readonly ExecutionFeedback[],
): ProposalVerdict {
  const known = StrategyType.safeParse(proposal.strategy);
  if (!known.success)
    return refuse(`"${String(proposal.strategy)}" is not a strategy Candor knows (${StrategyType.options.join(", ")})`);
  const strategy = known.data;
  if (!Number.isFinite(proposal.confidence) || proposal.confidence < MIN_PROPOSAL_CONFIDENCE) {
    return refuse(
      `its confidence ${proposal.confidence} is below ${MIN_PROPOSAL_CONFIDENCE}, the minimum to act on a model's suggestion`,
    );
  }
  if (RULES_ONLY.includes(strategy)) {
    return refuse(
      `${strategy} is not accepted from a model: Candor chooses it only from its own rules, which have the facts it needs`,
    );
  }
  const input: StrategyInput = { plan, failure, registry, feedback, revisionNumber };
  const built = recover(strategy, input, proposalHint(proposal));
  // The strategy's own refusals name it; the guards' do not, and the person reading the log needs to know which.
  if (!built.applies) return refuse(built.reason.startsWith(strategy) ? built.reason : `${strategy}: ${built.reason}`);
  return { ok: true, outcome: built };
}

/** A proposal as the hint its strategy takes: its modifications, and its rationale as the revision's. */
function proposalHint(proposal: RecoveryProposal): StrategyHint {
  const { params, tool, workerType, substeps } = proposal.modifications;
  return { by: "model", params, tool, workerType, substeps, rationale: suggested(proposal) };
}

function refuse(why: string): { ok: false; reason: string } {
  return { ok: false, reason: `The model's proposal was refused: ${why}.` };
}

function suggested(proposal: RecoveryProposal): string {
  const why = proposal.rationale.trim() || "no reason given.";
  return `Suggested by the model: ${/[.!?]$/.test(why) ? why : `${why}.`} (confidence ${proposal.confidence})`;
}
