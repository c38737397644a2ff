import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { buildAgentGraph, compileAgent } from "../../graphs/agent.js";
import type { AgentStateValue } from "../../nodes/state.js";
import { runCli } from "../../src/cli/program.js";
import { openExisting, openSession } from "../../src/cli/session.js";
import { DEFAULT_STORAGE_BOUNDS, STORAGE_BOUND_SETTINGS, type GraphBounds } from "../../src/domain/config.js";
import { readEnv, storageBoundsOf } from "../../src/env.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { openDatabase } from "../../src/memory/persistence.js";
import { limitsOf } from "../../src/tools/limits.js";
import { readFileSync } from "node:fs";
import {
  decisionLine,
  fileDecisionLog,
  memoryDecisionLog,
  type Decision,
} from "../../src/transparency/decision-log.js";
import { caught } from "../fakes/toolkit-fixtures.js";
import { tempDir, tripInput } from "../fakes/graph-harness.js";

/**
 * Issue 24: the storage bounds were constants. Each is settable now, by an environment variable for the CLI and by
 * buildAgentGraph's `bounds` (the store's by openDatabase's) for an app, and each setting changes what happens.
 */

const TRIP = "a week in Tokyo from London for 4 under 9000";
const tmp = tempDir();
afterAll(() => tmp.cleanup());

const thrownBy = (fn: () => unknown): CandorError => {
  const e = caught(fn);
  if (!CandorError.isInstance(e)) throw new Error(`expected a CandorError, got ${String(e)}`);
  return e;
};

/** The travel trip run to its end on a fresh thread of a graph built with these bounds, offline. */
async function tripWith(bounds: Partial<GraphBounds>, request = TRIP) {
  const decisionLog = memoryDecisionLog();
  const persistence = await openDatabase(tmp.dbPath);
  try {
    const graph = compileAgent({ toolkits: [travelToolkit({ latencyMs: 0 })], decisionLog, bounds }, persistence);
    const config = { configurable: { thread_id: `t-${randomUUID()}` } };
    const values = (await graph.invoke(tripInput(request), config)) as AgentStateValue;
    return { values, decisions: decisionLog.entries };
  } finally {
    await persistence.close();
  }
}

describe("the environment sets each bound for the CLI", () => {
  it("reads whole numbers, and bytes with a KiB, MiB or GiB suffix, into the bound each variable names", () => {
    const env = readEnv({
      CANDOR_MAX_PLAN_STEPS: "50",
      CANDOR_MAX_TOOL_ARGUMENT_BYTES: "64KiB",
      CANDOR_MAX_TOOL_RESULT_BYTES: "2 MiB",
      CANDOR_MAX_STORED_VALUE_BYTES: "256mib",
      CANDOR_MAX_LOG_LINE_BYTES: "2048",
    });
    expect(storageBoundsOf(env)).toEqual({
      maxPlanSteps: 50,
      maxToolArgumentBytes: 64 * 1024,
      maxToolResultBytes: 2 * 1024 * 1024,
      maxStoredValueBytes: 256 * 1024 * 1024,
      maxLogLineBytes: 2048,
    });
  });

  it("leaves every bound at its default when no variable is set, and the defaults are those documented", () => {
    expect(storageBoundsOf(readEnv({}))).toEqual({});
    expect(DEFAULT_STORAGE_BOUNDS).toEqual({
      maxPlanSteps: 1000,
      maxToolArgumentBytes: 1024 * 1024,
      maxToolResultBytes: 1024 * 1024,
      maxStoredValueBytes: 16 * 1024 * 1024,
      maxLogLineBytes: 64 * 1024,
    });
  });

  it("knows every bound's variable: each one, set to its minimum, reaches its bound", () => {
    for (const [name, setting] of Object.entries(STORAGE_BOUND_SETTINGS)) {
      expect(storageBoundsOf(readEnv({ [setting.variable]: String(setting.min) }))).toEqual({ [name]: setting.min });
    }
  });

  it("refuses a bad value naming the variable, what it must be and what it is", () => {
    expect(thrownBy(() => readEnv({ CANDOR_MAX_PLAN_STEPS: "0" })).message).toBe(
      'Environment variable CANDOR_MAX_PLAN_STEPS is invalid: the bound on steps per plan (maxPlanSteps) must be a whole number of steps, at least 1; it is "0". Fix or unset it (see .env.example).',
    );
    expect(thrownBy(() => readEnv({ CANDOR_MAX_TOOL_RESULT_BYTES: "512" })).message).toBe(
      'Environment variable CANDOR_MAX_TOOL_RESULT_BYTES is invalid: the bound on stored tool results (maxToolResultBytes) must be a whole number of bytes from 1,024 bytes (1 KiB) to 536,870,912 bytes (512 MiB), written as such or with a KiB, MiB or GiB suffix (64KiB, 1MiB); it is "512". Fix or unset it (see .env.example).',
    );
    const cases: [string, string][] = [
      ["CANDOR_MAX_LOG_LINE_BYTES", "64KB"], // 1,000 or 1,024? Not guessed.
      ["CANDOR_MAX_LOG_LINE_BYTES", "1GiB"], // over 512 MiB
      ["CANDOR_MAX_LOG_LINE_BYTES", "-4096"],
      ["CANDOR_MAX_LOG_LINE_BYTES", "4096.5"],
      ["CANDOR_MAX_PLAN_STEPS", "10KiB"], // a suffix is for bytes
      ["CANDOR_MAX_PLAN_STEPS", "lots"],
      ["CANDOR_MAX_PLAN_STEPS", "99999999999999999999"],
    ];
    for (const [variable, value] of cases) {
      const e = thrownBy(() => readEnv({ [variable]: value }));
      expect(e.code, `${variable}=${value}`).toBe(ErrorCode.CONFIGURATION);
      expect(e.message).toContain(`Environment variable ${variable} is invalid:`);
      expect(e.message).toContain(`it is ${JSON.stringify(value)}`);
    }
    // Untrusted text is quoted escaped and cut, never echoed whole.
    const hostile = thrownBy(() => readEnv({ CANDOR_MAX_PLAN_STEPS: `\u001b]0;owned\u0007${"9".repeat(10_000)}` }));
    expect(hostile.message).toContain('it is "\\u001b]0;owned\\u00079999');
    expect(hostile.message).not.toContain("\u001b");
    expect(hostile.message.length).toBeLessThan(400);
  });

  it("a command with a bad bound exits 2 with that sentence, before anything is opened", async () => {
    const err: string[] = [];
    const dbPath = `${tmp.dir}/never-made.db`;
    const code = await runCli(
      ["run", TRIP, "--db", dbPath, "--no-input"],
      { out: () => undefined, err: (t) => void err.push(t), invokedAs: "candor" },
      () => readEnv({ CANDOR_MAX_STORED_VALUE_BYTES: "1" }),
    );
    expect(code).toBe(2);
    expect(err.join("\n")).toContain(
      "Environment variable CANDOR_MAX_STORED_VALUE_BYTES is invalid: the bound on stored values (maxStoredValueBytes) must be a whole number of bytes from 1,024 bytes (1 KiB) to 536,870,912 bytes (512 MiB)",
    );
  });
});

describe("buildAgentGraph takes the graph's bounds, and refuses bad ones with a coded error", () => {
  const toolkits = [travelToolkit({ latencyMs: 0 })];

  it("refuses a bound out of range, a bound that is the store's, and a name that is no bound, naming each", () => {
    const e = thrownBy(() =>
      buildAgentGraph({
        toolkits,
        bounds: { maxPlanSteps: 0, maxToolResultBytes: 10, maxPlansteps: 5, maxStoredValueBytes: 4096 } as never,
      }),
    );
    expect(e.code).toBe(ErrorCode.CONFIGURATION);
    expect(e.message).toBe(
      "buildAgentGraph cannot use the bounds it was given, nothing was built: bounds.maxPlanSteps must be a whole number of steps, at least 1; it is 0; bounds.maxToolResultBytes must be a whole number of bytes from 1,024 bytes (1 KiB) to 536,870,912 bytes (512 MiB); it is 10; maxPlansteps is not a bound (the bounds are maxPlanSteps, maxToolArgumentBytes, maxToolResultBytes, maxStoredValueBytes, maxLogLineBytes); maxStoredValueBytes is the store's bound, not the graph's: pass it to openDatabase(location, { bounds }). Fix them, or leave a bound out to keep its default.",
    );
    expect(
      thrownBy(() => buildAgentGraph({ toolkits, bounds: { maxLogLineBytes: "64KiB" } as never })).message,
    ).toContain(
      'bounds.maxLogLineBytes must be a whole number of bytes from 1,024 bytes (1 KiB) to 536,870,912 bytes (512 MiB); it is "64KiB"',
    );
    expect(thrownBy(() => buildAgentGraph({ toolkits, bounds: 7 as never })).message).toContain(
      "bounds is not an object of bounds",
    );
  });
});

describe("each bound set lower changes what a run does", () => {
  it("steps per plan: the trip's 5-step plan is refused under a bound of 4, naming it and how to set it, and runs under 5", async () => {
    const refused = await tripWith({ maxPlanSteps: 4 });
    expect(refused.values.status).toBe("failed");
    expect(JSON.stringify(refused.values.notifications)).toContain(
      "The plan has 5 steps, more than the 4 steps a plan may have (maxPlanSteps, the bound on steps per plan when the request's constraints.maxSteps sets none; set by CANDOR_MAX_PLAN_STEPS for the CLI, buildAgentGraph's bounds.maxPlanSteps in an app).",
    );
    const ran = await tripWith({ maxPlanSteps: 5 });
    expect(ran.values.plan?.steps).toHaveLength(5);
    expect(ran.values.status).toBe("completed");
  });

  it("bytes per tool result: a result over a bound of 1 KiB is kept cut, marked truncated with the bound named", async () => {
    const { values } = await tripWith({ maxToolResultBytes: 1024 });
    const results = Object.values(values.runs?.steps ?? {}).map((r) => r.result);
    const cut = results.flatMap((r) => limitsOf(r)).filter((l) => l.kind === "truncated");
    expect(cut.length).toBeGreaterThan(0);
    for (const limit of cut) {
      expect(limit.message).toMatch(
        /^the tool's result was [\d,]+ bytes, over the 1,024 bytes kept of one tool result \(maxToolResultBytes, the bound on stored tool results; set by CANDOR_MAX_TOOL_RESULT_BYTES for the CLI, buildAgentGraph's bounds\.maxToolResultBytes in an app\)/,
      );
    }
    for (const r of results) expect(Buffer.byteLength(JSON.stringify(r) ?? "")).toBeLessThan(2 * 1024);
    expect(values.status).not.toBe("completed");
    // The same trip under the default bound keeps every result whole.
    const whole = await tripWith({});
    const wholeResults = Object.values(whole.values.runs?.steps ?? {}).map((r) => r.result);
    expect(wholeResults.flatMap((r) => limitsOf(r)).filter((l) => l.kind === "truncated")).toEqual([]);
  });

  it("bytes per log line: decisions over a bound of 1 KiB reach the app's log cut, the bound named", async () => {
    const { decisions } = await tripWith({ maxLogLineBytes: 1024 });
    const lines = decisions.map((d) => JSON.stringify(d));
    expect(lines.some((l) => l.includes("over the bound on a decision-log line of 1,024 bytes"))).toBe(true);
    expect(lines.some((l) => l.includes("CANDOR_MAX_LOG_LINE_BYTES"))).toBe(true);
    // What reaches the app's log is within the bound: a file log given the same bound cuts nothing more.
    const at = new Date();
    for (const d of decisions) expect(decisionLine(d, at, 1024)).toBe(decisionLine(d, at, 1 << 20));
    for (const d of decisions) expect(Buffer.byteLength(decisionLine(d, at, 1024))).toBeLessThanOrEqual(1024);
    const defaults = await tripWith({});
    expect(defaults.decisions.some((d) => JSON.stringify(d).includes("[cut:"))).toBe(false);
    expect(Math.max(...defaults.decisions.map((d) => JSON.stringify(d).length))).toBeGreaterThan(1024);
  });

  it("bytes per stored value: the CLI's variable reaches the store, which refuses a larger put naming it", async () => {
    const bounds = storageBoundsOf(readEnv({ CANDOR_MAX_STORED_VALUE_BYTES: "1KiB" }));
    const persistence = await openDatabase(`${tmp.dir}/stored.db`, { bounds });
    try {
      await persistence.store.put(["u", "notes"], "small", { text: "x".repeat(500) });
      const e = await persistence.store.put(["u", "notes"], "big", { text: "y".repeat(2000) }).then(
        () => null,
        (x: unknown) => x,
      );
      expect(CandorError.hasCode(e, ErrorCode.LIMIT_EXCEEDED)).toBe(true);
      expect((e as Error).message).toContain(
        "over the 1,024 bytes a stored value may have (maxStoredValueBytes, the bound on stored values; set by CANDOR_MAX_STORED_VALUE_BYTES for the CLI, openDatabase's bounds.maxStoredValueBytes in an app)",
      );
      expect(await persistence.store.get(["u", "notes"], "big")).toBeNull();
    } finally {
      await persistence.close();
    }
  });
});

describe("a decision-log line is within its bound, whatever the decision holds", () => {
  const decision = (extra: Partial<Decision>): Decision => ({
    operation: "plan",
    planId: "plan-1",
    input: "i",
    decision: "made a plan",
    reasoning: "r",
    ...extra,
  });

  it("cuts several long strings, and a record of thousands of short ones, to lines no longer than the bound", () => {
    const file = `${tmp.dir}/bounded.decisions.log`;
    const log = fileDecisionLog(file, "info", 1024);
    log.record(decision({ input: "a".repeat(10_000), decision: "d".repeat(10_000), reasoning: "r".repeat(10_000) }));
    log.record(decision({ understanding: { parts: Array.from({ length: 2000 }, (_, i) => `part ${i}`) } }));
    log.record(decision({ input: "small" }));
    const lines = readFileSync(file, "utf8").trim().split("\n");
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(1024);
    expect(lines[0]).toContain("over the bound on a decision-log line of 1,024 bytes (maxLogLineBytes; set by");
    expect(lines[1]).toMatch(/\[cut: the whole decision was [\d,]+ bytes, over the bound on a decision-log line/);
    expect(JSON.parse(lines[1]!)).toMatchObject({ operation: "plan", planId: "plan-1", decision: "made a plan" });
    expect(JSON.parse(lines[2]!)).toMatchObject({ input: "small", decision: "made a plan", reasoning: "r" });
  });
});

describe("the CLI's session holds the graph and the store to the bounds its environment sets", () => {
  it("a run's plan is refused over CANDOR_MAX_PLAN_STEPS, and the database, opened new or existing, refuses a value over CANDOR_MAX_STORED_VALUE_BYTES", async () => {
    const dbPath = `${tmp.dir}/session.db`;
    const env = readEnv({ CANDOR_MAX_PLAN_STEPS: "4", CANDOR_MAX_STORED_VALUE_BYTES: "1KiB" });
    const session = await openSession({ dbPath, reasoner: { kind: "rules", model: null }, faults: [], env });
    try {
      const config = { configurable: { thread_id: "session-t1" } };
      const values = (await session.graph.invoke(tripInput(TRIP), config)) as AgentStateValue;
      expect(values.status).toBe("failed");
      expect(values.failureReason).toContain("more than the 4 steps a plan may have (maxPlanSteps");
      const refused = await session.persistence.store.put(["u"], "big", { text: "y".repeat(2000) }).then(
        () => null,
        (x: unknown) => x,
      );
      expect(CandorError.hasCode(refused, ErrorCode.LIMIT_EXCEEDED)).toBe(true);
    } finally {
      await session.close();
    }
    const existing = await openExisting(dbPath, "session-t1", storageBoundsOf(env));
    try {
      const refused = await existing.store.put(["u"], "big", { text: "y".repeat(2000) }).then(
        () => null,
        (x: unknown) => x,
      );
      expect((refused as Error).message).toContain("over the 1,024 bytes a stored value may have");
    } finally {
      await existing.close();
    }
  });
});
