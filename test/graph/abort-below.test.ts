import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ConfidenceCalibrator } from "../../src/confidence/calibrator.js";
import { HumanApprovalRequest } from "../../src/domain/approval.js";
import {
  EASY_TRIP,
  agentsOnTempDb,
  interruptValues,
  threadConfig,
  tripInput,
  type Agent,
} from "../fakes/graph-harness.js";

/*
 * --abort-below checked the moment confidence changes, not only when a strategy proposes a revision. Bug: a
 * calibration, a person's skip or a guided replan could take the plan below the threshold and the run went on.
 * The hotel search is fully booked once and a revision cap of 0 escalates at the first failure.
 */
const { agent } = agentsOnTempDb({ faults: ["search_hotels=unavailable*1"] });

const approval = (out: unknown) => HumanApprovalRequest.parse(interruptValues(out)[0]);

/** Twelve earlier plans scored 0.9 that all failed: calibration takes the rules' 0.85 to 0.75. */
async function overConfidentHistory(a: Agent, userId: string) {
  const calibrator = new ConfidenceCalibrator(a.persistence.store, userId);
  for (let i = 0; i < 12; i++)
    await calibrator.record({
      planId: `old-${i}`,
      confidence: 0.9,
      success: false,
      executionMs: 1,
      cost: 0,
      at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
    });
}

describe("--abort-below stops the run the moment confidence falls below it", () => {
  it("calibration takes a plan below it: the plan waits though the approval threshold would run it", async () => {
    const a = agent({ faults: [] });
    await overConfidentHistory(a, "over_user");
    const config = threadConfig("calibrated");
    const asked = approval(
      await a.graph.invoke(tripInput(EASY_TRIP, { approvalThreshold: 0.5, abortBelow: 0.8 }, "over_user"), config),
    );
    expect(asked.question).toMatch(
      /^The plan's confidence fell from 0\.85 to 0\.75 \(calibrated from 0\.85 to 0\.75: over-confident .*\), below the abort threshold 0\.80/,
    );
    expect(asked.decisions).toEqual(["approve", "reject", "adjust", "replan"]);
    expect(a.calls.total()).toBe(0);
    const rejected = await a.graph.invoke(new Command({ resume: { decision: "reject" } }), config);
    expect(rejected.status).toBe("rejected");
    expect(a.calls.total()).toBe(0);
  });

  it("a person's skip takes it below: the run stops again, and goes on only when a person approves", async () => {
    const a = agent();
    const config = threadConfig("skip");
    const escalation = interruptValues(
      await a.graph.invoke(tripInput(EASY_TRIP, { maxRevisions: 0, abortBelow: 0.82 }), config),
    )[0];
    expect(escalation).toMatchObject({ kind: "max_revisions", taskId: "hotel", confidence: 0.85 });
    const stopped = await a.graph.invoke(new Command({ resume: { decision: "skip" } }), config);
    const asked = approval(stopped);
    expect(asked.question).toMatch(
      /fell from 0\.85 to 0\.80 \(a person chose SKIP for hotel\), below the abort threshold 0\.82.*The run is stopped/,
    );
    expect(asked.decisions).toEqual(["approve", "reject"]);
    expect(stopped.notifications.some((n) => /below 0\.82/.test(n.title))).toBe(true);
    const calls = a.calls.total();
    const done = await a.graph.invoke(new Command({ resume: { decision: "approve" } }), config);
    expect(done.status).toBe("partial");
    expect(a.calls.total()).toBeGreaterThan(calls);
  });

  it("a guided replan comes out below it: the new plan waits for a person, and rejecting it ends the run", async () => {
    const a = agent();
    const config = threadConfig("guided");
    // 0.85 is below 0.9 from the start: approved once, it runs until the hotel escalates.
    const first = approval(await a.graph.invoke(tripInput(EASY_TRIP, { maxRevisions: 0, abortBelow: 0.9 }), config));
    expect(first.question).toMatch(/^The plan's confidence is 0\.85 \(initial plan \(rules\)\), below the abort/);
    const escalated = interruptValues(
      await a.graph.invoke(new Command({ resume: { decision: "approve" } }), config),
    )[0];
    expect(escalated).toMatchObject({ kind: "max_revisions", taskId: "hotel" });
    const calls = a.calls.total();
    const stopped = await a.graph.invoke(
      new Command({ resume: { decision: "replan", guidance: "Keep it under 5000 dollars" } }),
      config,
    );
    const asked = approval(stopped);
    expect(asked.question).toMatch(/\(rev_1 planned again with your guidance\), below the abort threshold 0\.90/);
    expect(asked.decisions).toEqual(["approve", "reject"]);
    expect(a.calls.total()).toBe(calls);
    const rejected = await a.graph.invoke(new Command({ resume: { decision: "reject" } }), config);
    expect(rejected.status).toBe("rejected");
    expect(a.calls.total()).toBe(calls);
  });
});
