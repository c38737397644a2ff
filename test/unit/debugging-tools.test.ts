import { describe, expect, it } from "vitest";
import { defaultToolkits } from "../../src/app/toolkits.js";
import { reviewRequest } from "../../src/cli/commands/review.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { planWithRules } from "../../src/planning/rules-planner.js";
import { unstartedState, type ArchivedState, type RunArchive } from "../../src/tools/builtin/debugging/archive.js";
import { anomaliesOf, focusOf, type ReviewedThread } from "../../src/tools/builtin/debugging/findings.js";
import { debuggingToolkit, DEBUGGING_TOOLS } from "../../src/tools/builtin/debugging/index.js";
import { reportFileName } from "../../src/tools/builtin/debugging/report.js";
import { generalToolkit } from "../../src/tools/general.js";
import { ToolRegistry } from "../../src/tools/registry.js";

/** An archive no test here reads: planning never calls a tool. */
const unread: RunArchive = {
  where: "nowhere",
  threads: () => Promise.reject(new Error("not read")),
  state: () => Promise.reject(new Error("not read")),
  decisions: () => Promise.reject(new Error("not read")),
};
const debugging = () => debuggingToolkit({ archive: unread });

function plan(text: string, registry: ToolRegistry) {
  const p = planWithRules(PlanningRequest.parse({ userIntent: text, userContext: { userId: "u" } }), registry);
  return {
    steps: p.steps.map((s) => [s.id, s.dependsOn]),
    params: p.steps.map((s) => s.params),
    confidence: p.confidence,
  };
}

describe("the debugging toolkit's declarations", () => {
  it("the reviewer is granted exactly the five tools, and only write_debug_report writes", () => {
    const registry = ToolRegistry.create([...defaultToolkits(), debugging(), generalToolkit()]);
    expect(
      registry
        .grant("reviewer")
        .map((t) => t.name)
        .sort(),
    ).toEqual([...DEBUGGING_TOOLS].sort());
    const effects = Object.fromEntries(
      debugging().tools.map((t) => [t.name, [t.category, t.sideEffect, t.needsApproval]]),
    );
    expect(effects).toEqual({
      review_runs: ["debugging", "none", false],
      get_run_context: ["debugging", "none", false],
      get_run_transcript: ["debugging", "none", false],
      get_tool_output_full: ["debugging", "none", false],
      write_debug_report: ["debugging", "reversible", false],
    });
    for (const tool of debugging().tools) expect(tool.outputSchema, tool.name).toBeDefined();
  });
});

describe("the rules planner's review plans", () => {
  const alone = ToolRegistry.create([debugging(), generalToolkit()]);
  const added = ToolRegistry.create([...defaultToolkits(), debugging(), generalToolkit()]);

  it("plans review_runs → get_run_transcript → write_debug_report for the recent runs, sure of it", () => {
    for (const registry of [alone, added])
      expect(plan(reviewRequest(), registry)).toMatchObject({
        steps: [
          ["run_review", []],
          ["run_transcript", ["run_review"]],
          ["debug_report", ["run_transcript", "run_review"]],
        ],
        confidence: 0.85,
      });
  });

  it("plans get_run_context → get_run_transcript → write_debug_report for a named thread, with its id", () => {
    const p = plan(reviewRequest("run-1a2b3c4d"), alone);
    expect(p.steps).toEqual([
      ["run_context", []],
      ["run_transcript", ["run_context"]],
      ["debug_report", ["run_transcript", "run_context"]],
    ]);
    expect(p.params[0]).toEqual({ threadId: "run-1a2b3c4d" });
    expect(p.confidence).toBe(0.85);
  });

  // Regression: with the tools added to the others, "review" and "output" put a review_runs or get_run_context step
  // into travel and workspace plans, and "a debug report" brought in the workspace's write_report.
  it("adding the debugging tools changes no plan of the other tools", () => {
    const without = ToolRegistry.create([...defaultToolkits(), generalToolkit()]);
    for (const text of [
      "Plan a 2-day trip from Paris to Rome for 1 person",
      "Review my trip to Rome: flights and hotel for 2 nights",
      "write a report of the output of README.md word counts",
      "Count the words in README.md and write a report",
    ])
      expect(plan(text, added).steps, text).toEqual(plan(text, without).steps);
  });
});

function state(over: Partial<ArchivedState>): ArchivedState {
  return {
    ...unstartedState({ threadId: "t", request: "r", createdAt: "2026-01-01T00:00:00Z", review: false }),
    started: true,
    ...over,
  };
}

const step = (id: string, durationMs: number) => ({
  id,
  description: id,
  workerType: "w",
  tools: ["x"],
  estimates: { durationMs, cost: 0 },
});

const done = (taskId: string, durationMs: number) => ({
  taskId,
  feedbackType: "SUCCESS" as const,
  outputs: {},
  errors: [],
  failureClass: null,
  durationMs,
  cost: 0,
  at: "2026-01-01T00:00:01Z",
  attempt: 1,
  dispatch: 1,
  workerType: "w",
  tool: "x",
  params: {},
  attempts: [],
  errorType: null,
  trace: null,
  evidence: { tool: "x" },
  limits: [],
});

describe("what counts as an anomaly", () => {
  it("a slow step is over three times its estimate and at least a second; a fast one is noise", async () => {
    const { Plan } = await import("../../src/domain/plan.js");
    const plan = Plan.parse({
      planId: "p",
      objective: "o",
      contextSummary: "",
      steps: [step("slow", 1000), step("quick", 10), step("fine", 1000)],
      confidence: 0.9,
      estimatedDurationMs: 0,
      estimatedCost: 0,
      createdBy: "rules",
    });
    const found = anomaliesOf(
      state({ plan, feedback: [done("slow", 3500), done("quick", 900), done("fine", 2900)] }),
      [],
    );
    expect(found.map((a) => [a.kind, a.taskId])).toEqual([["slow_step", "slow"]]);
  });

  it("low confidence is below the run's own approval threshold, else 0.5", () => {
    const history = [
      { at: "a", value: 0.85, reason: "plan" },
      { at: "b", value: 0.55, reason: "a retry" },
    ];
    expect(anomaliesOf(state({ confidenceHistory: history }), [])).toEqual([]);
    expect(anomaliesOf(state({ confidenceHistory: history, approvalThreshold: 0.6 }), [])).toEqual([
      { kind: "low_confidence", taskId: null, detail: "confidence fell to 0.55 (below 0.6): a retry" },
    ]);
  });

  it("an escalation is counted once, from its notification or else from the decision log", () => {
    const escalation = {
      id: "n",
      at: "a",
      severity: "WARNING" as const,
      kind: "escalation" as const,
      taskId: "hotel",
      title: "hotel needs a decision",
      message: "",
      errorSummary: null,
      recoveryStrategy: null,
      estimatedDelay: null,
      details: null,
    };
    const logged = [
      { operation: "escalation", taskId: "hotel", decision: "escalate (failure)", reasoning: "no strategy" },
      { operation: "escalation", taskId: "flight", decision: "escalate (failure)", reasoning: "cap reached" },
    ];
    const found = anomaliesOf(state({ notifications: [escalation] }), logged);
    expect(found.map((a) => [a.kind, a.taskId])).toEqual([
      ["escalation", "hotel"],
      ["escalation", "flight"],
    ]);
  });

  it("the thread to look at has the most anomalies, the newest among equals, and none when all are clean", () => {
    const row = (threadId: string, createdAt: string, n: number): ReviewedThread => ({
      threadId,
      request: "r",
      createdAt,
      status: "completed",
      anomalies: Array.from({ length: n }, () => ({ kind: "failure" as const, taskId: null, detail: "" })),
      recoveries: [],
    });
    expect(focusOf([row("a", "1", 1), row("b", "2", 1), row("c", "0", 0)])).toBe("b");
    expect(focusOf([row("a", "1", 2), row("b", "2", 1)])).toBe("a");
    expect(focusOf([row("a", "1", 0)])).toBeNull();
  });
});

describe("report file names", () => {
  it("are the title as a slug and the time, never a path", () => {
    const at = new Date("2026-01-02T03:04:05.678Z");
    expect(reportFileName("../../etc/passwd", at)).toBe("etc-passwd-20260102T030405.md");
    expect(reportFileName("///", at)).toBe("debug-report-20260102T030405.md");
  });
});
