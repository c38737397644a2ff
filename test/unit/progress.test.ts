import { describe, expect, it } from "vitest";
import { Progress } from "../../src/domain/notification.js";
import type { Plan } from "../../src/domain/plan.js";
import { computeProgress, progressMeter } from "../../src/transparency/progress.js";
import { progressNotification } from "../../src/transparency/notify.js";
import { plan, travelPlan, withSteps } from "../fakes/toolkit-fixtures.js";

/** Four steps in a chain, 1000 ms each by estimate. */
const chain = (): Plan =>
  plan([
    { id: "t1", order: 1, estimates: { durationMs: 1000, cost: 0 } },
    { id: "t2", order: 2, dependsOn: ["t1"], estimates: { durationMs: 1000, cost: 0 } },
    { id: "t3", order: 3, dependsOn: ["t2"], estimates: { durationMs: 1000, cost: 0 } },
    { id: "t4", order: 4, dependsOn: ["t3"], estimates: { durationMs: 1000, cost: 0 } },
  ]);

describe("computeProgress (seed 000 scenario 17)", () => {
  it("reports each completed task with its status and (completed / total) × 100", () => {
    let p = chain();
    const seen: [string | null, string | null, number, number][] = [];
    for (const id of ["t1", "t2", "t3", "t4"]) {
      p = withSteps(p, { [id]: { status: "done" } });
      const progress = computeProgress(p, 1000, { taskId: id, status: "SUCCESS" });
      seen.push([progress.taskId, progress.status, progress.done, progress.percent]);
      expect(() => Progress.parse(progress)).not.toThrow();
    }
    expect(seen).toEqual([
      ["t1", "SUCCESS", 1, 25],
      ["t2", "SUCCESS", 2, 50],
      ["t3", "SUCCESS", 3, 75],
      ["t4", "SUCCESS", 4, 100],
    ]);
  });

  it("counts skipped steps as settled but failed steps as not done yet", () => {
    const p = withSteps(chain(), { t1: { status: "done" }, t2: { status: "skipped" }, t3: { status: "failed" } });
    const progress = computeProgress(p, 500, { taskId: "t3", status: "FAILURE" });
    expect(progress).toMatchObject({ done: 2, total: 4, percent: 50, status: "FAILURE" });
  });

  it("rounds percent to one decimal", () => {
    const p = plan([{ id: "a", status: "done" }, { id: "b" }, { id: "c" }]);
    expect(computeProgress(p, 0, { taskId: "a", status: "SUCCESS" }).percent).toBe(33.3);
  });

  it("estimates time left from the remaining estimates, at the estimate's pace before anything is measured", () => {
    expect(computeProgress(chain(), 0, { taskId: null, status: null }).etaMs).toBe(4000);
  });

  it("scales time left by the pace observed so far", () => {
    const p = withSteps(chain(), { t1: { status: "done" } });
    expect(computeProgress(p, 1000, { taskId: "t1", status: "SUCCESS" }).etaMs).toBe(3000);
    expect(computeProgress(p, 2000, { taskId: "t1", status: "SUCCESS" }).etaMs).toBe(6000);
    expect(computeProgress(p, 500, { taskId: "t1", status: "SUCCESS" }).etaMs).toBe(1500);
  });

  it("clamps the pace between 0.1 and 10 so one odd step cannot make the estimate absurd", () => {
    const p = withSteps(chain(), { t1: { status: "done" } });
    expect(computeProgress(p, 60_000, { taskId: "t1", status: "SUCCESS" }).etaMs).toBe(30_000);
    expect(computeProgress(p, 1, { taskId: "t1", status: "SUCCESS" }).etaMs).toBe(300);
  });

  it("follows the longest remaining chain, since independent steps run in parallel", () => {
    // flight 150, hotel 150, activities 100 in parallel, then budget 20, then itinerary 50: 220 ms at estimate pace.
    expect(computeProgress(travelPlan(), 0, { taskId: null, status: null }).etaMs).toBe(220);
    const searchesDone = withSteps(travelPlan(), {
      flight: { status: "done" },
      hotel: { status: "done" },
      activities: { status: "done" },
    });
    // 400 ms of estimates took 400 ms: pace 1, 70 ms left.
    expect(computeProgress(searchesDone, 400, { taskId: "activities", status: "SUCCESS" }).etaMs).toBe(70);
  });

  it("has nothing left once every step is settled", () => {
    const p = withSteps(chain(), {
      t1: { status: "done" },
      t2: { status: "done" },
      t3: { status: "done" },
      t4: { status: "skipped" },
    });
    expect(computeProgress(p, 1234, { taskId: "t4", status: "SKIPPED" })).toMatchObject({ etaMs: 0, percent: 100 });
  });
});

describe("progressNotification", () => {
  it("says how many steps are done, the percentage and the time left", () => {
    const p = withSteps(chain(), { t1: { status: "done" }, t2: { status: "done" } });
    const n = progressNotification(computeProgress(p, 2000, { taskId: "t2", status: "SUCCESS" }));
    expect(n).toMatchObject({
      kind: "progress",
      severity: "INFO",
      taskId: "t2",
      title: "Progress: 2/4 steps (50%), about 2.0 s left",
    });
  });

  it("leaves the time out when nothing is left", () => {
    const p = withSteps(chain(), {
      t1: { status: "done" },
      t2: { status: "done" },
      t3: { status: "done" },
      t4: { status: "done" },
    });
    expect(progressNotification(computeProgress(p, 10, { taskId: "t4", status: "SUCCESS" })).title).toBe(
      "Progress: 4/4 steps (100%)",
    );
  });
});

describe("progressMeter: a run's progress step after step, linear in its plan", () => {
  /** n steps in a chain, 1000 ms each by estimate, all pending. */
  const longChain = (n: number): Plan =>
    plan(
      Array.from({ length: n }, (_, i) => ({
        id: `s${i}`,
        order: i,
        dependsOn: i > 0 ? [`s${i - 1}`] : [],
        estimates: { durationMs: 1000, cost: 0 },
      })),
    );
  const settle = (p: Plan, upTo: number) =>
    withSteps(p, Object.fromEntries(Array.from({ length: upTo }, (_, i) => [`s${i}`, { status: "done" as const }])));
  const last = { taskId: null, status: "SUCCESS" as const };

  it("under 100 steps, is computeProgress after every step", () => {
    const meter = progressMeter();
    for (let k = 1; k <= 40; k++) {
      const p = settle(longChain(40), k);
      expect(meter(p, 1000 * k, last)).toEqual({ ...computeProgress(p, 1000 * k, last), at: expect.any(String) });
    }
  });

  it("on a large plan, counts every step exactly and computes the chain left again once 1% more has settled", () => {
    const meter = progressMeter();
    const base = longChain(300);
    meter(base, 0, last);
    // Two steps settled of 300 (under 1%): counted, and the chain left kept (300 steps of 1000 ms at this pace).
    const two = meter(settle(base, 2), 2000, last);
    expect(two).toMatchObject({ done: 2, percent: 0.7, etaMs: 300_000 });
    // Three (1%): the chain is computed again, as computeProgress does.
    const three = settle(base, 3);
    expect(meter(three, 3000, last).etaMs).toBe(computeProgress(three, 3000, last).etaMs);
    expect(computeProgress(three, 3000, last).etaMs).toBe(297_000);
  });
});
