import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TaskStep } from "../../src/domain/plan.js";
import { decideStep, feedbackOf, settleStep, type CallRecord, type StepEnding } from "../../src/execution/evidence.js";
import { finalStatus } from "../../src/reflection/reflect.js";
import { missingFromAnswer } from "../../src/planning/coverage.js";
import { feedback, plan } from "../fakes/toolkit-fixtures.js";

const step = (over: Partial<TaskStep> = {}) =>
  TaskStep.parse({ id: "s1", description: "Do it", workerType: "w", status: "running", dispatches: 1, ...over });

const ok = (tool: string, result: unknown, over: Partial<CallRecord> = {}): CallRecord => ({
  tool,
  args: {},
  produces: [],
  sideEffect: "none",
  outcome: { kind: "succeeded", result, reused: null },
  ...over,
});

const failed = (tool: string, failureClass: CallRecord["outcome"] extends infer O ? O : never, over = {}) => ({
  tool,
  args: {},
  produces: [],
  sideEffect: "none" as const,
  outcome: failureClass,
  ...over,
});

const answered = (text: string): StepEnding => ({ kind: "answered", text, modelCalls: 2 });
const none = () => [];

describe("decideStep: done only on evidence", () => {
  it("a side effect whose last call failed fails the step whatever the model answered, with the call's class", () => {
    const v = decideStep({
      step: step({ expectedOutputs: [] }),
      calls: [
        ok("search", { n: 1 }),
        failed(
          "book",
          { kind: "failed", error: "card declined", failureClass: "policy_blocked", errorType: null, outputs: {} },
          { sideEffect: "irreversible" },
        ),
      ],
      ending: answered("Booked! Confirmation X1."),
      producers: none,
    });
    expect(v).toMatchObject({ ok: false, failureClass: "policy_blocked", tool: "book" });
    expect(!v.ok && v.message).toContain("contradicted");
  });

  it("a later successful call of the same side effect makes up for an earlier failure", () => {
    const fail = { kind: "failed", error: "busy", failureClass: "agent_unavailable", errorType: null, outputs: {} };
    const v = decideStep({
      step: step({ expectedOutputs: [] }),
      calls: [
        failed("book", fail as never, { sideEffect: "irreversible" }),
        ok("book", { ref: "B2" }, { sideEffect: "irreversible" }),
      ],
      ending: answered("Booked."),
      producers: none,
    });
    expect(v).toMatchObject({ ok: true, result: { ref: "B2" }, tool: "book" });
  });

  it("words can deny success, never grant it: 'I could not complete this step' fails a step whose calls worked", () => {
    const v = decideStep({
      step: step({ expectedOutputs: [] }),
      calls: [ok("list", ["a"])],
      ending: answered("I could not complete this step."),
      producers: none,
    });
    expect(v).toMatchObject({ ok: false, failureClass: "no_result", tool: null });
  });

  it("an answer with calls that did not produce the expected output is claimed_without_evidence", () => {
    const v = decideStep({
      step: step({ expectedOutputs: ["receipt"] }),
      calls: [ok("search", [1])],
      ending: answered("All done."),
      producers: (name) => (name === "receipt" ? ["book"] : []),
    });
    expect(v).toMatchObject({ ok: false, failureClass: "claimed_without_evidence" });
  });

  it("a limited result is a partial success that names its limit", () => {
    const result = { text: "abc", limits: [{ kind: "truncated", message: "read 3 of 9 bytes" }] };
    const v = decideStep({
      step: step({ expectedOutputs: ["text"] }),
      calls: [ok("read_file", result, { produces: ["text"] })],
      ending: { kind: "direct" },
      producers: () => ["read_file"],
    });
    expect(v).toMatchObject({ ok: true, limits: ["read_file: read 3 of 9 bytes"] });
    const f = feedbackOf(v, { step: step(), durationMs: 1, cost: 0, attempt: 1, attempts: [] });
    expect(f).toMatchObject({ feedbackType: "PARTIAL_SUCCESS", limits: ["read_file: read 3 of 9 bytes"] });
    expect(settleStep(step(), f)).toMatchObject({ status: "done", limits: ["read_file: read 3 of 9 bytes"] });
  });
});

describe("settleStep: the one writer of a step's outcome", () => {
  it("a success claimed without evidence fails the step", () => {
    const claimed = feedback({
      taskId: "s1",
      dispatch: 1,
      feedbackType: "SUCCESS",
      evidence: null,
      outputs: { result: 1 },
    });
    expect(settleStep(step(), claimed)).toMatchObject({ status: "failed", result: null });
    const proven = feedback({ taskId: "s1", dispatch: 1, feedbackType: "SUCCESS", outputs: { result: 1 } });
    expect(settleStep(step(), proven)).toMatchObject({ status: "done", result: 1 });
  });

  it("no other code in src/, nodes/ or graphs/ marks a step done", () => {
    const files = ["src", "nodes", "graphs"].flatMap((dir) => walk(dir));
    // A write of the status "done" in code (comments aside): `status: "done"`, `status: ok ? ("done" …`, `.status = "done"`.
    const writes = /status:\s*(?:\w+\s*\?\s*)?\(?"done"|\.status\s*=\s*"done"/;
    const code = (f: string) =>
      readFileSync(f, "utf8")
        .split("\n")
        .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
        .join("\n");
    const writers = files.filter((f) => writes.test(code(f)));
    expect(writers).toEqual([join("src", "execution", "evidence.ts")]);
  });
});

describe("a limited result cannot complete a run as if whole", () => {
  const cut = ["read_file: Read 200,000 of 3,000,000 bytes of big.txt; the rest was not read."];

  it("a run whose last result is cut ends partial, the limit named in what the answer lacks", () => {
    const p = plan([{ id: "read", status: "done", result: { text: "…" }, limits: cut }]);
    expect(finalStatus("reflecting", p)).toBe("partial");
    expect(missingFromAnswer(p)).toEqual([
      expect.objectContaining({ id: "read", reason: expect.stringContaining("not whole: read_file: Read 200,000") }),
    ]);
  });

  it("a step that worked from the cut result and made up for it (a count over the whole file) completes the run", () => {
    const p = plan([
      { id: "read", status: "done", result: { text: "…" }, limits: cut },
      { id: "count", status: "done", result: { lines: 3 }, dependsOn: ["read"] },
    ]);
    expect(finalStatus("reflecting", p)).toBe("completed");
  });

  it("a sample behind the most frequent words is no gap: the counts beside it are whole", () => {
    const result = { lines: 9, limits: [{ kind: "sampled", message: "top words from the first 2,000,000 bytes" }] };
    const v = decideStep({
      step: step({ expectedOutputs: ["analysis"] }),
      calls: [ok("text_stats", result)],
      ending: { kind: "direct" },
      producers: none,
    });
    expect(v).toMatchObject({ ok: true, limits: [] });
  });
});

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}
