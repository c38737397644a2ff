import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { TaskStep, type TaskStepInput } from "../../src/domain/plan.js";
import type { ToolApprovalRequest } from "../../src/domain/approval.js";
import { interruptPayload, parseDecision } from "../../src/replanning/human-decision.js";
import { argsHash, openEffectLedger, type EffectLedger } from "../../src/tools/effects.js";
import { deniedFeedback, runStep } from "../../src/execution/run-step.js";
import { callNeedingApproval } from "../../src/tools/pending-call.js";
import { countingTool, registryOf } from "../fakes/toolkit-fixtures.js";

const worker = { name: "worker", description: "does general things", categories: ["general"] };
const KEY = { threadId: "t1", stepId: "s1", dispatch: 1 };

let db: Database.Database;
afterEach(() => db?.close());

function ledger(): EffectLedger {
  db = new Database(":memory:");
  return openEffectLedger(db);
}

function stepFor(tool: string, extra: Partial<TaskStepInput> = {}): TaskStep {
  return TaskStep.parse({
    id: "s1",
    description: "a step",
    workerType: "worker",
    tools: [tool],
    params: { n: 1 },
    retry: { maxAttempts: 1, backoffMs: [0] },
    ...extra,
  });
}

describe("EffectLedger", () => {
  it("records a call as started, then done with its result, keyed by thread, step, dispatch and attempt", async () => {
    const l = ledger();
    expect(await l.lookup({ ...KEY, attempt: 1 })).toBeNull();
    expect(await l.verdict(KEY)).toEqual({ kind: "call" });
    await l.recordStarted({ ...KEY, attempt: 1 }, "pay", { n: 1 });
    expect(await l.lookup({ ...KEY, attempt: 1 })).toMatchObject({
      status: "started",
      tool: "pay",
      argsHash: argsHash({ n: 1 }),
      result: null,
    });
    await l.recordDone({ ...KEY, attempt: 1 }, "pay", { n: 1 }, { ref: "R1" });
    expect(await l.lookup({ ...KEY, attempt: 1 })).toMatchObject({ status: "done", result: { ref: "R1" } });
    expect(await l.verdict(KEY)).toMatchObject({ kind: "done", record: { attempt: 1, result: { ref: "R1" } } });
    // Another thread, dispatch or step is another call.
    expect(await l.verdict({ ...KEY, threadId: "t2" })).toEqual({ kind: "call" });
    expect(await l.verdict({ ...KEY, dispatch: 2 })).toEqual({ kind: "call" });
    expect(await l.verdict({ ...KEY, stepId: "s2" })).toEqual({ kind: "call" });
  });

  it("a started call without done is an unknown outcome; a failed one may be called again", async () => {
    const l = ledger();
    await l.recordFailed({ ...KEY, attempt: 1 }, "pay", {}, "503");
    expect(await l.verdict(KEY)).toEqual({ kind: "call" });
    await l.recordStarted({ ...KEY, attempt: 2 }, "pay", {});
    expect(await l.verdict(KEY)).toMatchObject({ kind: "unknown", record: { attempt: 2, status: "started" } });
  });

  it("lives in the database it is given, so it survives a reopen of the file", async () => {
    const l = ledger();
    await l.recordDone({ ...KEY, attempt: 1 }, "pay", {}, 42);
    expect(await openEffectLedger(db).verdict(KEY)).toMatchObject({ kind: "done", record: { result: 42 } });
    expect(db.prepare("SELECT count(*) AS n FROM candor_effects").get()).toEqual({ n: 1 });
  });

  it("hashes arguments independently of key order", () => {
    expect(argsHash({ a: 1, b: [1, { c: 2, d: 3 }] })).toBe(argsHash({ b: [1, { d: 3, c: 2 }], a: 1 }));
    expect(argsHash({ a: 1 })).not.toBe(argsHash({ a: 2 }));
  });
});

describe("EffectLedger durability", () => {
  /** The `synchronous` level each ledger row was committed at, read by a trigger inside the commit. */
  function levelsSeen(connectionLevel: number): { ledger: EffectLedger; seen: () => number[] } {
    db = new Database(":memory:");
    db.pragma(`synchronous = ${connectionLevel}`);
    const l = openEffectLedger(db);
    db.exec(`CREATE TABLE seen (level INTEGER);
      CREATE TRIGGER ledger_insert AFTER INSERT ON candor_effects BEGIN INSERT INTO seen SELECT synchronous FROM pragma_synchronous; END;
      CREATE TRIGGER ledger_update AFTER UPDATE ON candor_effects BEGIN INSERT INTO seen SELECT synchronous FROM pragma_synchronous; END;`);
    return {
      ledger: l,
      seen: () =>
        db
          .prepare<[], { level: number }>("SELECT level FROM seen")
          .all()
          .map((r) => r.level),
    };
  }

  it("commits every row with synchronous = FULL on a NORMAL connection, and leaves the connection NORMAL", async () => {
    const { ledger: l, seen } = levelsSeen(1);
    await l.recordStarted({ ...KEY, attempt: 1 }, "pay", { n: 1 });
    await l.recordDone({ ...KEY, attempt: 1 }, "pay", { n: 1 }, { paid: true });
    await l.recordFailed({ ...KEY, attempt: 2 }, "pay", { n: 1 }, "declined");
    expect(seen()).toEqual([2, 2, 2]);
    expect(db.pragma("synchronous", { simple: true })).toBe(1);
  });

  it("keeps a stricter connection's level (EXTRA) instead of lowering it to FULL", async () => {
    const { ledger: l, seen } = levelsSeen(3);
    await l.recordStarted({ ...KEY, attempt: 1 }, "pay", { n: 1 });
    expect(seen()).toEqual([3]);
    expect(db.pragma("synchronous", { simple: true })).toBe(3);
  });
});

describe("runStep with the effect ledger (at most once)", () => {
  it("returns the recorded result of a done call without calling the tool again, and says so", async () => {
    const l = ledger();
    const pay = countingTool("pay", { sideEffect: "irreversible", needsApproval: true });
    const registry = registryOf([pay.spec], [worker]);
    const first = await runStep({ step: stepFor("pay"), inputs: {}, registry, dispatch: 1, ledger: l, threadId: "t1" });
    expect(first.feedbackType).toBe("SUCCESS");
    expect(pay.calls).toHaveLength(1);
    const told: unknown[] = [];
    const again = await runStep({
      step: stepFor("pay"),
      inputs: {},
      registry,
      dispatch: 1,
      ledger: l,
      threadId: "t1",
      onRecordedResult: (i) => told.push(i),
    });
    expect(pay.calls).toHaveLength(1);
    expect(again).toMatchObject({
      feedbackType: "SUCCESS",
      outputs: { result: { ok: true, from: "pay" } },
      attempt: 1,
    });
    expect(told).toEqual([expect.objectContaining({ tool: "pay", attempt: 1 })]);
    // The next dispatch of the step (a revision sent it again) is a new call.
    await runStep({ step: stepFor("pay"), inputs: {}, registry, dispatch: 2, ledger: l, threadId: "t1" });
    expect(pay.calls).toHaveLength(2);
  });

  it("a call started but never finished (a crash mid-call) is not repeated: policy_blocked, a human must check", async () => {
    const l = ledger();
    const pay = countingTool("pay", { sideEffect: "irreversible" });
    await l.recordStarted({ ...KEY, attempt: 1 }, "pay", { n: 1 });
    const feedback = await runStep({
      step: stepFor("pay"),
      inputs: {},
      registry: registryOf([pay.spec], [worker]),
      dispatch: 1,
      ledger: l,
      threadId: "t1",
    });
    expect(pay.calls).toHaveLength(0);
    expect(feedback).toMatchObject({
      feedbackType: "FAILURE",
      failureClass: "policy_blocked",
      tool: "pay",
      attempt: 0,
    });
    expect(feedback.errors[0]).toMatch(
      /pay may already have run: .*never recorded.*not called again: a human must check/,
    );
  });

  it("a done call with other arguments (a fork changed them) is neither reused nor repeated without a person", async () => {
    const l = ledger();
    const pay = countingTool("pay", { sideEffect: "irreversible" });
    await l.recordDone({ ...KEY, attempt: 1 }, "pay", { n: 2 }, { ref: "R1" });
    const feedback = await runStep({
      step: stepFor("pay"),
      inputs: {},
      registry: registryOf([pay.spec], [worker]),
      dispatch: 1,
      ledger: l,
      threadId: "t1",
    });
    expect(pay.calls).toHaveLength(0);
    expect(feedback).toMatchObject({ feedbackType: "FAILURE", failureClass: "policy_blocked" });
    expect(feedback.errors[0]).toMatch(
      /already ran .* for another request, other arguments or other inputs .* a person must approve the new call first/,
    );
    // Approved anew (the gate asked, saying why), the call is made for the new arguments; the old result is not reused.
    const approved = await runStep({
      step: stepFor("pay"),
      inputs: {},
      registry: registryOf([pay.spec], [worker]),
      dispatch: 1,
      ledger: l,
      threadId: "t1",
      approved: true,
    });
    expect(pay.calls).toHaveLength(1);
    expect(approved).toMatchObject({ feedbackType: "SUCCESS" });
  });

  it("records a reversible tool's calls, failed attempts included", async () => {
    const l = ledger();
    const hold = countingTool("hold_seat", {
      sideEffect: "reversible",
      run: (_args, _ctx, call) =>
        call === 1 ? Promise.reject(new Error("service unavailable")) : Promise.resolve({ seat: "12A" }),
    });
    const step = stepFor("hold_seat", { retry: { maxAttempts: 2, backoffMs: [0] } });
    const feedback = await runStep({
      step,
      inputs: {},
      registry: registryOf([hold.spec], [worker]),
      dispatch: 1,
      ledger: l,
      threadId: "t1",
    });
    expect(feedback).toMatchObject({ feedbackType: "SUCCESS", attempt: 2 });
    expect(await l.lookup({ ...KEY, attempt: 1 })).toMatchObject({ status: "failed", result: "service unavailable" });
    expect(await l.lookup({ ...KEY, attempt: 2 })).toMatchObject({
      status: "done",
      tool: "hold_seat",
      result: { seat: "12A" },
    });
  });

  it("a tool without side effects bypasses the ledger", async () => {
    const l = ledger();
    const read = countingTool("read_file");
    const registry = registryOf([read.spec], [worker]);
    await runStep({ step: stepFor("read_file"), inputs: {}, registry, dispatch: 1, ledger: l, threadId: "t1" });
    await runStep({ step: stepFor("read_file"), inputs: {}, registry, dispatch: 1, ledger: l, threadId: "t1" });
    expect(read.calls).toHaveLength(2);
    expect(db.prepare("SELECT count(*) AS n FROM candor_effects").get()).toEqual({ n: 0 });
  });

  it("without a thread id there is nothing to key calls by, so the ledger is not used", async () => {
    const l = ledger();
    const pay = countingTool("pay", { sideEffect: "irreversible" });
    await runStep({
      step: stepFor("pay"),
      inputs: {},
      registry: registryOf([pay.spec], [worker]),
      dispatch: 1,
      ledger: l,
      threadId: null,
    });
    expect(db.prepare("SELECT count(*) AS n FROM candor_effects").get()).toEqual({ n: 0 });
  });
});

describe("which calls need a person's approval", () => {
  const pay = countingTool("pay", { sideEffect: "irreversible" });
  const notify = countingTool("notify", { needsApproval: true });
  const hold = countingTool("hold_seat", { sideEffect: "reversible" });
  const registry = registryOf([pay.spec, notify.spec, hold.spec], [worker]);

  it("irreversible or needsApproval tools, with the exact validated arguments", () => {
    expect(callNeedingApproval(stepFor("pay"), registry)).toMatchObject({ tool: { name: "pay" }, args: { n: 1 } });
    expect(callNeedingApproval(stepFor("notify"), registry)?.tool.name).toBe("notify");
    expect(callNeedingApproval(stepFor("hold_seat"), registry)).toBeNull();
  });

  it("a call that would be refused anyway (not granted) asks nobody", () => {
    const reader = countingTool("read_file", { category: "reading" });
    const grants = registryOf(
      [pay.spec, reader.spec],
      [worker, { name: "reader", description: "", categories: ["reading"] }],
    );
    expect(callNeedingApproval(stepFor("pay", { workerType: "reader" }), grants)).toBeNull();
  });

  it("a denied call is a policy_blocked failure naming the exact call", () => {
    const f = deniedFeedback(stepFor("pay"), 3, { tool: "pay", args: { n: 1 } }, "too expensive");
    expect(f).toMatchObject({
      taskId: "s1",
      dispatch: 3,
      feedbackType: "FAILURE",
      failureClass: "policy_blocked",
      attempt: 0,
      tool: "pay",
    });
    expect(f.errors).toEqual([`A human denied pay({"n":1}) (too expensive); the tool was not called.`]);
  });
});

describe("answers to a tool approval", () => {
  const request: ToolApprovalRequest = {
    kind: "tool_approval",
    planId: "p1",
    taskId: "book",
    tool: "book_trip",
    args: { ref: "X" },
    sideEffect: "irreversible",
    question: "Approve?",
    decisions: ["approve", "deny"],
  };

  it("approve and deny are accepted, as Candor decisions or bare strings", () => {
    expect(parseDecision("deny", request)).toMatchObject({ ok: true, decision: { decision: "deny" } });
    expect(parseDecision({ decision: "approve", by: "ops" }, request)).toMatchObject({
      ok: true,
      decision: { decision: "approve", by: "ops" },
    });
  });

  it("a decision of another request kind is refused with the ones that fit", () => {
    expect(parseDecision({ decision: "skip" }, request)).toEqual({
      ok: false,
      error: `"skip" does not answer a tool_approval request. Send one of: approve, deny.`,
    });
  });

  it("HumanResponse: accept approves, ignore and response deny (the text is the reason), edit is refused", () => {
    expect(parseDecision({ type: "accept", args: null }, request)).toMatchObject({
      ok: true,
      decision: { decision: "approve" },
    });
    expect(parseDecision([{ type: "ignore", args: null }], request)).toMatchObject({
      ok: true,
      decision: { decision: "deny" },
    });
    expect(parseDecision({ type: "response", args: "wrong dates" }, request)).toMatchObject({
      ok: true,
      decision: { decision: "deny", comment: "wrong dates" },
    });
    const edit = parseDecision({ type: "edit", args: { action: "book_trip", args: { ref: "Y" } } }, request);
    expect(edit.ok).toBe(false);
  });

  it("the payload is a HumanInterrupt for the exact call, with the request alongside", () => {
    const payload = interruptPayload(request, "try again");
    expect(payload).toMatchObject({
      ...request,
      candor: request,
      action_request: { action: "book_trip", args: { ref: "X" } },
      config: { allow_accept: true, allow_edit: false, allow_respond: true, allow_ignore: true },
      error: "try again",
    });
    expect(payload.description).toContain(`book_trip({"ref":"X"})`);
  });
});
