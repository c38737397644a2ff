/**
 * Pure arithmetic behind the execution bench's verdicts: what an ideal schedule of a DAG takes, and whether
 * checkpoint bytes grow linearly with the plan. Tested in test/unit/bench-execution.test.ts.
 */
import type { DagStep } from "../fixtures.js";

/** Each step's depth (1 for a step without dependencies); throws on an unknown dependency or a cycle. */
function depths(steps: readonly DagStep[]): Map<string, number> {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const visit = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    const step = byId.get(id);
    if (!step) throw new Error(`bench DAG: unknown dependency "${id}"`);
    if (visiting.has(id)) throw new Error(`bench DAG: cycle through "${id}"`);
    visiting.add(id);
    const d = 1 + Math.max(0, ...step.dependsOn.map(visit));
    visiting.delete(id);
    depth.set(id, d);
    return d;
  };
  for (const s of steps) visit(s.id);
  return depth;
}

/**
 * The eager critical path: the longest chain of latencies through the DAG, i.e. the wall time of a schedule that
 * starts every step the moment its last dependency ends, with no overhead.
 */
export function criticalPathMs(steps: readonly DagStep[]): number {
  depths(steps); // validates: unknown dependencies and cycles throw before the recursion below could loop
  const byId = new Map(steps.map((s) => [s.id, s]));
  const finish = new Map<string, number>();
  const end = (id: string): number => {
    const known = finish.get(id);
    if (known !== undefined) return known;
    const step = byId.get(id)!;
    const t = Math.max(0, ...step.dependsOn.map(end)) + step.latencyMs;
    finish.set(id, t);
    return t;
  };
  return Math.max(0, ...steps.map((s) => end(s.id)));
}

/**
 * The wall time of a bulk-synchronous schedule with no overhead: steps run in waves by depth, and each wave
 * waits for its slowest step before the next starts (what one LangGraph superstep per wave gives).
 */
export function waveScheduleMs(steps: readonly DagStep[]): number {
  const depth = depths(steps);
  const slowest = new Map<number, number>();
  for (const s of steps) {
    const d = depth.get(s.id)!;
    slowest.set(d, Math.max(slowest.get(d) ?? 0, s.latencyMs));
  }
  return [...slowest.values()].reduce((a, b) => a + b, 0);
}

export interface Growth {
  /** Bytes per step at the large plan ÷ bytes per step at the small one: ≤ 1 when growth is at most linear. */
  perStepRatio: number;
  /** b in bytes ∝ steps^b, fitted through the two points: 1 is linear, 2 quadratic. */
  exponent: number;
  linear: boolean;
}

/** Bytes/step at the large plan may exceed the small plan's by at most this factor and still count as linear. */
export const LINEAR_SLACK = 1.25;

/** Whether `bytes` grows linearly from `smallSteps` to `largeSteps` (fixed per-run costs only help the ratio). */
export function growth(smallSteps: number, smallBytes: number, largeSteps: number, largeBytes: number): Growth {
  if (smallSteps <= 0 || largeSteps <= smallSteps || smallBytes <= 0 || largeBytes <= 0)
    throw new Error(`growth needs 0 < small < large steps and positive bytes, got ${smallSteps}/${largeSteps}`);
  const perStepRatio = largeBytes / largeSteps / (smallBytes / smallSteps);
  const exponent = Math.log(largeBytes / smallBytes) / Math.log(largeSteps / smallSteps);
  return { perStepRatio, exponent, linear: perStepRatio <= LINEAR_SLACK };
}
