import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { PlanningRequest } from "../domain/request.js";
import type { Plan } from "../domain/plan.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { StrategyType } from "../domain/revision.js";
import type { FailureContext } from "../domain/feedback.js";
import type { AnswerReview } from "../planning/coverage.js";
import type { ReflectionDraft } from "../domain/reflection.js";
import type { ReflectionInput } from "../reflection/rules-reflection.js";
import type { Result } from "../result.js";

/** One attempt of the reflection improvement loop (seed 001 scenario 7). */
export interface ReflectionQuestion {
  input: ReflectionInput;
  /** 1: the standard prompt; 2: with quality guidance and what was wrong last time; 3: with an example too. */
  attempt: 1 | 2 | 3;
  previous: { draft: ReflectionDraft; violations: string[]; quality: number } | null;
  signal?: AbortSignal;
}

/** Tokens a model call used, for cost tracking. */
export interface ModelUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
}

export interface ReflectionAnswer {
  draft: ReflectionDraft;
  /** Null when no model was called (the rules). */
  usage: ModelUsage | null;
}

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
 * A model's proposal for a failure no rule recognises (seed 003). `modifications` are what the strategy changes
 * on the failed step: new params (RETRY_WITH_PARAMS), a tool (SWAP_TOOL), a worker (RETRY_DIFFERENT_AGENT),
 * or 2–4 substeps (DECOMPOSE). Validated by the caller before it is applied.
 */
export interface RecoveryProposal {
  strategy: StrategyType;
  modifications: {
    params: Record<string, unknown> | null;
    tool: string | null;
    workerType: string | null;
    substeps: { description: string; tool: string; params: Record<string, unknown> }[] | null;
  };
  confidence: number;
  rationale: string;
}

/** What a reasoner sees of an unrecognised failure. */
export interface RecoveryQuestion {
  failure: FailureContext;
  plan: Plan;
  registry: ToolRegistry;
  signal?: AbortSignal;
}

/**
 * The model that drives a step whose call the plan does not fully determine (src/execution/agent-step.ts), and how
 * many times it may be asked per step, tool calls included.
 */
export interface WorkerModel {
  model: BaseChatModel;
  maxModelCalls: number;
  /** The worker's system prompt for one step: the reasoner's (prompts/ are the model reasoner's own). */
  prompt: (input: WorkerPromptInput) => string;
}

/** What a model-driven worker is told about its step. */
export interface WorkerPromptInput {
  step: { id: string; description: string; workerType: string; params: Record<string, unknown> };
  /** Outputs of the step's dependencies, by output name. */
  inputs: Record<string, unknown>;
  /** What the step must produce, each with the tool that produces it (null: the final answer is that output). */
  expected: { name: string; producedBy: string[] }[];
  /** Optional inputs the step runs without, with why. */
  missing: string[];
  /** The values the understanding record says the step uses, each with where it came from (the request's words). */
  values?: readonly { name: string; value: unknown; from: string }[];
  maxModelCalls: number;
}

/** Model calls a model-driven step may make by default: enough for a few tool calls and an answer. */
export const DEFAULT_MAX_MODEL_CALLS_PER_STEP = 6;

/**
 * The seam every judgement goes through. `rules` is deterministic and offline; `llm` asks a chat model and falls
 * back to rules where the model's answer is unusable. Implementations must not throw for a bad model answer:
 * they fall back and say so in `notes`. They throw CandorError NO_VALID_PLAN when no plan can be made at all.
 */
export interface Reasoner {
  readonly kind: "rules" | "llm";
  /** The chat model's name, for pricing its calls; absent for the rules. */
  readonly modelName?: string;
  /** Present when a step's tool loop may be model-driven; absent (the rules reasoner): every step is a direct call. */
  readonly workerModel?: WorkerModel;
  plan(request: PlanningRequest, ctx: PlanningContext): Promise<PlanResult>;
  synthesize(input: SynthesisInput): Promise<string>;
  /**
   * A recovery for a failure the rules cannot classify, or null when the reasoner has none (the rules reasoner
   * always returns null; the caller then skips or escalates). Must honour `signal`.
   */
  proposeRecovery(question: RecoveryQuestion): Promise<RecoveryProposal | null>;
  /**
   * Whether the results answer each part of the request (the plan's understanding record), or null when the
   * reasoner cannot judge (the rules reasoner never does: the record alone decides). Validated by the caller.
   */
  reviewAnswer?(input: SynthesisInput): Promise<AnswerReview | null>;
  /**
   * A reflection on a judged run (seed 001). The rules reasoner builds it deterministically; a model reasoner asks
   * the model and says why not (`ok: false`) when the answer is late, unreachable or unusable, so the caller falls
   * back to the rules. Absent: the caller uses the rules. Must honour `signal`.
   */
  reflect?(question: ReflectionQuestion): Promise<Result<ReflectionAnswer>>;
  /**
   * Grades passages found for a query (0..1 each, in order) for the task they serve, or null when the reasoner
   * cannot (the rules never do: term coverage grades then). Must honour `signal`.
   */
  gradeRelevance?(question: RelevanceQuestion): Promise<number[] | null>;
}

/** Passages a document search found, to grade for a query and its task. */
export interface RelevanceQuestion {
  query: string;
  task: string;
  passages: readonly { path: string; text: string }[];
  signal?: AbortSignal;
}
