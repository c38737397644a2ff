import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { isInterrupted, type StateSnapshot } from "@langchain/langgraph";
import pg from "pg";
import { afterAll, inject } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent, type AgentDeps } from "../../graphs/agent.js";
import { Node } from "../../nodes/names.js";
import type { AgentStateValue } from "../../nodes/state.js";
import { Plan, type PlanInput } from "../../src/domain/plan.js";
import type { Notification } from "../../src/domain/notification.js";
import { isPostgresUrl, openPersistence, type Persistence } from "../../src/memory/persistence.js";
import { connectPostgres } from "../../src/memory/postgres.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import type { PlanResult, PlanningContext, Reasoner, SynthesisInput } from "../../src/reasoning/types.js";
import type { PlanningRequest, PlanningRequestInput, RunSettingsInput } from "../../src/domain/request.js";
import { parseFaultSpecs, withFaults } from "../../src/tools/faults.js";
import type { Toolkit } from "../../src/tools/types.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { createDatabaseFromTemplate } from "./postgres.js";

/** Fast enough for tests, slow enough that three parallel searches overlap. */
export const TEST_LATENCY_MS = 10;

/**
 * The backend of this test run's databases. The `postgres` project (vitest.config.ts) runs the graph suite's key
 * files again with CANDOR_TEST_BACKEND=postgres: the same tests, each database a fresh PostgreSQL one.
 */
const TEST_BACKEND: "sqlite" | "postgres" = process.env.CANDOR_TEST_BACKEND === "postgres" ? "postgres" : "sqlite";

/**
 * A fresh directory and a fresh database for one test: a SQLite file in the directory, or (postgres project) a
 * new PostgreSQL database copied from the migrated template. `cleanup` removes the directory; the PostgreSQL
 * server, with its databases, is thrown away when the run ends.
 */
export function tempDir(): { dir: string; dbPath: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), "candor-graph-"));
  const dbPath =
    TEST_BACKEND === "postgres"
      ? createDatabaseFromTemplate(inject("candorPostgresUrl"), inject("candorPostgresBin"))
      : path.join(dir, "candor.db");
  return { dir, dbPath, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Opens a test database synchronously: a SQLite file, or a PostgreSQL database that `tempDir` made (migrated,
 * so nothing needs asking before the pools connect).
 */
export function openTestDatabase(dbPath: string): Persistence {
  return isPostgresUrl(dbPath) ? connectPostgres(dbPath) : openPersistence(dbPath);
}

/** Every row of the effect ledger, by step and status, read straight from the table of either backend. */
export async function effectRows(persistence: Persistence): Promise<{ step_id: string; status: string }[]> {
  const sql = "SELECT step_id, status FROM candor_effects ORDER BY step_id, dispatch, attempt";
  if (persistence.backend === "sqlite") return persistence.store.db.prepare(sql).all() as never;
  const client = new pg.Client({ connectionString: persistence.dbPath });
  await client.connect();
  try {
    return (await client.query<{ step_id: string; status: string }>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Counts every call of every tool (each attempt counts, faulted ones included), keyed by tool name. */
export interface ToolCalls {
  count(tool: string): number;
  all(): Record<string, number>;
  total(): number;
}

/** Wraps every tool's `run` so each call is counted; wrap outside `withFaults` so failing calls count too. */
export function countingToolkits(toolkits: readonly Toolkit[]): { toolkits: Toolkit[]; calls: ToolCalls } {
  const counts = new Map<string, number>();
  const wrapped = toolkits.map((kit) => ({
    ...kit,
    tools: kit.tools.map((tool) => ({
      ...tool,
      run: (args: unknown, ctx: Parameters<typeof tool.run>[1]) => {
        counts.set(tool.name, (counts.get(tool.name) ?? 0) + 1);
        return tool.run(args, ctx);
      },
    })),
  }));
  return {
    toolkits: wrapped,
    calls: {
      count: (tool) => counts.get(tool) ?? 0,
      all: () => Object.fromEntries(counts),
      total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    },
  };
}

/**
 * The offline rules reasoner, with a shorter time limit (and retry backoff) on the steps that call the given
 * tools. The rules planner gives a step at least 1 s per attempt, so a `timeout` fault costs ~2.6 s per step;
 * tests that only need the timeout to happen shorten it for the faulted tools alone, so a healthy step on a
 * loaded machine is never cut off. Plans are otherwise exactly the rules planner's.
 */
class ShortTimeoutReasoner implements Reasoner {
  readonly kind = "rules" as const;
  private readonly inner = new RulesReasoner();
  constructor(
    private readonly tools: ReadonlySet<string>,
    private readonly timeoutMs: number,
  ) {}

  async plan(request: PlanningRequest, ctx: PlanningContext): Promise<PlanResult> {
    const { plan, notes } = await this.inner.plan(request, ctx);
    const steps = plan.steps.map((s) =>
      this.tools.has(s.tools[0] ?? "")
        ? { ...s, timeoutMs: this.timeoutMs, retry: { maxAttempts: s.retry.maxAttempts, backoffMs: [10] } }
        : s,
    );
    return { plan: Plan.parse({ ...plan, steps }), notes };
  }

  proposeRecovery(): Promise<null> {
    return Promise.resolve(null);
  }

  synthesize(input: SynthesisInput): Promise<string> {
    return this.inner.synthesize(input);
  }
}

export interface AgentOptions {
  /** Fault specs such as "search_flights=timeout" (src/tools/faults.ts). */
  faults?: readonly string[];
  /** Shorten the time limit of steps whose tool has a `timeout` fault to this many ms (see ShortTimeoutReasoner). */
  stepTimeoutMs?: number;
  /** Replace the travel toolkit (e.g. a variant with a broken tool). */
  toolkits?: Toolkit[];
  dbPath: string;
}

/**
 * The travel agent compiled on a real database (a SQLite file, or PostgreSQL in the postgres project): tools at test latency, counted, optionally faulty, the rules
 * reasoner (no model), and an in-memory decision log to inspect.
 */
export function startAgent(options: AgentOptions) {
  const base = options.toolkits ?? [travelToolkit({ latencyMs: TEST_LATENCY_MS })];
  const faults = parseFaultSpecs(options.faults ?? []);
  const faulty = withFaults(base, faults);
  const hanging = new Set(faults.filter((f) => f.kind === "timeout").map((f) => f.tool));
  const { toolkits, calls } = countingToolkits(faulty);
  const decisionLog = memoryDecisionLog();
  const persistence: Persistence = openTestDatabase(options.dbPath);
  const deps: AgentDeps = {
    toolkits,
    decisionLog,
    ...(options.stepTimeoutMs === undefined
      ? {}
      : { reasoner: new ShortTimeoutReasoner(hanging, options.stepTimeoutMs) }),
  };
  const graph = compileAgent(deps, persistence);
  // A PostgreSQL database closes in the background (its pools end); a failure there surfaces as an unhandled error.
  return { graph, persistence, calls, decisionLog, close: () => void persistence.close() };
}
export type Agent = ReturnType<typeof startAgent>;

/**
 * A test file's agents: each on the file's own temp database, all closed (and the database removed) after the
 * file's tests. `defaults` apply to every agent; `agent(options)` overrides them.
 */
export function agentsOnTempDb(defaults: Omit<AgentOptions, "dbPath"> = {}) {
  const tmp = tempDir();
  const agents: Agent[] = [];
  afterAll(() => {
    for (const a of agents) a.close();
    tmp.cleanup();
  });
  return {
    dbPath: tmp.dbPath,
    // A property, not a method: tests destructure it (`const { agent } = agentsOnTempDb()`).
    agent: (options: Omit<AgentOptions, "dbPath"> = {}): Agent => {
      const a = startAgent({ dbPath: tmp.dbPath, ...defaults, ...options });
      agents.push(a);
      return a;
    },
  };
}

/**
 * The graph input for a request, with optional per-run settings. Each call gets its own user unless one is
 * given: REFLECT stores every run's episode under the user, and the planner learns from those (it plans around
 * tools that failed for that user), so runs sharing a user in one file would change each other's plans.
 */
export function tripInput(
  userIntent: string,
  settings: RunSettingsInput = {},
  userId = `user_${randomUUID().slice(0, 8)}`,
) {
  const request: PlanningRequestInput = { userIntent, userContext: { userId, preferences: {} } };
  return { request, settings };
}

/** The user of the restart test's runs (test/graph/child-resume.ts), whose episode the parent reads back. */
export const RESTART_USER = "restart_user";

export function threadConfig(threadId: string) {
  return { configurable: { thread_id: threadId } };
}

/** A fault-free trip whose default choices fit (no budget), so nothing needs recovering. */
export const EASY_TRIP = "Plan a 3-day trip from Madrid to Paris for 2 people";

/** The interrupt payloads of an invoke result; throws when the run did not stop at an interrupt. */
export function interruptValues(out: unknown): Record<string, unknown>[] {
  if (!isInterrupted<Record<string, unknown>>(out))
    throw new Error(`expected the run to stop at an interrupt, got ${JSON.stringify(out).slice(0, 200)}`);
  return out.__interrupt__.map((i) => i.value as Record<string, unknown>);
}

/** The thread's checkpoints, newest first. */
export async function historyOf(agent: Agent, threadId: string): Promise<StateSnapshot[]> {
  const out: StateSnapshot[] = [];
  for await (const snapshot of agent.graph.getStateHistory(threadConfig(threadId))) out.push(snapshot);
  return out;
}

/** A snapshot's values as the main graph's state (getState types them loosely). */
export function valuesOf(snapshot: StateSnapshot): AgentStateValue {
  return snapshot.values as AgentStateValue;
}

/** The checkpoint written right after UNDERSTAND (the only one whose writer was understand). */
export function afterUnderstand(history: readonly StateSnapshot[]): StateSnapshot {
  const found = history.filter(
    (s) => s.metadata?.source === "loop" && s.metadata?.step === 1 && s.next.length === 1 && s.next[0] === Node.EXECUTE,
  );
  if (found.length !== 1) throw new Error(`expected one checkpoint after understand, found ${found.length}`);
  return found[0]!;
}

export function notificationsOf(
  state: { notifications: Notification[] },
  kind: Notification["kind"],
  taskId?: string,
): Notification[] {
  return state.notifications.filter((n) => n.kind === kind && (taskId === undefined || n.taskId === taskId));
}

/** A valid plan made of the given steps, for router tests. */
export function planWith(steps: PlanInput["steps"]): Plan {
  return Plan.parse({ planId: "plan-test", objective: "test", confidence: 0.8, steps });
}

/** A complete main-graph state with every field at its default, for calling routers and nodes directly. */
export function agentState(overrides: Partial<AgentStateValue> = {}): AgentStateValue {
  return {
    request: { userIntent: "test", userContext: { userId: "tester", preferences: {} }, constraints: {} },
    settings: {
      maxRevisions: 3,
      approvalThreshold: 0.5,
      abortBelow: 0.3,
      maxStepFailures: 3,
      planner: true,
      fixed: [],
    },
    plan: null,
    runs: null,
    plannedConfidence: null,
    planNotes: [],
    feedback: [],
    revisions: [],
    revisionCount: 0,
    confidenceHistory: [],
    tokens: [],
    notifications: [],
    progress: null,
    next: null,
    pendingInterrupt: null,
    approval: null,
    answer: null,
    reflection: null,
    report: null,
    status: "planning",
    failureReason: null,
    startedAt: null,
    messages: [],
    ...overrides,
  };
}
