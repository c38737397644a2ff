import { readParamsJson } from "../planning/parse.js";
import { z } from "zod";
import type { ExecutionFeedback } from "../domain/feedback.js";
import type { Plan } from "../domain/plan.js";
import { StrategyType } from "../domain/revision.js";
import type { RecoveryProposal } from "../reasoning/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { FailureContext } from "./context.js";
import { recover } from "./recover.js";
import type { StrategyHint, StrategyInput, StrategyOutcome } from "./strategies/index.js";

/** Seed 003: a model's proposal below this confidence is not acted on (the caller skips or escalates). */
export const MIN_PROPOSAL_CONFIDENCE = 0.6;

/** Strategies whose planning needs facts only Candor's rules have (a violation breakdown, an upstream step, a widening). */
const RULES_ONLY: readonly StrategyType[] = ["ADJUST_PARAMETERS", "FIX_DEPENDENCIES", "FIND_WORKAROUND"];

/**
 * What the model is asked to answer (strict-mode friendly: every field required, nullable, no free-form objects;
 * parameters travel as JSON-encoded strings). Converted to RecoveryProposal by `toRecoveryProposal`.
 */
export const ModelRecoveryProposal = z.object({
  strategy: StrategyType,
  rationale: z.string(),
  confidence: z.number(),
  modifications: z.object({
    /** The tool's arguments as a JSON-encoded object, e.g. "{\"city\":\"Lyon\"}", or null. */
    paramsJson: z.string().nullable(),
    tool: z.string().nullable(),
    workerType: z.string().nullable(),
    substeps: z
      .array(
        z.object({
          description: z.string(),
          tool: z.string(),
          paramsJson: z.string().nullable(),
        }),
      )
      .nullable(),
  }),
});
export type ModelRecoveryProposal = z.infer<typeof ModelRecoveryProposal>;

/** Seed 003's name for DECOMPOSE, and lower-case spellings, as a model that ignored the schema may write them. */
const STRATEGY_ALIASES: Record<string, StrategyType> = {
  DECOMPOSE_TASK: "DECOMPOSE",
  RETRY_WITH_PARAMETERS: "RETRY_WITH_PARAMS",
};

/**
 * A model's answer (already parsed JSON) → RecoveryProposal, or a sentence saying why it is unusable. Tolerates
 * what a model without strict mode writes: seed 003's strategy names and lower case, a missing `modifications`,
 * params as an object instead of a string, a percentage confidence.
 */
export function toRecoveryProposal(raw: unknown): { proposal: RecoveryProposal } | { why: string } {
  const loose = loosen(raw);
  const parsed = ModelRecoveryProposal.safeParse(loose);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.map(String).join(".") || "(root)"}: ${i.message}`);
    return { why: `the answer does not match the recovery schema: ${issues.join("; ")}` };
  }
  const m = parsed.data.modifications;
  const confidence =
    parsed.data.confidence > 1 && parsed.data.confidence <= 100 ? parsed.data.confidence / 100 : parsed.data.confidence;
  if (!(confidence >= 0 && confidence <= 1))
    return { why: `the answer's confidence ${parsed.data.confidence} is outside 0..1` };
  const params = paramsFromJson(m.paramsJson, "paramsJson");
  if ("why" in params) return params;
  const substeps: NonNullable<RecoveryProposal["modifications"]["substeps"]> = [];
  for (const [i, s] of (m.substeps ?? []).entries()) {
    const p = paramsFromJson(s.paramsJson, `substeps.${i}.paramsJson`);
    if ("why" in p) return p;
    substeps.push({ description: s.description, tool: s.tool, params: p.value ?? {} });
  }
  return {
    proposal: {
      strategy: parsed.data.strategy,
      modifications: {
        params: params.value,
        tool: m.tool,
        workerType: m.workerType,
        substeps: m.substeps === null ? null : substeps,
      },
      confidence,
      rationale: parsed.data.rationale,
    },
  };
}

function loosen(raw: unknown): unknown {
  if (!isRecord(raw)) return raw;
  const out: Record<string, unknown> = { ...raw };
  const strategy = out.strategy ?? out.strategy_type ?? out.strategyType;
  if (typeof strategy === "string") {
    const upper = strategy.trim().toUpperCase();
    out.strategy = STRATEGY_ALIASES[upper] ?? upper;
  }
  const mods: Record<string, unknown> = isRecord(out.modifications) ? { ...out.modifications } : {};
  for (const key of ["paramsJson", "tool", "workerType", "substeps"]) mods[key] ??= null;
  if (isRecord(mods.params) && mods.paramsJson === null) mods.paramsJson = JSON.stringify(mods.params);
  delete mods.params;
  if (Array.isArray(mods.substeps)) {
    mods.substeps = mods.substeps.map((s: unknown) => {
      if (!isRecord(s)) return s;
      const { params, ...rest } = s;
      return { paramsJson: isRecord(params) ? JSON.stringify(params) : null, ...rest };
    });
  }
  out.modifications = mods;
  return out;
}

function paramsFromJson(
  json: string | null,
  where: string,
): { value: Record<string, unknown> | null } | { why: string } {
  const read = readParamsJson(json);
  return read.ok ? { value: read.value } : { why: `${where} ${read.problem}: ${(json ?? "").slice(0, 80)}` };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

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
