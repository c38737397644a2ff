import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { InMemoryStore } from "@langchain/langgraph-checkpoint";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  adjustConfidence,
  applyCalibration,
  calculateCalibration,
  calibrate,
  ConfidenceCalibrator,
  type CalibrationMetrics,
  type PlanOutcome,
} from "../../src/confidence/calibrator.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { SqliteStore } from "../../src/memory/sqlite-store.js";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

/** Outcomes one minute apart, oldest first, so store keys sort in the order they are listed. */
function outcomes(points: readonly [confidence: number, success: boolean][], startMinute = 0): PlanOutcome[] {
  return points.map(([confidence, success], i) => ({
    planId: `plan-${startMinute + i}`,
    confidence,
    success,
    executionMs: 1000,
    cost: 0.01,
    at: new Date(T0 + (startMinute + i) * 60_000).toISOString(),
  }));
}

function repeat(n: number, confidence: number, success: boolean): [number, boolean][] {
  return Array.from({ length: n }, () => [confidence, success] as [number, boolean]);
}

function metrics(overrides: Partial<CalibrationMetrics>): CalibrationMetrics {
  return {
    correlation: null,
    correlationNote: null,
    overConfidenceRate: 0,
    underConfidenceRate: 0,
    highConfidenceCount: 0,
    lowConfidenceCount: 0,
    sampleSize: 20,
    ...overrides,
  };
}

describe("calculateCalibration", () => {
  it("computes Pearson's r between confidence and success (0/1) as worked by hand", () => {
    // x = 0.9 0.8 0.6 0.5 0.3 (mean 0.62), y = 1 1 0 1 0 (mean 0.6):
    // Σdxdy = 0.34, Σdx² = 0.228, Σdy² = 1.2, r = 0.34 / √0.2736 = 0.650011…
    const m = calculateCalibration(
      outcomes([
        [0.9, true],
        [0.8, true],
        [0.6, false],
        [0.5, true],
        [0.3, false],
      ]),
    );
    expect(m.correlation).toBeCloseTo(0.650011, 5);
    expect(m.correlationNote).toBeNull();
    expect(m.sampleSize).toBe(5);
  });

  it("gives r = 1 and r = −1 for perfectly ordered outcomes, never a hair past ±1", () => {
    expect(
      calculateCalibration(
        outcomes([
          [0.9, true],
          [0.1, false],
          [0.9, true],
          [0.1, false],
        ]),
      ).correlation,
    ).toBe(1);
    expect(
      calculateCalibration(
        outcomes([
          [0.9, false],
          [0.1, true],
        ]),
      ).correlation,
    ).toBe(-1);
  });

  it("returns a null correlation with the reason when either series is constant (Pearson's denominator is zero)", () => {
    const sameConfidence = calculateCalibration(
      outcomes([
        [0.7, true],
        [0.7, false],
        [0.7, true],
      ]),
    );
    expect(sameConfidence.correlation).toBeNull();
    expect(sameConfidence.correlationNote).toMatch(/every plan had the same confidence \(0\.7\)/);
    const allSucceeded = calculateCalibration(
      outcomes([
        [0.9, true],
        [0.4, true],
        [0.6, true],
      ]),
    );
    expect(allSucceeded.correlation).toBeNull();
    expect(allSucceeded.correlationNote).toMatch(/every run succeeded/);
    const one = calculateCalibration(outcomes([[0.9, true]]));
    expect(one.correlation).toBeNull();
    expect(one.correlationNote).toMatch(/at least 2 outcomes, has 1/);
    expect(calculateCalibration([])).toMatchObject({
      correlation: null,
      overConfidenceRate: 0,
      underConfidenceRate: 0,
      sampleSize: 0,
    });
  });

  it("over-confidence is failures among scores > 0.8; under-confidence is successes among scores < 0.5; 0.8 and 0.5 count as neither", () => {
    const m = calculateCalibration(
      outcomes([
        [0.9, false],
        [0.85, true],
        [0.95, true],
        [0.81, false],
        [0.8, false],
        [0.5, true],
        [0.4, true],
        [0.2, false],
        [0.3, false],
        [0.45, false],
      ]),
    );
    expect(m.highConfidenceCount).toBe(4);
    expect(m.overConfidenceRate).toBe(0.5);
    expect(m.lowConfidenceCount).toBe(4);
    expect(m.underConfidenceRate).toBe(0.25);
  });
});

describe("adjustConfidence", () => {
  it("returns the raw value unchanged with fewer than 10 outcomes, however bad they look", () => {
    const nine = calculateCalibration(outcomes(repeat(9, 0.9, false)));
    expect(nine.overConfidenceRate).toBe(1);
    expect(adjustConfidence(0.85, nine)).toBe(0.85);
  });

  it("lowers a high score by 0.1 × the over-confidence rate once there are 10 outcomes", () => {
    // 2 of 10 high-confidence runs failed: rate 0.2, so 0.85 − 0.02.
    const m = calculateCalibration(outcomes([...repeat(8, 0.9, true), ...repeat(2, 0.9, false)]));
    expect(m.overConfidenceRate).toBe(0.2);
    expect(adjustConfidence(0.85, m)).toBe(0.83);
    // A score at or under 0.8 is not "high", so it is left alone.
    expect(adjustConfidence(0.8, m)).toBe(0.8);
  });

  it("raises a low score by 0.1 × the under-confidence rate", () => {
    // 6 of 12 low-confidence runs succeeded: rate 0.5, so 0.4 + 0.05.
    const m = calculateCalibration(outcomes([...repeat(6, 0.4, true), ...repeat(6, 0.4, false)]));
    expect(m.underConfidenceRate).toBe(0.5);
    expect(adjustConfidence(0.4, m)).toBe(0.45);
    expect(adjustConfidence(0.5, m)).toBe(0.5);
    expect(adjustConfidence(0.85, m)).toBe(0.85);
  });

  it("needs a rate above 0.15: exactly 0.15 changes nothing", () => {
    const m = calculateCalibration(outcomes([...repeat(17, 0.9, true), ...repeat(3, 0.9, false)]));
    expect(m.overConfidenceRate).toBe(0.15);
    expect(adjustConfidence(0.9, m)).toBe(0.9);
  });

  it("checks under-confidence when over-confidence is high but the score is low (the seed's fall-through)", () => {
    expect(adjustConfidence(0.3, metrics({ overConfidenceRate: 0.9, underConfidenceRate: 0.4 }))).toBe(0.34);
  });

  it("rounds an adjusted value to 2 decimals and clamps it to [0, 1]", () => {
    expect(adjustConfidence(0.87, metrics({ overConfidenceRate: 1 / 3 }))).toBe(0.84);
    // A valid raw score cannot leave [0, 1] this way; a caller's out-of-range score is still brought back.
    expect(adjustConfidence(1.3, metrics({ overConfidenceRate: 1 }))).toBe(1);
    expect(adjustConfidence(-0.3, metrics({ underConfidenceRate: 1 }))).toBe(0);
  });
});

describe("calibrate and applyCalibration", () => {
  it("says by how much, why, and over how many runs when the score changed", () => {
    const c = calibrate(
      0.85,
      outcomes([...repeat(10, 0.9, true), ...repeat(2, 0.95, false), ...repeat(3, 0.4, false)]),
    );
    expect(c.confidence).toBe(0.83);
    expect(c.reason).toBe(
      "calibrated from 0.85 to 0.83: over-confident in 17% of 12 past runs scored above 0.8 (15 outcomes)",
    );
    const plan = { planId: "p", confidence: 0.85, confidenceReasons: ["tools matched"] };
    expect(applyCalibration(plan, c)).toEqual({
      planId: "p",
      confidence: 0.83,
      confidenceReasons: ["tools matched", c.reason],
    });
  });

  it("gives no reason and leaves the plan as it was when nothing changed", () => {
    const c = calibrate(0.85, outcomes(repeat(3, 0.9, false)));
    expect(c).toMatchObject({ raw: 0.85, confidence: 0.85, reason: null });
    const plan = { confidence: 0.85, confidenceReasons: [] };
    expect(applyCalibration(plan, c)).toBe(plan);
    expect(applyCalibration(plan, null)).toBe(plan);
  });

  it("words an upward calibration as under-confidence", () => {
    const c = calibrate(0.4, outcomes([...repeat(5, 0.3, true), ...repeat(5, 0.3, false)]));
    expect(c.reason).toBe(
      "calibrated from 0.40 to 0.45: under-confident in 50% of 10 past runs scored below 0.5 (10 outcomes)",
    );
  });
});

describe("ConfidenceCalibrator on a SqliteStore file", () => {
  let dir: string;
  let dbFile: string;
  const opened: SqliteStore[] = [];
  const open = () => {
    const store = new SqliteStore(dbFile);
    opened.push(store);
    return store;
  };

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "candor-calibrator-"));
    dbFile = path.join(dir, "memory.db");
  });
  afterEach(() => {
    for (const store of opened.splice(0)) store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps each outcome under [userId, 'calibration'] and reads them back newest first after a reopen", async () => {
    const written = outcomes([...repeat(11, 0.9, false), [0.6, true]]);
    // Written out of order: the order read back comes from the keys (the outcome times), not from write order.
    const writer = new ConfidenceCalibrator(open(), "ana");
    for (const o of [...written].reverse()) await writer.record(o);
    opened.pop()!.close();

    const store = open();
    const items = await store.search(["ana", "calibration"], { limit: 100 });
    expect(items).toHaveLength(12);
    expect(items.map((i) => i.key)).toContain(`${written[0]!.at}_plan-0`);
    const reader = new ConfidenceCalibrator(store, "ana");
    const back = await reader.outcomes();
    expect(back).toEqual([...written].reverse());
    expect(await reader.outcomes(3)).toEqual(written.slice(-3).reverse());
    expect(await new ConfidenceCalibrator(store, "someone_else").outcomes()).toEqual([]);

    const c = await reader.calibrate(0.85);
    expect(c.metrics.sampleSize).toBe(12);
    expect(c.confidence).toBe(0.75);
  });

  it("calibrates from the last `window` outcomes only, so old behaviour fades out", async () => {
    const store = open();
    const calibrator = new ConfidenceCalibrator(store, "ana", 10);
    // 10 old failures, then 10 newer successes, all at 0.9: only the newer ten count.
    for (const o of outcomes([...repeat(10, 0.9, false), ...repeat(10, 0.9, true)])) await calibrator.record(o);
    const c = await calibrator.calibrate(0.9);
    expect(c.metrics).toMatchObject({ sampleSize: 10, overConfidenceRate: 0 });
    expect(c.reason).toBeNull();
  });

  it("never calibrates from simulated outcomes (faults injected on purpose), however many there are", async () => {
    const store = open();
    const calibrator = new ConfidenceCalibrator(store, "ana", 10);
    // 12 real successes at 0.9, then 20 newer practice failures at 0.9: without the filter they would fill the window.
    const real = outcomes(repeat(12, 0.9, true));
    for (const o of real) await calibrator.record(o);
    const practice = outcomes(repeat(20, 0.9, false)).map((o, i) => ({
      ...o,
      planId: `practice-${i}`,
      at: new Date(Date.parse(real.at(-1)!.at) + (i + 1) * 1000).toISOString(),
      simulated: true,
    }));
    for (const o of practice) await calibrator.record(o);
    expect((await calibrator.outcomes(50)).filter((o) => o.simulated)).toHaveLength(20);
    const c = await calibrator.calibrate(0.9);
    expect(c.metrics).toMatchObject({ sampleSize: 10, overConfidenceRate: 0 });
    expect(c.confidence).toBe(0.9);
  });

  it("skips items that are not outcomes and items in deeper namespaces instead of failing the run", async () => {
    const store = open();
    const calibrator = new ConfidenceCalibrator(store, "ana");
    const [good] = outcomes([[0.9, true]]);
    await calibrator.record(good!);
    await store.put(["ana", "calibration"], "2025-old_format", { planId: "x", score: 0.9 });
    await store.put(["ana", "calibration", "archive"], `${good!.at}_archived`, good!);
    expect(await calibrator.outcomes()).toEqual([good]);
  });

  it("refuses an invalid outcome or user id with INVALID_REQUEST, before writing anything", async () => {
    const store = open();
    const calibrator = new ConfidenceCalibrator(store, "ana");
    const [good] = outcomes([[0.9, true]]);
    await expect(calibrator.record({ ...good!, confidence: 1.5 })).rejects.toSatisfy(
      (e) => CandorError.hasCode(e, ErrorCode.INVALID_REQUEST) && /"confidence" is invalid/.test((e as Error).message),
    );
    await expect(calibrator.record({ ...good!, at: "yesterday" })).rejects.toSatisfy(
      (e) => CandorError.hasCode(e, ErrorCode.INVALID_REQUEST) && /"at" is not a date/.test((e as Error).message),
    );
    expect(() => new ConfidenceCalibrator(store, "ana@example.com")).toThrow(/cannot name a memory namespace/);
    expect(await calibrator.outcomes()).toEqual([]);
  });

  it("reads the same order from InMemoryStore, whose search returns oldest first", async () => {
    const calibrator = new ConfidenceCalibrator(new InMemoryStore(), "ana");
    const written = outcomes([
      [0.9, true],
      [0.2, false],
      [0.6, true],
    ]);
    for (const o of written) await calibrator.record(o);
    expect(await calibrator.outcomes()).toEqual([...written].reverse());
  });
});
