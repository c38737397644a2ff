import { Send } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { routeAfterRevision } from "../../nodes/apply-strategy.js";
import { routeAfterExecute } from "../../nodes/execute.js";
import { routeAfterHumanInterrupt } from "../../nodes/human-interrupt.js";
import { Node } from "../../nodes/names.js";
import { routeAfterSelectStrategy, STRATEGY_NODES } from "../../nodes/select-strategy.js";
import type { PendingStrategy } from "../../nodes/state.js";
import { routeAfterSynthesize } from "../../nodes/synthesize.js";
import { routeAfterUnderstand } from "../../nodes/understand.js";
import type { FailureEscalationRequest, HumanApprovalRequest } from "../../src/domain/approval.js";
import type { StepStatus } from "../../src/domain/plan.js";
import { StrategyType } from "../../src/domain/revision.js";
import { agentState, planOf } from "../fakes/graph-harness.js";

/** a → b, and c on its own, with the given statuses. */
function plan(a: StepStatus = "pending", b: StepStatus = "pending", c: StepStatus = "pending") {
  return planOf([
    {
      id: "a",
      description: "A",
      workerType: "w",
      tools: ["t"],
      expectedOutputs: ["x"],
      status: a,
      result: a === "done" ? { v: 1 } : null,
    },
    { id: "b", description: "B", workerType: "w", tools: ["t"], dependsOn: ["a"], order: 1, status: b },
    { id: "c", description: "C", workerType: "w", tools: ["t"], status: c },
  ]);
}

const approval: HumanApprovalRequest = {
  kind: "plan_approval",
  planId: "plan-test",
  confidence: 0.4,
  threshold: 0.5,
  reasons: ["low"],
  recommendedAction: "REVIEW_AND_ADJUST",
  plan: plan(),
  decisions: ["approve", "reject"],
  question: "?",
};
const escalation: FailureEscalationRequest & { kind: "max_revisions" } = {
  kind: "max_revisions",
  planId: "plan-test",
  taskId: "a",
  failureCount: 2,
  revisionCount: 3,
  confidence: 0.5,
  errors: ["boom"],
  reason: "capped",
  suggestedActions: [],
  decisions: ["skip", "retry", "abort"],
  question: "?",
};

describe("routeAfterUnderstand", () => {
  it("goes to finalize when there is no plan", () => {
    expect(routeAfterUnderstand(agentState({ plan: null, status: "failed" }))).toBe(Node.FINALIZE);
    expect(routeAfterUnderstand(agentState({ plan: null, status: "executing" }))).toBe(Node.FINALIZE);
  });
  it("goes to finalize when planning failed even if a plan is present", () => {
    expect(routeAfterUnderstand(agentState({ plan: plan(), status: "failed" }))).toBe(Node.FINALIZE);
  });
  it("asks a human when the plan needs approval", () => {
    expect(
      routeAfterUnderstand(agentState({ plan: plan(), pendingInterrupt: approval, status: "awaiting_approval" })),
    ).toBe(Node.HUMAN_INTERRUPT);
  });
  it("executes a plan that needs no approval", () => {
    expect(routeAfterUnderstand(agentState({ plan: plan(), status: "executing" }))).toBe(Node.EXECUTE);
  });
});

describe("routeAfterExecute", () => {
  it("synthesizes when there is no plan or nothing is running", () => {
    expect(routeAfterExecute(agentState({ plan: null }))).toBe(Node.SYNTHESIZE);
    expect(routeAfterExecute(agentState({ plan: plan("done", "done", "done") }))).toBe(Node.SYNTHESIZE);
    expect(routeAfterExecute(agentState({ plan: plan("failed", "pending", "done") }))).toBe(Node.SYNTHESIZE);
  });
  it("sends every running step to a worker at once, with its dependencies' outputs", () => {
    const p = plan("done", "running", "running");
    const route = routeAfterExecute(agentState({ plan: p }));
    expect(Array.isArray(route)).toBe(true);
    const sends = route as Send[];
    expect(sends.every((s) => s instanceof Send && s.node === Node.WORKER)).toBe(true);
    expect(sends.map((s) => s.args.step.id)).toEqual(["b", "c"]);
    expect(sends[0]!.args).toMatchObject({ planId: "plan-test", inputs: { a: { v: 1 }, x: { v: 1 } } });
    expect(sends[1]!.args.inputs).toEqual({});
  });
});

describe("routeAfterSynthesize", () => {
  it("replans when a step failed", () => {
    expect(routeAfterSynthesize(agentState({ plan: plan("failed", "pending", "done") }))).toBe(Node.SELECT_STRATEGY);
  });
  it("reflects when everything settled, skipped steps included", () => {
    expect(routeAfterSynthesize(agentState({ plan: plan("done", "done", "done") }))).toBe(Node.REFLECT);
    expect(routeAfterSynthesize(agentState({ plan: plan("skipped", "skipped", "done") }))).toBe(Node.REFLECT);
    expect(routeAfterSynthesize(agentState({ plan: null }))).toBe(Node.REFLECT);
  });
});

describe("routeAfterSelectStrategy", () => {
  const pending = (strategy: StrategyType): PendingStrategy => ({
    strategy,
    taskId: "a",
    failureClass: "timeout",
    reasoning: "r",
    proposed: null,
  });
  it("escalates to a human when a cap produced an interrupt request", () => {
    expect(routeAfterSelectStrategy(agentState({ pendingInterrupt: escalation }))).toBe(Node.HUMAN_INTERRUPT);
    // The cap wins even over a stale strategy.
    expect(
      routeAfterSelectStrategy(agentState({ pendingInterrupt: escalation, pendingStrategy: pending("SKIP") })),
    ).toBe(Node.HUMAN_INTERRUPT);
  });
  it("goes back to synthesize when nothing is left to recover", () => {
    expect(routeAfterSelectStrategy(agentState({ plan: plan("done", "done", "done") }))).toBe(Node.SYNTHESIZE);
  });
  it.each(StrategyType.options)("routes %s to its own node", (strategy) => {
    const node = routeAfterSelectStrategy(agentState({ pendingStrategy: pending(strategy) }));
    expect(node).toBe(STRATEGY_NODES[strategy]);
    expect(node).toBe(strategy.toLowerCase());
  });
});

describe("routeAfterHumanInterrupt", () => {
  it.each(["rejected", "failed", "aborted"] as const)(
    "reflects (then finalizes) a run that a human ended as %s",
    (status) => {
      expect(routeAfterHumanInterrupt(agentState({ status, plan: plan() }))).toBe(Node.REFLECT);
    },
  );
  it("asks again while a request is still pending", () => {
    expect(routeAfterHumanInterrupt(agentState({ status: "awaiting_approval", pendingInterrupt: approval }))).toBe(
      Node.HUMAN_INTERRUPT,
    );
  });
  it("goes back to select_strategy after a 'retry'", () => {
    expect(routeAfterHumanInterrupt(agentState({ status: "replanning" }))).toBe(Node.SELECT_STRATEGY);
  });
  it("executes after an approval or a 'skip'", () => {
    expect(routeAfterHumanInterrupt(agentState({ status: "executing" }))).toBe(Node.EXECUTE);
  });
});

describe("routeAfterRevision", () => {
  it("recovers another failed step of the same wave before anything runs again", () => {
    expect(routeAfterRevision(agentState({ plan: plan("done", "pending", "failed") }))).toBe(Node.SELECT_STRATEGY);
  });
  it("goes back to execute once no step is waiting for recovery", () => {
    expect(routeAfterRevision(agentState({ plan: plan("done", "pending", "skipped") }))).toBe(Node.EXECUTE);
  });
});
