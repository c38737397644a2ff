import { z } from "zod";
import type { FailureClass } from "../src/domain/feedback.js";
import { Plan, TaskStep } from "../src/domain/plan.js";
import { PlanningRequest } from "../src/domain/request.js";
import { planWithRules } from "../src/planning/rules-planner.js";
import { generalToolkit } from "../src/tools/general.js";
import { parseFaultSpecs, withFaults } from "../src/tools/faults.js";
import { ToolRegistry } from "../src/tools/registry.js";
import type { ToolSpec, Toolkit } from "../src/tools/types.js";
import { DEMO_FAULTS, DEMO_REQUEST, travelToolkit } from "../examples/travel/index.js";

/**
 * Failure scenarios for the replanning benchmarks: one per failure class the rules know. Each builds fresh
 * toolkits per run (fault counters live in the tools) and the plan the run executes. Every step gets one attempt
 * (no retry waits) and the hanging flight search a 50 ms limit, so a run takes milliseconds, not seconds.
 */
export interface Scenario {
  cls: FailureClass;
  /** What fails, in words, for RESULTS.md. */
  what: string;
  request: string;
  toolkits: () => Toolkit[];
  plan: (registry: ToolRegistry) => Plan;
}

/** The registry the graph builds from the same toolkits (it adds the general fallback worker). */
export function registryFor(toolkits: readonly Toolkit[]): ToolRegistry {
  return ToolRegistry.create([...toolkits, generalToolkit()]);
}

const NO_BUDGET_REQUEST = "Plan a 3-day trip from Madrid to Paris for 2 people";

/** One attempt per step and a short limit on the flight search, as the demo would run with latencyMs small. */
export function quick(plan: Plan, timeoutMs = 50): Plan {
  return {
    ...plan,
    steps: plan.steps.map((s) => ({
      ...s,
      retry: { maxAttempts: 1, backoffMs: [0] },
      ...(s.id === "flight" ? { timeoutMs } : {}),
    })),
  };
}

export function travelKits(faults: readonly string[], latencyMs = 0): Toolkit[] {
  const kit = travelToolkit({ latencyMs });
  return faults.length === 0 ? [kit] : withFaults([kit], parseFaultSpecs(faults));
}

export function rulesPlan(text: string, registry: ToolRegistry): Plan {
  return planWithRules(PlanningRequest.parse({ userIntent: text }), registry);
}

/** The demo (three failures: flight timeout, hotel fully booked, budget exceeded) with `latencyMs` per tool. */
export function demoScenario(latencyMs: number): {
  request: string;
  toolkits: () => Toolkit[];
  plan: (r: ToolRegistry) => Plan;
} {
  return {
    request: DEMO_REQUEST,
    toolkits: () => travelKits(DEMO_FAULTS, latencyMs),
    plan: (r) => quick(rulesPlan(DEMO_REQUEST, r)),
  };
}

function travel(cls: FailureClass, what: string, request: string, faults: string[]): Scenario {
  return { cls, what, request, toolkits: () => travelKits(faults), plan: (r) => quick(rulesPlan(request, r)) };
}

/**
 * A small reporting toolkit for the classes the travel demo has no natural case for. `failing` names the tool whose
 * first call throws the given message (later calls work). Two workers can do the reporting, so a different agent
 * exists; `fetch_rows` → `summarize_rows` is a smaller route to the report data (what DECOMPOSE looks for);
 * `admin_export` makes the same data but is granted only to the admin worker (what SWAP_TOOL replaces).
 */
function opsToolkit(failing: { tool: string; message: string } | null): Toolkit {
  let failed = false;
  const tool = (
    name: string,
    category: string,
    consumes: string[],
    produces: string,
    schema: z.ZodType,
    durationMs: number,
    result: unknown,
  ): ToolSpec => ({
    name,
    description: `${name} (bench)`,
    category,
    keywords: [],
    consumes,
    produces: [produces],
    sideEffect: "none",
    needsApproval: false,
    schema,
    estimates: { durationMs, cost: 0 },
    run: async () => {
      if (failing?.tool === name && !failed) {
        failed = true;
        throw new Error(failing.message);
      }
      return result;
    },
  });
  return {
    name: "ops",
    tools: [
      tool("prepare", "ops", [], "report_data", z.object({ items: z.number().int().positive().max(100) }), 20, {
        rows: 3,
      }),
      tool("publish", "ops", ["report_data"], "report", z.looseObject({}), 20, { published: true }),
      tool("fetch_rows", "ops", [], "rows", z.looseObject({}), 5, { rows: [1, 2, 3] }),
      tool("summarize_rows", "ops", ["rows"], "report_data", z.looseObject({}), 5, { rows: 3 }),
      tool("admin_export", "admin", [], "report_data", z.looseObject({}), 20, { rows: 3 }),
    ],
    workers: [
      { name: "ops_main", description: "prepares and publishes reports", categories: ["ops"] },
      { name: "ops_alt", description: "a second reporting agent", categories: ["ops"] },
      { name: "admin", description: "exports data", categories: ["admin"] },
    ],
  };
}

function opsPlan(prepare: { tools?: string[]; params?: Record<string, unknown> } = {}): Plan {
  const step = (input: Record<string, unknown>) =>
    TaskStep.parse({ retry: { maxAttempts: 1, backoffMs: [0] }, estimates: { durationMs: 20, cost: 0 }, ...input });
  return Plan.parse({
    planId: "bench-ops",
    objective: "publish the weekly report",
    confidence: 0.85,
    steps: [
      step({
        id: "prepare",
        description: "prepare the report data",
        workerType: "ops_main",
        tools: prepare.tools ?? ["prepare"],
        params: prepare.params ?? { items: 3 },
        expectedOutputs: ["report_data"],
        order: 1,
      }),
      step({
        id: "publish",
        description: "publish the report",
        workerType: "ops_main",
        tools: ["publish"],
        dependsOn: ["prepare"],
        expectedOutputs: ["report"],
        order: 2,
      }),
    ],
  });
}

function ops(
  cls: FailureClass,
  what: string,
  failing: { tool: string; message: string } | null,
  prepare: { tools?: string[]; params?: Record<string, unknown> } = {},
): Scenario {
  return {
    cls,
    what,
    request: "Publish the weekly report",
    toolkits: () => [opsToolkit(failing)],
    plan: () => opsPlan(prepare),
  };
}

/** One scenario per known failure class (all but `unknown`, which goes to the model by design). */
export const SCENARIOS: readonly Scenario[] = [
  travel("timeout", "primary flight search hangs past its 50 ms limit", NO_BUDGET_REQUEST, ["search_flights=timeout"]),
  travel("agent_unavailable", "primary flight search answers HTTP 500 on every call", NO_BUDGET_REQUEST, [
    "search_flights=error",
  ]),
  travel("resource_unavailable", "first hotel search: fully booked", NO_BUDGET_REQUEST, [
    "search_hotels=unavailable*1",
  ]),
  travel("constraint_violated", "demo trip is ~10% over its $2000 budget (breakdown in the failure)", DEMO_REQUEST, []),
  ops("invalid_parameters", "`prepare` given `items: 500`, over its schema's maximum of 100 (zod validation)", null, {
    params: { items: 500 },
  }),
  ops("wrong_tool", "step asks `ops_main` to use `admin_export`, not in its grant", null, { tools: ["admin_export"] }),
  ops("too_complex", '`prepare`: "480 line items are too complex to do in one step"', {
    tool: "prepare",
    message: "prepare: 480 line items are too complex to do in one step",
  }),
  ops("dependency_failed", '`publish`: "Dependency prepare failed to deliver usable data"', {
    tool: "publish",
    message: "publish: Dependency prepare failed to deliver usable data",
  }),
  ops("policy_blocked", '`prepare`: "blocked by policy (HTTP 403)"', {
    tool: "prepare",
    message: "prepare: export blocked by policy (HTTP 403 forbidden)",
  }),
];
