import type { Plan, TaskStep } from "../domain/plan.js";
import type { RecordedValue, StepContext } from "../domain/step-context.js";
import type { PlanningRequest } from "../domain/request.js";
import { argsHash, type EffectLedger } from "../tools/effects.js";
import { inputsOf, type ToolSpec } from "../tools/types.js";

/*
 * "The value used is the value recorded": the understanding record says which value each step uses (read from the
 * request, assumed, or changed on the user's behalf — a conversion, a clamp); the tool must receive that value.
 * A plan or a worker's model that passes another one (the budget before its conversion, a folder left out and
 * filled by the tool's default) has the recorded value applied, and the difference is named, never silent.
 */

/** What a step is run with beyond its definition: the values the record says it uses, and its request's lineage. */
export function stepContext(plan: Plan, step: TaskStep, request: PlanningRequest): StepContext {
  return { values: recordedValuesFor(plan, step.id), lineage: requestLineage(request) };
}

/** A request's lineage: the same request, the same lineage; a fork that changes it, another. */
export function requestLineage(request: PlanningRequest): string {
  return argsHash({ intent: request.userIntent, constraints: request.constraints });
}

/**
 * The values the plan's understanding record says `stepId` uses (a step that replaced it uses its origin's): the
 * values read or assumed, and the changes made on the user's behalf, in the record's order.
 */
export function recordedValuesFor(plan: Plan, stepId: string): RecordedValue[] {
  const step = plan.steps.find((s) => s.id === stepId);
  const ids = new Set([stepId, ...(step?.lineage ?? [])]);
  const uses = (s: readonly string[]) => s.some((id) => ids.has(id));
  const u = plan.understanding;
  return [
    ...u.values.filter((v) => uses(v.stepIds)).map((v) => read(v.name, v.value, `"${v.source}"`)),
    ...u.assumptions.filter((a) => uses(a.stepIds)).map((a) => read(a.name, a.value, a.why)),
    ...u.changes
      .filter((c) => uses(c.stepIds))
      .map((c) => ({
        name: c.name,
        value: c.to,
        from: `${JSON.stringify(c.from)}${c.source ? ` ("${c.source}")` : ""} changed: ${c.why}`,
        kind: "change" as const,
        previous: c.from,
      })),
  ];
}

const read = (name: string, value: unknown, from: string): RecordedValue => ({ name, value, from, kind: "read" });

/**
 * What a side-effect call is, as the effect ledger keys its reuse: the validated arguments, the inputs its tool
 * consumes (a booking takes its itinerary from an earlier step, not from its arguments) and the request's lineage.
 * The same identity reuses the recorded result; another one is another call.
 */
export function effectIdentity(
  tool: ToolSpec,
  args: unknown,
  inputs: Record<string, unknown>,
  lineage: string,
): { args: unknown; inputs: Record<string, unknown>; lineage: string } {
  const names = new Set(inputsOf(tool));
  const consumed = Object.fromEntries(Object.entries(inputs).filter(([name]) => names.has(name)));
  return { args, inputs: consumed, lineage };
}

/** Why a recorded call of this dispatch is not reused, for the person asked and the log. */
export function staleRecordWhy(tool: string, stepId: string, at: string): string {
  return `${tool} already ran for step "${stepId}" (recorded ${at}) for another request, other arguments or other inputs than this run's, so its recorded result is not reused.`;
}

/**
 * What the effect ledger holds for this dispatch's call: the same call (a replay or a resume after it finished:
 * reused), another one (a fork or replay with another request, arguments or inputs: asked again, saying why), or
 * nothing. Reading the ledger is a read, so it may come before `interrupt()`.
 */
export async function recordedCall(
  ledger: EffectLedger | undefined,
  threadId: string | null,
  step: TaskStep,
  call: { tool: ToolSpec; args: Record<string, unknown> },
  inputs: Record<string, unknown>,
  lineage: string,
): Promise<{ kind: "same" } | { kind: "other"; why: string } | { kind: "none" }> {
  if (!ledger || !threadId) return { kind: "none" };
  const verdict = await ledger.verdict({ threadId, stepId: step.id, dispatch: step.dispatches });
  if (verdict.kind !== "done") return { kind: "none" };
  const identity = effectIdentity(call.tool, call.args, inputs, lineage);
  if (verdict.record.argsHash === argsHash(identity)) return { kind: "same" };
  return { kind: "other", why: staleRecordWhy(call.tool.name, step.id, verdict.record.at) };
}
