import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Command, isInterrupted, MemorySaver } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent } from "../../graphs/agent.js";
import { ConfidenceCalibrator, type PlanOutcome } from "../../src/confidence/calibrator.js";
import { openPersistence, type SqlitePersistence } from "../../src/memory/persistence.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { planOf } from "../../src/domain/plan-state.js";

const TRIP = "Plan a 3-day trip from Madrid to Paris for 2 people";
/** The rules planner's confidence for TRIP when the user has no failed episodes. */
const RAW = 0.85;

function input(userId: string, settings: Record<string, unknown> = {}) {
  return { request: { userIntent: TRIP, userContext: { userId, preferences: {} } }, settings };
}

/** Twelve earlier plans scored 0.9 that all failed: an over-confidence rate of 1, so 0.85 → 0.75. */
function failedHighConfidenceHistory(): PlanOutcome[] {
  return Array.from({ length: 12 }, (_, i) => ({
    planId: `old-${i}`,
    confidence: 0.9,
    success: false,
    executionMs: 500,
    cost: 0,
    at: new Date(Date.parse("2026-01-01T00:00:00.000Z") + i * 60_000).toISOString(),
  }));
}

describe("confidence calibration across runs (SQLite checkpointer and store)", () => {
  let dir: string;
  let persistence: SqlitePersistence;
  const decisionLog = memoryDecisionLog();
  let graph: ReturnType<typeof compileAgent>;

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "candor-calibration-"));
    persistence = openPersistence(path.join(dir, "candor.db"));
    graph = compileAgent({ toolkits: [travelToolkit({ latencyMs: 5 })], decisionLog }, persistence);
  });
  afterAll(() => {
    persistence.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lowers a new plan's confidence after a history of failed high-confidence plans, says why, and records the run's own outcome", async () => {
    const calibrator = new ConfidenceCalibrator(persistence.store, "over_user");
    for (const o of failedHighConfidenceHistory()) await calibrator.record(o);

    const out = await graph.invoke(input("over_user"), { configurable: { thread_id: "over" } });

    expect(out.status).toBe("completed");
    const reason =
      "calibrated from 0.85 to 0.75: over-confident in 100% of 12 past runs scored above 0.8 (12 outcomes)";
    expect(planOf(out)!.confidenceReasons).toContain(reason);
    // The planner's own score first, then the calibrated one, then REFLECT's +0.05 for a completed run.
    expect(out.confidenceHistory.map((p) => [p.value, p.reason])).toEqual([
      [RAW, "initial plan (rules)"],
      [0.75, reason],
      [0.8, "outcome: every needed step succeeded"],
    ]);
    expect(decisionLog.entries.find((e) => e.operation === "plan" && e.planId === planOf(out)!.planId)).toMatchObject({
      confidenceBefore: RAW,
      confidenceAfter: 0.75,
    });

    const recorded = await calibrator.outcomes();
    expect(recorded).toHaveLength(13);
    // Recorded with the planner's raw score, not the calibrated 0.75, so calibration measures the planner.
    expect(recorded[0]).toMatchObject({ planId: planOf(out)!.planId, confidence: RAW, success: true });
    expect(recorded[0]!.executionMs).toBeGreaterThan(0);
  });

  it("leaves a first-time user's plan as the planner scored it, and still records the outcome", async () => {
    const out = await graph.invoke(input("new_user"), { configurable: { thread_id: "new" } });
    expect(out.status).toBe("completed");
    expect(out.confidenceHistory.map((p) => p.reason)).toEqual([
      "initial plan (rules)",
      "outcome: every needed step succeeded",
    ]);
    expect(planOf(out)!.confidenceReasons.some((r) => r.startsWith("calibrated"))).toBe(false);
    const recorded = await new ConfidenceCalibrator(persistence.store, "new_user").outcomes();
    expect(recorded).toEqual([
      expect.objectContaining({ planId: planOf(out)!.planId, confidence: RAW, success: true }),
    ]);
  });

  it("calibrates before the approval check, so the lowered score asks a human, and a rejected plan is not recorded", async () => {
    const calibrator = new ConfidenceCalibrator(persistence.store, "ask_user");
    for (const o of failedHighConfidenceHistory()) await calibrator.record(o);
    const config = { configurable: { thread_id: "ask" } };

    // 0.85 would pass a 0.8 threshold; the calibrated 0.75 does not.
    const paused = await graph.invoke(input("ask_user", { approvalThreshold: 0.8 }), config);
    if (!isInterrupted<Record<string, unknown>>(paused)) throw new Error("expected the run to wait for approval");
    const request = paused.__interrupt__[0]!.value as { confidence: number; reasons: string[] };
    expect(request.confidence).toBe(0.75);
    expect(request.reasons.some((r) => r.startsWith("calibrated from 0.85 to 0.75"))).toBe(true);

    const done = await graph.invoke(new Command({ resume: { decision: "reject", comment: "not now" } }), config);
    expect(done.status).toBe("rejected");
    // Nothing ran, so the plan's confidence was neither right nor wrong: only the 12 seeded outcomes remain.
    expect(await calibrator.outcomes()).toHaveLength(12);
  });
});

describe("without a store (how Studio compiles the graph)", () => {
  it("skips calibration and outcome recording silently and completes the run", async () => {
    const graph = compileAgent({ toolkits: [travelToolkit({ latencyMs: 5 })] }, { checkpointer: new MemorySaver() });
    const out = await graph.invoke(input("storeless"), { configurable: { thread_id: "no-store" } });
    expect(out.status).toBe("completed");
    expect(out.confidenceHistory[0]).toMatchObject({ value: RAW, reason: "initial plan (rules)" });
    expect(out.confidenceHistory.some((p) => p.reason.startsWith("calibrated"))).toBe(false);
  });
});
