import { describe, expect, it } from "vitest";
import { Notification } from "../../src/domain/notification.js";
import { TaskStep } from "../../src/domain/plan.js";
import type { FailureEscalationRequest, HumanApprovalRequest } from "../../src/domain/approval.js";
import { retryDifferentAgent, skip, adjustParameters } from "../../src/replanning/strategies/index.js";
import { runStep } from "../../src/execution/run-step.js";
import { approvalNotification, escalationNotification, explainRevision } from "../../src/transparency/explain.js";
import {
  detailsPointer,
  estimatedDelay,
  failureNotification,
  planNotification,
  retryNotification,
  successNotification,
} from "../../src/transparency/notify.js";
import {
  countingTool,
  failStep,
  feedback,
  registryOf,
  strategyInput,
  travelPlan,
  travelRegistry,
  withSteps,
} from "../fakes/toolkit-fixtures.js";

const registry = travelRegistry();

/** Seed 000 scenario 18: task_001 (the flight search) timed out and is retried on the backup agent. */
function flightTimeoutExplanation(error: string, logFile: string | null = null) {
  const { plan, feedback: fb } = failStep(travelPlan(), "flight", error, { failureClass: "timeout" });
  const outcome = retryDifferentAgent(strategyInput(plan, "flight", [fb], registry));
  if (!outcome.applies) throw new Error(outcome.reason);
  const failedStep = plan.steps.find((s) => s.id === "flight")!;
  return explainRevision(outcome.revision, failedStep, error, logFile);
}

describe("explainRevision (seed 000 scenario 18)", () => {
  const n = flightTimeoutExplanation("Agent timeout after 10s");
  const text = `${n.title}\n${n.message}`.toLowerCase();

  it("says what failed, why, what happens now, the delay, and confidence from 0.85 to 0.75", () => {
    expect(n.message).toContain("What failed: Find flights Madrid → Paris for 2 (flight).");
    expect(n.message).toContain("Why: Agent timeout after 10s — it did not answer in time.");
    expect(text).toContain("timeout");
    expect(text).toMatch(/retry/);
    expect(text).toMatch(/different agent/);
    expect(n.message).toContain("backup_flight_agent");
    expect(text).toMatch(/additional delay about \d+(-\d+)? s/);
    expect(n.message).toContain("Plan confidence reduced from 0.85 to 0.75.");
  });

  it("points to the details for developers, in the text and as a field", () => {
    expect(n.message.split("\n").at(-1)).toBe("Details: candor logs --step flight");
    expect(n.details).toBe("candor logs --step flight");
    expect(flightTimeoutExplanation("Agent timeout after 10s", ".candor/decisions.log").details).toBe(
      "candor logs --step flight (log file: .candor/decisions.log)",
    );
  });

  it("is plain language: no exception names, no stack traces", () => {
    expect(text).not.toContain("exception");
    expect(text).not.toContain("stack trace");
    expect(n.message).not.toMatch(/\n\s+at /);
  });

  it("is a valid INFO notification of kind strategy, with the error and strategy summarised", () => {
    expect(() => Notification.parse(n)).not.toThrow();
    expect(n).toMatchObject({
      severity: "INFO",
      kind: "strategy",
      taskId: "flight",
      errorSummary: "Agent timeout after 10s",
    });
    expect(n.title).toBe("Recovery for flight: Retrying with a different agent (RETRY_DIFFERENT_AGENT)");
    expect(n.recoveryStrategy).toMatch(
      /^Retrying with a different agent: Retry task flight with agent backup_flight_agent/,
    );
  });

  it("explains a worker's own timeout wording as a timeout", () => {
    const timedOut = flightTimeoutExplanation("search_flights timed out after 1200 ms");
    expect(timedOut.message).toContain("Why: search_flights timed out after 1200 ms — it did not answer in time.");
  });

  it("gets a crash's message from the worker, never its stack, so an explanation cannot leak one", async () => {
    const thrower = countingTool("crash", {
      run: async () => {
        throw new TypeError("Cannot read properties of undefined (reading 'price')");
      },
    });
    const step = TaskStep.parse({
      id: "s",
      description: "Quote",
      workerType: "w",
      tools: ["crash"],
      retry: { maxAttempts: 1, backoffMs: [0] },
    });
    const fb = await runStep({
      step,
      inputs: {},
      registry: registryOf([thrower.spec], [{ name: "w", description: "", categories: ["general"] }]),
      dispatch: 1,
    });
    expect(fb.errors).toEqual(["Cannot read properties of undefined (reading 'price')"]);
    expect(fb.errors.join("\n")).not.toMatch(/\n\s+at /);
  });

  it("a skip warns that the answer will be incomplete and adds no delay", () => {
    const { plan, feedback: fb } = failStep(travelPlan(), "activities", "Something odd", { failureClass: "unknown" });
    const outcome = skip(strategyInput(plan, "activities", [fb], registry));
    if (!outcome.applies) throw new Error(outcome.reason);
    const s = explainRevision(
      outcome.revision,
      plan.steps.find((x) => x.id === "activities")!,
      "Something odd",
      null,
    );
    expect(s.severity).toBe("WARNING");
    expect(s.message).toContain(
      "Expected impact: additional delay none (the step is dropped); the answer will be incomplete.",
    );
    expect(s.message).toContain("Plan confidence reduced from 0.85 to 0.80.");
  });

  it("an adjustment says which parameters changed and that affected steps run again", () => {
    const done = withSteps(travelPlan(), {
      flight: { status: "done" },
      hotel: { status: "done" },
      activities: { status: "done" },
    });
    const { plan, feedback: fb } = failStep(done, "budget_status", "Total cost $2150 exceeds budget $2000", {
      feedbackType: "CONSTRAINT_VIOLATION",
      failureClass: "constraint_violated",
      outputs: { total: 2150, budget: 2000, breakdown: { flight: 720, hotel: 660, activities: 103 } },
    });
    const outcome = adjustParameters(strategyInput(plan, "budget_status", [fb], registry));
    if (!outcome.applies) throw new Error(outcome.reason);
    const a = explainRevision(
      outcome.revision,
      plan.steps.find((x) => x.id === "budget_status")!,
      "Total cost $2150 exceeds budget $2000",
      null,
    );
    expect(a.message).toContain("What we're doing: Adjusting parameters and re-running the affected steps.");
    expect(a.message).toMatch(/Adjust parameters of (flight|hotel): maxCost unset → \$\d+/);
    expect(a.message).toContain("the result broke a constraint of the request");
    expect(a.estimatedDelay).toMatch(/\(affected steps run again\)$/);
  });
});

describe("estimatedDelay", () => {
  const step = (durationMs: number) => ({ estimates: { durationMs, cost: 0 } });

  it("gives a range in seconds scaled by the step's estimate", () => {
    expect(estimatedDelay("RETRY_DIFFERENT_AGENT", step(3000))).toBe("about 3-6 s");
    expect(estimatedDelay("ADJUST_PARAMETERS", step(2000))).toBe("about 4-6 s (affected steps run again)");
    expect(estimatedDelay("DECOMPOSE", step(1000))).toBe("about 2-4 s");
    expect(estimatedDelay("SKIP", step(1000))).toBe("none (the step is dropped)");
    expect(estimatedDelay(null, step(1000))).toBe("to be decided");
  });

  it("regression: a short step reads 'about 1 s', not 'about 1-1 s'", () => {
    expect(estimatedDelay("RETRY_DIFFERENT_AGENT", step(150))).toBe("about 1 s");
    expect(estimatedDelay("FIND_WORKAROUND", step(150))).toBe("about 1 s");
  });
});

describe("notifications announced by the worker and execute", () => {
  const flight = travelPlan().steps[0]!;

  it("a failure is announced with what failed, why, that a strategy is being chosen, and where the details are", () => {
    const fb = feedback({
      taskId: "flight",
      feedbackType: "FAILURE",
      errors: ["first", "search_flights timed out after 1200 ms"],
      failureClass: "timeout",
      attempt: 2,
    });
    const n = failureNotification(flight, fb, null);
    expect(n).toMatchObject({
      severity: "ERROR",
      kind: "step_failed",
      taskId: "flight",
      title: "Find flights Madrid → Paris for 2 (flight) failed: search_flights timed out after 1200 ms",
      errorSummary: "Find flights Madrid → Paris for 2: search_flights timed out after 1200 ms",
      details: "candor logs --step flight",
    });
    expect(n.message).toBe(
      "It failed after 2 attempt(s) because it did not answer in time. Choosing a recovery strategy next.",
    );
    expect(n.recoveryStrategy).toMatch(/^Analyzing/);
  });

  it("a constraint violation is a warning, not an error", () => {
    const fb = feedback({
      taskId: "budget_status",
      feedbackType: "CONSTRAINT_VIOLATION",
      errors: ["over budget"],
      failureClass: "constraint_violated",
    });
    expect(failureNotification(travelPlan().steps[3]!, fb, null).severity).toBe("WARNING");
  });

  it("a retry inside the step says which attempt failed, when the next comes and how many are allowed", () => {
    const n = retryNotification(flight, { attempt: 1, error: "HTTP 503", nextInMs: 200 }, null);
    expect(n.title).toBe("Find flights Madrid → Paris for 2 (flight) attempt 1 failed: HTTP 503");
    expect(n.message).toBe("Retrying the same call in 200 ms (attempt 2 of 2).");
    expect(n.severity).toBe("WARNING");
  });

  it("success and plan notifications summarise in one line", () => {
    expect(successNotification(flight, feedback({ taskId: "flight", durationMs: 151.6 })).title).toBe(
      "Find flights Madrid → Paris for 2 (flight) done in 152 ms",
    );
    const p = planNotification(travelPlan(), []);
    expect(p.title).toMatch(/^Plan plan-[0-9a-f]{12}: 5 step\(s\), confidence 0.85$/);
    expect(p.message).toContain("4. budget_status [budget_agent after flight, hotel, activities]");
    expect(planNotification(travelPlan(), ["Memory: search_flights failed before"]).severity).toBe("WARNING");
  });

  it("detailsPointer names the step, or the whole log", () => {
    expect(detailsPointer(null, null)).toBe("candor logs");
    expect(detailsPointer("hotel", "/tmp/x.log")).toBe("candor logs --step hotel (log file: /tmp/x.log)");
  });
});

describe("notifications that need a human", () => {
  it("an escalation lists the errors, the suggestions and the decisions", () => {
    const request: FailureEscalationRequest = {
      kind: "max_revisions",
      planId: "plan-1",
      taskId: "flight_retry",
      failureCount: 2,
      revisionCount: 3,
      confidence: 0.55,
      errors: ["timeout", "still failing"],
      reason: "Plan plan-1 exceeded 3 revisions; latest errors: timeout; still failing.",
      suggestedActions: ["Relax constraints or change goal"],
      decisions: ["skip", "retry", "abort"],
      question: "?",
    };
    const n = escalationNotification(request, null);
    expect(n).toMatchObject({
      severity: "ERROR",
      kind: "escalation",
      taskId: "flight_retry",
      errorSummary: "still failing",
      details: "candor logs --step flight_retry",
    });
    expect(n.title).toBe(`Needs a human: ${request.reason}`);
    expect(n.message).toBe(
      "Errors so far: timeout | still failing\nSuggested: Relax constraints or change goal\nDecisions: skip, retry, abort",
    );
  });

  it("a plan approval says the confidence, the threshold and why", () => {
    const p = travelPlan();
    const request: HumanApprovalRequest = {
      kind: "plan_approval",
      planId: p.planId,
      confidence: 0.4,
      threshold: 0.5,
      reasons: ["search_flights failed in 3 recent run(s)"],
      recommendedAction: "REVIEW_AND_ADJUST",
      plan: p,
      decisions: ["approve", "reject"],
      question: "?",
    };
    const n = approvalNotification(request);
    expect(n.title).toBe(`Plan ${p.planId} needs approval: confidence 0.40 is below 0.50`);
    expect(n.message).toContain("Reasons: search_flights failed in 3 recent run(s)");
    expect(n.message).toContain("Decisions: approve, reject");
  });
});
