import { describe, expect, it } from "vitest";
import { idealReactCalls } from "../../bench/models.js";

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
