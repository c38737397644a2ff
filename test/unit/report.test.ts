import { beforeAll, describe, expect, it } from "vitest";
import { ExecutionReport } from "../../src/domain/report.js";
import { reflectOnRun } from "../../src/reflection/reflect.js";
import { buildReport, renderReport, type ReportFacts } from "../../src/transparency/report.js";
import { NO_BUDGET_REQUEST, flightTimeoutRun, type RunRecord } from "../fakes/toolkit-fixtures.js";

const twoSecondsAgo = () => new Date(Date.now() - 2000).toISOString();

function factsOf(run: RunRecord, overrides: Partial<ReportFacts> = {}): ReportFacts {
  return {
    request: NO_BUDGET_REQUEST,
    plan: run.plan,
    feedback: run.feedback,
    revisions: run.revisions,
    confidenceHistory: [
      ...run.confidenceHistory,
      { at: "2025-01-01T00:00:02.000Z", value: 0.8, reason: "outcome: every needed step succeeded" },
    ],
    status: "completed",
    failureReason: null,
    lessons: [],
    startedAt: twoSecondsAgo(),
    ...overrides,
  };
}

describe("buildReport after a recovered failure (seed 000 scenario 20)", () => {
  let run: RunRecord;
  let report: ExecutionReport;
  beforeAll(async () => {
    run = await flightTimeoutRun(true);
    const lessons = reflectOnRun({
      threadId: "t1",
      request: NO_BUDGET_REQUEST,
      plan: run.plan,
      feedback: run.feedback,
      revisions: run.revisions,
      status: "completed",
      initialConfidence: 0.85,
      startedAt: twoSecondsAgo(),
    }).lessons;
    report = buildReport(factsOf(run, { lessons }));
  });

  it("is a valid ExecutionReport", () => {
    expect(() => ExecutionReport.parse(report)).not.toThrow();
    expect(report.planId).toBe(run.plan.planId);
    expect(report.request).toBe(NO_BUDGET_REQUEST);
  });

  it("summary: outcome, total duration > 0, total cost, counts", () => {
    expect(report.summary).toMatchObject({
      status: "completed",
      outcome: "Completed: every step succeeded after recovering from 1 failed step(s) with 1 revision(s).",
      stepsSucceeded: 5,
      stepsFailed: 1,
      stepsSkipped: 0,
      revisionCount: 1,
      failureReason: null,
    });
    expect(report.summary.totalDurationMs).toBeGreaterThanOrEqual(2000);
    // Backup flight 0.012, hotel 0.01, activities 0.005, budget 0.001, itinerary 0.002; the failed call cost nothing.
    expect(report.summary.totalCost).toBeCloseTo(0.03, 10);
    expect(report.summary.totalCost).toBeGreaterThan(0);
  });

  it("tasks: every step, including the replaced one with its error, and the replacement saying what it replaces", () => {
    expect(report.tasks.map((t) => [t.id, t.status])).toEqual([
      ["flight", "replaced"],
      ["flight_retry", "done"],
      ["hotel", "done"],
      ["activities", "done"],
      ["budget_status", "done"],
      ["itinerary", "done"],
    ]);
    const replaced = report.tasks[0]!;
    expect(replaced).toMatchObject({ workerType: "flight_agent", attempts: 1, lastFeedback: "FAILURE", cost: 0 });
    expect(replaced.errors).toEqual(["search_flights timed out after 30 ms"]);
    expect(report.tasks[1]).toMatchObject({
      replaces: "flight",
      workerType: "backup_flight_agent",
      lastFeedback: "SUCCESS",
      cost: 0.012,
    });
    for (const t of report.tasks) expect(t.durationMs).toBeGreaterThan(0);
  });

  it("revisions: each with its reason, changes and confidence from → to", () => {
    expect(report.revisions).toHaveLength(1);
    expect(report.revisions[0]).toMatchObject({
      revisionId: "rev_1",
      strategy: "RETRY_DIFFERENT_AGENT",
      failedTaskId: "flight",
      failureClass: "timeout",
      confidenceFrom: 0.85,
      confidenceTo: 0.75,
    });
    expect(report.revisions[0]!.reason).toBe(run.revisions[0]!.rationale);
    expect(report.revisions[0]!.changes).toEqual(run.revisions[0]!.changes);
  });

  it("confidence evolution and lessons learned", () => {
    expect(report.confidenceEvolution.map((p) => p.value)).toEqual([0.85, 0.75, 0.8]);
    expect(report.lessonsLearned.length).toBeGreaterThan(0);
    expect(report.lessonsLearned.join(" ")).toMatch(/RETRY_DIFFERENT_AGENT recovered it/);
    expect(report.missing).toEqual([]);
  });

  it("renders every section for people", () => {
    const text = renderReport(report);
    for (const section of [
      "Report for plan",
      "Outcome: Completed",
      "Tasks:",
      "Revisions:",
      "Confidence:",
      "Lessons learned:",
    ])
      expect(text).toContain(section);
    expect(text).toContain("rev_1 RETRY_DIFFERENT_AGENT for flight (timeout), confidence 0.85 → 0.75");
    expect(text).toContain("0.85 (initial plan (rules)) → 0.75");
    expect(text).toContain("flight_retry [backup_flight_agent] done");
    expect(text).not.toContain("Missing:");
  });
});

describe("buildReport after a skipped failure", () => {
  it("lists what is missing; the steps that ran without it are partial successes", async () => {
    // Regression: steps skipped for a failed dependency never ran, yet were counted in stepsFailed as well.
    const run = await flightTimeoutRun(false);
    const report = buildReport(
      factsOf(run, { status: "partial", failureReason: "Not completed: flight could not be recovered." }),
    );
    // Flights are optional inputs of the budget check and the itinerary, so those ran without them (PARTIAL_SUCCESS);
    // test/graph/recovery.test.ts covers steps skipped for a dependency, which count as skipped and not failed.
    expect(report.summary).toMatchObject({ stepsSucceeded: 4, stepsFailed: 1, stepsSkipped: 1 });
    expect(report.summary.outcome).toBe(
      "Partly completed: some steps were skipped and their results are missing. Not completed: flight could not be recovered.",
    );
    expect(report.missing).toEqual([
      "Find flights Madrid → Paris for 2 (flight): Skipped after it failed: search_flights timed out after 30 ms",
    ]);
    expect(report.tasks.find((t) => t.id === "budget_status")).toMatchObject({
      status: "done",
      lastFeedback: "PARTIAL_SUCCESS",
    });
    expect(renderReport(report)).toContain("Missing:");
  });
});

describe("buildReport edge cases", () => {
  it("a run that never got a plan still reports why", () => {
    const report = buildReport({
      request: "write a poem",
      plan: null,
      feedback: [],
      revisions: [],
      confidenceHistory: [],
      status: "failed",
      failureReason: 'No tool matches "write a poem".',
      lessons: [],
      startedAt: new Date().toISOString(),
    });
    expect(report.planId).toBe("(no plan)");
    expect(report.tasks).toEqual([]);
    expect(report.summary.outcome).toBe('Failed. No tool matches "write a poem".');
    expect(report.summary.totalDurationMs).toBeGreaterThan(0);
    expect(report.lessonsLearned).toEqual(["No lessons recorded."]);
    expect(renderReport(report)).toContain("n/a");
  });
});
