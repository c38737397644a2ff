import { describe, expect, it } from "vitest";
import {
  abortBelowApproval,
  checkAbortBelow,
  plannedChange,
  withAbortReason,
} from "../../src/confidence/abort-below.js";
import { planApprovalRequest } from "../../src/domain/approval.js";
import { planWith } from "../fakes/graph-harness.js";

const plan = planWith([{ id: "a", description: "A", workerType: "reader", tools: ["read_file"] }]);

describe("--abort-below against a confidence that just changed", () => {
  it("at or above the threshold the run goes on", () => {
    expect(checkAbortBelow({ from: 0.85, to: 0.3, why: "x" }, 0.3)).toEqual({ ok: true, value: null });
    expect(checkAbortBelow({ from: null, to: 0.85, why: "initial plan (rules)" }, 0.3).ok).toBe(true);
  });

  it("below it, the reason says from what to what, why, and the threshold", () => {
    expect(checkAbortBelow({ from: 0.85, to: 0.75, why: "calibrated from 0.85 to 0.75: …" }, 0.8)).toEqual({
      ok: false,
      reason:
        "The plan's confidence fell from 0.85 to 0.75 (calibrated from 0.85 to 0.75: …), below the abort threshold 0.80 (--abort-below).",
    });
    const fresh = checkAbortBelow({ from: null, to: 0.45, why: "initial plan (rules)" }, 0.5);
    expect(!fresh.ok && fresh.reason).toMatch(/^The plan's confidence is 0\.45 \(initial plan \(rules\)\)/);
  });

  it("a plan's first change is calibration's when it moved the score, else the planner's", () => {
    expect(plannedChange({ confidence: 0.85 }, { confidence: 0.75, createdBy: "rules" }, { reason: "cal" })).toEqual({
      from: 0.85,
      to: 0.75,
      why: "cal",
    });
    expect(plannedChange({ confidence: 0.85 }, { confidence: 0.85, createdBy: "llm" }, null)).toEqual({
      from: null,
      to: 0.85,
      why: "initial plan (llm)",
    });
  });

  it("a plan approval below the abort threshold puts the reason first; a run under way offers go on or stop", () => {
    const asked = withAbortReason(planApprovalRequest(plan, 0.5), "REASON.");
    expect(asked.question).toMatch(/^REASON\. It does not run unless you approve it\. /);
    expect(asked.reasons[0]).toBe("REASON.");
    const stop = abortBelowApproval(plan, "REASON.", 0.6);
    expect(stop).toMatchObject({ kind: "plan_approval", threshold: 0.6, decisions: ["approve", "reject"] });
    expect(stop.question).toMatch(/^REASON\. The run is stopped: approve to go on/);
  });
});
