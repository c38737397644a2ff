import { describe, expect, it } from "vitest";
import { FailureEscalationRequest } from "../../src/domain/approval.js";
import type { ExecutionFeedback } from "../../src/domain/feedback.js";
import type { Plan } from "../../src/domain/plan.js";
import { RunSettings } from "../../src/domain/request.js";
import { buildFailureContext } from "../../src/replanning/context.js";
import { decisionEffect, interruptPayload, parseDecision } from "../../src/replanning/human-decision.js";
import { HumanDecision } from "../../src/domain/approval.js";
import { OUTCOME_UNKNOWN } from "../../src/domain/feedback.js";
import { recoverOrSkip } from "../../src/replanning/recover.js";
import { nextFailedStep, selectStrategy, type Selection } from "../../src/replanning/select.js";
import { failStep, feedback, failure, travelPlan, travelRegistry, withSteps } from "../fakes/toolkit-fixtures.js";

const registry = travelRegistry();
const settings = RunSettings.parse({});

function select(
  p: Plan,
  all: readonly ExecutionFeedback[],
  revisionCount = 0,
  overrides: Partial<RunSettings> = {},
): Selection | null {
  return selectStrategy({ plan: p, feedback: all, settings: { ...settings, ...overrides }, revisionCount, registry });
}

/** The flight step failed `n` times through its replacements flight → flight_retry → flight_retry2 …, each on a new agent id. */
function flightFailedTimes(n: number, confidence = 0.85): { plan: Plan; feedback: ExecutionFeedback[] } {
  let p: Plan = { ...travelPlan(), confidence };
  const all: ExecutionFeedback[] = [];
  const ids = ["flight", "flight_retry", "flight_retry2", "flight_retry3"];
  for (let i = 0; i < n; i++) {
    const id = ids[i]!;
    if (i > 0) {
      const prev = p.steps.find((s) => s.id === ids[i - 1])!;
      p = {
        ...p,
        steps: p.steps.map((s) =>
          s.id === prev.id
            ? { ...prev, id, lineage: ids.slice(0, i), replaces: ids[i - 1]!, status: "pending" as const }
            : s,
        ),
      };
    }
    const failed = failStep(p, id, `Agent timeout after 10s (#${i + 1})`, { failureClass: "timeout" });
    p = failed.plan;
    all.push(failed.feedback);
  }
  return { plan: p, feedback: all };
}

function strategyOf(s: Selection | null): string {
  if (!s) return "none";
  return s.kind === "strategy" ? s.strategy : `escalate:${s.request.kind}`;
}

describe("selectStrategy picks the first strategy that applies for the failure's class", () => {
  it("returns null when no step has failed", () => {
    expect(select(travelPlan(), [])).toBeNull();
  });

  it("timeout → RETRY_DIFFERENT_AGENT, with the reason", () => {
    const { plan, feedback: fb } = failStep(travelPlan(), "flight", "Agent timeout after 10s", {
      failureClass: "timeout",
    });
    const s = select(plan, [fb]);
    expect(s).toMatchObject({
      kind: "strategy",
      strategy: "RETRY_DIFFERENT_AGENT",
      taskId: "flight",
      failureClass: "timeout",
    });
    if (s?.kind === "strategy")
      expect(s.reasoning).toBe(
        'flight failed with timeout ("Agent timeout after 10s"), which RETRY_DIFFERENT_AGENT addresses.',
      );
  });

  it("resource_unavailable → FIND_WORKAROUND", () => {
    const { plan, feedback: fb } = failStep(travelPlan(), "hotel", "Preferred hotel fully booked", {
      failureClass: "resource_unavailable",
    });
    expect(strategyOf(select(plan, [fb]))).toBe("FIND_WORKAROUND");
  });

  it("constraint_violated with a breakdown → ADJUST_PARAMETERS", () => {
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
    expect(strategyOf(select(plan, [fb]))).toBe("ADJUST_PARAMETERS");
  });

  it("too_complex tries DECOMPOSE first; the travel hotel search has no smaller tools, so it says why and skips", () => {
    const { plan, feedback: fb } = failStep(travelPlan(), "hotel", "Task too complex to execute", {
      failureClass: "too_complex",
    });
    const s = select(plan, [fb]);
    expect(strategyOf(s)).toBe("SKIP");
    if (s?.kind === "strategy")
      expect(s.reasoning).toMatch(/Passed over: DECOMPOSE \(No chain of 2–4 tools in hotel_agent's grant/);
    const outcome = recoverOrSkip("DECOMPOSE", { plan, feedback: [fb], revisionCount: 0, registry, taskId: "hotel" });
    expect(outcome.revision.strategy).toBe("SKIP");
  });

  it("falls through to SKIP when the preferred strategy does not apply, naming what was passed over and why", () => {
    const { plan, feedback: fb } = failStep(travelPlan(), "budget_status", "check_budget timed out after 1000 ms", {
      failureClass: "timeout",
    });
    const s = select(plan, [fb]);
    expect(strategyOf(s)).toBe("SKIP");
    if (s?.kind === "strategy")
      expect(s.reasoning).toMatch(/Passed over: RETRY_DIFFERENT_AGENT \(No other worker can produce budget_status/);
  });

  it("handles the earliest failed step first", () => {
    const a = failStep(travelPlan(), "activities", "fully booked", { failureClass: "resource_unavailable" });
    const b = failStep(a.plan, "flight", "Agent timeout after 10s", { failureClass: "timeout" });
    expect(nextFailedStep(b.plan)?.id).toBe("flight");
    expect(select(b.plan, [a.feedback, b.feedback])).toMatchObject({ taskId: "flight" });
  });

  it("classifies nothing itself: a feedback record without a class counts as unknown", () => {
    const { plan, feedback: fb } = failStep(travelPlan(), "flight", "???", { failureClass: null });
    expect(select(plan, [fb])).toMatchObject({ failureClass: "unknown", strategy: "RETRY_DIFFERENT_AGENT" });
  });
});

describe("selectStrategy escalates to a human at each cap (seed 000 scenarios 11, 12, 16)", () => {
  it("max_revisions: at the cap, naming the plan, the cap and the latest errors", () => {
    const { plan, feedback: fb } = failStep(travelPlan(), "flight", "Still failing after 3 retries", {
      failureClass: "timeout",
    });
    const s = select(plan, [fb], 3);
    expect(strategyOf(s)).toBe("escalate:max_revisions");
    if (s?.kind !== "escalate") throw new Error("expected an escalation");
    expect(s.request.reason).toContain(`Plan ${plan.planId} exceeded 3 revisions`);
    expect(s.request.reason).toContain("Still failing");
    expect(s.request).toMatchObject({
      taskId: "flight",
      revisionCount: 3,
      decisions: ["skip", "retry", "replan", "abort"],
      params: plan.steps.find((x) => x.id === "flight")!.params,
    });
    expect(s.request.question).toMatch(
      /Skip flight and finish the rest, retry once more \(with new parameters if you like\), replan the unfinished work with your guidance, or abort the run\?/,
    );
    expect(() => FailureEscalationRequest.parse(s.request)).not.toThrow();
  });

  it("below the revision cap there is no escalation", () => {
    const { plan, feedback: fb } = failStep(travelPlan(), "flight", "Agent timeout after 10s", {
      failureClass: "timeout",
    });
    expect(strategyOf(select(plan, [fb], 2))).toBe("RETRY_DIFFERENT_AGENT");
    expect(strategyOf(select(plan, [fb], 2, { maxRevisions: 2 }))).toBe("escalate:max_revisions");
  });

  it("step_failures: a step whose lineage failed maxStepFailures times, with every error", () => {
    const { plan, feedback: fb } = flightFailedTimes(3);
    const s = select(plan, fb, 2);
    expect(strategyOf(s)).toBe("escalate:step_failures");
    if (s?.kind !== "escalate") throw new Error("expected an escalation");
    expect(s.request.failureCount).toBe(3);
    expect(s.request.taskId).toBe("flight_retry2");
    expect(s.request.errors).toEqual([
      "Agent timeout after 10s (#1)",
      "Agent timeout after 10s (#2)",
      "Agent timeout after 10s (#3)",
    ]);
    expect(s.request.reason).toMatch(/flight_retry2 has failed 3 times/);
    expect(s.request.suggestedActions.join(" ")).toContain("search_flights");
  });

  it("two failures of a lineage are not yet an escalation; a higher cap raises the bar", () => {
    expect(strategyOf(select(flightFailedTimes(2).plan, flightFailedTimes(2).feedback, 1))).not.toMatch(/^escalate/);
    const three = flightFailedTimes(3);
    expect(strategyOf(select(three.plan, three.feedback, 2, { maxStepFailures: 4 }))).not.toMatch(/^escalate/);
  });

  it("low_confidence: after revisions, below abortBelow, with the seed's wording and suggestion", () => {
    const { plan, feedback: fb } = failStep({ ...travelPlan(), confidence: 0.25 }, "flight", "Persistent failure", {
      failureClass: "timeout",
    });
    const s = select(plan, [fb], 2);
    expect(strategyOf(s)).toBe("escalate:low_confidence");
    if (s?.kind !== "escalate") throw new Error("expected an escalation");
    expect(s.request.reason).toContain("Plan confidence 0.25 too low after 2 revisions. Aborting");
    expect(s.request.suggestedActions).toContain("Relax constraints or change goal");
    expect(s.request.confidence).toBe(0.25);
  });

  it("low confidence before any revision is not an escalation (plan approval handles it), nor is confidence at the threshold", () => {
    const { plan, feedback: fb } = failStep(
      { ...travelPlan(), confidence: 0.25 },
      "flight",
      "Agent timeout after 10s",
      { failureClass: "timeout" },
    );
    expect(strategyOf(select(plan, [fb], 0))).toBe("RETRY_DIFFERENT_AGENT");
    const atThreshold = failStep({ ...travelPlan(), confidence: 0.4 }, "flight", "Agent timeout after 10s", {
      failureClass: "timeout",
    });
    expect(strategyOf(select(atThreshold.plan, [atThreshold.feedback], 1))).toBe("RETRY_DIFFERENT_AGENT");
  });

  it("a revision that would take confidence below abortBelow escalates the moment it is proposed, with that confidence", () => {
    // Regression (issue 9): the threshold was only checked at the next failure, after the revision had run.
    const { plan, feedback: fb } = failStep(
      { ...travelPlan(), confidence: 0.35 },
      "flight",
      "Agent timeout after 10s",
      { failureClass: "timeout" },
    );
    const s = select(plan, [fb], 1);
    expect(strategyOf(s)).toBe("escalate:low_confidence");
    expect(s?.kind === "escalate" && s.request.confidence).toBe(0.25);
    expect(s?.kind === "escalate" && s.request.reason).toMatch(
      /RETRY_DIFFERENT_AGENT for flight would lower the plan's confidence to 0\.25, below the abort threshold 0\.30/,
    );
  });

  it("checks the revision cap first when several caps are hit", () => {
    const { plan, feedback: fb } = flightFailedTimes(3, 0.1);
    expect(strategyOf(select(plan, fb, 3))).toBe("escalate:max_revisions");
    expect(strategyOf(select(plan, fb, 2))).toBe("escalate:step_failures");
  });
});

describe("buildFailureContext", () => {
  it("gathers the failures of the step and the steps it replaced, and takes the latest dispatch's feedback", () => {
    const { plan, feedback: fb } = flightFailedTimes(2);
    const step = plan.steps.find((s) => s.id === "flight_retry")!;
    const ctx = buildFailureContext(step, [...fb, feedback({ taskId: "hotel" }), failure("activities", "unrelated")]);
    expect(ctx.failureCount).toBe(2);
    expect(ctx.history.map((f) => f.taskId)).toEqual(["flight", "flight_retry"]);
    expect(ctx.error).toBe("Agent timeout after 10s (#2)");
    expect(ctx.failureClass).toBe("timeout");
    expect(ctx.tool).toBe("search_flights");
  });

  it("refuses a step with no feedback at all", () => {
    const step = travelPlan().steps[0]!;
    expect(() => buildFailureContext(step, [])).toThrow(/No feedback recorded for failed step flight/);
  });
});

describe("recoverOrSkip", () => {
  it("applies the chosen strategy", () => {
    const { plan, feedback: fb } = failStep(travelPlan(), "flight", "Agent timeout after 10s", {
      failureClass: "timeout",
    });
    const outcome = recoverOrSkip("RETRY_DIFFERENT_AGENT", {
      plan,
      feedback: [fb],
      revisionCount: 1,
      registry,
      taskId: "flight",
    });
    expect(outcome.revision).toMatchObject({
      strategy: "RETRY_DIFFERENT_AGENT",
      revisionId: "rev_2",
      newStepIds: ["flight_retry"],
    });
  });

  it("skips the step, and says why, when the chosen strategy no longer applies", () => {
    const { plan, feedback: fb } = failStep(travelPlan(), "budget_status", "timed out", { failureClass: "timeout" });
    const outcome = recoverOrSkip("RETRY_DIFFERENT_AGENT", {
      plan,
      feedback: [fb],
      revisionCount: 0,
      registry,
      taskId: "budget_status",
    });
    expect(outcome.revision.strategy).toBe("SKIP");
    expect(outcome.plan.steps.find((s) => s.id === "budget_status")?.status).toBe("skipped");
  });

  it("refuses a step that is not waiting for recovery", () => {
    expect(() =>
      recoverOrSkip("SKIP", { plan: travelPlan(), feedback: [], revisionCount: 0, registry, taskId: "flight" }),
    ).toThrow(/not waiting for recovery/);
  });
});

describe("parseDecision (the human's answer to an escalation or approval)", () => {
  const escalation = { kind: "max_revisions" as const, decisions: ["skip", "retry", "abort"] };
  const approval = { kind: "plan_approval" as const, decisions: ["approve", "reject"] };

  it("accepts an object or a bare string, case and spaces forgiven", () => {
    const none = { adjustments: null, params: null, guidance: null };
    expect(parseDecision({ decision: "skip", comment: "fine", by: "ana" }, escalation)).toEqual({
      ok: true,
      decision: { decision: "skip", comment: "fine", by: "ana", ...none },
    });
    expect(parseDecision("  Retry ", escalation)).toEqual({
      ok: true,
      decision: { decision: "retry", comment: null, by: null, ...none },
    });
  });

  it("refuses a decision that does not answer this request, listing those that do", () => {
    const parsed = parseDecision("approve", escalation);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok)
      expect(parsed.error).toBe('"approve" does not answer a max_revisions request. Send one of: skip, retry, abort.');
  });

  it("refuses malformed values without throwing", () => {
    for (const raw of [null, 42, { decision: "maybe" }, {}, "yes please"]) {
      const parsed = parseDecision(raw, approval);
      expect(parsed.ok, JSON.stringify(raw)).toBe(false);
      if (!parsed.ok) expect(parsed.error).toContain("Send one of: approve, reject");
    }
  });
});

describe("revision history across several failures (seed 000 scenario 13)", () => {
  it("each revision records its trigger, its changes and a negative delta, and the confidence chain can be rebuilt", () => {
    const revisions = [];
    const all: ExecutionFeedback[] = [];
    let p = travelPlan();
    for (const id of ["flight", "flight_retry"]) {
      const failed = failStep(p, id, `Agent timeout after 10s (${id})`, { failureClass: "timeout" });
      all.push(failed.feedback);
      const choice = select(failed.plan, all, revisions.length);
      if (choice?.kind !== "strategy") throw new Error(`expected a strategy, got ${strategyOf(choice)}`);
      const outcome = recoverOrSkip(choice.strategy, {
        plan: failed.plan,
        feedback: all,
        revisionCount: revisions.length,
        registry,
        taskId: id,
      });
      revisions.push(outcome.revision);
      p = outcome.plan;
    }
    expect(revisions.map((r) => [r.revisionId, r.strategy, r.failedTaskId, r.trigger])).toEqual([
      ["rev_1", "RETRY_DIFFERENT_AGENT", "flight", "1 failures, 0 violations"],
      ["rev_2", "SKIP", "flight_retry", "1 failures, 0 violations"],
    ]);
    for (const r of revisions) {
      expect(r.changes.length).toBeGreaterThanOrEqual(1);
      expect(r.confidenceDelta).toBeLessThan(0);
    }
    expect([revisions[0]!.confidenceBefore, ...revisions.map((r) => r.confidenceAfter)]).toEqual([0.85, 0.75, 0.7]);
    expect(revisions[1]!.confidenceBefore).toBe(revisions[0]!.confidenceAfter);
    expect(p.confidence).toBe(0.7);
  });
});

describe("a call whose outcome is unknown (stopped before it answered)", () => {
  it("is put to a person at once, whatever the caps, with retry, skip and abort; a retry re-runs the step", () => {
    const { plan, feedback: fb } = failStep(
      travelPlan(),
      "flight",
      "search_flights may already have run: … a human must check",
      { failureClass: "policy_blocked", errorType: OUTCOME_UNKNOWN },
    );
    const s = select(plan, [fb], 0);
    expect(strategyOf(s)).toBe("escalate:unknown_outcome");
    if (s?.kind !== "escalate") throw new Error("expected an escalation");
    expect(s.request).toMatchObject({ taskId: "flight", decisions: ["retry", "skip", "abort"], revisionCount: 0 });
    expect(s.request.reason).toBe(
      "search_flights for flight may already have taken effect: it was stopped before it answered, so nobody knows.",
    );
    const effect = decisionEffect({
      request: s.request,
      decision: HumanDecision.parse({ decision: "retry" }),
      plan,
      settings: RunSettings.parse({}),
      revisionCount: 0,
      feedback: [fb],
      registry: travelRegistry(),
    });
    expect(effect.status).toBe("executing");
    expect(effect.plan!.steps.find((x) => x.id === "flight")).toMatchObject({ status: "pending", dispatches: 1 });
  });

  it("answers to a HumanResponse only with what a check can find: accept re-runs, ignore skips, a note is refused", () => {
    const { plan, feedback: fb } = failStep(travelPlan(), "flight", "search_flights may already have run", {
      failureClass: "policy_blocked",
      errorType: OUTCOME_UNKNOWN,
    });
    const s = select(plan, [fb], 0);
    if (s?.kind !== "escalate") throw new Error("expected an escalation");
    expect(parseDecision({ type: "accept", args: null }, s.request)).toMatchObject({
      ok: true,
      decision: { decision: "retry" },
    });
    expect(parseDecision({ type: "ignore", args: null }, s.request)).toMatchObject({
      ok: true,
      decision: { decision: "skip" },
    });
    expect(parseDecision({ type: "response", args: "still checking" }, s.request)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^Say what your check found: accept if flight's call did not take effect/),
    });
    expect(interruptPayload(s.request).config).toEqual({
      allow_accept: true,
      allow_edit: false,
      allow_respond: false,
      allow_ignore: true,
    });
  });

  it("stops offering to run the call again once the step has failed as often as the cap allows", () => {
    let plan = travelPlan();
    const all: ExecutionFeedback[] = [];
    for (let i = 1; i <= 3; i++) {
      const f = failStep(
        withSteps(plan, { flight: { dispatches: i - 1 } }),
        "flight",
        "search_flights may already have run",
        { failureClass: "policy_blocked", errorType: OUTCOME_UNKNOWN },
      );
      plan = f.plan;
      all.push(f.feedback);
    }
    const s = select(plan, all, 0);
    if (s?.kind !== "escalate") throw new Error("expected an escalation");
    expect(s.request).toMatchObject({ kind: "unknown_outcome", decisions: ["skip", "abort"] });
    expect(s.request.reason).toContain("(it has failed 3 times)");
  });
});
