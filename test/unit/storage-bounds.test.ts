import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_STORAGE_BOUNDS } from "../../src/domain/config.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { SqliteStore } from "../../src/memory/sqlite-store.js";
import { toPlanResult } from "../../src/planning/parse.js";
import { assertPlanSize } from "../../src/planning/validate.js";
import { limitsOf } from "../../src/tools/limits.js";
import { fileDecisionLog, type Decision } from "../../src/transparency/decision-log.js";
import { runStep } from "../../src/execution/run-step.js";
import { TaskStep } from "../../src/domain/plan.js";
import { countingTool, registryOf } from "../fakes/toolkit-fixtures.js";
import { pipelineRegistry } from "../fakes/toolkit.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempFile(name: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "candor-bounds-"));
  dirs.push(dir);
  return path.join(dir, name);
}

const request = PlanningRequest.parse({ userIntent: "Fetch the sales data" });
const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return null;
};

describe("bounds on stored data, each named when it is hit", () => {
  it("steps per plan: the default bound applies when the request sets no maxSteps, and the request's maxSteps when it does", () => {
    expect(DEFAULT_STORAGE_BOUNDS.maxPlanSteps).toBe(1000);
    expect(() => assertPlanSize(1000, request)).not.toThrow();
    const over = thrown(() => assertPlanSize(1001, request));
    expect(CandorError.hasCode(over, ErrorCode.LIMIT_EXCEEDED)).toBe(true);
    expect((over as CandorError).message).toBe(
      "The plan has 1001 steps, more than the 1,000 steps a plan may have (maxPlanSteps, the bound on steps per plan when the request's constraints.maxSteps sets none; set by CANDOR_MAX_PLAN_STEPS for the CLI, buildAgentGraph's bounds.maxPlanSteps in an app). Nothing was run or stored; ask for less, split the request, or set constraints.maxSteps.",
    );
    expect((over as CandorError).details).toEqual({ constraint: "maxPlanSteps", limit: 1000, actual: 1001 });
    const asked = PlanningRequest.parse({ userIntent: "x", constraints: { maxSteps: 2000 } });
    expect(() => assertPlanSize(1500, asked)).not.toThrow();
    expect(
      CandorError.hasCode(
        thrown(() => assertPlanSize(2001, asked)),
        ErrorCode.INSUFFICIENT_RESOURCES,
      ),
    ).toBe(true);
  });

  it("a model's plan over the bound is refused by toPlanResult, whatever shape its steps have", () => {
    // Steps that would not even parse: the count is checked first, so the bound, not a shape error, is what is said.
    const e = thrown(() =>
      toPlanResult({ steps: Array.from({ length: 5000 }, () => ({})) }, request, pipelineRegistry(), "llm"),
    );
    expect(CandorError.hasCode(e, ErrorCode.LIMIT_EXCEEDED)).toBe(true);
    expect((e as Error).message).toMatch(/^The plan has 5000 steps, more than the 1,000 steps a plan may have/);
  });

  it("bytes per stored value: a put over the bound is refused with the sizes and the bound, and nothing is written", async () => {
    const store = new SqliteStore(tempFile("store.db"), { maxValueBytes: 4096 });
    try {
      await store.put(["u", "notes"], "small", { text: "x".repeat(1000) });
      const e = await store.put(["u", "notes"], "big", { text: "y".repeat(10_000) }).then(
        () => null,
        (x: unknown) => x,
      );
      expect(CandorError.hasCode(e, ErrorCode.LIMIT_EXCEEDED)).toBe(true);
      expect((e as Error).message).toBe(
        `The value for "big" in [u, notes] is 10,011 bytes, over the 4,096 bytes a stored value may have (maxStoredValueBytes, the bound on stored values; set by CANDOR_MAX_STORED_VALUE_BYTES for the CLI, openDatabase's bounds.maxStoredValueBytes in an app); it was not stored. Keep less in it: a request, a result or a note this large belongs in a file.`,
      );
      expect(await store.get(["u", "notes"], "big")).toBeNull();
      expect((await store.get(["u", "notes"], "small"))?.value).toEqual({ text: "x".repeat(1000) });
    } finally {
      store.close();
    }
  });

  it("bytes per stored tool result: the ledger keeps the head of a larger result, marked truncated with the bound named", async () => {
    const p = openPersistence(tempFile("candor.db"));
    try {
      const key = { threadId: "t", stepId: "s", dispatch: 0, attempt: 1 };
      const huge = { text: "z".repeat(3 * 1024 * 1024) };
      await p.ledger.recordStarted(key, "fetch_data", { topic: "x" });
      await p.ledger.recordDone(key, "fetch_data", { topic: "x" }, huge);
      const kept = (await p.ledger.lookup(key))?.result as { truncated: boolean; head: string };
      expect(kept.truncated).toBe(true);
      expect(kept.head.startsWith('{"text":"zzz')).toBe(true);
      expect(kept.head.length).toBe(DEFAULT_STORAGE_BOUNDS.maxToolResultBytes / 2);
      expect(limitsOf(kept)).toEqual([
        {
          kind: "truncated",
          message:
            "the tool's result was 3,145,739 bytes, over the 1,048,576 bytes kept of one tool result (maxToolResultBytes, the bound on stored tool results; set by CANDOR_MAX_TOOL_RESULT_BYTES for the CLI, buildAgentGraph's bounds.maxToolResultBytes in an app); only its first 524,288 bytes of JSON were kept",
        },
      ]);
      const small = { ...key, attempt: 2 };
      await p.ledger.recordDone(small, "fetch_data", {}, { rows: 3 });
      expect((await p.ledger.lookup(small))?.result).toEqual({ rows: 3 });
    } finally {
      p.close();
    }
  });

  it("bytes per tool argument: a call whose arguments are over the bound is refused before the tool runs, the bound named", async () => {
    const tool = countingTool("save_note");
    const registry = registryOf([tool.spec], [{ name: "worker", description: "", categories: ["general"] }]);
    const step = TaskStep.parse({
      id: "s1",
      description: "save it",
      workerType: "worker",
      tools: ["save_note"],
      params: { text: "n".repeat(2 * 1024 * 1024) },
      retry: { maxAttempts: 1, backoffMs: [0] },
    });
    const feedback = await runStep({ step, inputs: {}, registry, dispatch: 1 });
    expect(tool.calls).toHaveLength(0);
    expect(feedback).toMatchObject({ feedbackType: "FAILURE", failureClass: "invalid_parameters", tool: "save_note" });
    expect(feedback.errors[0]).toBe(
      "save_note was not called: its arguments are 2,097,163 bytes, over the 1,048,576 bytes one tool call's arguments may have (maxToolArgumentBytes, the bound on tool arguments; set by CANDOR_MAX_TOOL_ARGUMENT_BYTES for the CLI, buildAgentGraph's bounds.maxToolArgumentBytes in an app). Pass less, or a file's path rather than its content.",
    );
  });

  it("bytes per tool result: a step keeps the head of a larger result, marked truncated, and is not done on it", async () => {
    const tool = countingTool("fetch_page", { run: async () => ({ fetch_page: "p".repeat(3 * 1024 * 1024) }) });
    const registry = registryOf([tool.spec], [{ name: "worker", description: "", categories: ["general"] }]);
    const step = TaskStep.parse({
      id: "s1",
      description: "fetch it",
      workerType: "worker",
      tools: ["fetch_page"],
      retry: { maxAttempts: 1, backoffMs: [0] },
    });
    const feedback = await runStep({ step, inputs: {}, registry, dispatch: 1 });
    expect(tool.calls).toHaveLength(1);
    expect(JSON.stringify(feedback).length).toBeLessThan(DEFAULT_STORAGE_BOUNDS.maxToolResultBytes * 2);
    expect(feedback.feedbackType, JSON.stringify({ ...feedback, outputs: null }).slice(0, 600)).not.toBe("SUCCESS");
    expect(JSON.stringify(feedback)).toContain(
      "over the 1,048,576 bytes kept of one tool result (maxToolResultBytes, the bound on stored tool results;",
    );
  });

  it("bytes per log line: a decision made on a 10 MB value is logged cut, the cut and the bound said in the line", () => {
    // Regression: a 10 MB tool argument wrote 10 MB decision-log lines.
    const file = tempFile("candor.db.decisions.log");
    const log = fileDecisionLog(file);
    const decision: Decision = {
      operation: "dispatch",
      planId: "p",
      input: "a".repeat(10 * 1024 * 1024),
      decision: "run step s1",
      reasoning: "because",
    };
    log.record(decision);
    const lines = readFileSync(file, "utf8").trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(Buffer.byteLength(lines[0]!)).toBeLessThan(DEFAULT_STORAGE_BOUNDS.maxLogLineBytes);
    const parsed = JSON.parse(lines[0]!) as { input: string; decision: string; msg: string };
    expect(parsed.input).toMatch(
      /^a{16384}… \[cut: 10,485,760 bytes, over the bound on a decision-log line of 65,536 bytes \(maxLogLineBytes; set by CANDOR_MAX_LOG_LINE_BYTES for the CLI, buildAgentGraph's bounds\.maxLogLineBytes in an app\)\]$/,
    );
    expect(parsed.decision).toBe("run step s1");
    expect(parsed.msg).toBe("dispatch: run step s1");
  });
});
