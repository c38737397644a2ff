import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { DEMO_FAULTS, DEMO_REQUEST, travelToolkit } from "../../examples/travel/index.js";
import { Node } from "../../nodes/names.js";
import {
  EASY_TRIP,
  TEST_LATENCY_MS,
  interruptValues,
  notificationsOf,
  agentsOnTempDb,
  threadConfig,
  tripInput,
} from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";

const { agent } = agentsOnTempDb();
const strategies = (out: { revisions: { strategy: string; failedTaskId: string }[] }) =>
  out.revisions.map((r) => `${r.strategy}:${r.failedTaskId}`);

describe("each kind of failure in the demo, recovered on its own", () => {
  it("a timed-out flight search is retried on backup_flight_agent, never on flight_agent again", async () => {
    const a = agent({ faults: ["search_flights=timeout"], stepTimeoutMs: 150 });
    const out = await a.graph.invoke(tripInput(EASY_TRIP), threadConfig("timeout"));
    expect(out.status).toBe("completed");
    expect(strategies(out)).toEqual(["RETRY_DIFFERENT_AGENT:flight"]);
    expect(out.revisionCount).toBe(1);
    const retry = planOf(out)!.steps.find((s) => s.id === "flight_retry")!;
    expect(retry).toMatchObject({
      workerType: "backup_flight_agent",
      tools: ["search_flights_backup"],
      replaces: "flight",
      status: "done",
    });
    expect(retry.failedWorkers).toContain("flight_agent");
    expect(planOf(out)!.steps.some((s) => s.id === "flight")).toBe(false);
    // flight_agent's only dispatch is the one that timed out (two attempts of the step's own retry policy).
    const onPrimary = out.feedback.filter((f) => f.workerType === "flight_agent");
    expect(onPrimary.map((f) => [f.taskId, f.dispatch, f.failureClass])).toEqual([["flight", 1, "timeout"]]);
    expect(a.calls.count("search_flights")).toBe(2);
    expect(a.calls.count("search_flights_backup")).toBe(1);
    // The dependents use the backup's result, and the independent searches were not repeated.
    expect(planOf(out)!.steps.find((s) => s.id === "budget_status")!.dependsOn).toContain("flight_retry");
    expect((planOf(out)!.steps.find((s) => s.id === "itinerary")!.result as { itinerary: string }).itinerary).toContain(
      (retry.result as { flightNumber: string }).flightNumber,
    );
    expect([a.calls.count("search_hotels"), a.calls.count("search_activities"), a.calls.count("check_budget")]).toEqual(
      [1, 1, 1],
    );
  });

  it("a fully booked hotel gets a widened search (FIND_WORKAROUND)", async () => {
    const a = agent({ faults: ["search_hotels=unavailable*1"] });
    const out = await a.graph.invoke(tripInput(EASY_TRIP), threadConfig("unavailable"));
    expect(out.status).toBe("completed");
    expect(strategies(out)).toEqual(["FIND_WORKAROUND:hotel"]);
    expect(out.revisions[0]!.failureClass).toBe("resource_unavailable");
    const alt = planOf(out)!.steps.find((s) => s.id === "hotel_alt")!;
    expect(alt).toMatchObject({ workerType: "hotel_agent", replaces: "hotel", status: "done" });
    expect(alt.params.radiusKm).toBe(15);
    expect(a.calls.all()).toEqual({
      search_flights: 1,
      search_hotels: 2,
      search_activities: 1,
      check_budget: 1,
      build_itinerary: 1,
    });
  });

  it("a budget violation caps the biggest costs and re-runs only them and the check (ADJUST_PARAMETERS)", async () => {
    const a = agent({});
    const out = await a.graph.invoke(tripInput(DEMO_REQUEST), threadConfig("budget"));
    expect(out.status).toBe("completed");
    expect(strategies(out)).toEqual(["ADJUST_PARAMETERS:budget_status"]);
    const violation = out.feedback.find((f) => f.feedbackType === "CONSTRAINT_VIOLATION")!;
    expect(violation).toMatchObject({ taskId: "budget_status", failureClass: "constraint_violated" });
    const byId = new Map(planOf(out)!.steps.map((s) => [s.id, s]));
    expect(typeof byId.get("flight")!.params.maxCost).toBe("number");
    expect(typeof byId.get("hotel")!.params.maxCost).toBe("number");
    expect(byId.get("activities")!.params.maxCost).toBeUndefined();
    const status = byId.get("budget_status")!.result as { withinBudget: boolean; total: number };
    expect(status.withinBudget).toBe(true);
    expect(status.total).toBeLessThanOrEqual(2000);
    expect(a.calls.all()).toEqual({
      search_flights: 2,
      search_hotels: 2,
      search_activities: 1,
      check_budget: 2,
      build_itinerary: 1,
    });
  });
});

describe("the full demo (DEMO_FAULTS, default step time limits)", () => {
  it("recovers with RETRY_DIFFERENT_AGENT, FIND_WORKAROUND, ADJUST_PARAMETERS in order, re-running only what broke", async () => {
    const a = agent({ faults: DEMO_FAULTS });
    const out = await a.graph.invoke(tripInput(DEMO_REQUEST), threadConfig("demo"));
    expect(out.status).toBe("completed");
    expect(out.revisionCount).toBe(3);
    expect(strategies(out)).toEqual([
      "RETRY_DIFFERENT_AGENT:flight",
      "FIND_WORKAROUND:hotel",
      "ADJUST_PARAMETERS:budget_status",
    ]);
    expect(out.report!.summary).toMatchObject({ status: "completed", revisionCount: 3, stepsSucceeded: 5 });

    // Partial replanning: activities never failed and never re-ran; the primary flight search was not tried again.
    expect(a.calls.count("search_activities")).toBe(1);
    expect(out.feedback.filter((f) => f.taskId === "activities").map((f) => f.feedbackType)).toEqual(["SUCCESS"]);
    expect(a.calls.count("search_flights")).toBe(2);
    expect(out.feedback.filter((f) => f.workerType === "flight_agent").map((f) => f.taskId)).toEqual(["flight"]);
    expect(a.calls.all()).toEqual({
      search_flights: 2,
      search_flights_backup: 2,
      search_hotels: 3,
      search_activities: 1,
      check_budget: 2,
      build_itinerary: 1,
    });

    // The flight failure is announced as an ERROR with where recovery stands and where the details are …
    const failed = notificationsOf(out, "step_failed", "flight").filter((n) => n.severity === "ERROR");
    expect(failed).toHaveLength(1);
    expect(failed[0]!.title).toMatch(/timed out/);
    expect(failed[0]!.recoveryStrategy).toBeTruthy();
    expect(failed[0]!.estimatedDelay).toBeTruthy();
    expect(failed[0]!.details).toMatch(/candor logs --step flight/);
    // … before the strategy is chosen and explained, with confidence from → to.
    const idx = (id: string) => out.notifications.findIndex((n) => n.id === id);
    const strategy = notificationsOf(out, "strategy", "flight");
    expect(strategy.length).toBeGreaterThanOrEqual(1);
    expect(strategy.every((n) => idx(n.id) > idx(failed[0]!.id))).toBe(true);
    const rev = out.revisions[0]!;
    expect(rev.confidenceAfter).toBeLessThan(rev.confidenceBefore);
    const explanation = strategy.find((n) => n.message.includes("Plan confidence reduced from"))!;
    expect(explanation.message).toContain(
      `from ${rev.confidenceBefore.toFixed(2)} to ${rev.confidenceAfter.toFixed(2)}`,
    );
    expect(explanation.recoveryStrategy).toMatch(/backup_flight_agent/);
    expect(out.report!.revisions.map((r) => [r.strategy, r.confidenceFrom, r.confidenceTo])).toEqual(
      out.revisions.map((r) => [r.strategy, r.confidenceBefore, r.confidenceAfter]),
    );

    // Every decision is in the decision log with its reasoning and what it did to confidence.
    const log = a.decisionLog.entries;
    expect(log.every((d) => d.planId === planOf(out)!.planId && d.threadId === "demo")).toBe(true);
    expect(log.filter((d) => d.operation === "strategy").map((d) => `${d.decision}:${d.taskId}`)).toEqual(
      strategies(out),
    );
    const revisions = log.filter((d) => d.operation === "revision");
    expect(revisions.map((d) => [d.confidenceBefore, d.confidenceAfter])).toEqual(
      out.revisions.map((r) => [r.confidenceBefore, r.confidenceAfter]),
    );
    expect(revisions.every((d) => d.reasoning.length > 0)).toBe(true);
    expect(
      log
        .filter((d) => d.operation === "step_result" && d.decision !== "SUCCESS")
        .map((d) => d.taskId)
        .sort(),
    ).toEqual(["budget_status", "flight", "hotel"]);
    expect(log.map((d) => d.operation).filter((o) => o === "plan" || o === "reflect" || o === "report")).toEqual([
      "plan",
      "reflect",
      "report",
    ]);
  });
});

describe("a step whose dependency could not be recovered", () => {
  it("is skipped with DEPENDENCY_FAILURE and never runs; the run ends partial and the report says what is missing", async () => {
    // A budget check that refuses on policy grounds: no strategy but SKIP fits a policy_blocked failure, and the
    // itinerary requires the check's status (flights, hotels and activities are optional inputs: see optional-inputs).
    const kit = travelToolkit({ latencyMs: TEST_LATENCY_MS });
    const blocked = {
      ...kit,
      tools: kit.tools.map((t) =>
        t.name === "check_budget"
          ? {
              ...t,
              run: () => Promise.reject(new Error("check_budget: access denied by the provider's policy (HTTP 403)")),
            }
          : t,
      ),
    };
    const a = agent({ toolkits: [blocked] });
    const out = await a.graph.invoke(tripInput(EASY_TRIP), threadConfig("skip"));
    expect(strategies(out)).toEqual(["SKIP:budget_status"]);
    expect(out.revisions[0]!.failureClass).toBe("policy_blocked");
    // Not transient, so the step's own retry policy did not call it twice.
    expect(a.calls.count("check_budget")).toBe(1);
    const status = Object.fromEntries(planOf(out)!.steps.map((s) => [s.id, s.status]));
    expect(status).toEqual({
      flight: "done",
      hotel: "done",
      activities: "done",
      budget_status: "skipped",
      itinerary: "skipped",
    });
    const fb = out.feedback.filter((f) => f.taskId === "itinerary");
    expect(fb).toHaveLength(1);
    expect(fb[0]).toMatchObject({ feedbackType: "DEPENDENCY_FAILURE", failureClass: "dependency_failed", attempt: 0 });
    expect(fb[0]!.errors[0]).toMatch(/Dependency .*failed, so this step could not run/);
    expect(notificationsOf(out, "step_failed", "itinerary").map((n) => n.severity)).toEqual(["WARNING"]);
    expect(a.calls.count("build_itinerary")).toBe(0);
    expect(out.status).toBe("partial");
    // A step skipped for its dependency never ran: skipped, not also failed.
    expect(out.report!.summary).toMatchObject({
      status: "partial",
      stepsSkipped: 2,
      stepsSucceeded: 3,
      stepsFailed: 1,
    });
    expect(out.report!.missing.map((m) => /\((\w+)\):/.exec(m)?.[1])).toEqual(["budget_status", "itinerary"]);
    expect(out.failureReason).toMatch(/budget_status/);
    expect(out.answer).toContain("Missing from this answer");
    expect(out.notifications.at(-1)).toMatchObject({ kind: "outcome", severity: "WARNING" });
  });

  it("a skipped flight search leaves the budget check and itinerary running without flights, saying so; the run is partial", async () => {
    const kit = travelToolkit({ latencyMs: TEST_LATENCY_MS });
    const blocked = {
      ...kit,
      tools: kit.tools.map((t) =>
        t.name === "search_flights"
          ? {
              ...t,
              run: () => Promise.reject(new Error("search_flights: access denied by the provider's policy (HTTP 403)")),
            }
          : t,
      ),
    };
    const a = agent({ toolkits: [blocked] });
    const out = await a.graph.invoke(tripInput(EASY_TRIP), threadConfig("skip-flight"));
    expect(strategies(out)).toEqual(["SKIP:flight"]);
    const status = Object.fromEntries(planOf(out)!.steps.map((s) => [s.id, s.status]));
    expect(status).toEqual({
      flight: "skipped",
      hotel: "done",
      activities: "done",
      budget_status: "done",
      itinerary: "done",
    });
    const itinerary = planOf(out)!.steps.find((s) => s.id === "itinerary")!.result as {
      itinerary: string;
      without?: Record<string, string>;
    };
    expect(Object.keys(itinerary.without ?? {})).toEqual(["flight"]);
    expect(itinerary.itinerary).toContain("No flights were planned");
    expect(out.status).toBe("partial");
  });
});

describe("the revision cap", () => {
  const faults = ["search_flights=timeout", "search_flights_backup=timeout"];

  it("stops at human_interrupt with a max_revisions escalation; abort fails the run naming plan, cap and errors", async () => {
    const a = agent({ faults, stepTimeoutMs: 150 });
    const config = threadConfig("cap-abort");
    const out = await a.graph.invoke(tripInput(EASY_TRIP, { maxRevisions: 1 }), config);
    const [payload, ...more] = interruptValues(out);
    expect(more).toEqual([]);
    expect(payload).toMatchObject({
      kind: "max_revisions",
      taskId: "flight_retry",
      revisionCount: 1,
      decisions: ["skip", "retry", "replan", "abort"],
    });
    const planId = planOf(out)!.planId;
    expect(payload!.planId).toBe(planId);
    expect(payload!.errors).toEqual([
      "search_flights timed out after 150 ms",
      "search_flights_backup timed out after 150 ms",
    ]);

    // The same request is what the checkpoint holds for the pending task.
    const waiting = await a.graph.getState(config);
    expect(waiting.next).toEqual([Node.HUMAN_INTERRUPT]);
    expect(waiting.values.status).toBe("awaiting_approval");
    expect(waiting.tasks[0]!.interrupts.map((i) => i.value)).toEqual([payload]);
    expect(notificationsOf(waiting.values, "escalation")).toHaveLength(1);

    const before = a.calls.total();
    const done = await a.graph.invoke(new Command({ resume: { decision: "abort" } }), config);
    expect(done.status).toBe("failed");
    expect(a.calls.total()).toBe(before);
    const reason = done.report!.summary.failureReason!;
    expect(done.report!.summary.status).toBe("failed");
    expect(reason).toContain(planId);
    expect(reason).toContain("exceeded");
    expect(reason).toContain("search_flights_backup timed out after 150 ms");
    expect(done.approval).toMatchObject({ kind: "max_revisions", decision: "abort" });
  });

  it("a human 'retry' allows exactly one more revision, which skips the flight once no untried tool is left", async () => {
    const a = agent({ faults, stepTimeoutMs: 150 });
    const config = threadConfig("cap-retry");
    interruptValues(await a.graph.invoke(tripInput(EASY_TRIP, { maxRevisions: 1 }), config));
    const again = await a.graph.invoke(new Command({ resume: "retry" }), config);
    expect(again.settings.maxRevisions).toBe(2);
    expect(again.revisionCount).toBe(2);
    // Both flight tools have failed the step, so no "different agent" is left (general would reuse them).
    expect(again.revisions.map((r) => r.strategy)).toEqual(["RETRY_DIFFERENT_AGENT", "SKIP"]);
    expect(again.status).toBe("partial");
  });

  it("a human 'skip' at the escalation finishes the rest without the flight", async () => {
    const a = agent({ faults, stepTimeoutMs: 150 });
    const config = threadConfig("cap-skip");
    interruptValues(await a.graph.invoke(tripInput(EASY_TRIP, { maxRevisions: 1 }), config));
    const done = await a.graph.invoke(
      new Command({ resume: { decision: "skip", comment: "go without flights" } }),
      config,
    );
    expect(done.revisions.at(-1)!.strategy).toBe("SKIP");
    expect(done.status).toBe("partial");
    // Flights are an optional input of the budget check and the itinerary: they run without them and say so.
    expect(done.feedback.filter((f) => f.feedbackType === "DEPENDENCY_FAILURE")).toEqual([]);
    expect(planOf(done)!.steps.find((s) => s.id === "itinerary")?.status).toBe("done");
    expect(done.approval).toMatchObject({ decision: "skip", comment: "go without flights" });
  });
});
