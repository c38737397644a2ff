import type { Episode, RunStatus } from "../domain/report.js";
import type { ExecutionFeedback } from "../domain/feedback.js";
import type { Plan } from "../domain/plan.js";
import { missingSteps } from "../planning/schedule.js";
import { unansweredByUnderstanding } from "../planning/coverage.js";
import type { PlanRevision } from "../domain/revision.js";
import { outcomeDelta } from "../confidence/update.js";
import type { StepChoice } from "../domain/reflection.js";
import { expiryOf } from "../memory/learning.js";

export interface RunFacts {
  threadId: string | null;
  request: string;
  plan: Plan;
  feedback: readonly ExecutionFeedback[];
  revisions: readonly PlanRevision[];
  status: RunStatus;
  initialConfidence: number;
  startedAt: string;
  /** The clock in ms (default: now); the episode expires 90 days after it. */
  now?: number;
}

export interface Reflection {
  episode: Episode;
  lessons: string[];
  /** Steps that failed and were never recovered (skipped after failing, or still failed). */
  unrecoveredSteps: string[];
  /** Seed 000 scenarios 9–10: the confidence adjustment this outcome earns. */
  outcomeDelta: number;
}

/** Failure classes that say something about the tool itself (the same set memory counts against it). */
const TOOL_FAULT_CLASSES: ReadonlySet<string> = new Set(["timeout", "agent_unavailable", "unknown"]);

/**
 * How a run that reached REFLECT ended: a human's end (rejected, failed, aborted) stands; otherwise completed when
 * nothing the answer needs is missing — no step and no part of the request (see planning/coverage.ts) (a step skipped because its condition was false is not needed), partial
 * when something is missing but something was done, failed when nothing was.
 */
export function finalStatus(status: RunStatus, plan: Plan | null): RunStatus {
  if (status === "rejected" || status === "failed" || status === "aborted") return status;
  const steps = plan?.steps ?? [];
  // Every step may have succeeded and the run still be partial: a part of the request no step could do.
  if (steps.length > 0 && missingSteps(plan!).length === 0 && unansweredByUnderstanding(plan!).length === 0)
    return "completed";
  return steps.some((s) => s.status === "done") ? "partial" : "failed";
}

const isFailure = (f: ExecutionFeedback) =>
  f.feedbackType !== "SUCCESS" && f.feedbackType !== "PARTIAL_SUCCESS" && f.feedbackType !== "DEPENDENCY_FAILURE";

/**
 * Rule-based reflection: what failed, what recovered it, what could not be recovered, as lessons a person can
 * read and the planner can use next time (tools that failed lower the confidence of plans that use them).
 */
export function reflectOnRun(facts: RunFacts): Reflection {
  const failures = facts.feedback.filter(isFailure);
  const lessons: string[] = [];
  const byId = new Map(facts.plan.steps.map((s) => [s.id, s]));
  for (const revision of facts.revisions) {
    const replacement = revision.newStepIds.map((id) => byId.get(id)).find(Boolean);
    const modified = revision.modifiedStepIds.map((id) => byId.get(id)).filter(Boolean);
    const recovered =
      revision.strategy !== "SKIP" &&
      (replacement?.status === "done" || (modified.length > 0 && modified.every((s) => s?.status === "done")));
    lessons.push(
      recovered
        ? `${revision.failedTaskId} failed (${revision.failureClass}); ${revision.strategy} recovered it: ${revision.changes[0]}.`
        : `${revision.failedTaskId} failed (${revision.failureClass}) and ${revision.strategy} did not recover it.`,
    );
  }
  const toolFailures = new Map<string, Set<string>>();
  for (const f of failures)
    if (f.tool) toolFailures.set(f.tool, (toolFailures.get(f.tool) ?? new Set()).add(f.failureClass ?? "unknown"));
  for (const [tool, classes] of toolFailures) {
    const own = [...classes].filter((c) => TOOL_FAULT_CLASSES.has(c));
    const situational = [...classes].filter((c) => !TOOL_FAULT_CLASSES.has(c));
    if (own.length > 0)
      lessons.push(
        `${tool} misbehaved (${own.join(", ")}); plans that use it start with lower confidence next time, and after repeated failures an alternative is planned instead.`,
      );
    if (situational.length > 0)
      lessons.push(
        `${tool} reported ${situational.join(", ").replaceAll("_", " ")}: a property of this request, not of the tool.`,
      );
  }
  // A step given up on is unrecovered; its dependents' gaps follow from it and a false condition is no gap.
  const unrecoveredSteps = facts.plan.steps
    .filter((s) => s.status === "failed" || (s.status === "skipped" && s.skipCause === "failed"))
    .map((s) => s.id);
  // A plan rejected (or aborted) before anything ran has no steps to judge: "it worked" would be a lesson never earned.
  const ran = facts.plan.steps.some((s) => s.dispatches > 0 || s.status !== "pending");
  if (!ran)
    lessons.push(
      `No step ran (the run ended ${facts.status} before execution), so this run says nothing about the plan's steps or tools.`,
    );
  else if (failures.length === 0)
    lessons.push("Every step succeeded on its first dispatch: the plan worked as designed.");
  if (unrecoveredSteps.length > 0)
    lessons.push(
      `Not recovered: ${unrecoveredSteps.join(", ")}. Consider another tool or relaxing the request's constraints.`,
    );

  const now = facts.now ?? Date.now();
  const durationMs = Math.max(0, now - Date.parse(facts.startedAt));
  const episode: Episode = {
    threadId: facts.threadId,
    planId: facts.plan.planId,
    request: facts.request,
    status: facts.status,
    plan: { steps: facts.plan.steps.map((s) => ({ id: s.id, workerType: s.workerType, tools: s.tools })) },
    failures: failures.map((f) => ({
      taskId: f.taskId,
      tool: f.tool,
      workerType: f.workerType,
      failureClass: f.failureClass ?? "unknown",
      error: f.errors[f.errors.length - 1] ?? "",
    })),
    strategiesUsed: facts.revisions.map((r) => r.strategy),
    confidenceInitial: facts.initialConfidence,
    confidenceFinal: facts.plan.confidence,
    lessons,
    durationMs,
    cost: facts.feedback.reduce((sum, f) => sum + f.cost, 0),
    at: new Date(now).toISOString(),
    choices: choicesOf(facts.plan),
    planningMs: Math.max(0, Date.parse(facts.plan.createdAt) - Date.parse(facts.startedAt)) || 0,
    ...(facts.plan.learned.length > 0 ? { applied: facts.plan.learned } : {}),
    expiresAt: expiryOf(now),
  };
  return { episode, lessons, unrecoveredSteps, outcomeDelta: outcomeDelta(unrecoveredSteps.length) };
}

/** Longest text value of a result kept in a choice: enough for a name or a summary line. */
const MAX_CHOICE_TEXT = 300;

/** What each step that succeeded chose: its parameters and the primitive fields of its result. */
function choicesOf(plan: Plan): StepChoice[] {
  return plan.steps.flatMap((s) => {
    if (s.status !== "done" || !s.tools[0]) return [];
    const params = Object.fromEntries(
      Object.entries(s.params).filter(
        ([, v]) => isPrimitive(v) || (Array.isArray(v) && v.every((x) => isPrimitive(x) && x !== null)),
      ),
    );
    const result =
      s.result && typeof s.result === "object" && !Array.isArray(s.result)
        ? Object.fromEntries(
            Object.entries(s.result as Record<string, unknown>).flatMap(([k, v]) =>
              isPrimitive(v) ? [[k, typeof v === "string" ? v.slice(0, MAX_CHOICE_TEXT) : v]] : [],
            ),
          )
        : typeof s.result === "string"
          ? { summary: s.result.slice(0, MAX_CHOICE_TEXT) }
          : {};
    return [{ stepId: s.id, tool: s.tools[0], params, result }];
  });
}

function isPrimitive(v: unknown): v is string | number | boolean | null {
  return v === null || typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v));
}
