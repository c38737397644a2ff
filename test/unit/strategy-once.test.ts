import { afterAll, afterEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent } from "../../graphs/agent.js";
import { RunSettings } from "../../src/domain/request.js";
import { StrategyType } from "../../src/domain/revision.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import type { Reasoner, RecoveryProposal } from "../../src/reasoning/types.js";
import { buildFailureContext } from "../../src/replanning/context.js";
import { validateProposal } from "../../src/replanning/proposal.js";
import { selectStrategy } from "../../src/replanning/select.js";
import { STRATEGIES, type Strategy } from "../../src/replanning/strategies/index.js";
import type { Toolkit } from "../../src/tools/types.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { tempDir, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { pipelineRegistry } from "../fakes/toolkit.js";
import {
  NO_BUDGET_REQUEST,
  failStep,
  failure as failedFeedback,
  plan as makePlan,
  travelPlan,
  travelRegistry,
} from "../fakes/toolkit-fixtures.js";
import { planOf } from "../../src/domain/plan-state.js";

// Issue 11 item 8: each strategy has one implementation, a model's proposal is a hint it takes, and a selection
// builds each candidate once: select_strategy tests it, the strategy node applies that same revision.

/** A spy on every strategy, counting the calls; restored after each test. */
function spyOnStrategies(): Record<StrategyType, MockInstance<Strategy>> {
  const spies = {} as Record<StrategyType, MockInstance<Strategy>>;
  for (const s of StrategyType.options) spies[s] = vi.spyOn(STRATEGIES, s);
  return spies;
}

function callCounts(spies: ReturnType<typeof spyOnStrategies>): Partial<Record<StrategyType, number>> {
  return Object.fromEntries(
    Object.entries(spies)
      .filter(([, spy]) => spy.mock.calls.length > 0)
      .map(([name, spy]) => [name, spy.mock.calls.length]),
  );
}

afterEach(() => vi.restoreAllMocks());

describe("selectStrategy builds each candidate once and returns the revision it built", () => {
  it("a timeout tries RETRY_DIFFERENT_AGENT once, and the selection carries that very revision", () => {
    const spies = spyOnStrategies();
    const { plan, feedback } = failStep(travelPlan(), "flight", "Agent timeout after 10s", { failureClass: "timeout" });
    const s = selectStrategy({
      plan,
      feedback: [feedback],
      settings: RunSettings.parse({}),
      revisionCount: 0,
      registry: travelRegistry(),
    });
    expect(s).toMatchObject({ kind: "strategy", strategy: "RETRY_DIFFERENT_AGENT" });
    expect(callCounts(spies)).toEqual({ RETRY_DIFFERENT_AGENT: 1 });
    const built = spies.RETRY_DIFFERENT_AGENT.mock.results[0]!.value;
    expect(s?.kind === "strategy" && s.outcome).toBe(built);
  });
});

describe("a model's proposal is a hint the strategy's one implementation takes", () => {
  /** fetch failed for a reason no rule knows; analyze waits for it. */
  function fetchFailed() {
    const plan = makePlan([
      {
        id: "fetch",
        workerType: "reader",
        tools: ["fetch_data"],
        params: { topic: "sales" },
        expectedOutputs: ["data"],
        status: "failed",
      },
      {
        id: "analyze",
        workerType: "analyzer",
        tools: ["analyze_data"],
        dependsOn: ["fetch"],
        expectedOutputs: ["analysis"],
      },
    ]);
    const feedback = [
      failedFeedback("fetch", "E_QUIRK 0x1f", { tool: "fetch_data", workerType: "reader", params: { topic: "sales" } }),
    ];
    return { plan, feedback, failure: buildFailureContext(plan.steps[0]!, feedback) };
  }

  it("RETRY_WITH_PARAMS receives the model's parameters as its hint and builds the step from them", () => {
    const spies = spyOnStrategies();
    const { plan, feedback, failure } = fetchFailed();
    const proposal: RecoveryProposal = {
      strategy: "RETRY_WITH_PARAMS",
      modifications: { params: { topic: "sales 2024" }, tool: null, workerType: null, substeps: null },
      confidence: 0.8,
      rationale: "The index for sales is stale.",
    };
    const verdict = validateProposal(proposal, failure, plan, pipelineRegistry(), 1, feedback);
    expect(callCounts(spies)).toEqual({ RETRY_WITH_PARAMS: 1 });
    const input = spies.RETRY_WITH_PARAMS.mock.calls[0]![0];
    expect(input.hint).toMatchObject({ params: { topic: "sales 2024" }, tool: null, workerType: null });
    expect(input.hint?.rationale).toMatch(/^Suggested by the model: The index for sales is stale\./);
    expect(verdict.ok && verdict.outcome.plan.steps.find((s) => s.id === "fetch_params")?.params).toEqual({
      topic: "sales 2024",
    });
  });

  it("a hint that does not fit is refused by the strategy itself, with its reason", () => {
    const { failure } = fetchFailed();
    const { plan, feedback } = fetchFailed();
    const hint = {
      by: "model" as const,
      params: null,
      tool: "fetch_ftp",
      workerType: null,
      substeps: null,
      rationale: "r",
    };
    const out = STRATEGIES.SWAP_TOOL({
      plan,
      failure,
      feedback,
      registry: pipelineRegistry(),
      revisionNumber: 1,
      hint,
    });
    expect(out).toEqual({ applies: false, reason: 'SWAP_TOOL names tool "fetch_ftp", which is not registered' });
  });
});

describe("in a graph run, each strategy runs once per selection and the strategy node does not build it again", () => {
  const tmp = tempDir();
  const closers: (() => void)[] = [];
  afterAll(() => {
    for (const close of closers) close();
    tmp.cleanup();
  });

  /** The travel tools, except that the first activities step fails with `error`. */
  function failingActivities(error: string): Toolkit {
    const kit = travelToolkit({ latencyMs: 0 });
    return {
      ...kit,
      tools: kit.tools.map((t) =>
        t.name === "search_activities"
          ? {
              ...t,
              run: (args: unknown, ctx: Parameters<typeof t.run>[1]) =>
                ctx.stepId === "activities" ? Promise.reject(new Error(error)) : t.run(args, ctx),
            }
          : t,
      ),
    };
  }

  function reasoner(proposal: RecoveryProposal | null): Reasoner & { asked: number } {
    const rules = new RulesReasoner();
    const r = {
      kind: "rules" as const,
      asked: 0,
      plan: (req: Parameters<Reasoner["plan"]>[0], c: Parameters<Reasoner["plan"]>[1]) => rules.plan(req, c),
      synthesize: (i: Parameters<Reasoner["synthesize"]>[0]) => rules.synthesize(i),
      proposeRecovery: () => {
        r.asked++;
        return Promise.resolve(proposal);
      },
    };
    return r;
  }

  async function run(error: string, r: Reasoner, thread: string) {
    const persistence = openPersistence(tmp.dbPath);
    closers.push(() => persistence.close());
    const graph = compileAgent(
      { toolkits: [failingActivities(error)], reasoner: r, decisionLog: memoryDecisionLog() },
      persistence,
    );
    return graph.invoke(tripInput(NO_BUDGET_REQUEST), threadConfig(thread));
  }

  it("a timeout recovered by the rules: each candidate runs once, the one chosen (DECOMPOSE) is the revision applied", async () => {
    const spies = spyOnStrategies();
    const out = await run("search timed out after 10s", reasoner(null), "once-rules");
    expect(out.revisions.map((r) => `${r.strategy}:${r.failedTaskId}`)).toEqual(["DECOMPOSE:activities"]);
    // RETRY_DIFFERENT_AGENT and SWAP_TOOL find nothing for activities in the travel tools; DECOMPOSE applies.
    expect(callCounts(spies)).toEqual({ RETRY_DIFFERENT_AGENT: 1, SWAP_TOOL: 1, DECOMPOSE: 1 });
    const built = spies.DECOMPOSE.mock.results[0]!.value as { revision: { at: string; newStepIds: string[] } };
    expect(out.revisions[0]).toMatchObject({ at: built.revision.at, newStepIds: built.revision.newStepIds });
    expect(out.status).toBe("completed");
  });

  it("an unknown failure with a model's proposal: the reasoner is asked once, the proposed strategy runs once with the hint, no rules candidate runs", async () => {
    const spies = spyOnStrategies();
    const r = reasoner({
      strategy: "RETRY_DIFFERENT_AGENT",
      modifications: { params: null, tool: null, workerType: "general", substeps: null },
      confidence: 0.75,
      rationale: "The activities agent is misbehaving; the general worker can run the same search.",
    });
    const out = await run("flux capacitor misaligned", r, "once-model");
    expect(r.asked).toBe(1);
    expect(callCounts(spies)).toEqual({ RETRY_DIFFERENT_AGENT: 1 });
    expect(spies.RETRY_DIFFERENT_AGENT.mock.calls[0]![0].hint?.workerType).toBe("general");
    expect(planOf(out)!.steps.find((s) => s.id === "activities_retry")).toMatchObject({
      workerType: "general",
      status: "done",
    });
    expect(out.status).toBe("completed");
  });

  it("an unknown failure whose proposal is refused: the rules' candidates each run once, in one selection", async () => {
    const spies = spyOnStrategies();
    const r = reasoner({
      strategy: "RETRY_DIFFERENT_AGENT",
      modifications: { params: null, tool: null, workerType: "general", substeps: null },
      confidence: 0.3,
      rationale: "Not sure.",
    });
    const out = await run("flux capacitor misaligned", r, "once-refused");
    expect(r.asked).toBe(1);
    expect(out.revisions.map((x) => `${x.strategy}:${x.failedTaskId}`)).toEqual(["SKIP:activities"]);
    // FIX_DEPENDENCIES and RETRY_DIFFERENT_AGENT were tried (neither applies here) once each; SKIP is built directly.
    const counts = callCounts(spies);
    expect(Object.values(counts).every((n) => n === 1)).toBe(true);
    expect(counts.FIX_DEPENDENCIES).toBe(1);
  });
});
