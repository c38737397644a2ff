import { describe, expect, it } from "vitest";
import { applyFeedback } from "../../src/execution/evidence.js";
import {
  callOrder,
  dependencyInputs,
  lookahead,
  markDispatched,
  missingInputs,
  readySteps,
  resultsById,
  settleBlockedSteps,
  type InputsOf,
} from "../../src/planning/schedule.js";
import type { Plan, TaskStep } from "../../src/domain/plan.js";
import { feedback, plan, travelPlan, travelRegistry, withSteps } from "../fakes/toolkit-fixtures.js";

const ids = (steps: readonly { id: string }[]) => steps.map((s) => s.id);
const statusOf = (p: Plan, id: string) => p.steps.find((s) => s.id === id)?.status;

describe("readySteps", () => {
  it("starts the travel plan with the three independent searches, in parallel", () => {
    expect(ids(readySteps(travelPlan()))).toEqual(["flight", "hotel", "activities"]);
  });

  it("releases the budget check only when all three searches are done", () => {
    const p = travelPlan();
    expect(
      ids(
        readySteps(
          withSteps(p, { flight: { status: "done" }, hotel: { status: "done" }, activities: { status: "running" } }),
        ),
      ),
    ).toEqual([]);
    expect(
      ids(
        readySteps(
          withSteps(p, { flight: { status: "done" }, hotel: { status: "done" }, activities: { status: "done" } }),
        ),
      ),
    ).toEqual(["budget_status"]);
  });

  it("does not release dependents of a failed step (it is still being recovered)", () => {
    const p = withSteps(travelPlan(), {
      flight: { status: "failed" },
      hotel: { status: "done" },
      activities: { status: "done" },
    });
    expect(readySteps(p)).toEqual([]);
  });

  it("holds back a step whose condition is false", () => {
    const p = plan([
      { id: "a", status: "done", result: { ok: false } },
      { id: "b", dependsOn: ["a"], condition: { type: "expression", expression: "a.ok == true" } },
      { id: "c", dependsOn: ["a"], condition: { type: "expression", expression: "a.ok == false" } },
    ]);
    expect(ids(readySteps(p))).toEqual(["c"]);
  });
});

describe("settleBlockedSteps", () => {
  it("skips the dependents of a skipped step as DEPENDENCY_FAILURE, cascading down the chain", () => {
    const p = withSteps(travelPlan(), {
      flight: { status: "skipped", skipReason: "Skipped after it failed: timeout" },
      hotel: { status: "done" },
      activities: { status: "done" },
    });
    const { plan: settled, skipped } = settleBlockedSteps(p);
    expect(skipped.map((s) => [s.step.id, s.dependencyFailure])).toEqual([
      ["budget_status", true],
      ["itinerary", true],
    ]);
    expect(skipped[0]?.reason).toBe("Dependency flight failed, so this step could not run");
    expect(statusOf(settled, "budget_status")).toBe("skipped");
    expect(settled.steps.find((s) => s.id === "itinerary")?.skipReason).toMatch(/^Dependency .*budget_status/);
    expect(statusOf(settled, "hotel")).toBe("done");
  });

  it("leaves the dependents of a failed (not yet skipped) step waiting", () => {
    const p = withSteps(travelPlan(), {
      flight: { status: "failed" },
      hotel: { status: "done" },
      activities: { status: "done" },
    });
    const { plan: settled, skipped } = settleBlockedSteps(p);
    expect(skipped).toEqual([]);
    expect(statusOf(settled, "budget_status")).toBe("pending");
  });

  it("runs a failure-conditioned fallback when its dependency was skipped, and skips it (not as a failure) when all went well", () => {
    const steps = (aStatus: "done" | "skipped") =>
      plan([
        { id: "a", status: aStatus },
        { id: "fallback", dependsOn: ["a"], condition: { type: "failure", expression: null } },
        { id: "cleanup", dependsOn: ["a"], condition: { type: "always", expression: null } },
      ]);
    const afterFailure = settleBlockedSteps(steps("skipped"));
    expect(afterFailure.skipped).toEqual([]);
    expect(ids(readySteps(afterFailure.plan))).toEqual(["fallback", "cleanup"]);

    const afterSuccess = settleBlockedSteps(steps("done"));
    expect(afterSuccess.skipped.map((s) => [s.step.id, s.dependencyFailure])).toEqual([["fallback", false]]);
    expect(afterSuccess.skipped[0]?.reason).toMatch(/^Condition 'failure' not met/);
    expect(ids(readySteps(afterSuccess.plan))).toEqual(["cleanup"]);
  });

  it("skips a step whose expression is false once its dependencies are done, with the expression in the reason", () => {
    const p = plan([
      { id: "budget", status: "done", result: { withinBudget: false } },
      {
        id: "book",
        dependsOn: ["budget"],
        condition: { type: "expression", expression: "budget.withinBudget == true" },
      },
    ]);
    const { skipped } = settleBlockedSteps(p);
    expect(skipped.map((s) => s.step.id)).toEqual(["book"]);
    expect(skipped[0]?.reason).toBe("Condition not met: budget.withinBudget == true is false");
    expect(skipped[0]?.dependencyFailure).toBe(false);
  });

  it("changes nothing in a plan with nothing blocked", () => {
    const p = travelPlan();
    const { plan: settled, skipped } = settleBlockedSteps(p);
    expect(skipped).toEqual([]);
    expect(settled.steps).toEqual(p.steps);
  });
});

describe("applyFeedback", () => {
  const running = () => markDispatched(travelPlan(), ["flight", "hotel"]);

  it("marks a running step done with its result on success, failed on failure", () => {
    const p = applyFeedback(running(), [
      feedback({ taskId: "flight", dispatch: 1, outputs: { result: { price: 300 } }, attempt: 2 }),
      feedback({ taskId: "hotel", dispatch: 1, feedbackType: "FAILURE", errors: ["fully booked"] }),
    ]);
    const flight = p.steps.find((s) => s.id === "flight")!;
    expect([flight.status, flight.result, flight.attempts]).toEqual(["done", { price: 300 }, 2]);
    const hotel = p.steps.find((s) => s.id === "hotel")!;
    expect([hotel.status, hotel.result]).toEqual(["failed", null]);
  });

  it("counts PARTIAL_SUCCESS as done and CONSTRAINT_VIOLATION as failed", () => {
    const p = applyFeedback(running(), [
      feedback({ taskId: "flight", dispatch: 1, feedbackType: "PARTIAL_SUCCESS", outputs: { result: "some" } }),
      feedback({ taskId: "hotel", dispatch: 1, feedbackType: "CONSTRAINT_VIOLATION" }),
    ]);
    expect([statusOf(p, "flight"), statusOf(p, "hotel")]).toEqual(["done", "failed"]);
  });

  it("ignores feedback of an older dispatch (the step is running again)", () => {
    const again = markDispatched(markDispatched(travelPlan(), ["flight"]), ["flight"]);
    expect(again.steps.find((s) => s.id === "flight")?.dispatches).toBe(2);
    const p = applyFeedback(again, [feedback({ taskId: "flight", dispatch: 1, feedbackType: "FAILURE" })]);
    expect(statusOf(p, "flight")).toBe("running");
    const q = applyFeedback(again, [
      feedback({ taskId: "flight", dispatch: 1, feedbackType: "FAILURE" }),
      feedback({ taskId: "flight", dispatch: 2 }),
    ]);
    expect(statusOf(q, "flight")).toBe("done");
  });

  it("leaves steps that are not running alone, even with matching feedback", () => {
    const p = withSteps(travelPlan(), { flight: { status: "done", dispatches: 1, result: "kept" } });
    const after = applyFeedback(p, [feedback({ taskId: "flight", dispatch: 1, feedbackType: "FAILURE" })]);
    expect(after.steps.find((s) => s.id === "flight")).toMatchObject({ status: "done", result: "kept" });
  });
});

describe("markDispatched, dependencyInputs, resultsById", () => {
  it("marks only the named steps running and counts their dispatch", () => {
    const p = markDispatched(travelPlan(), ["hotel"]);
    expect(p.steps.map((s) => [s.id, s.status, s.dispatches])).toEqual([
      ["flight", "pending", 0],
      ["hotel", "running", 1],
      ["activities", "pending", 0],
      ["budget_status", "pending", 0],
      ["itinerary", "pending", 0],
    ]);
  });

  it("hands a step the results of its done dependencies under their ids and output names", () => {
    const p = withSteps(travelPlan(), {
      flight: { status: "done", result: { cost: 700 }, expectedOutputs: ["flight", "ticket"] },
      hotel: { status: "done", result: { cost: 600 } },
      activities: { status: "failed" },
    });
    const budget = p.steps.find((s) => s.id === "budget_status")!;
    expect(dependencyInputs(p, budget)).toEqual({ flight: { cost: 700 }, ticket: { cost: 700 }, hotel: { cost: 600 } });
  });

  it("lists results of done steps only", () => {
    const p = withSteps(travelPlan(), {
      flight: { status: "done", result: 1 },
      hotel: { status: "failed", result: 2 },
      activities: { status: "skipped" },
    });
    expect(resultsById(p)).toEqual({ flight: 1 });
  });
});

describe("optional inputs", () => {
  const registry = travelRegistry();
  const travelInputs: InputsOf = (s) => registry.inputsOf(s);
  const searched = {
    flight: { status: "done" as const, result: { cost: 848 } },
    hotel: { status: "done" as const, result: { cost: 922 } },
  };
  const byPerson = "Skipped by a person after it failed: search_activities failed: simulated internal error (HTTP 500)";

  it("a skipped activities search no longer takes the budget check and the itinerary with it (issue 8 defect 10)", () => {
    const p = withSteps(travelPlan(), {
      ...searched,
      activities: { status: "skipped", skipReason: byPerson, skipCause: "failed" },
    });
    const { plan: settled, skipped } = settleBlockedSteps(p, travelInputs);
    expect(skipped).toEqual([]);
    expect(ids(readySteps(settled, travelInputs))).toEqual(["budget_status"]);
    const dispatched = markDispatched(settled, ["budget_status"], travelInputs);
    const budget = dispatched.steps.find((s) => s.id === "budget_status")!;
    expect(budget.missingInputs).toEqual([{ input: "activities", from: "activities", reason: byPerson }]);
    expect(dependencyInputs(dispatched, budget)).toEqual({ flight: { cost: 848 }, hotel: { cost: 922 } });

    // Once the check is done, the itinerary runs too, without activities and with the same reason.
    const checked = withSteps(dispatched, { budget_status: { status: "done", result: { total: 1770 } } });
    expect(ids(readySteps(checked, travelInputs))).toEqual(["itinerary"]);
    expect(
      missingInputs(
        checked,
        checked.steps.find((s) => s.id === "itinerary")!,
        travelInputs,
      ),
    ).toEqual([{ input: "activities", from: "activities", reason: byPerson }]);
  });

  it("a skipped required input still skips its dependents as DEPENDENCY_FAILURE", () => {
    const p = withSteps(travelPlan(), {
      flight: { status: "done" },
      hotel: { status: "done" },
      activities: { status: "done" },
      budget_status: { status: "skipped", skipReason: "Skipped after it failed: timeout", skipCause: "failed" },
    });
    const { skipped } = settleBlockedSteps(p, travelInputs);
    expect(skipped.map((s) => [s.step.id, s.dependencyFailure])).toEqual([["itinerary", true]]);
  });

  it("a failed optional input is still being recovered: its dependents wait rather than run without it", () => {
    const p = withSteps(travelPlan(), { ...searched, activities: { status: "failed" } });
    const { plan: settled, skipped } = settleBlockedSteps(p, travelInputs);
    expect(skipped).toEqual([]);
    expect(readySteps(settled, travelInputs)).toEqual([]);
  });

  it("without the tools' view (ALL_REQUIRED, the default) every skipped dependency blocks, as before", () => {
    const p = withSteps(travelPlan(), {
      ...searched,
      activities: { status: "skipped", skipReason: byPerson, skipCause: "failed" },
    });
    expect(settleBlockedSteps(p).skipped.map((s) => s.step.id)).toEqual(["budget_status", "itinerary"]);
  });

  it("a dependency that provides nothing the step consumes (an ordering edge) counts as required", () => {
    const inputsOf: InputsOf = () => ({ required: [], optional: ["extra"] });
    const p = plan([
      {
        id: "a",
        status: "skipped",
        expectedOutputs: ["unrelated"],
        skipCause: "failed",
        skipReason: "Skipped after it failed: x",
      },
      { id: "b", dependsOn: ["a"] },
    ]);
    expect(settleBlockedSteps(p, inputsOf).skipped.map((s) => [s.step.id, s.dependencyFailure])).toEqual([["b", true]]);
  });

  it("a fallback (condition failure) still sees a skipped optional dependency as failed and runs", () => {
    const inputsOf: InputsOf = () => ({ required: [], optional: ["extra"] });
    const p = plan([
      {
        id: "a",
        status: "skipped",
        expectedOutputs: ["extra"],
        skipCause: "failed",
        skipReason: "Skipped after it failed: x",
      },
      { id: "fallback", dependsOn: ["a"], condition: { type: "failure", expression: null } },
    ]);
    expect(settleBlockedSteps(p, inputsOf).skipped).toEqual([]);
    expect(ids(readySteps(p, inputsOf))).toEqual(["fallback"]);
  });

  it("names the skip a cascade started from, and says when no step of the plan provides an optional input", () => {
    const inputsOf: InputsOf = (s: TaskStep) =>
      s.id === "total" ? { required: ["base"], optional: ["extra", "bonus"] } : { required: ["parts"], optional: [] };
    const p = plan([
      { id: "base", status: "done", expectedOutputs: ["base"] },
      {
        id: "part1",
        status: "skipped",
        expectedOutputs: ["parts"],
        skipCause: "failed",
        skipReason: "Skipped by a person after it failed: timed out",
      },
      {
        id: "part2",
        status: "skipped",
        dependsOn: ["part1"],
        expectedOutputs: ["extra"],
        skipCause: "dependency_failed",
        skipReason: "Dependency part1 failed, so this step could not run",
      },
      { id: "total", dependsOn: ["base", "part2"] },
    ]);
    expect(ids(readySteps(p, inputsOf))).toEqual(["total"]);
    expect(
      missingInputs(
        p,
        p.steps.find((s) => s.id === "total")!,
        inputsOf,
      ),
    ).toEqual([
      {
        input: "extra",
        from: "part2",
        reason: "Skipped by a person after it failed: timed out (part1, so part2 could not run)",
      },
    ]);
  });

  it("a step with all its inputs records nothing missing", () => {
    const p = withSteps(travelPlan(), { ...searched, activities: { status: "done", result: { cost: 0 } } });
    const dispatched = markDispatched(p, ["budget_status"], travelInputs);
    expect(dispatched.steps.find((s) => s.id === "budget_status")!.missingInputs).toEqual([]);
  });
});

/** Chains of different lengths: c1→c2→c3, d1→d2, e1 (callOrder: c1 d1 e1 c2 d2 c3). */
const chains = () =>
  plan([
    { id: "c1" },
    { id: "c2", dependsOn: ["c1"] },
    { id: "c3", dependsOn: ["c2"] },
    { id: "d1" },
    { id: "d2", dependsOn: ["d1"] },
    { id: "e1" },
  ]);

describe("callOrder", () => {
  it("puts the steps ready at the start first, then each depth in plan order", () => {
    expect(callOrder(chains())).toEqual(["c1", "d1", "e1", "c2", "d2", "c3"]);
  });

  it("counts depth among pending steps only: a step whose dependencies are done is ready at depth 0", () => {
    const p = withSteps(chains(), { c1: { status: "done" }, c2: { status: "done" }, d1: { status: "failed" } });
    expect(callOrder(p)).toEqual(["c3", "d2", "e1"]);
  });

  it("depends on the plan alone: the same plan gives the same order, whatever ran before", () => {
    expect(callOrder(chains())).toEqual(callOrder(chains()));
  });

  it("places a step by its deepest pending dependency, even when it comes first in the plan", () => {
    const p = plan([{ id: "j", dependsOn: ["a2", "b1"] }, { id: "a2", dependsOn: ["a1"] }, { id: "a1" }, { id: "b1" }]);
    expect(callOrder(p)).toEqual(["a1", "b1", "a2", "j"]);
  });
});

describe("lookahead", () => {
  it("reaches the next steps of the running ones, and no further", () => {
    const p = chains();
    const ahead = lookahead(p, callOrder(p));
    expect(ahead("c1", "running")).toBe(3); // c2
    expect(ahead("d1", "running")).toBe(4); // d2
    expect(ahead("e1", "running")).toBe(4);
    // c3 waits for c2, which has not started: not yet.
    expect(ahead("c1", "done")).toBe(4);
    expect(ahead("c2", "running")).toBe(5); // c3
  });

  it("never reaches past a step whose dependency failed or was skipped", () => {
    const p = chains();
    const ahead = lookahead(p, callOrder(p));
    expect(ahead("c1", "failed")).toBe(-1);
    expect(ahead("d1", "skipped")).toBe(-1);
  });

  it("waits for every dependency of a join", () => {
    const p = plan([{ id: "a" }, { id: "b" }, { id: "j", dependsOn: ["a", "b"] }]);
    const ahead = lookahead(p, callOrder(p));
    expect(ahead("a", "running")).toBe(-1);
    expect(ahead("b", "running")).toBe(2);
  });
});
