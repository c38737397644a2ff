import { describe, expect, it } from "vitest";
import { Plan, TaskStep } from "../../src/domain/plan.js";
import {
  definitionOf,
  mergeRuns,
  planFields,
  planOf,
  planView,
  planWrites,
  runsOf,
} from "../../src/domain/plan-state.js";

const plan = (): Plan =>
  Plan.parse({
    planId: "plan-a",
    objective: "test",
    confidence: 0.8,
    steps: [
      { id: "a", description: "first", workerType: "w", tools: ["t"] },
      { id: "b", description: "second", workerType: "w", tools: ["t"], dependsOn: ["a"] },
    ],
  });
const withStep = (p: Plan, id: string, change: Partial<TaskStep>): Plan => ({
  ...p,
  steps: p.steps.map((s) => (s.id === id ? { ...s, ...change } : s)),
});

describe("a plan's definition and its run-state, stored apart", () => {
  it("the stored definition has no run-state, and the view joins it back", () => {
    const p = withStep(plan(), "a", { status: "done", result: { x: 1 }, attempts: 1, dispatches: 1 });
    const { plan: stored, runs } = planFields(p);
    expect(stored.steps[0]).not.toHaveProperty("status");
    expect(stored.steps[0]).not.toHaveProperty("result");
    expect(runs.steps.a).toMatchObject({ status: "done", result: { x: 1 }, attempts: 1 });
    expect(planView(stored, runs)).toEqual(p);
  });

  it("every step of a view has TaskStep's fields in its schema's order, whatever it was joined from (one shape)", () => {
    const p = withStep(plan(), "a", { status: "done" });
    const { plan: stored, runs } = planFields(p);
    const keys = Object.keys(TaskStep.shape);
    for (const view of [planView(stored, runs), planView(stored, null), planView(p, null)]) {
      for (const step of view.steps) expect(Object.keys(step)).toEqual(keys);
    }
  });

  it("a step with no run-state has not run; run-state written for another plan is never read as this one's", () => {
    const p = plan();
    const other = { planId: "plan-b", steps: { a: { ...runsOf(p).steps.a!, status: "done" as const } } };
    const view = planView(definitionOf(p), other);
    expect(view.steps.map((s) => s.status)).toEqual(["pending", "pending"]);
    expect(view.steps[0]!.missingInputs).toEqual([]);
  });

  it("a plan stored before the two were apart is read with the run-state its steps carry", () => {
    const legacy = withStep(plan(), "a", { status: "done", result: "kept" });
    const stored = { plan: legacy, runs: null };
    const view = planOf(stored)!;
    expect(view.steps[0]).toMatchObject({ status: "done", result: "kept" });
    // A new definition of it (a new confidence) is written with every step's run-state, which it would lose.
    expect(planWrites(stored, { ...view, confidence: 0.5 })).toEqual(planFields({ ...view, confidence: 0.5 }));
  });

  it("running steps writes only the run-state of the steps that changed", () => {
    const stored = planFields(plan());
    const before = planOf(stored)!;
    const after = withStep(before, "b", { status: "done", result: 2, dispatches: 1 });
    const writes = planWrites(stored, after);
    expect(writes.plan).toBeUndefined();
    expect(writes.runs).toEqual({ planId: "plan-a", steps: { b: runsOf(after).steps.b } });
    expect(planWrites(stored, { ...before, steps: [...before.steps] })).toEqual({});
  });

  it("a new confidence writes the definition alone; revised steps write both, whole", () => {
    const stored = planFields(plan());
    const before = planOf(stored)!;
    const rated = planWrites(stored, { ...before, confidence: 0.6 });
    expect(rated.runs).toBeUndefined();
    expect(rated.plan?.confidence).toBe(0.6);
    const revised = withStep(before, "b", { params: { city: "Rome" } });
    expect(planWrites(stored, revised)).toEqual(planFields(revised));
    const fewer = { ...before, steps: before.steps.slice(0, 1) };
    expect(planWrites(stored, fewer)).toEqual(planFields(fewer));
  });

  it("a new plan writes both whole", () => {
    const next = { ...plan(), planId: "plan-b" };
    expect(planWrites(planFields(plan()), next)).toEqual(planFields(next));
    expect(planWrites({ plan: null }, next)).toEqual(planFields(next));
  });

  it("runs of one plan merge step by step, in any batching; another plan's replace them", () => {
    const p = plan();
    const all = runsOf(p);
    const a = { planId: "plan-a", steps: { a: { ...all.steps.a!, status: "done" as const } } };
    const b = { planId: "plan-a", steps: { b: { ...all.steps.b!, status: "failed" as const } } };
    const together = mergeRuns(all, [a, b]);
    expect(together!.steps.a!.status).toBe("done");
    expect(together!.steps.b!.status).toBe("failed");
    expect(mergeRuns(mergeRuns(all, [a]), [b])).toEqual(together);
    const fresh = { planId: "plan-b", steps: {} };
    expect(mergeRuns(together, [fresh])).toEqual(fresh);
    // Written with the plan whole (a revision that dropped b): b's run-state does not outlive its step.
    const revised = { planId: "plan-a", steps: { a: all.steps.a! }, whole: true };
    expect(mergeRuns(together, [revised])!.steps).toEqual({ a: all.steps.a });
    expect(mergeRuns(null, [a])).toEqual(a);
  });
});
