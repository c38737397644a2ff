import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { DEMO_REQUEST, travelToolkit } from "../../examples/travel/index.js";
import type { AgentStateValue } from "../../nodes/state.js";
import { FailureEscalationRequest } from "../../src/domain/approval.js";
import {
  EASY_TRIP,
  TEST_LATENCY_MS,
  agentsOnTempDb,
  interruptValues,
  notificationsOf,
  threadConfig,
  tripInput,
} from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";

// Issue 8 defect 10: skipping the activities search (a person's --skip, or SKIP after it failed) also skipped the
// budget check and the itinerary, so the user got no total and no itinerary. Both take activities as an optional
// input now: they run without it and say what they left out, and the run still ends partial.

const { agent } = agentsOnTempDb();
const ACTIVITIES_DOWN = "search_activities failed: simulated internal error (HTTP 500)";
const strategies = (out: { revisions: { strategy: string; failedTaskId: string }[] }) =>
  out.revisions.map((r) => `${r.strategy}:${r.failedTaskId}`);
const stepOf = (out: AgentStateValue, id: string) => planOf(out)!.steps.find((s) => s.id === id)!;
const statuses = (out: AgentStateValue) => Object.fromEntries(planOf(out)!.steps.map((s) => [s.id, s.status]));

/** What every run that loses its activities must show: a total and an itinerary that say so, and a partial run. */
function expectRanWithoutActivities(out: AgentStateValue, why: string) {
  expect(statuses(out)).toEqual({
    flight: "done",
    hotel: "done",
    activities: "skipped",
    budget_status: "done",
    itinerary: "done",
  });
  for (const id of ["budget_status", "itinerary"]) {
    expect(stepOf(out, id).missingInputs).toEqual([{ input: "activities", from: "activities", reason: why }]);
    // Ran, and is recorded as a partial success: never DEPENDENCY_FAILURE, never a plain SUCCESS.
    expect(out.feedback.filter((f) => f.taskId === id).map((f) => f.feedbackType)).toEqual(["PARTIAL_SUCCESS"]);
    const announced = notificationsOf(out, "step_started", id);
    expect(announced.map((n) => [n.severity, n.title.endsWith(`(${id}) runs without activities`)])).toEqual([
      ["WARNING", true],
    ]);
    expect(announced[0]!.message).toContain(`activities (activities: ${why})`);
  }
  const lower = why.charAt(0).toLowerCase() + why.slice(1);
  const budget = stepOf(out, "budget_status").result as {
    total: number;
    breakdown: { activities: number };
    without: Record<string, string>;
    summary: string;
  };
  expect(budget.without).toEqual({ activities: lower });
  expect(budget.breakdown.activities).toBe(0);
  expect(budget.summary).toContain(`without activities (${lower})`);
  const itinerary = stepOf(out, "itinerary").result as { itinerary: string; total: number };
  expect(itinerary.itinerary).toContain(`No activities were planned: activities ${lower}.`);
  expect(itinerary.total).toBe(budget.total);

  // Honest about what is missing: partial, the answer and the report name activities and who ran without it.
  expect(out.status).toBe("partial");
  expect(out.report!.summary).toMatchObject({ status: "partial", stepsSkipped: 1, stepsSucceeded: 4 });
  expect(out.report!.missing).toEqual([`${stepOf(out, "activities").description} (activities): ${why}`]);
  expect(out.answer).toContain("Missing from this answer");
  expect(out.answer).toContain(`(activities): ${why}; budget_status, itinerary ran without its activities`);
  expect(out.answer).toContain(
    `Check the total against the $2000 budget: Total $${budget.total.toLocaleString("en-US")} without activities`,
  );
  expect(out.notifications.at(-1)).toMatchObject({ kind: "outcome", severity: "WARNING" });
}

describe("a person skips the failed activities search at an escalation", () => {
  it("the budget check and the itinerary still run, without activities, and say so", async () => {
    const a = agent({ faults: ["search_activities=error"] });
    const config = threadConfig("person-skips-activities");
    // No revision allowed, so the first failure goes straight to a person.
    const out = await a.graph.invoke(tripInput(DEMO_REQUEST, { maxRevisions: 0 }), config);
    const [payload] = interruptValues(out);
    expect(FailureEscalationRequest.parse(payload)).toMatchObject({ kind: "max_revisions", taskId: "activities" });
    expect([a.calls.count("check_budget"), a.calls.count("build_itinerary")]).toEqual([0, 0]);

    const done = await a.graph.invoke(
      new Command({ resume: { decision: "skip", comment: "no activities needed" } }),
      config,
    );
    expect(done.approval).toMatchObject({ kind: "max_revisions", decision: "skip", comment: "no activities needed" });
    expect(strategies(done)).toEqual(["SKIP:activities"]);
    expect(done.revisions[0]!.rationale).toMatch(/^A person chose to skip activities: no activities needed\. /);
    expect(done.revisions[0]!.rationale).toContain("budget_status, itinerary still run without activities");
    expectRanWithoutActivities(done, `Skipped by a person after it failed: ${ACTIVITIES_DOWN}`);
    expect([a.calls.count("check_budget"), a.calls.count("build_itinerary")]).toEqual([1, 1]);
    // Without activities the demo trip fits its budget: the check passed on flight and hotel alone, and said so.
    expect((stepOf(done, "budget_status").result as { withinBudget: boolean }).withinBudget).toBe(true);
  });
});

describe("a failed activities search skipped by strategy", () => {
  it("the budget check and the itinerary still run, without activities, and say so", async () => {
    // A provider refusing on policy grounds: SKIP is the only strategy for policy_blocked.
    const kit = travelToolkit({ latencyMs: TEST_LATENCY_MS });
    const refusal = "search_activities: access denied by the provider's policy (HTTP 403)";
    const blocked = {
      ...kit,
      tools: kit.tools.map((t) =>
        t.name === "search_activities" ? { ...t, run: () => Promise.reject(new Error(refusal)) } : t,
      ),
    };
    const a = agent({ toolkits: [blocked] });
    const out = await a.graph.invoke(tripInput(DEMO_REQUEST), threadConfig("strategy-skips-activities"));
    expect(strategies(out)).toEqual(["SKIP:activities"]);
    expect(out.revisions[0]!.failureClass).toBe("policy_blocked");
    expectRanWithoutActivities(out, `Skipped after it failed: ${refusal}`);
    expect(a.calls.all()).toEqual({
      search_flights: 1,
      search_hotels: 1,
      search_activities: 1,
      check_budget: 1,
      build_itinerary: 1,
    });
  });
});

describe("a timed-out activities search, with no other agent or tool for it", () => {
  it("is split into smaller calls (DECOMPOSE) that fit its time limit, and the run completes", async () => {
    const a = agent({ faults: ["search_activities=timeout"], stepTimeoutMs: 150 });
    const out = await a.graph.invoke(tripInput(EASY_TRIP), threadConfig("activities-timeout"));
    expect(out.status).toBe("completed");
    expect(strategies(out)).toEqual(["DECOMPOSE:activities"]);
    expect(out.revisions[0]).toMatchObject({
      failureClass: "timeout",
      newStepIds: ["activities_part1", "activities_part2"],
    });
    expect(out.revisions[0]!.rationale).toContain("each smaller call has the whole time limit");
    expect(stepOf(out, "activities_part2")).toMatchObject({ status: "done", timeoutMs: 150 });
    expect(stepOf(out, "budget_status").missingInputs).toEqual([]);
    expect(out.feedback.filter((f) => f.feedbackType === "PARTIAL_SUCCESS")).toEqual([]);
  });
});
