import { describe, expect, it } from "vitest";
import { feedbackToStore, resultOfFeedback } from "../../src/domain/plan-state.js";
import { applyFeedback } from "../../src/execution/evidence.js";
import { feedback, plan, withSteps } from "../fakes/toolkit-fixtures.js";

describe("feedbackToStore: each result stored once", () => {
  const result = { flights: ["LH 123"] };
  const running = plan([{ id: "a" }, { id: "b", dependsOn: ["a"] }, { id: "c" }]);
  const ran = withSteps(running, { a: { status: "running", dispatches: 1 }, c: { status: "running", dispatches: 1 } });
  const fa = feedback({ taskId: "a", dispatch: 1, outputs: { result } });
  const fc = feedback({
    taskId: "c",
    dispatch: 1,
    feedbackType: "FAILURE",
    errors: ["HTTP 500"],
    failureClass: "agent_unavailable",
    outputs: { status: 500 },
  });
  const done = applyFeedback(ran, [fa, fc]);

  it("drops a success's result that the step's run-state holds, and reads it back from there", () => {
    const [storedA, storedC] = feedbackToStore([fa, fc], done);
    expect(storedA!.outputs).toEqual({});
    expect(done.steps.find((s) => s.id === "a")!.result).toBe(result);
    expect(
      resultOfFeedback(
        storedA!,
        done.steps.find((s) => s.id === "a"),
      ),
    ).toBe(result);
    // A failure keeps its outputs: recovery reads them.
    expect(storedC).toBe(fc);
  });

  it("keeps the result when the run-state does not hold that very result: another dispatch, or not done", () => {
    const redispatched = withSteps(done, { a: { dispatches: 2, status: "running" } });
    expect(feedbackToStore([fa], redispatched)[0]).toBe(fa);
    const otherResult = withSteps(done, { a: { result: { flights: [] } } });
    expect(feedbackToStore([fa], otherResult)[0]).toBe(fa);
    // Once stored there only, a dispatch's result is what the run-state holds for that dispatch, and nothing after
    // the step was dispatched again.
    const stripped = feedbackToStore([fa], done)[0]!;
    expect(resultOfFeedback(stripped, redispatched.steps[0])).toBeUndefined();
  });

  it("keeps feedback whose step the plan does not have, and reads its result from it", () => {
    const elsewhere = feedback({ taskId: "zzz", dispatch: 1, outputs: { result } });
    expect(feedbackToStore([elsewhere], done)[0]).toBe(elsewhere);
    expect(resultOfFeedback(elsewhere, undefined)).toBe(result);
  });
});
