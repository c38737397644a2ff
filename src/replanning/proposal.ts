import { readParamsJson } from "../planning/parse.js";
import { z } from "zod";
import type { ExecutionFeedback } from "../domain/feedback.js";
import type { Plan, TaskStep } from "../domain/plan.js";
import { StrategyType } from "../domain/revision.js";
import { assignOrder } from "../planning/validate.js";
import type { RecoveryProposal } from "../reasoning/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import { canStandIn, requiredInputs, type ToolSpec } from "../tools/types.js";
import type { FailureContext } from "./context.js";
import { freshId, replaceStep } from "./plan-edit.js";
import { skipWithReason } from "./strategies/skip.js";
import { revise, successorOf, type StrategyInput, type StrategyOutcome } from "./strategies/types.js";

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
 * confidence below MIN_PROPOSAL_CONFIDENCE, modifications that do not fit the strategy (unregistered tools or
 * workers, params the tool's schema rejects, a swap or substeps that do not produce the step's outputs) and the
 * strategies only the rules may choose. Pure: no model call, no mutation of `plan`.
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
  const built = BUILDERS[strategy as ModelStrategy](input, proposal);
  if ("reason" in built) return refuse(built.reason);
  return { ok: true, outcome: built };
}

function refuse(why: string): { ok: false; reason: string } {
  return { ok: false, reason: `The model's proposal was refused: ${why}.` };
}

type ModelStrategy = "RETRY_WITH_PARAMS" | "SWAP_TOOL" | "RETRY_DIFFERENT_AGENT" | "DECOMPOSE" | "SKIP";
type Applied = Extract<StrategyOutcome, { applies: true }>;
type Built = Applied | { reason: string };
type Builder = (input: StrategyInput, proposal: RecoveryProposal) => Built;

const BUILDERS: Record<ModelStrategy, Builder> = {
  RETRY_WITH_PARAMS: retryWithParams,
  SWAP_TOOL: swapTool,
  RETRY_DIFFERENT_AGENT: retryDifferentAgent,
  DECOMPOSE: decompose,
  SKIP: (input, proposal) => applied(skipWithReason(input, suggested(proposal))),
};

function retryWithParams(input: StrategyInput, proposal: RecoveryProposal): Built {
  const { failure } = input;
  const failed = failure.step;
  const name = failure.tool ?? failed.tools[0];
  const tool = name === undefined ? undefined : input.registry.tool(name);
  if (!tool)
    return {
      reason: `RETRY_WITH_PARAMS needs the failed step's tool, but ${name ?? "the step has none"}${name ? " is not registered" : ""}`,
    };
  const params = proposal.modifications.params;
  if (params === null)
    return { reason: `RETRY_WITH_PARAMS needs new parameters for ${tool.name}, and none were given` };
  const invalid = schemaProblem(tool, params);
  if (invalid) return { reason: invalid };
  if (sameParams(params, failure.params))
    return { reason: `RETRY_WITH_PARAMS proposes the parameters that already failed (${JSON.stringify(params)})` };
  const step = successor(input, "params", { tools: [tool.name], params });
  return applied(
    revise(input, "RETRY_WITH_PARAMS", replaceStep(input.plan, failed.id, step), {
      rationale: suggested(proposal),
      changes: [`Retry task ${failed.id} with ${tool.name} and new parameters ${JSON.stringify(params)} as ${step.id}`],
      newStepIds: [step.id],
      removedStepIds: [failed.id],
    }),
  );
}

function swapTool(input: StrategyInput, proposal: RecoveryProposal): Built {
  const { failure, registry } = input;
  const failed = failure.step;
  const name = proposal.modifications.tool;
  if (name === null) return { reason: "SWAP_TOOL needs a tool to swap to, and none was given" };
  const tool = registry.tool(name);
  if (!tool) return { reason: `SWAP_TOOL names tool "${name}", which is not registered` };
  const tried = triedTools(failure);
  if (tried.includes(tool.name)) return { reason: `SWAP_TOOL names ${tool.name}, which already failed this step` };
  const outputs = neededOutputs(failed, registry);
  const missing = outputs.filter((o) => !tool.produces.includes(o));
  if (missing.length > 0)
    return { reason: `SWAP_TOOL names ${tool.name}, which does not produce ${missing.join(", ")}` };
  const worker = workerFor(input, tool, proposal.modifications.workerType);
  if (!worker) return { reason: `SWAP_TOOL names ${tool.name}, which no worker type may use` };
  const params = paramsFor(tool, proposal.modifications.params, failure.params, "SWAP_TOOL");
  if ("reason" in params) return params;
  const step = successor(input, "swap", {
    workerType: worker,
    tools: [tool.name],
    params: params.value,
    estimates: tool.estimates,
    description: tool.describeStep?.(params.value) ?? failed.description,
  });
  return applied(
    revise(input, "SWAP_TOOL", replaceStep(input.plan, failed.id, step), {
      rationale: suggested(proposal),
      changes: [
        `Swap ${tried[tried.length - 1] ?? "the failed tool"} for ${tool.name} on task ${failed.id} (worker ${worker}) as ${step.id}`,
      ],
      newStepIds: [step.id],
      removedStepIds: [failed.id],
    }),
  );
}

function retryDifferentAgent(input: StrategyInput, proposal: RecoveryProposal): Built {
  const { failure, registry } = input;
  const failed = failure.step;
  const name = proposal.modifications.workerType;
  if (name === null) return { reason: "RETRY_DIFFERENT_AGENT needs a worker type, and none was given" };
  if (!registry.worker(name))
    return { reason: `RETRY_DIFFERENT_AGENT names worker type "${name}", which is not registered` };
  const failedWorkers = [
    ...new Set([
      ...failed.failedWorkers,
      failed.workerType,
      ...failure.history.map((f) => f.workerType).filter((w): w is string => w !== null),
    ]),
  ];
  if (failedWorkers.includes(name))
    return { reason: `RETRY_DIFFERENT_AGENT names ${name}, which already failed this step` };
  const outputs = neededOutputs(failed, registry);
  const received = registry.tool(failed.tools[0] ?? "")?.consumes ?? [];
  const producers = registry.grant(name).filter((t) => canStandIn(t, outputs, received));
  const asked = proposal.modifications.tool;
  const tried = triedTools(failure);
  // The model's tool when the worker may use it; otherwise one that has not failed yet, then the failed one.
  const tool =
    (asked !== null ? producers.find((t) => t.name === asked) : undefined) ??
    producers.find((t) => !tried.includes(t.name)) ??
    producers[0];
  if (!tool)
    return {
      reason: `RETRY_DIFFERENT_AGENT names ${name}, whose tools do not produce ${outputs.join(", ") || "this step's output"}`,
    };
  const params = paramsFor(tool, proposal.modifications.params, failure.params, "RETRY_DIFFERENT_AGENT");
  if ("reason" in params) return params;
  const step = successor(input, "retry", {
    workerType: name,
    tools: [tool.name],
    params: params.value,
    estimates: tool.estimates,
    failedWorkers,
    // A backup gets one extra attempt after a pause, as in the rules' RETRY_DIFFERENT_AGENT.
    retry: { maxAttempts: 2, backoffMs: [500] },
  });
  return applied(
    revise(input, "RETRY_DIFFERENT_AGENT", replaceStep(input.plan, failed.id, step), {
      rationale: suggested(proposal),
      changes: [`Retry task ${failed.id} with agent ${name} using ${tool.name} as ${step.id}`],
      newStepIds: [step.id],
      removedStepIds: [failed.id],
    }),
  );
}

function decompose(input: StrategyInput, proposal: RecoveryProposal): Built {
  const { failure, registry, plan } = input;
  const failed = failure.step;
  const subs = proposal.modifications.substeps;
  if (subs === null || subs.length < 2 || subs.length > 4)
    return {
      reason: `DECOMPOSE needs 2 to 4 substeps, and ${subs === null ? "none were" : `${subs.length} ${subs.length === 1 ? "was" : "were"}`} given`,
    };
  const parts: TaskStep[] = [];
  for (const [i, sub] of subs.entries()) {
    const n = i + 1;
    const tool = registry.tool(sub.tool);
    if (!tool) return { reason: `DECOMPOSE substep ${n} names tool "${sub.tool}", which is not registered` };
    if (sub.description.trim().length === 0) return { reason: `DECOMPOSE substep ${n} has no description` };
    const invalid = schemaProblem(tool, sub.params, `substep ${n}: `);
    if (invalid) return { reason: `DECOMPOSE ${invalid}` };
    const worker = workerFor(input, tool, null);
    if (!worker) return { reason: `DECOMPOSE substep ${n} uses ${tool.name}, which no worker type may use` };
    // A recovery may split a step, never add an action no one asked for: a step that only read cannot become a
    // booking, however the model words it.
    if (tool.sideEffect !== "none" && !failed.tools.some((t) => registry.tool(t)?.sideEffect === tool.sideEffect)) {
      return {
        reason: `DECOMPOSE substep ${n} uses ${tool.name}, which has a ${tool.sideEffect} side effect the failed step ${failed.id} does not have`,
      };
    }
    // Each part must get what it cannot run without: from the failed step's own inputs or an earlier part.
    const available = new Set([
      ...plan.steps.filter((s) => failed.dependsOn.includes(s.id)).flatMap((s) => s.expectedOutputs),
      ...parts.flatMap((p) => p.expectedOutputs),
    ]);
    const lacking = requiredInputs(tool).filter((c) => !available.has(c));
    if (lacking.length > 0)
      return {
        reason: `DECOMPOSE substep ${n} uses ${tool.name}, which needs ${lacking.join(", ")} that neither the failed step's inputs nor an earlier substep provide`,
      };
    const last = n === subs.length;
    if (last) {
      const missing = neededOutputs(failed, registry).filter((o) => !tool.produces.includes(o));
      if (missing.length > 0)
        return { reason: `DECOMPOSE's last substep uses ${tool.name}, which does not produce ${missing.join(", ")}` };
    }
    const previous = parts[parts.length - 1];
    parts.push({
      ...successor(input, `part${n}`, {
        workerType: worker,
        tools: [tool.name],
        params: sub.params,
        estimates: tool.estimates,
        description: sub.description.trim(),
        expectedOutputs: last ? failed.expectedOutputs : tool.produces,
      }),
      // Later parts keep the original's dependencies too, since a step receives inputs only from what it depends on.
      dependsOn: previous ? [...failed.dependsOn, previous.id] : failed.dependsOn,
    });
  }
  const lastId = parts[parts.length - 1]!.id;
  const steps: TaskStep[] = [];
  for (const s of plan.steps) {
    if (s.id === failed.id) steps.push(...parts);
    else
      steps.push(
        s.dependsOn.includes(failed.id)
          ? { ...s, dependsOn: s.dependsOn.map((d) => (d === failed.id ? lastId : d)) }
          : s,
      );
  }
  const ids = parts.map((p) => p.id);
  return applied(
    revise(
      input,
      "DECOMPOSE",
      { ...plan, steps: assignOrder(steps) },
      {
        rationale: suggested(proposal),
        changes: [
          `Split task ${failed.id} into ${ids.join(" → ")}; ${lastId} produces ${failed.expectedOutputs.join(", ") || "its result"}`,
        ],
        newStepIds: ids,
        removedStepIds: [failed.id],
      },
    ),
  );
}

/** A fresh step in the failed step's place, with its lineage and a clean slate. */
function successor(input: StrategyInput, suffix: string, changes: Partial<TaskStep>): TaskStep {
  const failed = input.failure.step;
  return successorOf(
    failed,
    freshId(
      input.plan,
      failed.id,
      suffix,
      input.feedback.map((f) => f.taskId),
    ),
    changes,
  );
}

/** What the replacement must produce: the step's expected outputs, else what its tool produces. */
function neededOutputs(step: TaskStep, registry: ToolRegistry): string[] {
  return step.expectedOutputs.length > 0 ? step.expectedOutputs : (registry.tool(step.tools[0] ?? "")?.produces ?? []);
}

function triedTools(failure: FailureContext): string[] {
  const tools = [...failure.history.map((f) => f.tool), failure.tool].filter((t): t is string => t !== null);
  return [...new Set(tools.length > 0 ? tools : failure.step.tools.slice(0, 1))];
}

/** The model's worker when it may use the tool, else the step's own worker, else the registry's best for the tool. */
function workerFor(input: StrategyInput, tool: ToolSpec, asked: string | null): string | undefined {
  const { registry } = input;
  if (asked !== null && registry.worker(asked) && registry.isGranted(asked, tool.name)) return asked;
  const own = input.failure.step.workerType;
  if (registry.isGranted(own, tool.name)) return own;
  return registry.workerForTool(tool.name)?.name;
}

/** The proposal's params when given (they must fit the tool); otherwise the failed ones, if the tool accepts them. */
function paramsFor(
  tool: ToolSpec,
  given: Record<string, unknown> | null,
  previous: Record<string, unknown>,
  strategy: string,
): { value: Record<string, unknown> } | { reason: string } {
  if (given !== null) {
    const invalid = schemaProblem(tool, given);
    return invalid ? { reason: `${strategy}: ${invalid}` } : { value: given };
  }
  const invalid = schemaProblem(tool, previous);
  return invalid
    ? { reason: `${strategy} gave no parameters, and the failed step's do not fit ${tool.name}: ${invalid}` }
    : { value: previous };
}

function schemaProblem(tool: ToolSpec, params: Record<string, unknown>, prefix = ""): string | null {
  const result = tool.schema.safeParse(params);
  if (result.success) return null;
  const issues = result.error.issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join(".") || "(root)"}: ${i.message}`);
  return `${prefix}parameters ${JSON.stringify(params)} are not valid for ${tool.name} (${issues.join("; ")})`;
}

function sameParams(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isRecord(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function suggested(proposal: RecoveryProposal): string {
  const why = proposal.rationale.trim() || "no reason given.";
  return `Suggested by the model: ${/[.!?]$/.test(why) ? why : `${why}.`} (confidence ${proposal.confidence})`;
}

function applied(outcome: StrategyOutcome): Applied {
  if (!outcome.applies) throw new Error(`a proposal's revision did not apply: ${outcome.reason}`);
  return outcome;
}
