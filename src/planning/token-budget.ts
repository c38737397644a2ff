import type { Plan } from "../domain/plan.js";
import type { PlanningRequest } from "../domain/request.js";
import { tokenBudgetOf, type TokenEvent } from "../domain/usage.js";
import { CandorError, ErrorCode } from "../errors.js";
import type { Reasoner } from "../reasoning/types.js";
import { callEstimate } from "../reasoning/usage.js";
import type { ToolRegistry } from "../tools/registry.js";
import { isModelDriven } from "../tools/model-driven.js";

/**
 * Model calls a model-driven step is expected to make: a tool call or two and its answer. The cap (default 6) is
 * the worst case; estimating with it would refuse plans that fit, and the check before each call still holds.
 */
const EXPECTED_CALLS_PER_STEP = 3;

/** What a plan is expected to spend in tokens, in total and by part, said in words for the refusal. */
export interface TokenEstimate {
  total: number;
  parts: string[];
}

/**
 * Seed 002 PRE-PLAN-003 for a token budget: the tokens already spent (planning), plus every model-driven step's
 * expected calls, plus the answer's synthesis (and its review) when a model writes it. Estimates come from what calls at the same
 * site took in this run, else from defaults (src/reasoning/usage.ts). Zero without a model.
 */
export function estimatePlanTokens(
  plan: Plan,
  reasoner: Reasoner,
  registry: ToolRegistry,
  history: readonly TokenEvent[],
): TokenEstimate {
  const parts: string[] = [];
  let total = 0;
  const spent = history.reduce((n, e) => (e.type === "call" ? n + e.inputTokens + e.outputTokens : n), 0);
  if (spent > 0) {
    total += spent;
    parts.push(`${spent} already used (planning)`);
  }
  const workers = reasoner.workerModel;
  // Steps still to run: a plan made again mid-run keeps finished steps with their results, and they cost nothing more.
  const toRun = plan.steps.filter((s) => s.status !== "done" && s.status !== "skipped");
  const driven = workers ? toRun.filter((s) => isModelDriven(s, registry, workers)) : [];
  if (workers && driven.length > 0) {
    const calls = Math.min(EXPECTED_CALLS_PER_STEP, workers.maxModelCalls);
    const each = callEstimate("worker", history);
    total += driven.length * calls * each;
    parts.push(
      `${driven.length} model-driven step(s) (${driven.map((s) => s.id).join(", ")}) × ${calls} call(s) × ~${each}`,
    );
  }
  if (reasoner.kind === "llm") {
    const synthesis = callEstimate("synthesis", history);
    total += synthesis;
    parts.push(`~${synthesis} to write the answer`);
  }
  if (reasoner.kind === "llm" && reasoner.reviewAnswer) {
    // The answer is reviewed against the request before it is written: a call of its own (site `review`).
    const review = callEstimate("review", history);
    total += review;
    parts.push(`~${review} to review it`);
  }
  return { total, parts };
}

/**
 * Refuses a plan whose estimate exceeds the request's `constraints.tokenBudget` with INSUFFICIENT_RESOURCES, saying
 * what the estimate is made of and what to change. Nothing to check without a token budget.
 */
export function assertPlanFitsTokenBudget(
  plan: Plan,
  request: PlanningRequest,
  reasoner: Reasoner,
  registry: ToolRegistry,
  history: readonly TokenEvent[],
): void {
  // The limit as it stands: a person may have raised it during the run (a budget change in the history).
  const budget = tokenBudgetOf(request.constraints.tokenBudget, history);
  if (!budget) return;
  const estimate = estimatePlanTokens(plan, reasoner, registry, history);
  if (estimate.total <= budget.limit) return;
  throw new CandorError(
    `The plan is estimated to use ${estimate.total} model tokens (${estimate.parts.join("; ")}) but the token budget is ${budget.limit}. Raise the token budget to at least ${estimate.total} (--token-budget, or constraints.tokenBudget), or ask for less so fewer steps need the model.`,
    ErrorCode.INSUFFICIENT_RESOURCES,
    { details: { constraint: "tokenBudget", limit: budget.limit, actual: estimate.total } },
  );
}
