import { describe, expect, it } from "vitest";
import {
  EASY_TRIP,
  notificationsOf,
  agentsOnTempDb,
  threadConfig,
  tripInput,
  type Agent,
} from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";

// Issue 3 / seed 000 scenario 5: DECOMPOSE never happened in a travel run; a too-long trip or the `complex` fault
// must now recover through it, end to end, on a real SQLite checkpointer.

const pool = agentsOnTempDb();
const agent = (faults: readonly string[] = []): Agent => pool.agent({ faults });
const strategies = (out: { revisions: { strategy: string; failedTaskId: string }[] }) =>
  out.revisions.map((r) => `${r.strategy}:${r.failedTaskId}`);

const TEN_DAYS = "Plan a 10-day trip from Madrid to Rome for 2 people";

describe("a 10-day trip: search_activities refuses it as too complex, DECOMPOSE plans it in two steps", async () => {
  const a = agent();
  const out = await a.graph.invoke(tripInput(TEN_DAYS), threadConfig("ten-days"));
  const step = (id: string) => planOf(out)!.steps.find((s) => s.id === id);

  it("completes with exactly one revision, DECOMPOSE of the activities step", () => {
    expect(out.status).toBe("completed");
    expect(strategies(out)).toEqual(["DECOMPOSE:activities"]);
    expect(out.revisions[0]).toMatchObject({
      failureClass: "too_complex",
      newStepIds: ["activities_part1", "activities_part2"],
      removedStepIds: ["activities"],
      confidenceDelta: -0.05,
    });
    expect(out.revisionCount).toBe(1);
  });

  it("the substeps ran in order on activities_agent, and nothing else ran twice", () => {
    expect(step("activities")).toBeUndefined();
    expect(step("activities_part1")).toMatchObject({
      tools: ["find_attractions"],
      status: "done",
      workerType: "activities_agent",
    });
    expect(step("activities_part2")).toMatchObject({
      tools: ["plan_days"],
      status: "done",
      dependsOn: ["activities_part1"],
      expectedOutputs: ["activities"],
    });
    expect(a.calls.all()).toEqual({
      search_flights: 1,
      search_hotels: 1,
      search_activities: 1,
      find_attractions: 1,
      plan_days: 1,
      check_budget: 1,
      build_itinerary: 1,
    });
    const order = out.feedback
      .filter((f) => f.taskId.startsWith("activities"))
      .map((f) => `${f.taskId}:${f.feedbackType}`);
    expect(order).toEqual(["activities:FAILURE", "activities_part1:SUCCESS", "activities_part2:SUCCESS"]);
  });

  it("the budget check and the itinerary were built from the decomposed steps' output", () => {
    const planned = step("activities_part2")!.result as { activities: { day: number; name: string }[]; cost: number };
    expect(step("budget_status")!.dependsOn).toContain("activities_part2");
    expect((step("budget_status")!.result as { breakdown: { activities: number } }).breakdown.activities).toBe(
      planned.cost,
    );
    const itinerary = step("itinerary")!.result as { itinerary: string; days: string[] };
    expect(itinerary.days).toHaveLength(10);
    planned.activities.forEach((act, i) => expect(itinerary.days[i]).toContain(act.name));
    expect(out.answer).toContain("10-day itinerary Madrid → Rome");
  });

  it("announces the failure, then the strategy with its reason and the confidence change", () => {
    const failed = notificationsOf(out, "step_failed", "activities");
    expect(failed.map((n) => n.title).join(" ")).toMatch(/too complex/);
    const strategy = notificationsOf(out, "strategy", "activities");
    expect(strategy.some((n) => n.recoveryStrategy?.includes("DECOMPOSE") || n.title.includes("DECOMPOSE"))).toBe(true);
    expect(strategy.some((n) => n.message.includes("Plan confidence reduced from 0.85 to 0.80"))).toBe(true);
  });
});

describe("the `complex` fault on a trip one call could plan", () => {
  it("recovers with DECOMPOSE, and the itinerary is the one a fault-free run writes", async () => {
    const faulty = agent(["search_activities=complex*1"]);
    const out = await faulty.graph.invoke(tripInput(EASY_TRIP), threadConfig("complex-fault"));
    expect(out.status).toBe("completed");
    expect(strategies(out)).toEqual(["DECOMPOSE:activities"]);
    expect(out.feedback.find((f) => f.taskId === "activities")).toMatchObject({
      failureClass: "too_complex",
      outputs: { injected: true },
    });
    expect([
      faulty.calls.count("search_activities"),
      faulty.calls.count("find_attractions"),
      faulty.calls.count("plan_days"),
    ]).toEqual([1, 1, 1]);

    const healthy = await agent().graph.invoke(tripInput(EASY_TRIP), threadConfig("complex-healthy"));
    const itinerary = (o: typeof out) =>
      (planOf(o)!.steps.find((s) => s.id === "itinerary")!.result as { itinerary: string }).itinerary;
    expect(itinerary(out)).toBe(itinerary(healthy));
  });
});
