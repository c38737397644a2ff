import { z } from "zod";
import { StrategyType } from "../domain/revision.js";
import { readParamsJson } from "../planning/parse.js";
import type { RecoveryProposal } from "./types.js";

/*
 * A model's answer to "how should this failure be recovered?", read into a RecoveryProposal. Reading the answer
 * is the model reasoner's; judging whether the proposal fits the plan is recovery's (src/replanning/proposal.ts).
 */

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
