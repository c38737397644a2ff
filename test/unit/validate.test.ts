import { describe, expect, it } from "vitest";
import { PlanningRequest } from "../../src/domain/request.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import {
  assertAcyclic,
  assertCompletePlan,
  assertDependenciesExist,
  assertKnownReferences,
  assertLogicalOrder,
  assertValidRequest,
  assertWithinConstraints,
  assignOrder,
  criticalPathMs,
  findCycle,
  validatePlan,
} from "../../src/planning/validate.js";
import { caught, countingTool, plan, registryOf, request, step } from "../fakes/toolkit-fixtures.js";

const deps = (spec: Record<string, string[]>) => Object.entries(spec).map(([id, dependsOn]) => ({ id, dependsOn }));

function expectCode(e: unknown, code: string): CandorError {
  expect(CandorError.isInstance(e), `expected a CandorError, got ${String(e)}`).toBe(true);
  expect((e as CandorError).code).toBe(code);
  return e as CandorError;
}

describe("assertValidRequest (PRE-PLAN-001)", () => {
  it("refuses an empty or blank intent with INVALID_REQUEST and says what to do", () => {
    for (const userIntent of ["", "   ", "\n\t"]) {
      const e = expectCode(
        caught(() =>
          assertValidRequest({ userIntent, userContext: { userId: "u", preferences: {} }, constraints: {} }),
        ),
        ErrorCode.INVALID_REQUEST,
      );
      expect(e.message).toMatch(/empty/i);
      expect(e.message).toMatch(/say what you want/i);
    }
  });

  it("accepts a request with an intent", () => {
    expect(() => assertValidRequest(request("plan a trip to Rome"))).not.toThrow();
  });

  it("the request schema refuses an empty intent at the boundary too", () => {
    const parsed = PlanningRequest.safeParse({ userIntent: "   " });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(/empty/);
  });
});

describe("assertCompletePlan (POST-PLAN-001)", () => {
  it("refuses a plan with no steps as NO_VALID_PLAN", () => {
    const e = expectCode(
      caught(() => assertCompletePlan({ steps: [] })),
      ErrorCode.NO_VALID_PLAN,
    );
    expect(e.message).toMatch(/no steps/);
  });

  it("refuses two steps with one id, naming it", () => {
    const e = expectCode(
      caught(() => assertCompletePlan({ steps: [step({ id: "a" }), step({ id: "b" }), step({ id: "a" })] })),
      ErrorCode.PLAN_INVALID,
    );
    expect(e.message).toContain('"a"');
    expect(e.details).toEqual({ stepId: "a" });
  });
});

describe("assertDependenciesExist (POST-PLAN-002)", () => {
  it("refuses a dependency on a step that is not in the plan, naming both and what to do", () => {
    const e = expectCode(
      caught(() => assertDependenciesExist(deps({ a: [], b: ["a", "ghost"] }))),
      ErrorCode.PLAN_MISSING_DEPENDENCY,
    );
    expect(e.message).toContain('"b"');
    expect(e.message).toContain('"ghost"');
    expect(e.message).toMatch(/Remove the dependency or add the step/);
    expect(e.details).toEqual({ stepId: "b", missing: "ghost" });
  });

  it("accepts dependencies that all exist", () => {
    expect(() => assertDependenciesExist(deps({ a: [], b: ["a"], c: ["a", "b"] }))).not.toThrow();
  });
});

describe("findCycle and assertAcyclic (INV-PLAN-002)", () => {
  it("finds no cycle in a diamond", () => {
    expect(findCycle(deps({ a: [], b: ["a"], c: ["a"], d: ["b", "c"] }))).toBeNull();
  });

  it("finds a two-step cycle as [a, b, a]", () => {
    expect(findCycle(deps({ a: ["b"], b: ["a"] }))).toEqual(["a", "b", "a"]);
  });

  it("finds a step that depends on itself", () => {
    expect(findCycle(deps({ a: ["a"] }))).toEqual(["a", "a"]);
  });

  it("finds a cycle that does not include the first step, and leaves the step leading into it out", () => {
    const cycle = findCycle(deps({ x: ["a"], a: ["b"], b: ["a"] }));
    expect(cycle).toEqual(["a", "b", "a"]);
  });

  it("ignores dependencies on missing steps (that is another check's error)", () => {
    expect(findCycle(deps({ a: ["ghost"], b: ["a"] }))).toBeNull();
  });

  it("names the cycle in the error: a → b → a", () => {
    const e = expectCode(
      caught(() => assertAcyclic(deps({ a: ["b"], b: ["a"] }))),
      ErrorCode.PLAN_CYCLE,
    );
    expect(e.message).toContain("a → b → a");
    expect(e.message).toMatch(/Remove one of these dependencies/);
  });

  it("prints a longer cycle in execution order (each step before the one that depends on it)", () => {
    // b runs after a, c after b, a after c.
    const e = expectCode(
      caught(() => assertAcyclic(deps({ a: ["c"], b: ["a"], c: ["b"] }))),
      ErrorCode.PLAN_CYCLE,
    );
    expect(e.message).toContain("a → b → c → a");
    expect(e.details.cycle).toEqual(["a", "b", "c", "a"]);
  });
});

describe("assertLogicalOrder (POST-PLAN-003)", () => {
  const ordered = (spec: [string, number, string[]][]) =>
    spec.map(([id, order, dependsOn]) => ({ id, order, dependsOn }));

  it("accepts dependencies that come earlier", () => {
    expect(() =>
      assertLogicalOrder(
        ordered([
          ["a", 1, []],
          ["b", 2, ["a"]],
          ["c", 3, ["a", "b"]],
        ]),
      ),
    ).not.toThrow();
  });

  it("refuses a dependency that comes later, naming both orders", () => {
    const e = expectCode(
      caught(() =>
        assertLogicalOrder(
          ordered([
            ["a", 3, []],
            ["b", 2, ["a"]],
          ]),
        ),
      ),
      ErrorCode.PLAN_ORDER,
    );
    expect(e.message).toContain('"b" (order 2)');
    expect(e.message).toContain('"a" (order 3)');
    expect(e.message).toMatch(/Renumber/);
  });

  it("refuses a dependency with the same order (it would not run first)", () => {
    expectCode(
      caught(() =>
        assertLogicalOrder(
          ordered([
            ["a", 1, []],
            ["b", 1, ["a"]],
          ]),
        ),
      ),
      ErrorCode.PLAN_ORDER,
    );
  });
});

describe("assertKnownReferences", () => {
  const tool = countingTool("fetch_data", { category: "reading" }).spec;
  const registry = registryOf([tool], [{ name: "reader", description: "reads", categories: ["reading"] }]);

  it("accepts registered workers and tools", () => {
    expect(() =>
      assertKnownReferences([step({ id: "a", workerType: "reader", tools: ["fetch_data"] })], registry),
    ).not.toThrow();
  });

  it("refuses an unknown worker type, listing the known ones", () => {
    const e = expectCode(
      caught(() => assertKnownReferences([step({ id: "a", workerType: "wizard", tools: ["fetch_data"] })], registry)),
      ErrorCode.PLAN_UNKNOWN_REFERENCE,
    );
    expect(e.message).toContain('"wizard"');
    expect(e.message).toContain("Known worker types: reader");
  });

  it("refuses an unknown tool, listing the known ones", () => {
    const e = expectCode(
      caught(() =>
        assertKnownReferences([step({ id: "a", workerType: "reader", tools: ["launch_rocket"] })], registry),
      ),
      ErrorCode.PLAN_UNKNOWN_REFERENCE,
    );
    expect(e.message).toContain('"launch_rocket"');
    expect(e.message).toContain("Known tools: fetch_data");
  });
});

describe("assertWithinConstraints (POST-PLAN-004)", () => {
  const threeSteps = {
    steps: [step({ id: "a" }), step({ id: "b" }), step({ id: "c" })],
    estimatedDurationMs: 5000,
    estimatedCost: 12,
  };

  it("accepts a plan exactly at every limit", () => {
    expect(() =>
      assertWithinConstraints(threeSteps, request("x", { maxSteps: 3, timeoutMs: 5000, budget: 12 })),
    ).not.toThrow();
  });

  it("accepts any plan when the request sets no limits", () => {
    expect(() => assertWithinConstraints(threeSteps, request("x"))).not.toThrow();
  });

  it("maxSteps: INSUFFICIENT_RESOURCES saying how many steps, the limit, and to raise maxSteps", () => {
    const e = expectCode(
      caught(() => assertWithinConstraints(threeSteps, request("x", { maxSteps: 2 }))),
      ErrorCode.INSUFFICIENT_RESOURCES,
    );
    expect(e.message).toContain("3 steps");
    expect(e.message).toContain("limit is 2");
    expect(e.message).toMatch(/Raise maxSteps/);
    expect(e.details).toEqual({ constraint: "maxSteps", limit: 2, actual: 3 });
  });

  it("timeoutMs: INSUFFICIENT_RESOURCES saying the estimate, the limit, and to raise the time limit", () => {
    const e = expectCode(
      caught(() => assertWithinConstraints(threeSteps, request("x", { timeoutMs: 4999 }))),
      ErrorCode.INSUFFICIENT_RESOURCES,
    );
    expect(e.message).toContain("5000 ms");
    expect(e.message).toContain("4999 ms");
    expect(e.message).toMatch(/Raise the time limit/);
    expect(e.details).toMatchObject({ constraint: "timeoutMs" });
  });

  it("budget: INSUFFICIENT_RESOURCES saying the estimated cost, the budget, and to increase it", () => {
    const e = expectCode(
      caught(() => assertWithinConstraints(threeSteps, request("x", { budget: 10 }))),
      ErrorCode.INSUFFICIENT_RESOURCES,
    );
    expect(e.message).toContain("12.00");
    expect(e.message).toContain("budget is 10");
    expect(e.message).toMatch(/Increase the budget/);
    expect(e.details).toEqual({ constraint: "budget", limit: 10, actual: 12 });
  });
});

describe("validatePlan", () => {
  it("accepts a well-formed plan", () => {
    const p = plan([
      { id: "a", order: 1 },
      { id: "b", order: 2, dependsOn: ["a"] },
    ]);
    expect(() => validatePlan(p, request("x"))).not.toThrow();
  });

  it("reports a missing dependency before a cycle, and a cycle before order or limits", () => {
    const missingAndCycle = plan([
      { id: "a", order: 1, dependsOn: ["b"] },
      { id: "b", order: 2, dependsOn: ["a", "ghost"] },
    ]);
    expectCode(
      caught(() => validatePlan(missingAndCycle, request("x"))),
      ErrorCode.PLAN_MISSING_DEPENDENCY,
    );
    const cycleAndTooMany = plan([
      { id: "a", order: 1, dependsOn: ["b"] },
      { id: "b", order: 2, dependsOn: ["a"] },
    ]);
    expectCode(
      caught(() => validatePlan(cycleAndTooMany, request("x", { maxSteps: 1 }))),
      ErrorCode.PLAN_CYCLE,
    );
  });

  it("checks worker types and tools only when given a registry", () => {
    const p = plan([{ id: "a", order: 1, workerType: "nobody", tools: ["nothing"] }]);
    expect(() => validatePlan(p, request("x"))).not.toThrow();
    const registry = registryOf(
      [countingTool("fetch_data").spec],
      [{ name: "reader", description: "", categories: ["general"] }],
    );
    expectCode(
      caught(() => validatePlan(p, request("x"), registry)),
      ErrorCode.PLAN_UNKNOWN_REFERENCE,
    );
  });
});

describe("criticalPathMs", () => {
  const timed = (spec: [string, number, string[]][]) =>
    spec.map(([id, durationMs, dependsOn]) => ({ id, dependsOn, estimates: { durationMs, cost: 0 } }));

  it("is the longest chain of estimates, not their sum", () => {
    // a(100) → b(300) → d(10) is the longest: 410; a → c(50) → d is 160.
    const steps = timed([
      ["a", 100, []],
      ["b", 300, ["a"]],
      ["c", 50, ["a"]],
      ["d", 10, ["b", "c"]],
    ]);
    expect(criticalPathMs(steps)).toBe(410);
  });

  it("is the slowest step when nothing depends on anything", () => {
    expect(
      criticalPathMs(
        timed([
          ["a", 100, []],
          ["b", 700, []],
          ["c", 50, []],
        ]),
      ),
    ).toBe(700);
  });

  it("is 0 for no steps", () => {
    expect(criticalPathMs([])).toBe(0);
  });
});

describe("assignOrder", () => {
  it("numbers steps so every dependency comes first, whatever order they were listed in", () => {
    const listed = [
      { id: "report", order: 0, dependsOn: ["analyze"] },
      { id: "analyze", order: 0, dependsOn: ["fetch"] },
      { id: "fetch", order: 0, dependsOn: [] },
    ];
    const ordered = assignOrder(listed);
    expect(ordered.map((s) => [s.id, s.order])).toEqual([
      ["fetch", 1],
      ["analyze", 2],
      ["report", 3],
    ]);
    expect(() => assertLogicalOrder(ordered)).not.toThrow();
  });

  it("keeps independent steps in their listed order and does not mutate the input", () => {
    const listed = [
      { id: "b", order: 9, dependsOn: [] },
      { id: "a", order: 9, dependsOn: [] },
      { id: "c", order: 9, dependsOn: ["a", "b"] },
    ];
    const snapshot = structuredClone(listed);
    expect(assignOrder(listed).map((s) => s.id)).toEqual(["b", "a", "c"]);
    expect(listed).toEqual(snapshot);
  });
});
