import { Send } from "@langchain/langgraph";
import { ErrorCode } from "../../src/errors.js";
import { describe, expect, it } from "vitest";
import { routeAfterRevision } from "../../nodes/apply-strategy.js";
import { routeAfterConverse, routeFromStart } from "../../nodes/chat.js";
import { routeAfterExecute } from "../../nodes/execute.js";
import { routeAfterHumanInterrupt } from "../../nodes/human-interrupt.js";
import { routeAfterReplanWithGuidance } from "../../nodes/replan-with-guidance.js";
import { Node } from "../../nodes/names.js";
import { routeAfterSelectStrategy, STRATEGY_NODES } from "../../nodes/select-strategy.js";
import { routeAfterSynthesize } from "../../nodes/synthesize.js";
import { routeAfterUnderstand } from "../../nodes/understand.js";
import type { FailureEscalationRequest, HumanApprovalRequest } from "../../src/domain/approval.js";
import type { Next } from "../../src/domain/next.js";
import type { StepStatus } from "../../src/domain/plan.js";
import { PlanRevision, StrategyType } from "../../src/domain/revision.js";
import { HumanMessage } from "@langchain/core/messages";
import { END } from "@langchain/langgraph";
import { agentState, planWith } from "../fakes/graph-harness.js";

/** a → b, and c on its own, with the given statuses. */
function plan(a: StepStatus = "pending", b: StepStatus = "pending", c: StepStatus = "pending") {
  return planWith([
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

const ask: Next = { kind: "ask" };
const execute: Next = { kind: "execute" };
const end: Next = { kind: "end" };
const chooseRecovery: Next = { kind: "choose_recovery" };
const replan: Next = { kind: "replan", taskId: "a", text: "go by train", request: escalation };
const recover = (strategy: StrategyType): Next => ({
  kind: "recover",
  strategy,
  taskId: "a",
  failureClass: "timeout",
  reasoning: "r",
  proposed: {
    changes: { fields: {}, steps: [], order: plan().steps.map((s) => s.id) },
    revision: PlanRevision.parse({
      revisionId: "rev-1",
      planId: "plan-test",
      trigger: "1 failures, 0 violations",
      strategy,
      failedTaskId: "a",
      failureClass: "timeout",
      rationale: "r",
      changes: ["c"],
      confidenceDelta: -0.1,
      confidenceBefore: 0.8,
      confidenceAfter: 0.7,
      at: "2026-01-01T00:00:00.000Z",
    }),
  },
});

describe("routeAfterUnderstand", () => {
  it("goes to finalize when there is no plan", () => {
    expect(routeAfterUnderstand(agentState({ plan: null, next: end, status: "failed" }))).toBe(Node.FINALIZE);
    expect(routeAfterUnderstand(agentState({ plan: null, next: execute }))).toBe(Node.FINALIZE);
  });
  it("goes to finalize when planning failed even if a plan is present", () => {
    expect(routeAfterUnderstand(agentState({ plan: plan(), next: end, status: "failed" }))).toBe(Node.FINALIZE);
  });
  it("asks a human when the plan needs approval", () => {
    expect(
      routeAfterUnderstand(
        agentState({ plan: plan(), next: ask, pendingInterrupt: approval, status: "awaiting_approval" }),
      ),
    ).toBe(Node.HUMAN_INTERRUPT);
  });
  it("executes a plan that needs no approval", () => {
    expect(routeAfterUnderstand(agentState({ plan: plan(), next: execute, status: "executing" }))).toBe(Node.EXECUTE);
  });
  it("reads `next`, not the request shown to a person", () => {
    expect(routeAfterUnderstand(agentState({ plan: plan(), next: execute, pendingInterrupt: approval }))).toBe(
      Node.EXECUTE,
    );
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
  // SYNTHESIZE decides (it sets `next`); the router reads only `next`, whatever the plan shows.
  it("replans when synthesize found failed steps (next: choose_recovery)", () => {
    const failed = plan("failed", "pending", "done");
    expect(routeAfterSynthesize(agentState({ plan: failed, next: { kind: "choose_recovery" } }))).toBe(
      Node.SELECT_STRATEGY,
    );
  });
  it("reflects when synthesize answered (next: end)", () => {
    expect(routeAfterSynthesize(agentState({ plan: plan("done", "done", "done"), next: { kind: "end" } }))).toBe(
      Node.REFLECT,
    );
    expect(routeAfterSynthesize(agentState({ plan: plan("failed", "done", "done"), next: { kind: "end" } }))).toBe(
      Node.REFLECT,
    );
  });
});

describe("routeAfterSelectStrategy", () => {
  it("escalates to a human when a cap produced an interrupt request", () => {
    expect(
      routeAfterSelectStrategy(agentState({ plan: plan("failed"), next: ask, pendingInterrupt: escalation })),
    ).toBe(Node.HUMAN_INTERRUPT);
  });
  it("goes back to synthesize when nothing is left to recover", () => {
    expect(routeAfterSelectStrategy(agentState({ plan: plan("done", "done", "done"), next: execute }))).toBe(
      Node.SYNTHESIZE,
    );
  });
  it.each(StrategyType.options)("routes %s to its own node", (strategy) => {
    const node = routeAfterSelectStrategy(agentState({ plan: plan("failed"), next: recover(strategy) }));
    expect(node).toBe(STRATEGY_NODES[strategy]);
    expect(node).toBe(strategy.toLowerCase());
  });
});

describe("routeAfterHumanInterrupt", () => {
  it.each(["rejected", "failed"] as const)("reflects on (and so ends) a run that a human ended as %s", (status) => {
    expect(routeAfterHumanInterrupt(agentState({ status, plan: plan(), next: end }))).toBe(Node.REFLECT);
  });
  it("asks again while a request is still pending", () => {
    expect(
      routeAfterHumanInterrupt(
        agentState({ plan: plan(), status: "awaiting_approval", next: ask, pendingInterrupt: approval }),
      ),
    ).toBe(Node.HUMAN_INTERRUPT);
  });
  it("plans again with a person's guidance after a 'replan'", () => {
    expect(routeAfterHumanInterrupt(agentState({ plan: plan(), status: "replanning", next: replan }))).toBe(
      Node.REPLAN_WITH_GUIDANCE,
    );
  });
  it("goes back to select_strategy after a 'retry'", () => {
    expect(routeAfterHumanInterrupt(agentState({ plan: plan(), status: "replanning", next: chooseRecovery }))).toBe(
      Node.SELECT_STRATEGY,
    );
    // A strategy to apply only comes from an edited state: it is chosen again.
    expect(routeAfterHumanInterrupt(agentState({ plan: plan(), next: recover("SKIP") }))).toBe(Node.SELECT_STRATEGY);
  });
  it("executes after an approval or a 'skip'", () => {
    expect(routeAfterHumanInterrupt(agentState({ plan: plan(), status: "executing", next: execute }))).toBe(
      Node.EXECUTE,
    );
  });
  it("reads `next`, not `status`: a status left from before the decision does not steer", () => {
    expect(routeAfterHumanInterrupt(agentState({ plan: plan(), status: "awaiting_approval", next: execute }))).toBe(
      Node.EXECUTE,
    );
  });
  it("ends a thread checkpointed before `next` existed that ended, and refuses one that did not, by code", () => {
    const old = { plan: plan(), next: null };
    expect(routeAfterHumanInterrupt(agentState({ ...old, status: "aborted" }))).toBe(Node.REFLECT);
    for (const status of ["awaiting_approval", "replanning", "executing"] as const)
      expect(() => routeAfterHumanInterrupt(agentState({ ...old, status, pendingInterrupt: approval }))).toThrow(
        expect.objectContaining({ code: ErrorCode.UNSUPPORTED_CHECKPOINT }),
      );
  });
});

describe("routeAfterReplanWithGuidance", () => {
  it("runs a guided plan", () => {
    expect(routeAfterReplanWithGuidance(agentState({ plan: plan(), next: execute }))).toBe(Node.EXECUTE);
  });
  it("goes back to the person when the guidance gave no usable plan, or a plan that needs approval", () => {
    expect(routeAfterReplanWithGuidance(agentState({ plan: plan(), next: ask, pendingInterrupt: escalation }))).toBe(
      Node.HUMAN_INTERRUPT,
    );
  });
});

describe("routeFromStart", () => {
  const said = [new HumanMessage({ id: "m1", content: "approve" })];
  it("takes a message to a thread waiting for a decision as the answer", () => {
    expect(routeFromStart(agentState({ plan: plan(), next: ask, pendingInterrupt: approval, messages: said }))).toBe(
      Node.HUMAN_INTERRUPT,
    );
  });
  it("answers a message to a thread that is not waiting for a decision in the conversation", () => {
    expect(routeFromStart(agentState({ plan: plan(), next: execute, messages: said }))).toBe(Node.CONVERSE);
    expect(routeFromStart(agentState({ plan: plan(), next: end, messages: said }))).toBe(Node.CONVERSE);
  });
  it("takes a request from a conversation without one, and plans a given request", () => {
    expect(routeFromStart({ ...agentState({ messages: said }), request: undefined! })).toBe(Node.CONVERSE);
    expect(routeFromStart(agentState())).toBe(Node.UNDERSTAND);
  });
  it("refuses a thread checkpointed before `next` existed, still waiting, by code rather than guessing", () => {
    expect(() =>
      routeFromStart(agentState({ plan: plan(), next: null, pendingInterrupt: approval, messages: said })),
    ).toThrow(expect.objectContaining({ code: ErrorCode.UNSUPPORTED_CHECKPOINT }));
  });
});

describe("routeAfterConverse", () => {
  it("plans a request taken from the conversation", () => {
    expect(routeAfterConverse(agentState({ plan: null }))).toBe(Node.UNDERSTAND);
  });
  it("ends at a run that has ended, and executes a run still going", () => {
    expect(routeAfterConverse(agentState({ plan: plan(), next: end, status: "completed" }))).toBe(END);
    expect(routeAfterConverse(agentState({ plan: plan(), next: execute, status: "executing" }))).toBe(Node.EXECUTE);
  });
  it("ends at a run checkpointed before `next` existed by its final status; an unfinished one is refused", () => {
    expect(routeAfterConverse(agentState({ plan: plan(), next: null, status: "partial" }))).toBe(END);
    expect(() => routeAfterConverse(agentState({ plan: plan(), next: null, status: "executing" }))).toThrow(
      expect.objectContaining({ code: ErrorCode.UNSUPPORTED_CHECKPOINT }),
    );
  });
});

describe("routeAfterRevision", () => {
  // The strategy node decides (`next`: choose_recovery while another step of the wave is still failed).
  it("recovers another failed step of the same wave before anything runs again", () => {
    const state = agentState({ plan: plan("done", "pending", "failed"), next: { kind: "choose_recovery" } });
    expect(routeAfterRevision(state)).toBe(Node.SELECT_STRATEGY);
  });
  it("goes back to execute once no step is waiting for recovery", () => {
    const state = agentState({ plan: plan("done", "pending", "skipped"), next: { kind: "execute" } });
    expect(routeAfterRevision(state)).toBe(Node.EXECUTE);
  });
});
