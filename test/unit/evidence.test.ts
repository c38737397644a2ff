import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TaskStep } from "../../src/domain/plan.js";
import { decideStep, feedbackOf, settleStep, type CallRecord, type StepEnding } from "../../src/execution/evidence.js";
import { finalStatus } from "../../src/reflection/reflect.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { recordedValuesFor, requestLineage } from "../../src/execution/values.js";
import { applyRecordedValues, defaultedText } from "../../src/tools/args.js";
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

  it("a step that names no output has each tool's last successful output: the count and the report written from it", () => {
    const v = decideStep({
      step: step({ expectedOutputs: [] }),
      calls: [ok("count", { words: 40 }), ok("count", { words: 50 }), ok("write_report", { file: "r.md" })],
      ending: answered("Wrote the report."),
      producers: none,
    });
    expect(v).toMatchObject({ ok: true, result: { count: { words: 50 }, write_report: { file: "r.md" } } });
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

describe("the value used is the value recorded", () => {
  it("a step's recorded values: what was read and what was changed, for the step and its replacements", () => {
    const p = plan(
      [
        { id: "check", status: "failed" },
        { id: "check_retry", status: "pending", lineage: ["check"] },
      ],
      {
        understanding: {
          by: "llm",
          values: [{ name: "budget", value: 1_000_000, source: "1,000,000 yen", stepIds: ["check"] }],
          changes: [{ name: "budget", from: 1_000_000, to: 6962, why: "converted to USD", stepIds: ["check"] }],
        },
      },
    );
    expect(recordedValuesFor(p, "check_retry")).toEqual([
      { name: "budget", value: 1_000_000, from: '"1,000,000 yen"', kind: "read" },
      { name: "budget", value: 6962, from: "1000000 changed: converted to USD", kind: "change", previous: 1_000_000 },
    ]);
  });

  const budget = { schema: z.object({ budget: z.number(), dir: z.string().default(".") }) };
  const converted = {
    name: "budget",
    value: 6962,
    from: "converted",
    kind: "change" as const,
    previous: "1,000,000 JPY",
  };

  it("a change must reach the tool: a call still carrying the value from before it gets the changed one, named", () => {
    expect(applyRecordedValues({ budget: 1_000_000, dir: "." }, [converted], budget)).toEqual({
      args: { budget: 6962, dir: "." },
      applied: [
        "budget = 6962 as the request's record says (converted); the call had 1000000, the value before the change",
      ],
    });
    expect(applyRecordedValues({ budget: 6962 }, [converted], budget).applied).toEqual([]);
  });

  it("a value read fills a parameter the call left out, but never overrides one a step derived", () => {
    const dir = { name: "dir", value: "src", from: '"the files in src"', kind: "read" as const };
    expect(applyRecordedValues({ budget: 1 }, [dir], budget)).toEqual({
      args: { budget: 1, dir: "src" },
      applied: ['dir = "src" as the request\'s record says ("the files in src"); the call left it out'],
    });
    expect(applyRecordedValues({ budget: 1, dir: "src/cli" }, [dir], budget).applied).toEqual([]);
    const twoCities = [dir, { ...dir, value: "test" }];
    expect(applyRecordedValues({ budget: 1 }, twoCities, budget).applied).toEqual([]);
  });

  it("a change in words the tool cannot take is kept out of the call and named when the call did not carry it", () => {
    const inWords = { ...converted, value: "6,962 USD" };
    expect(applyRecordedValues({ budget: 1_000_000 }, [inWords], budget)).toEqual({
      args: { budget: 1_000_000 },
      applied: [
        'budget: the request\'s record says "6,962 USD" (converted), which the tool cannot take as it is; the call had 1000000, the value before the change',
      ],
    });
    expect(applyRecordedValues({ budget: 6962 }, [inWords], budget).applied).toEqual([]);
  });

  it("a text parameter the call leaves out is named with the default the tool fills; switches and choices are not", () => {
    const tool = {
      schema: z.object({
        dir: z.string().min(1).default("."),
        limit: z.number().default(10),
        order: z.enum(["name", "size"]).default("name"),
        title: z.string().optional(),
      }),
    };
    expect(defaultedText(tool, {})).toEqual(['dir = "."']);
    expect(defaultedText(tool, { dir: "src" })).toEqual([]);
  });

  it("a request's lineage changes with the request, not with anything else", () => {
    const request = (userIntent: string) => PlanningRequest.parse({ userIntent, userContext: { userId: "u" } });
    expect(requestLineage(request("buy the lamp"))).toBe(requestLineage(request("buy the lamp")));
    expect(requestLineage(request("buy the lamp"))).not.toBe(requestLineage(request("buy the red lamp")));
  });
});

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}
