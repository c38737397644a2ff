import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { Plan, TaskStep } from "../../src/domain/plan.js";
import { assertLogicalOrder, findCycle } from "../../src/planning/validate.js";
import { MIN_PROPOSAL_CONFIDENCE, validateProposal, type ProposalVerdict } from "../../src/replanning/proposal.js";
import { toRecoveryProposal } from "../../src/reasoning/recovery-answer.js";
import type { RecoveryProposal } from "../../src/reasoning/types.js";
import { ALL_CATEGORIES } from "../../src/tools/registry.js";
import type { ToolSpec } from "../../src/tools/types.js";
import { failStep, plan as makePlan, registryOf, strategyInput } from "../fakes/toolkit-fixtures.js";

// A small toolkit whose schemas reject things, so "params valid for the tool" means something.
const TopicArgs = z.object({ topic: z.string(), limit: z.number().int().positive().nullable().default(null) });
const RangeArgs = z.object({
  topic: z.string(),
  from: z.number().int().min(1).max(12),
  to: z.number().int().min(1).max(12),
});

function tool(
  name: string,
  category: string,
  produces: string[],
  schema: z.ZodType,
  consumes: string[] = [],
): ToolSpec {
  return {
    name,
    description: `${name} tool`,
    category,
    keywords: [],
    consumes,
    produces,
    sideEffect: "none",
    needsApproval: false,
    schema,
    estimates: { durationMs: 100, cost: 0 },
    run: async () => ({ ok: true }),
  };
}

const registry = registryOf(
  [
    tool("fetch_data", "data", ["data"], TopicArgs),
    tool("fetch_mirror", "data", ["data"], TopicArgs),
    tool("fetch_range", "data", ["partial"], RangeArgs),
    tool("merge_data", "merge", ["data"], z.object({}), ["partial"]),
    tool("fetch_vault", "vault", ["data"], TopicArgs),
    tool("analyze_data", "analysis", ["analysis"], z.object({}), ["data"]),
    tool("write_notes", "notes", ["notes"], z.object({})),
  ],
  [
    { name: "reader", description: "Reads data.", categories: ["data"] },
    { name: "merger", description: "Merges data.", categories: ["merge"] },
    { name: "vault_reader", description: "Reads the vault.", categories: ["vault"] },
    { name: "analyzer", description: "Analyses.", categories: ["analysis"] },
    { name: "scribe", description: "Takes notes.", categories: ["notes"] },
    { name: "general", description: "Everything.", categories: [ALL_CATEGORIES], fallback: true },
  ],
);

/** fetch → analyze, plus an independent notes step that already succeeded; fetch failed for a reason no rule knows. */
function scenario() {
  const base = makePlan([
    {
      id: "notes",
      workerType: "scribe",
      tools: ["write_notes"],
      expectedOutputs: ["notes"],
      status: "done",
      dispatches: 1,
      result: "kept",
    },
    {
      id: "fetch",
      description: "Fetch the sales data",
      workerType: "reader",
      tools: ["fetch_data"],
      params: { topic: "sales" },
      expectedOutputs: ["data"],
    },
    {
      id: "analyze",
      workerType: "analyzer",
      tools: ["analyze_data"],
      dependsOn: ["fetch"],
      expectedOutputs: ["analysis"],
    },
  ]);
  const { plan, feedback } = failStep(base, "fetch", "quota shard 7 misrouted (E_SHARD)");
  const input = strategyInput(plan, "fetch", [feedback], registry, 2);
  return { plan, feedback, failure: input.failure };
}

function proposal(
  strategy: string,
  mods: Partial<RecoveryProposal["modifications"]> = {},
  confidence = 0.8,
): RecoveryProposal {
  return {
    strategy: strategy as RecoveryProposal["strategy"],
    modifications: { params: null, tool: null, workerType: null, substeps: null, ...mods },
    confidence,
    rationale: "The shard was misrouted",
  };
}

function judge(p: RecoveryProposal, s = scenario()): ProposalVerdict {
  return validateProposal(p, s.failure, s.plan, registry, 2, [s.feedback]);
}

function accepted(v: ProposalVerdict) {
  if (!v.ok) throw new Error(`expected the proposal to be accepted, but: ${v.reason}`);
  return v.outcome;
}

function refused(v: ProposalVerdict): string {
  if (v.ok)
    throw new Error(`expected the proposal to be refused, but it made ${v.outcome.revision.changes.join("; ")}`);
  return v.reason;
}

const stepOf = (p: Plan, id: string): TaskStep => {
  const found = p.steps.find((s) => s.id === id);
  if (!found) throw new Error(`plan has no step ${id}; it has ${p.steps.map((s) => s.id).join(", ")}`);
  return found;
};

describe("validateProposal: what is refused before any strategy is considered", () => {
  it("refuses a strategy type Candor does not know", () => {
    expect(refused(judge(proposal("REBOOT_SERVER")))).toMatch(/"REBOOT_SERVER" is not a strategy Candor knows/);
  });

  it("refuses a confidence below 0.6 and accepts exactly 0.6", () => {
    expect(MIN_PROPOSAL_CONFIDENCE).toBe(0.6);
    expect(refused(judge(proposal("SKIP", {}, 0.59)))).toMatch(/confidence 0.59 is below 0.6/);
    expect(refused(judge(proposal("SKIP", {}, Number.NaN)))).toMatch(/below 0.6/);
    expect(judge(proposal("SKIP", {}, 0.6)).ok).toBe(true);
  });

  it.each(["ADJUST_PARAMETERS", "FIX_DEPENDENCIES", "FIND_WORKAROUND"])(
    "does not accept %s from a model",
    (strategy) => {
      expect(refused(judge(proposal(strategy, { params: { topic: "x" } }, 0.95)))).toMatch(
        new RegExp(`${strategy} is not accepted from a model`),
      );
    },
  );
});

describe("RETRY_WITH_PARAMS", () => {
  it("fits: same tool, same worker, new params valid for its schema, as <id>_params with dependents rewired", () => {
    const s = scenario();
    const { plan, revision } = accepted(
      judge(proposal("RETRY_WITH_PARAMS", { params: { topic: "sales", limit: 100 } }), s),
    );
    const step = stepOf(plan, "fetch_params");
    expect(step).toMatchObject({
      workerType: "reader",
      tools: ["fetch_data"],
      params: { topic: "sales", limit: 100 },
      status: "pending",
      replaces: "fetch",
      lineage: ["fetch"],
    });
    expect(plan.steps.some((x) => x.id === "fetch")).toBe(false);
    expect(stepOf(plan, "analyze").dependsOn).toEqual(["fetch_params"]);
    expect(stepOf(plan, "notes")).toMatchObject({ status: "done", result: "kept", dispatches: 1 });
    expect(revision).toMatchObject({
      revisionId: "rev_2",
      strategy: "RETRY_WITH_PARAMS",
      failedTaskId: "fetch",
      newStepIds: ["fetch_params"],
      removedStepIds: ["fetch"],
      confidenceDelta: -0.05,
    });
    expect(revision.rationale).toMatch(/^Suggested by the model: The shard was misrouted\./);
    expect(plan.confidence).toBe(0.8);
  });

  it("is refused without params, with params the tool's schema rejects, or with the params that already failed", () => {
    expect(refused(judge(proposal("RETRY_WITH_PARAMS")))).toMatch(/needs new parameters for fetch_data/);
    expect(refused(judge(proposal("RETRY_WITH_PARAMS", { params: { topic: "sales", limit: -3 } })))).toMatch(
      /not valid for fetch_data \(limit:/,
    );
    expect(refused(judge(proposal("RETRY_WITH_PARAMS", { params: { subject: "sales" } })))).toMatch(
      /not valid for fetch_data \(topic:/,
    );
    expect(refused(judge(proposal("RETRY_WITH_PARAMS", { params: { topic: "sales" } })))).toMatch(/already failed/);
  });
});

describe("SWAP_TOOL", () => {
  it("fits: a registered tool producing the outputs, granted to the step's worker, keeping params that fit it", () => {
    const { plan, revision } = accepted(judge(proposal("SWAP_TOOL", { tool: "fetch_mirror" })));
    expect(stepOf(plan, "fetch_swap")).toMatchObject({
      workerType: "reader",
      tools: ["fetch_mirror"],
      params: { topic: "sales" },
      expectedOutputs: ["data"],
    });
    expect(stepOf(plan, "analyze").dependsOn).toEqual(["fetch_swap"]);
    expect(revision).toMatchObject({ strategy: "SWAP_TOOL", confidenceDelta: -0.08 });
    expect(revision.changes[0]).toMatch(/Swap fetch_data for fetch_mirror on task fetch/);
  });

  it("moves the step to a worker that may use the tool when its own worker may not", () => {
    const { plan } = accepted(
      judge(proposal("SWAP_TOOL", { tool: "fetch_vault", params: { topic: "sales", limit: 5 } })),
    );
    expect(stepOf(plan, "fetch_swap")).toMatchObject({
      workerType: "vault_reader",
      tools: ["fetch_vault"],
      params: { topic: "sales", limit: 5 },
    });
  });

  it("is refused for no tool, an unknown tool, the failed tool, a tool with other outputs, or params it rejects", () => {
    expect(refused(judge(proposal("SWAP_TOOL")))).toMatch(/needs a tool/);
    expect(refused(judge(proposal("SWAP_TOOL", { tool: "fetch_ftp" })))).toMatch(
      /"fetch_ftp", which is not registered/,
    );
    expect(refused(judge(proposal("SWAP_TOOL", { tool: "fetch_data" })))).toMatch(/already failed this step/);
    expect(refused(judge(proposal("SWAP_TOOL", { tool: "analyze_data" })))).toMatch(/does not produce data/);
    expect(refused(judge(proposal("SWAP_TOOL", { tool: "fetch_mirror", params: { limit: 0 } })))).toMatch(
      /not valid for fetch_mirror/,
    );
  });
});

describe("RETRY_DIFFERENT_AGENT", () => {
  it("fits: another registered worker whose grant produces the outputs, as <id>_retry", () => {
    const { plan, revision } = accepted(
      judge(proposal("RETRY_DIFFERENT_AGENT", { workerType: "general", tool: "fetch_data" })),
    );
    const retry = stepOf(plan, "fetch_retry");
    expect(retry).toMatchObject({
      workerType: "general",
      tools: ["fetch_data"],
      params: { topic: "sales" },
      expectedOutputs: ["data"],
      retry: { maxAttempts: 2, backoffMs: [500] },
    });
    expect(retry.failedWorkers).toContain("reader");
    expect(stepOf(plan, "analyze").dependsOn).toEqual(["fetch_retry"]);
    expect(revision).toMatchObject({ strategy: "RETRY_DIFFERENT_AGENT", confidenceDelta: -0.1 });
  });

  it("prefers a tool that has not failed when the model names none", () => {
    const { plan } = accepted(judge(proposal("RETRY_DIFFERENT_AGENT", { workerType: "vault_reader" })));
    expect(stepOf(plan, "fetch_retry")).toMatchObject({ workerType: "vault_reader", tools: ["fetch_vault"] });
  });

  it("is refused for no worker, an unknown worker, the worker that failed, or a worker that cannot produce the outputs", () => {
    expect(refused(judge(proposal("RETRY_DIFFERENT_AGENT")))).toMatch(/needs a worker type/);
    expect(refused(judge(proposal("RETRY_DIFFERENT_AGENT", { workerType: "ghost" })))).toMatch(
      /"ghost", which is not registered/,
    );
    expect(refused(judge(proposal("RETRY_DIFFERENT_AGENT", { workerType: "reader" })))).toMatch(
      /reader, which already failed this step/,
    );
    expect(refused(judge(proposal("RETRY_DIFFERENT_AGENT", { workerType: "analyzer" })))).toMatch(
      /whose tools do not produce data/,
    );
  });
});

describe("DECOMPOSE", () => {
  const halves = [
    { description: "Fetch January to June", tool: "fetch_range", params: { topic: "sales", from: 1, to: 6 } },
    { description: "Fetch July to December", tool: "fetch_range", params: { topic: "sales", from: 7, to: 12 } },
    { description: "Merge both halves", tool: "merge_data", params: {} },
  ];

  it("builds chained substeps whose last produces the outputs, and rewires the dependents to it", () => {
    const s = scenario();
    const { plan, revision } = accepted(judge(proposal("DECOMPOSE", { substeps: halves }), s));
    expect(plan.steps.map((x) => x.id)).toEqual(["notes", "fetch_part1", "fetch_part2", "fetch_part3", "analyze"]);
    const [p1, p2, p3] = ["fetch_part1", "fetch_part2", "fetch_part3"].map((id) => stepOf(plan, id));
    expect(p1).toMatchObject({
      dependsOn: [],
      workerType: "reader",
      tools: ["fetch_range"],
      params: { topic: "sales", from: 1, to: 6 },
      expectedOutputs: ["partial"],
      description: "Fetch January to June",
    });
    expect(p2).toMatchObject({ dependsOn: ["fetch_part1"], expectedOutputs: ["partial"] });
    expect(p3).toMatchObject({
      dependsOn: ["fetch_part2"],
      workerType: "merger",
      tools: ["merge_data"],
      expectedOutputs: ["data"],
      replaces: "fetch",
    });
    expect(stepOf(plan, "analyze").dependsOn).toEqual(["fetch_part3"]);
    expect(findCycle(plan.steps)).toBeNull();
    expect(() => assertLogicalOrder(plan.steps)).not.toThrow();
    expect(revision).toMatchObject({
      strategy: "DECOMPOSE",
      newStepIds: ["fetch_part1", "fetch_part2", "fetch_part3"],
      removedStepIds: ["fetch"],
      confidenceDelta: -0.05,
    });
    expect(revision.rationale).toMatch(/^Suggested by the model: /);
    // Pure: the plan it was given is untouched.
    expect(s.plan.steps.map((x) => x.id)).toEqual(["notes", "fetch", "analyze"]);
  });

  it("keeps the original's dependencies on every part, so each part receives its inputs", () => {
    const base = makePlan([
      {
        id: "seed",
        workerType: "reader",
        tools: ["fetch_data"],
        params: { topic: "x" },
        expectedOutputs: ["data"],
        status: "done",
        dispatches: 1,
      },
      {
        id: "analyze",
        workerType: "analyzer",
        tools: ["analyze_data"],
        // Not the part's parameters: a part that repeated the failed call exactly would be refused by the guard.
        params: { pass: 1 },
        dependsOn: ["seed"],
        expectedOutputs: ["analysis"],
      },
    ]);
    const { plan: failedPlan, feedback } = failStep(base, "analyze", "analysis engine returned E_GLITCH");
    const ctx = strategyInput(failedPlan, "analyze", [feedback], registry).failure;
    const subs = [
      { description: "Re-fetch a mirror copy", tool: "fetch_mirror", params: { topic: "x" } },
      { description: "Analyse it", tool: "analyze_data", params: {} },
    ];
    const { plan } = accepted(
      validateProposal(proposal("DECOMPOSE", { substeps: subs }), ctx, failedPlan, registry, 1, [feedback]),
    );
    expect(stepOf(plan, "analyze_part1").dependsOn).toEqual(["seed"]);
    expect(stepOf(plan, "analyze_part2").dependsOn).toEqual(["seed", "analyze_part1"]);
  });

  it("is refused for fewer than 2 or more than 4 substeps, unknown tools, a last step with other outputs, or invalid params", () => {
    const one = halves.slice(2);
    const five = [...halves, ...halves.slice(0, 2)];
    expect(refused(judge(proposal("DECOMPOSE")))).toMatch(/needs 2 to 4 substeps, and none were given/);
    expect(refused(judge(proposal("DECOMPOSE", { substeps: one })))).toMatch(/and 1 was given/);
    expect(refused(judge(proposal("DECOMPOSE", { substeps: five })))).toMatch(/and 5 were given/);
    expect(
      refused(judge(proposal("DECOMPOSE", { substeps: [halves[0]!, { ...halves[2]!, tool: "merge_magic" }] }))),
    ).toMatch(/substep 2 names tool "merge_magic", which is not registered/);
    expect(refused(judge(proposal("DECOMPOSE", { substeps: halves.slice(0, 2) })))).toMatch(
      /last substep uses fetch_range, which does not produce data/,
    );
    expect(
      refused(
        judge(
          proposal("DECOMPOSE", {
            substeps: [{ ...halves[0]!, params: { topic: "sales", from: 0, to: 13 } }, halves[2]!],
          }),
        ),
      ),
    ).toMatch(/substep 1: parameters .* are not valid for fetch_range/);
  });
});

describe("SKIP", () => {
  it("always fits: the step is skipped, its outputs will be missing, and the model's reason is kept", () => {
    const { plan, revision } = accepted(judge(proposal("SKIP", { tool: "anything", workerType: "ghost" }, 0.9)));
    expect(stepOf(plan, "fetch")).toMatchObject({ status: "skipped" });
    expect(stepOf(plan, "notes").status).toBe("done");
    expect(revision).toMatchObject({ strategy: "SKIP", modifiedStepIds: ["fetch"], confidenceDelta: -0.05 });
    expect(revision.rationale).toMatch(/^Suggested by the model: The shard was misrouted\. \(confidence 0\.9\)/);
  });
});

describe("toRecoveryProposal (the model's answer → RecoveryProposal)", () => {
  it("decodes paramsJson and substep params", () => {
    const out = toRecoveryProposal({
      strategy: "DECOMPOSE",
      rationale: "r",
      confidence: 0.7,
      modifications: {
        paramsJson: null,
        tool: null,
        workerType: null,
        substeps: [
          { description: "a", tool: "fetch_range", paramsJson: '{"from": 1}' },
          { description: "b", tool: "merge_data", paramsJson: null },
        ],
      },
    });
    expect(out).toEqual({
      proposal: {
        strategy: "DECOMPOSE",
        rationale: "r",
        confidence: 0.7,
        modifications: {
          params: null,
          tool: null,
          workerType: null,
          substeps: [
            { description: "a", tool: "fetch_range", params: { from: 1 } },
            { description: "b", tool: "merge_data", params: {} },
          ],
        },
      },
    });
  });

  it("tolerates seed 003's names, lower case, params as an object, a missing modifications field and a percentage", () => {
    const out = toRecoveryProposal({ strategy_type: "decompose_task", rationale: "r", confidence: 70 });
    expect(out).toMatchObject({
      proposal: { strategy: "DECOMPOSE", confidence: 0.7, modifications: { params: null, substeps: null } },
    });
    const withParams = toRecoveryProposal({
      strategy: "RETRY_WITH_PARAMS",
      rationale: "r",
      confidence: 0.8,
      modifications: { params: { topic: "x" } },
    });
    expect(withParams).toMatchObject({ proposal: { modifications: { params: { topic: "x" } } } });
  });

  it("says why an answer is unusable", () => {
    expect(toRecoveryProposal({ strategy: "PRAY", rationale: "r", confidence: 0.8 })).toMatchObject({
      why: expect.stringMatching(/recovery schema: strategy/),
    });
    expect(toRecoveryProposal({ strategy: "SKIP", rationale: "r", confidence: -2 })).toMatchObject({
      why: expect.stringMatching(/outside 0\.\.1/),
    });
    expect(
      toRecoveryProposal({
        strategy: "SKIP",
        rationale: "r",
        confidence: 0.8,
        modifications: { paramsJson: "[1, 2]" },
      }),
    ).toMatchObject({ why: expect.stringMatching(/not a JSON object/) });
    expect(toRecoveryProposal("just text")).toMatchObject({ why: expect.stringMatching(/recovery schema/) });
  });
});
