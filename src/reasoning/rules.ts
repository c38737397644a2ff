import { resultEntries, type TaskStep } from "../domain/plan.js";
import type { PlanningRequest } from "../domain/request.js";
import { planAssumptions, planWithRules } from "../planning/rules-planner.js";
import { reflectWithRules } from "../reflection/rules-reflection.js";
import type { Result } from "../result.js";
import type {
  PlanResult,
  PlanningContext,
  Reasoner,
  RecoveryProposal,
  ReflectionAnswer,
  ReflectionQuestion,
  SynthesisInput,
} from "./types.js";

/** One line for a step's result: its own `summary` when it has one, else compact JSON. */
function describeResult(result: unknown): string {
  if (result && typeof result === "object" && "summary" in result && typeof result.summary === "string") {
    return (result as { summary: string }).summary;
  }
  if (typeof result === "string") return result;
  const json = JSON.stringify(result);
  return json.length > 300 ? `${json.slice(0, 297)}...` : json;
}

/**
 * The template's line for one step's result: "- description: result". SYNTHESIZE's answer check appends these lines
 * when an answer leaves results out (src/transparency/answer-check.ts).
 */
export function resultLine(
  step: Pick<TaskStep, "description"> & Partial<Pick<TaskStep, "id" | "workerType" | "tools">>,
  result: unknown,
): string {
  const entries = resultEntries(step, result);
  if (entries.length === 1 && entries[0]!.label === null) return `- ${step.description}: ${describeResult(result)}`;
  // A reactive step's result, one line per tool it called: each tool's summary whole, none cut by another's.
  return [`- ${step.description}:`, ...entries.map((e) => `  - ${e.label}: ${describeResult(e.value)}`)].join("\n");
}

/** Deterministic, offline reasoning: plans from tool metadata and template synthesis. */
export class RulesReasoner implements Reasoner {
  readonly kind = "rules" as const;

  async plan(request: PlanningRequest, ctx: PlanningContext): Promise<PlanResult> {
    const plan = planWithRules(request, ctx.registry, { unreliableTools: ctx.unreliableTools });
    return { plan, notes: planAssumptions(request, ctx.registry, plan).map((a) => `Assumed: ${a}`) };
  }

  /** Rules classify every failure they know before asking; an unknown one gets no proposal from rules. */
  async proposeRecovery(): Promise<RecoveryProposal | null> {
    return null;
  }

  /** Deterministic: the same input gives the same reflection, whatever the attempt. */
  async reflect(question: ReflectionQuestion): Promise<Result<ReflectionAnswer>> {
    return { ok: true, value: { draft: reflectWithRules(question.input), usage: null } };
  }

  async synthesize(input: SynthesisInput): Promise<string> {
    const lines = [`${input.plan.objective}`];
    for (const step of input.plan.steps) {
      if (!(step.id in input.results)) continue;
      lines.push(resultLine(step, input.results[step.id]));
    }
    if (input.missing.length > 0) {
      lines.push("Missing from this answer:");
      for (const m of input.missing) lines.push(`- ${m.description} (${m.id}): ${m.reason}`);
    }
    return lines.join("\n");
  }
}
