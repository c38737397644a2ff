import { describe, expect, it } from "vitest";
import { criticalPathMs, growth, waveScheduleMs } from "../../bench/execution/analysis.js";
import { buildEagerFloor } from "../../bench/execution/floor.js";
import { dagToolkit, waveSteps, type DagStep } from "../../bench/fixtures.js";
import { spread } from "../../bench/stats.js";

const slowBranch: DagStep[] = [
  { id: "a1", dependsOn: [], latencyMs: 100 },
  { id: "a2", dependsOn: ["a1"], latencyMs: 100 },
  { id: "a3", dependsOn: ["a2"], latencyMs: 100 },
  { id: "b1", dependsOn: [], latencyMs: 300 },
];

describe("criticalPathMs and waveScheduleMs", () => {
  it("the slow branch: 300 ms eagerly, 500 ms when each wave waits for its slowest step", () => {
    expect(criticalPathMs(slowBranch)).toBe(300);
    expect(waveScheduleMs(slowBranch)).toBe(500);
  });

  it("a join waits for its slower input, not for the sum of both branches", () => {
    const join: DagStep[] = [
      { id: "a1", dependsOn: [], latencyMs: 50 },
      { id: "a2", dependsOn: ["a1"], latencyMs: 150 },
      { id: "b1", dependsOn: [], latencyMs: 150 },
      { id: "b2", dependsOn: ["b1"], latencyMs: 50 },
      { id: "j", dependsOn: ["a2", "b2"], latencyMs: 50 },
    ];
    expect(criticalPathMs(join)).toBe(250);
    expect(waveScheduleMs(join)).toBe(350);
  });

  it("a uniform plan in waves is the same either way: one latency per wave", () => {
    expect(criticalPathMs(waveSteps(12, 4, 100))).toBe(300);
    expect(waveScheduleMs(waveSteps(12, 4, 100))).toBe(300);
    expect(criticalPathMs(waveSteps(12, 1, 100))).toBe(1200);
  });

  it("refuses a plan it cannot schedule: an unknown dependency or a cycle", () => {
    expect(() => criticalPathMs([{ id: "a", dependsOn: ["zz"], latencyMs: 1 }])).toThrow(/unknown dependency "zz"/);
    expect(() =>
      criticalPathMs([
        { id: "a", dependsOn: ["b"], latencyMs: 1 },
        { id: "b", dependsOn: ["a"], latencyMs: 1 },
      ]),
    ).toThrow(/cycle/);
  });
});

describe("growth", () => {
  it("counts a fixed per-run cost plus bytes per step as linear", () => {
    const bytes = (steps: number) => 20_000 + 8_000 * steps;
    const g = growth(12, bytes(12), 200, bytes(200));
    expect(g.linear).toBe(true);
    expect(g.perStepRatio).toBeLessThan(1);
  });

  it("catches quadratic growth: every checkpoint re-writing everything done so far", () => {
    const bytes = (steps: number) => 1_000 * steps * steps;
    const g = growth(12, bytes(12), 200, bytes(200));
    expect(g.linear).toBe(false);
    expect(g.exponent).toBeCloseTo(2, 5);
    expect(g.perStepRatio).toBeCloseTo(200 / 12, 5);
  });

  it("refuses sizes that cannot show a trend", () => {
    expect(() => growth(200, 1, 12, 1)).toThrow(/0 < small < large/);
  });
});

describe("spread", () => {
  it("is (max − min) / median, and 0 for a single round", () => {
    expect(spread([90, 100, 120])).toBeCloseTo(0.3, 10);
    expect(spread([100])).toBe(0);
  });
});

describe("buildEagerFloor", () => {
  it("starts each step the moment its last dependency ends: a short chain finishes before a slow sibling", async () => {
    const steps: DagStep[] = [
      { id: "a1", dependsOn: [], latencyMs: 5 },
      { id: "a2", dependsOn: ["a1"], latencyMs: 5 },
      { id: "a3", dependsOn: ["a2"], latencyMs: 5 },
      { id: "b1", dependsOn: [], latencyMs: 300 },
    ];
    const returned = new Map<string, number>();
    const final = await buildEagerFloor(steps, dagToolkit(steps, returned)).invoke({});
    expect(Object.keys(final.results).sort()).toEqual(["a1", "a2", "a3", "b1"]);
    // In waves, a2 would wait for b1 (the first wave's slowest step) and a3 would end last.
    expect(returned.get("a3")!).toBeLessThan(returned.get("b1")!);
    expect(final.answer).toBe("4 results");
  });
});
