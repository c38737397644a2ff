import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Command } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent } from "../../graphs/agent.js";
import type { AgentStateValue } from "../../nodes/state.js";
import { saveThreadRecord } from "../../src/cli/session.js";
import { CandorError } from "../../src/errors.js";
import type { Persistence } from "../../src/memory/persistence.js";
import { parseFaultSpecs, withFaults } from "../../src/tools/faults.js";
import { persistenceArchive } from "../../src/cli/run-archive.js";
import { debuggingToolkit } from "../../src/tools/builtin/debugging/index.js";
import type { ToolContext, ToolSpec } from "../../src/tools/types.js";
import {
  EASY_TRIP,
  interruptValues,
  openTestDatabase,
  tempDir,
  threadConfig,
  tripInput,
} from "../fakes/graph-harness.js";

/*
 * The debugging tools over threads the real graph ran in this file, on a real database (SQLite here, PostgreSQL
 * in the postgres project): a failure recovered by a workaround, and a booking whose irreversible call a person
 * approved. The tools are called as a worker calls them: arguments through the tool's schema, the result through
 * its output schema.
 */

const BOOK_TRIP = "Plan a 3-day trip from Madrid to Paris for 2 people and book it";
const RECOVERED = "recovered";
const APPROVED = "approved";
const AT = new Date("2026-01-02T03:04:05.000Z");

const tmp = tempDir();
const workspace = mkdtempSync(path.join(tmpdir(), "candor-reviews-"));
let persistence: Persistence;
let graph: ReturnType<typeof compileAgent>;
let tools: Map<string, ToolSpec>;

/** One call as the worker makes it: parsed arguments, then the result checked against what the tool promises. */
async function call(name: string, args: Record<string, unknown>, inputs: Record<string, unknown> = {}) {
  const tool = tools.get(name)!;
  const ctx: ToolContext = { signal: new AbortController().signal, inputs, stepId: "s", attempt: 1 };
  const result = await tool.run(tool.schema.parse(args), ctx);
  return tool.outputSchema ? (tool.outputSchema.parse(result) as Record<string, unknown>) : result;
}

/** The thrown error of a call that must fail. */
async function failure(name: string, args: Record<string, unknown>, inputs: Record<string, unknown> = {}) {
  try {
    await call(name, args, inputs);
  } catch (e) {
    if (CandorError.isInstance(e)) return e;
    throw e;
  }
  throw new Error(`${name} did not fail`);
}

async function checkpointCount(threadId: string): Promise<number> {
  let n = 0;
  for await (const _ of graph.getStateHistory(threadConfig(threadId))) n++;
  return n;
}

beforeAll(async () => {
  persistence = openTestDatabase(tmp.dbPath);
  const decisionLog = persistence.decisions.open("info");
  const run = compileAgent(
    { toolkits: [travelToolkit({ latencyMs: 5 })], decisionLog, ledger: persistence.ledger },
    persistence,
  );
  // The fault makes the first hotel search fail; FIND_WORKAROUND widens it.
  const faulty = compileAgent(
    {
      toolkits: withFaults([travelToolkit({ latencyMs: 5 })], parseFaultSpecs(["search_hotels=unavailable*1"])),
      decisionLog,
      ledger: persistence.ledger,
    },
    persistence,
  );
  for (const [threadId, request] of [
    [RECOVERED, EASY_TRIP],
    [APPROVED, BOOK_TRIP],
  ] as const)
    await saveThreadRecord(persistence, {
      threadId,
      request,
      userId: "u",
      reasoner: "rules",
      model: null,
      faults: [],
      createdAt: threadId === RECOVERED ? "2026-01-01T00:00:00.000Z" : "2026-01-01T00:01:00.000Z",
    });
  const recovered = await faulty.invoke(tripInput(EASY_TRIP), threadConfig(RECOVERED));
  expect(recovered.status).toBe("completed");
  expect(interruptValues(await run.invoke(tripInput(BOOK_TRIP), threadConfig(APPROVED)))[0]).toMatchObject({
    kind: "tool_approval",
  });
  const approved = await run.invoke(
    new Command({ resume: { decision: "approve", comment: "ok" } }),
    threadConfig(APPROVED),
  );
  expect(approved.status).toBe("completed");
  await decisionLog.flush();
  graph = run;
  const archive = persistenceArchive(persistence, async (id) => (await graph.getState(threadConfig(id))).values);
  tools = new Map(debuggingToolkit({ archive, root: workspace, now: () => AT }).tools.map((t) => [t.name, t]));
});

afterAll(async () => {
  await persistence.close();
  tmp.cleanup();
  rmSync(workspace, { recursive: true, force: true });
});

describe("the debugging tools over real threads", () => {
  it("review_runs lists the threads, newest first, with the failure and how it was recovered", async () => {
    const review = (await call("review_runs", {})) as {
      threads: {
        threadId: string;
        status: string;
        anomalies: { kind: string; taskId: string | null; detail: string }[];
        recoveries: string[];
      }[];
      focus: string | null;
    };
    expect(review.threads.map((t) => [t.threadId, t.status])).toEqual([
      [APPROVED, "completed"],
      [RECOVERED, "completed"],
    ]);
    const recovered = review.threads.find((t) => t.threadId === RECOVERED)!;
    expect(recovered.anomalies.filter((a) => a.kind === "failure")).toEqual([
      expect.objectContaining({ taskId: "hotel", detail: expect.stringContaining("resource_unavailable") }),
    ]);
    expect(recovered.recoveries).toEqual(["hotel (resource_unavailable) → FIND_WORKAROUND"]);
    expect(review.focus).toBe(RECOVERED);
    const only = (await call("review_runs", { onlyAnomalies: true })) as { threads: { threadId: string }[] };
    expect(only.threads.map((t) => t.threadId)).not.toContain(APPROVED);
  });

  it("get_run_context shows the plan, the revision, the confidence history and the approval", async () => {
    const recovered = (await call("get_run_context", { threadId: RECOVERED })) as Record<string, unknown>;
    const state = (await graph.getState(threadConfig(RECOVERED))).values as AgentStateValue;
    expect(recovered).toMatchObject({ threadId: RECOVERED, status: "completed", finished: true });
    expect(
      (recovered.revisions as { strategy: string; failedTaskId: string }[]).map((r) => [r.strategy, r.failedTaskId]),
    ).toEqual([["FIND_WORKAROUND", "hotel"]]);
    const steps = (recovered.plan as { steps: { id: string; replaces: string | null; status: string }[] }).steps;
    expect(steps.find((s) => s.id === "hotel_alt")).toMatchObject({ replaces: "hotel", status: "done" });
    expect((recovered.confidenceHistory as { value: number }[]).map((p) => p.value)).toEqual(
      state.confidenceHistory.map((p) => p.value),
    );
    expect(recovered.decisions).toBeGreaterThan(0);

    const approved = (await call("get_run_context", { threadId: APPROVED })) as { approvals: unknown[] };
    expect(approved.approvals).toEqual([
      expect.objectContaining({ kind: "tool_approval", decision: "approve", taskId: "booking" }),
    ]);
  });

  it("get_run_transcript gives the notifications in the order the person saw them", async () => {
    const transcript = (await call("get_run_transcript", { threadId: RECOVERED })) as {
      lines: { title: string; severity: string; taskId: string | null }[];
    };
    const state = (await graph.getState(threadConfig(RECOVERED))).values as AgentStateValue;
    expect(transcript.lines.map((l) => l.title)).toEqual(state.notifications.map((n) => n.title));
    const failed = transcript.lines.findIndex((l) => l.severity === "ERROR" && l.taskId === "hotel");
    const recovered = transcript.lines.findIndex((l) => l.taskId === "hotel_alt" && l.severity === "INFO");
    expect(failed).toBeGreaterThanOrEqual(0);
    expect(recovered).toBeGreaterThan(failed);
  });

  it("get_run_transcript takes the thread the review found when none is named", async () => {
    const review = await call("review_runs", {});
    const transcript = (await call("get_run_transcript", {}, { run_review: review })) as { threadId: string };
    expect(transcript.threadId).toBe(RECOVERED);
    const none = await failure("get_run_transcript", {});
    expect(none.code).toBe("INVALID_REQUEST");
    expect(none.message).toContain("needs a thread");
  });

  it("get_tool_output_full gives each dispatch of a step whole: parameters, errors, outputs", async () => {
    const failed = (await call("get_tool_output_full", { threadId: RECOVERED, stepId: "hotel" })) as {
      dispatches: {
        feedbackType: string;
        tool: string;
        params: Record<string, unknown>;
        errors: string[];
        failureClass: string;
      }[];
    };
    expect(failed.dispatches).toEqual([
      expect.objectContaining({ feedbackType: "FAILURE", tool: "search_hotels", failureClass: "resource_unavailable" }),
    ]);
    expect(failed.dispatches[0]!.errors[0]).toContain("unavailable");
    expect(failed.dispatches[0]!.params).toMatchObject({ city: "Paris" });
    const alt = (await call("get_tool_output_full", { threadId: RECOVERED, stepId: "hotel_alt" })) as {
      result: unknown;
      dispatches: { feedbackType: string; outputs: Record<string, unknown> }[];
    };
    expect(alt.dispatches.map((d) => d.feedbackType)).toEqual(["SUCCESS"]);
    expect(alt.dispatches[0]!.outputs.result).toEqual(alt.result);
  });

  it("an unknown thread or step is a coded error that names what exists", async () => {
    const thread = await failure("get_run_context", { threadId: "nope" });
    expect(thread.code).toBe("UNKNOWN_THREAD");
    expect(thread.message).toContain(RECOVERED);
    expect(thread.details.failureClass).toBe("invalid_parameters");
    const step = await failure("get_tool_output_full", { threadId: RECOVERED, stepId: "nope" });
    expect(step.code).toBe("INVALID_REQUEST");
    expect(step.message).toMatch(/no step "nope".*hotel_alt/);
    const dispatch = await failure("get_tool_output_full", { threadId: RECOVERED, stepId: "hotel", dispatch: 9 });
    expect(dispatch.message).toContain("no dispatch 9");
  });

  it("write_debug_report writes the findings under .candor/reports and the reading tools change nothing", async () => {
    const before = [await checkpointCount(RECOVERED), await checkpointCount(APPROVED)];
    const run_review = await call("review_runs", {});
    const run_context = await call("get_run_context", { threadId: RECOVERED });
    const run_transcript = await call("get_run_transcript", { threadId: RECOVERED });
    const written = (await call(
      "write_debug_report",
      { title: "Hotel / failure?" },
      { run_review, run_context, run_transcript },
    )) as {
      file: string;
      findings: string[];
    };
    expect(written.file).toBe(path.join(workspace, ".candor/reports/hotel-failure-20260102T030405.md"));
    const text = readFileSync(written.file, "utf8");
    expect(text).toMatch(/^# Hotel \/ failure\?/);
    expect(text).toContain("hotel failed (resource_unavailable) and was recovered by FIND_WORKAROUND");
    expect(text).toContain(`## Transcript of ${RECOVERED}`);
    expect(written.findings[0]).toMatch(/1 of 2 thread\(s\) reviewed have anomalies: recovered/);
    expect([await checkpointCount(RECOVERED), await checkpointCount(APPROVED)]).toEqual(before);
  });
});

describe("write_debug_report is confined to the workspace", () => {
  it("refuses a reports folder outside the workspace, and a symlinked one that leads out", async () => {
    const outside = mkdtempSync(path.join(tmpdir(), "candor-outside-"));
    try {
      const archive = persistenceArchive(persistence, async (id) => (await graph.getState(threadConfig(id))).values);
      const escape = debuggingToolkit({ archive, root: workspace, reportsDir: "../elsewhere" }).tools.find(
        (t) => t.name === "write_debug_report",
      )!;
      const ctx: ToolContext = { signal: new AbortController().signal, inputs: {}, stepId: "s", attempt: 1 };
      await expect(escape.run(escape.schema.parse({ title: "t" }), ctx)).rejects.toMatchObject({
        code: "TOOL_FAILED",
        details: { failureClass: "policy_blocked" },
      });
      mkdirSync(path.join(workspace, "links"), { recursive: true });
      symlinkSync(outside, path.join(workspace, "links", "out"));
      expect(lstatSync(path.join(workspace, "links", "out")).isSymbolicLink()).toBe(true);
      const linked = debuggingToolkit({ archive, root: workspace, reportsDir: "links/out" }).tools.find(
        (t) => t.name === "write_debug_report",
      )!;
      await expect(linked.run(linked.schema.parse({ title: "t" }), ctx)).rejects.toMatchObject({
        details: { failureClass: "policy_blocked" },
      });
      expect(readdirSync(outside)).toEqual([]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
