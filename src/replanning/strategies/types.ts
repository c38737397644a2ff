import type { ExecutionFeedback } from "../../domain/feedback.js";
import type { Plan, TaskStep } from "../../domain/plan.js";
import type { PlanningRequest } from "../../domain/request.js";
import type { PlanRevision, StrategyType } from "../../domain/revision.js";
import type { ToolRegistry } from "../../tools/registry.js";
import { STRATEGY_DELTAS, clampConfidence } from "../../confidence/update.js";
import type { FailureContext } from "../../domain/feedback.js";
import { triggerText } from "../context.js";

export interface StrategyInput {
  plan: Plan;
  failure: FailureContext;
  registry: ToolRegistry;
  /** All feedback so far (for the revision's trigger). */
  feedback: readonly ExecutionFeedback[];
  /** 1-based number of the revision being made. */
  revisionNumber: number;
  /** The user's request, when known: RETRY_WITH_PARAMS and SWAP_TOOL re-read parameters from it. */
  request?: PlanningRequest;
  /**
   * A suggestion for this strategy — a model's recovery proposal (src/replanning/proposal.ts) or a person's answer
   * to an escalation: the strategy builds the revision from it instead of deriving its own, and says why it cannot
   * when the suggestion does not fit. Taken by RETRY_WITH_PARAMS, SWAP_TOOL, RETRY_DIFFERENT_AGENT, DECOMPOSE and
   * SKIP; the others ignore it. Given through `recover` (src/replanning/recover.ts), the one builder.
   */
  hint?: StrategyHint;
}

/** What a model or a person suggested for a strategy; each field is null when they said nothing about it. */
export interface StrategyHint {
  /** Who suggested it: the rules (a SKIP with their reason), a model's validated proposal, or a person's answer. */
  by: "model" | "person" | "rules";
  /** New parameters for the step's tool (RETRY_WITH_PARAMS), or for the tool or worker it names. */
  params: Record<string, unknown> | null;
  /** The tool to use instead (SWAP_TOOL), or preferred by the worker it names (RETRY_DIFFERENT_AGENT). */
  tool: string | null;
  /** The worker to take over (RETRY_DIFFERENT_AGENT), or to use the swapped tool (SWAP_TOOL). */
  workerType: string | null;
  /** The 2–4 smaller steps, in order (DECOMPOSE). */
  substeps: readonly { description: string; tool: string; params: Record<string, unknown> }[] | null;
  /** Why it was suggested, as the revision's rationale. */
  rationale: string;
}

/** A revision made by one of the strategies (never by a person's guidance). */
type StrategyRevision = PlanRevision & { strategy: StrategyType };

/** A strategy either revises the plan or says why it does not apply (and the next strategy is tried). */
export type StrategyOutcome =
  { applies: true; plan: Plan; revision: StrategyRevision } | { applies: false; reason: string };

/** A replanning strategy: a pure function from the plan and one failure to a revised plan. */
export type Strategy = (input: StrategyInput) => StrategyOutcome;

/** Assembles the revision record and applies the strategy's confidence delta to the plan. */
export function revise(
  input: StrategyInput,
  strategy: StrategyType,
  plan: Plan,
  parts: {
    rationale: string;
    changes: string[];
    newStepIds?: string[];
    removedStepIds?: string[];
    modifiedStepIds?: string[];
  },
): StrategyOutcome {
  const before = input.plan.confidence;
  const after = clampConfidence(before + STRATEGY_DELTAS[strategy]);
  const revision: StrategyRevision = {
    revisionId: `rev_${input.revisionNumber}`,
    planId: input.plan.planId,
    trigger: triggerText(input.plan, input.feedback),
    strategy,
    failedTaskId: input.failure.step.id,
    failureClass: input.failure.failureClass,
    rationale: parts.rationale,
    changes: parts.changes,
    newStepIds: parts.newStepIds ?? [],
    removedStepIds: parts.removedStepIds ?? [],
    modifiedStepIds: parts.modifiedStepIds ?? [],
    confidenceDelta: Math.round((after - before) * 100) / 100,
    confidenceBefore: before,
    confidenceAfter: after,
    at: new Date().toISOString(),
  };
  return { applies: true, plan: { ...plan, confidence: after }, revision };
}

/** A fresh replacement for `failed`: new id and content, clean run state, and the lineage that counts its failures. */
export function successorOf(failed: TaskStep, id: string, changes: Partial<TaskStep>): TaskStep {
  return {
    ...failed,
    ...changes,
    id,
    status: "pending",
    result: null,
    attempts: 0,
    dispatches: 0,
    replaces: failed.id,
    lineage: [...failed.lineage, failed.id],
    skipReason: null,
    skipCause: null,
    missingInputs: [],
  };
}
