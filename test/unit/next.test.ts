import { describe, expect, it } from "vitest";
import type { ApprovalRecord, InterruptRequest } from "../../src/domain/approval.js";
import { planApprovalRequest } from "../../src/domain/approval.js";
import { legacyNext, nextOf, type LegacyFields } from "../../src/domain/next.js";
import { planWith } from "../fakes/graph-harness.js";

const plan = planWith([{ id: "a", description: "A", workerType: "w", tools: ["t"] }]);
const escalation: InterruptRequest = {
  kind: "max_revisions",
  planId: "plan-test",
  taskId: "a",
  failureCount: 2,
  revisionCount: 3,
  confidence: 0.5,
  errors: ["boom"],
  reason: "capped",
  suggestedActions: [],
  decisions: ["skip", "retry", "replan", "abort"],
  question: "?",
};
const answered = (kind: ApprovalRecord["kind"], guidance: string | null): ApprovalRecord => ({
  kind,
  decision: guidance ? "replan" : "retry",
  comment: null,
  by: "cli",
  at: "2026-01-01T00:00:00.000Z",
  confidence: 0.5,
  adjustments: null,
  params: null,
  guidance,
});
/** The public fields of a thread checkpointed before `next` existed. */
const old = (fields: Partial<LegacyFields>): LegacyFields => ({
  status: "executing",
  plan,
  pendingInterrupt: null,
  approval: null,
  settings: { approvalThreshold: 0.6 },
  ...fields,
});

describe("legacyNext: `next` for a thread checkpointed before the field existed", () => {
  it.each(["completed", "partial", "failed", "rejected", "aborted"] as const)(
    "a run that ended as %s ends",
    (status) => {
      expect(legacyNext(old({ status }))).toEqual({ kind: "end" });
    },
  );
  it("a run without a plan ends (nothing can run)", () => {
    expect(legacyNext(old({ plan: null, status: "planning" }))).toEqual({ kind: "end" });
  });
  it("a run showing a person a request waits for them", () => {
    expect(legacyNext(old({ status: "awaiting_approval", pendingInterrupt: escalation }))).toEqual({ kind: "ask" });
  });
  it("a person's plain retry chooses a recovery", () => {
    expect(legacyNext(old({ status: "replanning", approval: answered("max_revisions", null) }))).toEqual({
      kind: "choose_recovery",
    });
  });
  it("a person's replan of a plan approval plans again with the guidance, its question rebuilt", () => {
    expect(legacyNext(old({ status: "replanning", approval: answered("plan_approval", "go by train") }))).toEqual({
      kind: "replan",
      taskId: null,
      text: "go by train",
      request: planApprovalRequest(plan, 0.6),
    });
  });
  it("a person's replan of an escalation, whose question only the dropped field kept, runs the plan on", () => {
    expect(legacyNext(old({ status: "replanning", approval: answered("max_revisions", "go by train") }))).toEqual({
      kind: "execute",
    });
  });
  it("anything else executes", () => {
    expect(legacyNext(old({ status: "executing" }))).toEqual({ kind: "execute" });
    expect(legacyNext(old({ status: "awaiting_approval" }))).toEqual({ kind: "execute" });
  });
});

describe("nextOf", () => {
  it("reads `next` when the state has it, whatever the older fields say", () => {
    expect(
      nextOf({ ...old({ status: "completed", pendingInterrupt: escalation }), next: { kind: "execute" } }),
    ).toEqual({ kind: "execute" });
  });
  it("derives it when the state has none", () => {
    expect(nextOf({ ...old({ status: "completed" }), next: null })).toEqual({ kind: "end" });
  });
});
