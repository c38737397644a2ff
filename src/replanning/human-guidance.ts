import type { ExecutionFeedback } from "../domain/feedback.js";
import type { Plan, TaskStep } from "../domain/plan.js";
import type { PlanningRequest } from "../domain/request.js";
import type { PlanRevision } from "../domain/revision.js";
import { clampConfidence } from "../confidence/update.js";
import { CandorError } from "../errors.js";
import { assignOrder, validatePlan } from "../planning/validate.js";
import type { ToolRegistry } from "../tools/registry.js";
import { buildFailureContext, triggerText } from "./context.js";
import { checkEditedStep } from "./plan-edit.js";
import { recover } from "./recover.js";
import type { StrategyOutcome } from "./strategies/types.js";

/*
 * The two escalation answers that carry a person's own input (issue 4 item 2): `retry` with new parameters for
 * the failed step, and `replan` with guidance text. Both are pure: the node asks the reasoner for the guided plan
 * and hands it here to be merged, so what is kept and what runs again is decided (and tested) without a graph.
 */

export type HumanRetry =
  { ok: true; outcome: Extract<StrategyOutcome, { applies: true }> } | { ok: false; error: string };

/**
 * Retry the failed step with some parameters replaced by a person (`resume --retry --set maxPrice=300`). The new
 * parameters are checked against the tool's own schema first: a value the tool would refuse is an error naming
 * the field, and the thread keeps waiting. The step is replaced by `<id>_retry` (a fresh attempt budget, its
 * lineage kept), recorded as a RETRY_WITH_PARAMS revision made by a person.
 */
export function retryWithHumanParams(args: {
  plan: Plan;
  feedback: readonly ExecutionFeedback[];
  revisionCount: number;
  registry: ToolRegistry;
  taskId: string;
  params: Record<string, unknown>;
}): HumanRetry {
  const failed = args.plan.steps.find((s) => s.id === args.taskId && s.status === "failed");
  if (!failed)
    return {
      ok: false,
      error: `Step ${args.taskId} is not waiting for recovery, so it cannot be retried with new parameters.`,
    };
  const tool = args.registry.tool(failed.tools[0] ?? "");
  if (!tool)
    return {
      ok: false,
      error: `Step ${failed.id} names no known tool, so its parameters cannot be changed; skip it or replan instead.`,
    };
  const keys = Object.keys(args.params);
  if (keys.length === 0)
    return {
      ok: false,
      error: "No parameters were given: name at least one (e.g. --set maxPrice=300), or retry without --set.",
    };
  const params: Record<string, unknown> = { ...failed.params, ...args.params };
  // The same check as every other edit of a step (resume --adjust, fork --set): names, schema, description.
  const checked = checkEditedStep({ ...failed, params }, failed, args.registry);
  if (!checked.ok) return { ok: false, error: checked.reason };
  const unchanged = keys.filter((k) => JSON.stringify(failed.params[k]) === JSON.stringify(args.params[k]));
  if (unchanged.length === keys.length) {
    return {
      ok: false,
      error: `${keys.join(", ")} already ${keys.length === 1 ? "has" : "have"} that value; a retry with the same call would fail the same way. Change a parameter, or retry without --set.`,
    };
  }
  const failure = buildFailureContext(failed, args.feedback);
  const rationale = `A person asked to retry ${failed.id} with new parameters after it failed (${failure.error}).`;
  const input = {
    plan: args.plan,
    failure,
    registry: args.registry,
    feedback: args.feedback,
    revisionNumber: args.revisionCount + 1,
  };
  const outcome = recover("RETRY_WITH_PARAMS", input, {
    by: "person",
    rationale,
    params: checked.value.params,
    tool: null,
    workerType: null,
    substeps: null,
  });
  if (!outcome.applies) return { ok: false, error: outcome.reason };
  return { ok: true, outcome };
}

/**
 * The request the reasoner plans again from: the guidance goes first, so where a request states a value twice
 * (a budget, a number of nights) the person's newer value is the one the planner reads.
 */
export function guidedRequest(request: PlanningRequest, guidance: string): PlanningRequest {
  return { ...request, userIntent: `${guidance.trim().replace(/[.!\s]*$/, "")}. ${request.userIntent}` };
}

/** A done step's call, to recognise the same work in the guided plan. */
const callOf = (s: Pick<TaskStep, "tools" | "params" | "workerType">) =>
  JSON.stringify([s.workerType, s.tools, sortKeys(s.params)]);

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, sortKeys(v)]),
    );
  return value;
}

export interface GuidedMerge {
  plan: Plan;
  /** Done steps carried over with their results: they do not run again. */
  kept: string[];
  /** Steps of the guided plan that will run. */
  added: string[];
  /** Steps of the old plan that are gone (unfinished, or no longer needed). */
  dropped: string[];
}

/**
 * Merges a plan made for the guided request into the current one. A step of the new plan that repeats a done
 * step — same worker, tool and parameters, and every dependency itself kept — takes that step's place with its
 * result, so finished work is not redone; any other step runs. An id under which something already ran (a
 * step now dropped, replaced, or that failed: `usedIds` plus the current plan's dispatched steps) is never
 * reused: the effect ledger keys calls by step id, and a reused id could return the old step's recorded result.
 */
export function mergeGuidedPlan(current: Plan, fresh: Plan, usedIds: Iterable<string>): GuidedMerge {
  // A step that never ran (pending, dispatched 0 times) has no recorded calls: its id is free to use again.
  const ran = current.steps.filter((s) => s.dispatches > 0 || s.status !== "pending").map((s) => s.id);
  const taken = new Set<string>([...usedIds, ...ran]);
  const done = new Map<string, TaskStep>();
  for (const s of current.steps) if (s.status === "done" && !done.has(callOf(s))) done.set(callOf(s), s);
  const idFor = new Map<string, string>();
  const kept = new Set<string>();
  const steps: TaskStep[] = [];
  for (const step of [...fresh.steps].sort((a, b) => a.order - b.order)) {
    const deps = step.dependsOn.map((d) => idFor.get(d) ?? d);
    const match = done.get(callOf(step));
    const sameInputs =
      match && deps.every((d) => kept.has(d)) && [...deps].sort().join() === [...match.dependsOn].sort().join();
    if (match && sameInputs && !kept.has(match.id)) {
      idFor.set(step.id, match.id);
      kept.add(match.id);
      steps.push(match);
      continue;
    }
    let id = step.id;
    for (let n = 2; taken.has(id); n++) id = `${step.id}_g${n}`;
    taken.add(id);
    idFor.set(step.id, id);
    steps.push({
      ...step,
      id,
      dependsOn: deps,
      status: "pending",
      result: null,
      attempts: 0,
      dispatches: 0,
      failedWorkers: [],
      replaces: null,
      lineage: [],
      skipReason: null,
      skipCause: null,
    });
  }
  const ids = new Set(steps.map((s) => s.id));
  return {
    plan: {
      ...current,
      steps: assignOrder(steps),
      confidence: fresh.confidence,
      confidenceReasons: fresh.confidenceReasons,
      estimatedDurationMs: fresh.estimatedDurationMs,
      estimatedCost: fresh.estimatedCost,
    },
    kept: [...kept],
    added: steps.filter((s) => !kept.has(s.id)).map((s) => s.id),
    dropped: current.steps.filter((s) => !ids.has(s.id)).map((s) => s.id),
  };
}

export type GuidedReplan = { ok: true; plan: Plan; revision: PlanRevision } | { ok: false; error: string };

/**
 * Validates the merged plan against the request and builds the revision that explains it: what the person said,
 * what is kept, what runs. The new plan's confidence is the planner's score for the guided plan.
 */
export function guidedRevision(args: {
  current: Plan;
  merge: GuidedMerge;
  guidance: string;
  request: PlanningRequest;
  registry: ToolRegistry;
  feedback: readonly ExecutionFeedback[];
  revisionCount: number;
  failed: TaskStep | undefined;
  failureClass: PlanRevision["failureClass"];
}): GuidedReplan {
  const { current, merge } = args;
  try {
    validatePlan(merge.plan, args.request, args.registry);
  } catch (e) {
    if (!CandorError.isInstance(e)) throw e;
    return { ok: false, error: `The plan made with your guidance is not valid: ${e.message}` };
  }
  if (merge.added.length === 0) {
    return {
      ok: false,
      error: `Your guidance led to no new work: every step of the new plan is already done. Say what should change (e.g. a different budget, dates or destination), or skip or abort.`,
    };
  }
  const before = current.confidence;
  const after = clampConfidence(merge.plan.confidence);
  const revision: PlanRevision = {
    revisionId: `rev_${args.revisionCount + 1}`,
    planId: current.planId,
    trigger: triggerText(current, args.feedback),
    strategy: "REPLAN_WITH_GUIDANCE",
    failedTaskId: args.failed?.id ?? merge.dropped[0] ?? merge.added[0]!,
    failureClass: args.failureClass,
    rationale: `A person asked to plan the unfinished work again: "${args.guidance}".`,
    changes: [
      `Plan again with the guidance "${args.guidance}": ${merge.added.length} step(s) to run (${merge.added.join(", ")})`,
      ...(merge.kept.length > 0
        ? [`Keep ${merge.kept.length} finished step(s) and their results (${merge.kept.join(", ")})`]
        : []),
      ...(merge.dropped.length > 0 ? [`Drop ${merge.dropped.join(", ")}`] : []),
    ],
    newStepIds: merge.added,
    removedStepIds: merge.dropped,
    modifiedStepIds: [],
    confidenceDelta: Math.round((after - before) * 100) / 100,
    confidenceBefore: before,
    confidenceAfter: after,
    at: new Date().toISOString(),
  };
  return { ok: true, plan: { ...merge.plan, confidence: after }, revision };
}
