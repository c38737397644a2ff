import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent } from "../../graphs/agent.js";
import type { ExecutionFeedback } from "../../src/domain/feedback.js";
import type { Plan } from "../../src/domain/plan.js";
import { RunSettings } from "../../src/domain/request.js";
import { PlanRevision, type StrategyType } from "../../src/domain/revision.js";
import { CandorError } from "../../src/errors.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { abortReason } from "../../src/tools/sleep.js";
import type { Reasoner, RecoveryProposal, RecoveryQuestion } from "../../src/reasoning/types.js";
import { askReasonerForRecovery, RECOVERY_TIMEOUT_MS } from "../../src/replanning/ask-reasoner.js";
import { buildFailureContext } from "../../src/replanning/context.js";
import { validateProposal, type ProposalVerdict } from "../../src/replanning/proposal.js";
import { recoverOrSkip } from "../../src/replanning/recover.js";
import { selectStrategy, STRATEGY_BUDGETS, STRATEGY_PREFERENCES, type Selection } from "../../src/replanning/select.js";
import type { ToolRegistry } from "../../src/tools/registry.js";
import type { Toolkit } from "../../src/tools/types.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { tempDir, threadConfig, tripInput } from "../fakes/graph-harness.js";
import {
  NO_BUDGET_REQUEST,
  countingTool,
  failStep,
  failure,
  plan as makePlan,
  registryOf,
  travelPlan,
  travelRegistry,
} from "../fakes/toolkit-fixtures.js";
import { planOf } from "../../src/domain/plan-state.js";

const settings = RunSettings.parse({});

/** The offline rules for planning and synthesis, with the test's own answer to an unknown failure. */
function reasonerWith(propose: (q: RecoveryQuestion) => Promise<RecoveryProposal | null>): Reasoner {
  const rules = new RulesReasoner();
  return {
    kind: "rules",
    plan: (r, c) => rules.plan(r, c),
    synthesize: (i) => rules.synthesize(i),
    proposeRecovery: propose,
  };
}
const travel = travelRegistry();

function select(
  p: Plan,
  all: readonly ExecutionFeedback[],
  registry: ToolRegistry,
  extra: { revisions?: PlanRevision[]; advice?: ProposalVerdict; revisionCount?: number } = {},
): Selection {
  const s = selectStrategy({
    plan: p,
    feedback: all,
    settings,
    revisionCount: extra.revisionCount ?? 0,
    registry,
    ...extra,
  });
  if (!s) throw new Error("expected a selection");
  return s;
}
function chosen(s: Selection): { strategy: StrategyType; reasoning: string; source: string } {
  if (s.kind !== "strategy") throw new Error(`expected a strategy, got an escalation: ${s.request.reason}`);
  return s;
}
/** A revision record as the strategy nodes append them, for the budgets. */
function pastRevision(strategy: StrategyType, failedTaskId: string, n: number): PlanRevision {
  return PlanRevision.parse({
    revisionId: `rev_${n}`,
    planId: "p",
    trigger: "1 failures, 0 violations",
    strategy,
    failedTaskId,
    failureClass: "timeout",
    rationale: "r",
    changes: ["c"],
    confidenceDelta: -0.1,
    confidenceBefore: 0.85,
    confidenceAfter: 0.75,
    at: "2025-01-01T00:00:00.000Z",
  });
}

describe("the loop guard refuses a revision that repeats a call that already failed (issue 3 item 4)", () => {
  // fetch_a refuses limits above 10; fetch_b has the same purpose in the same grant.
  const a = countingTool("fetch_a", {
    category: "fetch",
    produces: ["data"],
    schema: z.strictObject({ q: z.string(), limit: z.number().max(10) }),
  }).spec;
  const b = countingTool("fetch_b", { category: "fetch", produces: ["data"] }).spec;
  const registry = registryOf([a, b], [{ name: "fetcher", description: "", categories: ["fetch"] }]);
  const start = makePlan([
    { id: "data", workerType: "fetcher", tools: ["fetch_a"], params: { q: "x", limit: 50 }, expectedOutputs: ["data"] },
  ]);
  const { plan: p, feedback: fb } = failStep(
    start,
    "data",
    "Invalid parameters for fetch_a: limit: Too big: expected number to be <=10",
    { failureClass: "invalid_parameters" },
  );

  it("without history, RETRY_WITH_PARAMS clamps the limit", () => {
    expect(chosen(select(p, [fb], registry)).strategy).toBe("RETRY_WITH_PARAMS");
  });

  it("when the corrected call already failed (same worker, tool and parameters), it takes the next strategy and says why", () => {
    // An earlier step made exactly the call RETRY_WITH_PARAMS would make, and it timed out.
    const earlier = failure("data_old", "fetch_a timed out", {
      failureClass: "timeout",
      workerType: "fetcher",
      tool: "fetch_a",
      params: { limit: 10, q: "x" },
    });
    const s = chosen(select(p, [earlier, fb], registry));
    expect(s.strategy).toBe("SWAP_TOOL");
    expect(s.reasoning).toContain(
      "Passed over: RETRY_WITH_PARAMS (data_params would repeat the call that failed as data_old (fetcher, fetch_a, same parameters))",
    );
    // The strategy node checks again when it applies the revision: the refused strategy becomes SKIP, not a loop.
    const outcome = recoverOrSkip("RETRY_WITH_PARAMS", {
      plan: p,
      feedback: [earlier, fb],
      revisionCount: 0,
      registry,
      taskId: "data",
    });
    expect(outcome.revision.strategy).toBe("SKIP");
  });

  it("a different call with the same tool is not refused, nor is one that only failed for lack of its dependency", () => {
    const otherParams = failure("data_old", "timed out", {
      failureClass: "timeout",
      workerType: "fetcher",
      tool: "fetch_a",
      params: { q: "y", limit: 10 },
    });
    const neverRan = failure("data_old", "Dependency x failed", {
      feedbackType: "DEPENDENCY_FAILURE",
      failureClass: "dependency_failed",
      workerType: "fetcher",
      tool: "fetch_a",
      params: { q: "x", limit: 10 },
    });
    expect(chosen(select(p, [otherParams, neverRan, fb], registry)).strategy).toBe("RETRY_WITH_PARAMS");
  });
});

describe("strategy budgets per step lineage and per run", () => {
  const { plan: p, feedback: fb } = failStep(travelPlan(), "flight", "Agent timeout after 10s", {
    failureClass: "timeout",
  });

  it("are documented constants; SKIP is never budgeted, so every list still ends somewhere", () => {
    expect(STRATEGY_BUDGETS.RETRY_DIFFERENT_AGENT).toEqual({ perStep: 2, perRun: 5 });
    expect(STRATEGY_BUDGETS.SKIP.perStep).toBe(Number.POSITIVE_INFINITY);
    for (const list of Object.values(STRATEGY_PREFERENCES)) expect(list.at(-1)).toBe("SKIP");
  });

  it("one use on the step leaves budget", () => {
    expect(
      chosen(
        select(p, [fb], travel, { revisions: [pastRevision("RETRY_DIFFERENT_AGENT", "flight", 1)], revisionCount: 1 }),
      ).strategy,
    ).toBe("RETRY_DIFFERENT_AGENT");
  });

  it("two uses on the step's lineage spend the per-step budget: the next strategy is taken, with the reason", () => {
    const lineaged = { ...p, steps: p.steps.map((s) => (s.id === "flight" ? { ...s, lineage: ["flight_0"] } : s)) };
    const revisions = [
      pastRevision("RETRY_DIFFERENT_AGENT", "flight_0", 1),
      pastRevision("RETRY_DIFFERENT_AGENT", "flight", 2),
    ];
    const s = chosen(select(lineaged, [fb], travel, { revisions, revisionCount: 2 }));
    expect(s.strategy).toBe("SKIP");
    expect(s.reasoning).toContain("RETRY_DIFFERENT_AGENT (its budget of 2 per step is spent on flight)");
  });

  it("five uses anywhere in the run spend the per-run budget", () => {
    const revisions = ["hotel", "activities", "budget_status", "itinerary", "other"].map((id, i) =>
      pastRevision("RETRY_DIFFERENT_AGENT", id, i + 1),
    );
    const s = chosen(select(p, [fb], travel, { revisions, revisionCount: 1 }));
    expect(s.strategy).toBe("SKIP");
    expect(s.reasoning).toContain("RETRY_DIFFERENT_AGENT (its budget of 5 per run is spent)");
  });
});

describe("an unknown failure: the reasoner's validated proposal, else the rules (seed 003)", () => {
  const { plan: p, feedback: fb } = failStep(travelPlan(NO_BUDGET_REQUEST), "flight", "flux capacitor misaligned", {
    failureClass: "unknown",
  });
  const ctx = buildFailureContext(p.steps[0]!, [fb]);
  const proposal = (over: Partial<RecoveryProposal> = {}): RecoveryProposal => ({
    strategy: "RETRY_DIFFERENT_AGENT",
    modifications: { params: null, tool: null, workerType: "backup_flight_agent", substeps: null },
    confidence: 0.8,
    rationale: "The primary provider is misbehaving.",
    ...over,
  });
  const verdict = (pr: RecoveryProposal, all: readonly ExecutionFeedback[] = [fb]) =>
    validateProposal(pr, ctx, p, travel, 1, all);

  it("a valid proposal is taken as validated, marked as the model's, with the revision to apply", () => {
    const s = select(p, [fb], travel, { advice: verdict(proposal()) });
    expect(s).toMatchObject({ kind: "strategy", strategy: "RETRY_DIFFERENT_AGENT", source: "model" });
    if (s.kind !== "strategy") throw new Error("unreachable");
    expect(s.outcome?.revision.newStepIds).toEqual(["flight_retry"]);
    expect(s.reasoning).toMatch(
      /^No rule recognises flight's failure \("flux capacitor misaligned"\); the reasoner proposed RETRY_DIFFERENT_AGENT/,
    );
  });

  it("an unsure proposal (confidence below 0.6) falls back to the rules and says so", () => {
    const s = chosen(select(p, [fb], travel, { advice: verdict(proposal({ confidence: 0.4 })) }));
    expect(s.source).toBe("rules");
    expect(s.reasoning).toMatch(
      /the reasoner's proposal was not used \(The model's proposal was refused: its confidence 0.4 is below 0.6/,
    );
    expect(s.reasoning).toContain("falling back to the rules");
  });

  it("a late answer falls back to the rules with the reason", () => {
    const s = chosen(
      select(p, [fb], travel, { advice: { ok: false, reason: "The llm reasoner did not answer within 5 s." } }),
    );
    expect(s).toMatchObject({ source: "rules", strategy: "RETRY_DIFFERENT_AGENT" });
    expect(s.reasoning).toContain("(The llm reasoner did not answer within 5 s.)");
  });

  it("a valid proposal that repeats a failed call is refused by the loop guard too", () => {
    const earlier = failure("flight_old", "backup timed out", {
      failureClass: "timeout",
      workerType: "backup_flight_agent",
      tool: "search_flights_backup",
      params: p.steps[0]!.params,
    });
    const s = chosen(select(p, [earlier, fb], travel, { advice: verdict(proposal(), [earlier, fb]) }));
    expect(s.source).toBe("rules");
    expect(s.strategy).toBe("SKIP");
    expect(s.reasoning).toContain(
      "not used (The model's proposal was refused: RETRY_DIFFERENT_AGENT: flight_retry would repeat the call that failed as flight_old",
    );
  });
});

describe("askReasonerForRecovery: a real 5 s limit", () => {
  afterEach(() => vi.useRealTimers());
  const { plan: p, feedback: fb } = failStep(travelPlan(), "flight", "flux capacitor misaligned", {
    failureClass: "unknown",
  });
  const ctx = buildFailureContext(p.steps[0]!, [fb]);
  const ask = (reasoner: Reasoner, signal?: AbortSignal) =>
    askReasonerForRecovery({
      reasoner,
      failure: ctx,
      plan: p,
      registry: travel,
      feedback: [fb],
      revisionNumber: 1,
      ...(signal ? { signal } : {}),
    });

  /** A reasoner that never answers and ignores its signal: only the caller's timer can end the wait. */
  function silentReasoner() {
    const seen: { signal?: AbortSignal } = {};
    const reasoner = reasonerWith((q) => {
      if (q.signal) seen.signal = q.signal;
      return new Promise(() => undefined);
    });
    return {
      reasoner,
      get signal() {
        return seen.signal;
      },
    };
  }

  it("stops waiting at 5 s, aborts the question's signal, and says it was late", async () => {
    vi.useFakeTimers();
    const silent = silentReasoner();
    let settled = false;
    const pending = ask(silent.reasoner).then((v) => ((settled = true), v));
    await vi.advanceTimersByTimeAsync(RECOVERY_TIMEOUT_MS - 1);
    expect(settled).toBe(false);
    expect(silent.signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await pending).toEqual({ ok: false, reason: "The rules reasoner did not answer within 5 s." });
    expect(silent.signal?.aborted).toBe(true);
    expect(CandorError.isInstance(silent.signal?.reason) && silent.signal.reason.code).toBe("TIMEOUT");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a reasoner that rejects when its signal aborts still counts as late", async () => {
    vi.useFakeTimers();
    const honouring = reasonerWith(
      (q) =>
        new Promise((_, reject) => {
          const signal = q.signal;
          signal?.addEventListener("abort", () => reject(abortReason(signal)));
        }),
    );
    const pending = ask(honouring);
    await vi.advanceTimersByTimeAsync(RECOVERY_TIMEOUT_MS);
    expect(await pending).toMatchObject({ ok: false, reason: expect.stringMatching(/did not answer within 5 s/) });
  });

  it("clears its timer when the answer comes in time, and validates it", async () => {
    vi.useFakeTimers();
    const quick = reasonerWith(async () => ({
      strategy: "SWAP_TOOL",
      modifications: { params: null, tool: "no_such_tool", workerType: null, substeps: null },
      confidence: 0.9,
      rationale: "x",
    }));
    const v = await ask(quick);
    expect(v).toMatchObject({
      ok: false,
      reason: expect.stringContaining('SWAP_TOOL names tool "no_such_tool", which is not registered'),
    });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("the rules reasoner has no proposal; a reasoner that throws is a reason, not a crash; a cancelled run propagates", async () => {
    expect(await ask(new RulesReasoner())).toEqual({
      ok: false,
      reason: "The rules reasoner has no proposal for this failure.",
    });
    const broken = reasonerWith(() => Promise.reject(new Error("model exploded")));
    expect(await ask(broken)).toEqual({ ok: false, reason: "Asking the rules reasoner failed: model exploded." });
    const run = new AbortController();
    run.abort(new Error("cancelled by the user"));
    const cancelled = reasonerWith((q) =>
      q.signal?.aborted ? Promise.reject(abortReason(q.signal)) : Promise.resolve(null),
    );
    await expect(ask(cancelled, run.signal)).rejects.toThrow("cancelled by the user");
  });
});

describe("select_strategy node: an unknown failure in a real graph run", () => {
  const tmp = tempDir();
  const closers: (() => void)[] = [];
  afterAll(() => {
    for (const close of closers) close();
    tmp.cleanup();
  });

  /** The travel tools, except that the first activities step fails with a message no rule recognises. */
  function oddActivities(): Toolkit {
    const kit = travelToolkit({ latencyMs: 0 });
    return {
      ...kit,
      tools: kit.tools.map((t) =>
        t.name === "search_activities"
          ? {
              ...t,
              run: (args: unknown, ctx: Parameters<typeof t.run>[1]) =>
                ctx.stepId === "activities" ? Promise.reject(new Error("flux capacitor misaligned")) : t.run(args, ctx),
            }
          : t,
      ),
    };
  }

  /** Rules for everything else; for an unknown failure, a fixed proposal (and the questions it was asked). */
  function proposing(answer: RecoveryProposal) {
    const questions: RecoveryQuestion[] = [];
    return { questions, ...reasonerWith(async (q) => (questions.push(q), answer)) };
  }

  async function run(answer: RecoveryProposal, thread: string) {
    const persistence = openPersistence(tmp.dbPath);
    closers.push(() => persistence.close());
    const reasoner = proposing(answer);
    const decisionLog = memoryDecisionLog();
    const graph = compileAgent({ toolkits: [oddActivities()], reasoner, decisionLog }, persistence);
    const out = await graph.invoke(tripInput(NO_BUDGET_REQUEST), threadConfig(thread));
    return { out, reasoner, decisionLog };
  }
  const toGeneral: RecoveryProposal = {
    strategy: "RETRY_DIFFERENT_AGENT",
    modifications: { params: null, tool: null, workerType: "general", substeps: null },
    confidence: 0.75,
    rationale: "The activities agent is misbehaving; the general worker can run the same search.",
  };

  it("a valid proposal is applied once, announced as the reasoner's, and the run recovers", async () => {
    const { out, reasoner, decisionLog } = await run(toGeneral, "unknown-valid");
    expect(reasoner.questions).toHaveLength(1);
    expect(reasoner.questions[0]!.signal).toBeInstanceOf(AbortSignal);
    expect(reasoner.questions[0]!.failure.step.id).toBe("activities");
    expect(out.revisions.map((r) => `${r.strategy}:${r.failedTaskId}`)).toEqual(["RETRY_DIFFERENT_AGENT:activities"]);
    expect(out.revisions[0]!.rationale).toMatch(/^Suggested by the model/);
    expect(planOf(out)!.steps.find((s) => s.id === "activities_retry")).toMatchObject({
      workerType: "general",
      status: "done",
    });
    expect(out.status).toBe("completed");
    const strategy = out.notifications.find(
      (n) => n.kind === "strategy" && n.title.includes("proposed by the reasoner"),
    );
    expect(strategy?.message).toMatch(
      /the reasoner proposed RETRY_DIFFERENT_AGENT, and its proposal passed validation/,
    );
    expect(decisionLog.entries.filter((d) => d.operation === "revision")).toHaveLength(1);
  });

  it("an unsure proposal is not used: the rules' choice (SKIP) is taken, and the notification and log say why", async () => {
    const { out, decisionLog } = await run({ ...toGeneral, confidence: 0.3 }, "unknown-unsure");
    expect(out.revisions.map((r) => `${r.strategy}:${r.failedTaskId}`)).toEqual(["SKIP:activities"]);
    const strategy = out.notifications.find((n) => n.kind === "strategy" && n.taskId === "activities");
    expect(strategy?.message).toMatch(
      /reasoner's proposal was not used \(The model's proposal was refused: its confidence 0.3 is below 0.6/,
    );
    const logged = decisionLog.entries.find((d) => d.operation === "strategy" && d.taskId === "activities");
    expect(logged).toMatchObject({ decision: "SKIP", reasoning: expect.stringContaining("falling back to the rules") });
  });
});
