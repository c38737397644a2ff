import { describe, expect, it } from "vitest";
import { PlanChanges, planChanges, withChanges } from "../../src/domain/plan-changes.js";
import type { Plan } from "../../src/domain/plan.js";
import { ErrorCode } from "../../src/errors.js";
import { planWith } from "../fakes/graph-harness.js";

const base: Plan = planWith([
  { id: "a", description: "A", workerType: "w", tools: ["t"] },
  { id: "b", description: "B", workerType: "w", tools: ["t"], dependsOn: ["a"] },
  { id: "c", description: "C", workerType: "w", tools: ["t"], dependsOn: ["b"] },
]);

describe("planChanges / withChanges: what a revision changes, carried instead of the whole plan", () => {
  it("carries only the steps added or changed and the fields that differ, and rebuilds the revised plan exactly", () => {
    const [a, b, c] = base.steps;
    const revised: Plan = {
      ...base,
      confidence: base.confidence - 0.1,
      steps: [a!, { ...b!, status: "skipped", skipReason: "gave up" }, { ...c!, id: "c_retry" }],
    };
    const changes = PlanChanges.parse(planChanges(base, revised));
    expect(changes.steps.map((s) => s.id)).toEqual(["b", "c_retry"]);
    expect(Object.keys(changes.fields)).toEqual(["confidence"]);
    expect(changes.order).toEqual(["a", "b", "c_retry"]);
    expect(withChanges(base, changes)).toEqual(revised);
  });

  it("is small for a large plan: one changed step of a thousand carries one step", () => {
    const big = planWith(
      Array.from({ length: 1000 }, (_, i) => ({ id: `s${i}`, description: `S${i}`, workerType: "w", tools: ["t"] })),
    );
    const revised = { ...big, steps: big.steps.map((s, i) => (i === 500 ? { ...s, params: { x: 1 } } : s)) };
    const changes = planChanges(big, revised);
    expect(changes.steps).toHaveLength(1);
    expect(JSON.stringify(changes).length).toBeLessThan(JSON.stringify(revised).length / 5);
    expect(withChanges(big, changes)).toEqual(revised);
  });

  it("refuses changes that keep a step the plan does not have (made for another plan), by code", () => {
    const changes = planChanges(base, base);
    const other = planWith([{ id: "x", description: "X", workerType: "w", tools: ["t"] }]);
    expect(() => withChanges(other, changes)).toThrow(expect.objectContaining({ code: ErrorCode.INVALID_DECISION }));
  });
});
