import { describe, expect, it } from "vitest";
import { idealReactCalls, workspaceOutcome } from "../../bench/models.js";

describe("idealReactCalls (the bench's yardstick for model-driven steps)", () => {
  it("counts one model call per tool call plus one answer per loop", () => {
    expect(idealReactCalls([3])).toBe(4);
    expect(idealReactCalls([1, 3, 1])).toBe(8);
  });

  it("still counts the answer of a loop that calls no tool, and nothing for no loop", () => {
    expect(idealReactCalls([0])).toBe(1);
    expect(idealReactCalls([])).toBe(0);
  });
});

describe("workspaceOutcome (what the bench's prose says of the workspace run)", () => {
  const run = { status: "completed", pauses: [] as string[], stepsDone: true };

  it("says the run went through without a pause only when every round did", () => {
    expect(workspaceOutcome([run, run])).toMatch(/without a pause and completes$/);
  });

  it("names a pause or a status other than completed as not expected", () => {
    const paused = { ...run, status: "partial", pauses: ["plan_approval"] };
    expect(workspaceOutcome([run, paused])).toBe(
      'expected no pause and "completed", yet (b) ended completed, partial; it paused for plan_approval (NOT as expected)',
    );
    expect(workspaceOutcome([])).toMatch(/NOT as expected/);
  });
});
