import type { PlanningRequest } from "../domain/request.js";
import type { Plan } from "../domain/plan.js";
import type { ToolRegistry } from "../tools/registry.js";

/** What the planner may consider besides the request: lessons from this user's earlier episodes. */
export interface PlanningContext {
  registry: ToolRegistry;
  /** Plain-language lessons from memory (e.g. "search_flights timed out in 2 of the last 3 runs"). */
  lessons: string[];
  /** Tools that failed in recent episodes, with how often; lowers confidence in plans that use them. */
  unreliableTools: Record<string, number>;
  signal?: AbortSignal;
}

/** A plan and how it was made, so the graph can say so (e.g. "the model's plan was unusable; used rules"). */
export interface PlanResult {
  plan: Plan;
  /** Plain-language notes about how the plan was obtained (fallbacks taken, repairs made). */
  notes: string[];
}

export interface SynthesisInput {
  request: PlanningRequest;
  plan: Plan;
  /** Results of the steps that succeeded, by step id. */
  results: Record<string, unknown>;
  /** Steps that did not produce anything, with the reason. */
  missing: { id: string; description: string; reason: string }[];
}

/**
 * The seam every judgement goes through. `rules` is deterministic and offline; `llm` asks a chat model and falls
 * back to rules where the model's answer is unusable. Implementations must not throw for a bad model answer:
 * they fall back and say so in `notes`. They throw CandorError NO_VALID_PLAN when no plan can be made at all.
 */
export interface Reasoner {
  readonly kind: "rules" | "llm";
  plan(request: PlanningRequest, ctx: PlanningContext): Promise<PlanResult>;
  synthesize(input: SynthesisInput): Promise<string>;
}
