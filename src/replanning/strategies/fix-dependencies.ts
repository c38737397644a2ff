import type { Plan, TaskStep } from "../../domain/plan.js";
import { freshId, replaceStep, resetForRerun } from "../plan-edit.js";
import { rankWorkers } from "../router.js";
import type { FailureContext } from "../../domain/feedback.js";
import { revise, successorOf, type Strategy } from "./types.js";

/**
 * The upstream steps a failure blames: the input it names (a tool's `details.input`, or "cannot use the X
 * result"), a dependency it names by id ("Dependency task_001 failed"), or — for a dependency failure that names
 * nothing — every direct dependency. Empty when the failure does not blame its inputs at all.
 */
function blamedUpstream(plan: Plan, failure: FailureContext): TaskStep[] {
  const deps = plan.steps.filter((s) => failure.step.dependsOn.includes(s.id));
  const named = new Set<string>();
  if (typeof failure.outputs.input === "string") named.add(failure.outputs.input);
  for (const m of failure.error.matchAll(
    /cannot use the (\w+) (?:result|input)|input (\w+) (?:is )?(?:unusable|invalid|malformed)|dependency (?:task )?([\w.-]+?) failed/gi,
  )) {
    const name = m[1] ?? m[2] ?? m[3];
    if (name) named.add(name);
  }
  if (named.size > 0) return deps.filter((d) => named.has(d.id) || d.expectedOutputs.some((o) => named.has(o)));
  return failure.failureClass === "dependency_failed" ? deps : [];
}

/**
 * FIX_DEPENDENCIES: the step failed because of what it was given, so repairing it means repairing its input.
 * Each blamed upstream step is replaced by another worker able to produce the same output (its tool returned
 * something unusable, so a different one is likelier to work) or, when no other worker can, re-run as it is;
 * then it and everything downstream of it — the failed step included — run again. Done independent steps keep
 * their results. Confidence −0.10.
 */
export const fixDependencies: Strategy = (input) => {
  const { plan, failure, registry } = input;
  const failed = failure.step;
  const blamed = blamedUpstream(plan, failure);
  if (blamed.length === 0)
    return { applies: false, reason: `${failed.id}'s error does not blame any of its inputs (${failure.error})` };
  const waiting = blamed.filter((s) => s.status !== "done");
  if (waiting.length > 0) {
    return {
      applies: false,
      reason: `${waiting.map((s) => `${s.id} is ${s.status}`).join(", ")}: an upstream step that did not finish is recovered on its own, not by re-running it from here`,
    };
  }
  let revised = plan;
  const newIds: string[] = [];
  const removed: string[] = [];
  const changes: string[] = [];
  const rerun: string[] = [];
  for (const upstream of blamed) {
    const exclude = [...new Set([...upstream.failedWorkers, upstream.workerType])];
    const [best] = rankWorkers(registry, upstream, exclude, upstream.tools.slice(0, 1));
    if (best) {
      const replacement = successorOf(upstream, freshId(revised, upstream.id, "retry"), {
        workerType: best.worker.name,
        tools: [best.tool.name],
        estimates: best.tool.estimates,
        retry: { maxAttempts: 2, backoffMs: [500] },
        failedWorkers: exclude,
      });
      revised = replaceStep(revised, upstream.id, replacement);
      newIds.push(replacement.id);
      removed.push(upstream.id);
      rerun.push(replacement.id);
      changes.push(
        `Fix dependency of ${failed.id}: redo ${upstream.id} with agent ${best.worker.name} using ${best.tool.name} as ${replacement.id}, since ${upstream.tools[0] ?? "its tool"} gave ${failed.id} an unusable ${upstream.expectedOutputs.join(", ") || "result"}`,
      );
    } else {
      rerun.push(upstream.id);
      changes.push(
        `Fix dependency of ${failed.id}: re-run ${upstream.id} (no other agent can produce ${upstream.expectedOutputs.join(", ") || "its output"})`,
      );
    }
  }
  const before = new Map(revised.steps.map((s) => [s.id, s.status]));
  revised = resetForRerun(revised, rerun);
  const modified = revised.steps
    .filter((s) => !newIds.includes(s.id) && before.get(s.id) !== "pending" && s.status === "pending")
    .map((s) => s.id);
  changes.push(`Re-run ${modified.join(", ")} with the repaired input`);
  return revise(input, "FIX_DEPENDENCIES", revised, {
    rationale: `${failed.id} failed because of its input (${failure.error}). Running it again on the same input would fail the same way, so the step that produced it is repaired first.`,
    changes,
    newStepIds: newIds,
    removedStepIds: removed,
    modifiedStepIds: modified,
  });
};
