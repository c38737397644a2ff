import { describe, expect, it } from "vitest";
import type { Notification, Progress } from "../../src/domain/notification.js";
import type { Plan } from "../../src/domain/plan.js";
import {
  runEagerPass,
  type EagerPassHooks,
  type EagerPassInput,
  type RunTask,
  type StepTaskResult,
} from "../../src/execution/eager-pass.js";
import type { WorkerStepOutcome } from "../../src/execution/worker-step.js";
import { callOrder } from "../../src/planning/schedule.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { notification } from "../../src/transparency/notify.js";
import { feedback, plan } from "../fakes/toolkit-fixtures.js";

/**
 * Plan order c1 c2 c3 d1 d2 e1; call order (by depth, then plan order) c1 d1 e1 c2 d2 c3. With d1 slower than the
 * c chain, steps become ready in another order (c3 before d2): the order tasks are called in must not follow it.
 */
const dag = (): Plan =>
  plan([
    { id: "c1", tools: ["t"] },
    { id: "c2", tools: ["t"], dependsOn: ["c1"] },
    { id: "c3", tools: ["t"], dependsOn: ["c2"] },
    { id: "d1", tools: ["t"] },
    { id: "d2", tools: ["t"], dependsOn: ["d1"] },
    { id: "e1", tools: ["t"] },
  ]);

/** Turns of the event loop each step's run takes (no timers: the order of outcomes is fixed). */
const TURNS: Record<string, number> = { c1: 1, c2: 1, c3: 1, d1: 6, d2: 1, e1: 0 };

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await turn();
};

/** LangGraph's task() with nothing saved: the body runs. */
const direct: RunTask = (stepId, body) => body(stepId);

const input = (p: Plan, extra: Partial<EagerPassInput> = {}): EagerPassInput => ({
  plan: p,
  workerFeedback: [],
  startedAt: Date.now(),
  progress: null,
  tokens: [],
  threadId: "t-1",
  ...extra,
});

/**
 * The hooks a pass needs, faked: each step's run ends after its TURNS (or when the test ends it, with `manual`), its
 * result marked with `label` so a test can tell which pass produced a step's result; everything emitted is kept.
 */
function fakes(label: string, opts: { runTask?: RunTask; manual?: boolean; deferred?: (id: string) => boolean } = {}) {
  const started: string[] = [];
  const taskCalls: string[] = [];
  const emitted: Notification[] = [];
  const progress: Progress[] = [];
  const finish = new Map<string, () => void>();
  const decisionLog = memoryDecisionLog();
  const runTask = opts.runTask ?? direct;
  const hooks: EagerPassHooks = {
    runTask: (stepId, body) => {
      taskCalls.push(stepId);
      return runTask(stepId, body);
    },
    runStep: async (step, _inputs, p): Promise<WorkerStepOutcome> => {
      started.push(step.id);
      expect(p.planId).toBe("plan-test");
      if (opts.manual) await new Promise<void>((resolve) => finish.set(step.id, resolve));
      else await turns(TURNS[step.id] ?? 0);
      const told = notification({ severity: "INFO", kind: "step_succeeded", taskId: step.id, title: `${step.id} ran` });
      // A step's run announces as it goes, as runWorkerStep does.
      hooks.emitNotification(told);
      return {
        feedback: feedback({ taskId: step.id, dispatch: step.dispatches, outputs: { result: `${step.id}@${label}` } }),
        notifications: [told],
      };
    },
    deferred: (step) => opts.deferred?.(step.id) ?? false,
    inputsOf: () => ({ required: [], optional: [] }),
    emitNotification: (n) => emitted.push(n),
    emitProgress: (p) => progress.push(p),
    decisionLog,
  };
  const end = async (id: string) => {
    const f = finish.get(id);
    if (!f) throw new Error(`${id} is not running (started: ${started.join(", ")})`);
    finish.delete(id);
    f();
    await turns(5);
  };
  return { hooks, started, taskCalls, emitted, progress, decisionLog, end };
}

const results = (p: Plan) => Object.fromEntries(p.steps.map((s) => [s.id, s.result]));
const statuses = (p: Plan) => Object.fromEntries(p.steps.map((s) => [s.id, s.status]));

describe("runEagerPass, without a graph", () => {
  it("runs every step in its own task, calling the tasks in call order whatever order the steps become ready in", async () => {
    const f = fakes("1");
    const out = await runEagerPass(input(dag()), f.hooks);
    expect(statuses(out.plan)).toEqual({ c1: "done", c2: "done", c3: "done", d1: "done", d2: "done", e1: "done" });
    // Ready (and started) in one order, called in another: the plan's.
    expect(f.started).toEqual(["c1", "d1", "e1", "c2", "c3", "d2"]);
    expect(f.taskCalls).toEqual(callOrder(dag()));
    expect(f.taskCalls).toEqual(["c1", "d1", "e1", "c2", "d2", "c3"]);
    expect(out.feedback.map((x) => x.taskId)).toEqual(["e1", "c1", "c2", "c3", "d1", "d2"]);
    expect(results(out.plan)).toMatchObject({ c3: "c3@1", d2: "d2@1" });
  });

  it("tells the user everything in the order it happened, and returns exactly what it emitted", async () => {
    const f = fakes("1");
    const out = await runEagerPass(input(dag()), f.hooks);
    expect(out.notifications).toEqual(f.emitted);
    // Each step's own announcement, then the progress that counts it.
    const titles = out.notifications.map((n) => (n.kind === "progress" ? `progress ${n.taskId}` : n.title));
    expect(titles.filter((t) => t.endsWith(" ran") || t.startsWith("progress"))).toEqual(
      ["e1", "c1", "c2", "c3", "d1", "d2"].flatMap((id) => [`${id} ran`, `progress ${id}`]),
    );
    expect(f.progress.map((p) => [p.taskId, p.done])).toEqual([
      ["e1", 1],
      ["c1", 2],
      ["c2", 3],
      ["c3", 4],
      ["d1", 5],
      ["d2", 6],
    ]);
    expect(out.progress).toEqual(f.progress.at(-1));
    expect(out.progress).toMatchObject({ percent: 100, total: 6 });
    expect(f.decisionLog.entries.map((d) => `${d.operation} ${d.taskId} ${d.reasoning}`)).toEqual([
      "dispatch c1 no dependencies",
      "dispatch d1 no dependencies",
      "dispatch e1 no dependencies",
      "dispatch c2 dependencies c1 are done",
      "dispatch c3 dependencies c2 are done",
      "dispatch d2 dependencies d1 are done",
    ]);
  });

  it("makes the next steps' tasks while the running steps run, before they are ready, and no further", async () => {
    const f = fakes("1", { manual: true });
    const pass = runEagerPass(input(dag()), f.hooks);
    await turns(5);
    expect(f.started).toEqual(["c1", "d1", "e1"]);
    // c2 and d2 can start next (their dependency is running): their tasks already wait at their gates; c3's not.
    expect(f.taskCalls).toEqual(["c1", "d1", "e1", "c2", "d2"]);
    await f.end("c1");
    expect(f.started).toEqual(["c1", "d1", "e1", "c2"]);
    expect(f.taskCalls).toEqual(["c1", "d1", "e1", "c2", "d2", "c3"]);
    for (const id of ["e1", "c2", "c3", "d1", "d2"]) await f.end(id);
    expect(statuses((await pass).plan)).toMatchObject({ c3: "done", d2: "done" });
  });

  it("starts a dependent as soon as the step's outcome is known, not when its task has ended, and still awaits every task", async () => {
    const held: (() => void)[] = [];
    // A task whose end (its result saved, its promise settled) comes only when the test says so.
    const slow: RunTask = (stepId, body) =>
      body(stepId).then((r) => new Promise<StepTaskResult>((resolve) => held.push(() => resolve(r))));
    const f = fakes("1", { runTask: slow });
    let ended = false;
    const pass = runEagerPass(input(dag()), f.hooks).then((out) => {
      ended = true;
      return out;
    });
    await turns(30);
    // Every step ran although no task has ended yet.
    expect(f.started).toEqual(["c1", "d1", "e1", "c2", "c3", "d2"]);
    expect(held).toHaveLength(6);
    expect(ended).toBe(false);
    for (const release of held.splice(0, 5)) release();
    await turns(5);
    expect(ended).toBe(false);
    held.shift()!();
    expect(statuses((await pass).plan)).toMatchObject({ c3: "done", d2: "done" });
  });

  it("leaves a deferred step running for the router, what needs it waiting, and ends its task with nothing to do", async () => {
    const bodies: StepTaskResult[] = [];
    const recording: RunTask = async (stepId, body) => {
      const r = await body(stepId);
      bodies.push(r);
      return r;
    };
    const f = fakes("1", { runTask: recording, deferred: (id) => id === "c2" });
    const out = await runEagerPass(input(dag()), f.hooks);
    expect(statuses(out.plan)).toEqual({
      c1: "done",
      c2: "running",
      c3: "pending",
      d1: "done",
      d2: "done",
      e1: "done",
    });
    expect(out.plan.steps.find((s) => s.id === "c2")!.dispatches).toBe(1);
    expect(f.started).not.toContain("c2");
    // Its task was made ahead (c1 was running) and ended when the pass closed, like every task.
    expect(f.taskCalls).toEqual(["c1", "d1", "e1", "c2", "d2"]);
    expect(bodies.filter((r) => !r.ran)).toHaveLength(1);
    expect(bodies).toHaveLength(5);
  });

  it("folds in what the worker subgraph ran first, reporting it, then runs what it unblocked", async () => {
    const p = plan([
      { id: "gate", tools: ["t"], status: "running", dispatches: 1 },
      { id: "after", tools: ["t"], dependsOn: ["gate"] },
    ]);
    const f = fakes("1");
    const worker = feedback({ taskId: "gate", dispatch: 1, outputs: { result: "gate@worker" } });
    const out = await runEagerPass(input(p, { workerFeedback: [worker] }), f.hooks);
    expect(statuses(out.plan)).toEqual({ gate: "done", after: "done" });
    expect(f.progress.map((x) => [x.taskId, x.status, x.done])).toEqual([
      ["gate", "SUCCESS", 1],
      ["after", "SUCCESS", 2],
    ]);
    expect(f.started).toEqual(["after"]);
    // The pass's own feedback only: the worker's is already in state.
    expect(out.feedback.map((x) => x.taskId)).toEqual(["after"]);
  });

  it("announces and logs a skipped step, and reports progress for it", async () => {
    const p = plan([
      { id: "gone", tools: ["t"], status: "skipped", skipReason: "given up", skipCause: "failed" },
      { id: "mid", tools: ["t"], dependsOn: ["gone"] },
      { id: "other", tools: ["t"] },
    ]);
    const f = fakes("1");
    const out = await runEagerPass(input(p), f.hooks);
    expect(statuses(out.plan)).toEqual({ gone: "skipped", mid: "skipped", other: "done" });
    expect(out.notifications[0]).toMatchObject({ kind: "step_failed", taskId: "mid", severity: "WARNING" });
    expect(out.notifications[1]).toMatchObject({ kind: "progress", taskId: "mid" });
    expect(f.decisionLog.entries[0]).toMatchObject({ operation: "dispatch", taskId: "mid", decision: "skip" });
    expect(out.feedback.map((x) => [x.taskId, x.feedbackType])).toEqual([
      ["mid", "DEPENDENCY_FAILURE"],
      ["other", "SUCCESS"],
    ]);
  });

  it("keeps the progress it was given when nothing is reported", async () => {
    const p = plan([{ id: "book", tools: ["t"] }]);
    const before: Progress = {
      at: "",
      taskId: "x",
      status: "SUCCESS",
      done: 1,
      skipped: 0,
      total: 2,
      percent: 50,
      etaMs: 0,
    };
    const f = fakes("1", { deferred: () => true });
    const out = await runEagerPass(input(p, { progress: before }), f.hooks);
    expect(out.progress).toBe(before);
    expect(f.progress).toEqual([]);
  });
});

describe("runEagerPass resumed after a crash (the call-order contract)", () => {
  /** The first pass, every task's result kept by its call index, as LangGraph keeps a task's writes. */
  async function firstPass() {
    const saved: StepTaskResult[] = [];
    let calls = 0;
    const saving: RunTask = async (stepId, body) => {
      const i = calls++;
      const r = await body(stepId);
      saved[i] = r;
      return r;
    };
    const f = fakes("first", { runTask: saving });
    await runEagerPass(input(dag()), f.hooks);
    return { saved, order: f.taskCalls };
  }

  /** A resumed pass: the i-th call gets the i-th saved result when there is one, and its body never runs. */
  function replaying(saved: readonly (StepTaskResult | undefined)[]): RunTask {
    let calls = 0;
    return (stepId, body) => {
      const r = saved[calls++];
      return r ? Promise.resolve(r) : body(stepId);
    };
  }

  it.each([0, 1, 3, 4, 5, 6])(
    "with the first %i results saved, runs only the rest and gives each saved result to its own step",
    async (k) => {
      const { saved, order } = await firstPass();
      expect(order).toEqual(["c1", "d1", "e1", "c2", "d2", "c3"]);
      const f = fakes("resumed", { runTask: replaying(saved.slice(0, k)) });
      const out = await runEagerPass(input(dag()), f.hooks);
      expect(f.taskCalls).toEqual(order);
      expect([...f.started].sort()).toEqual(order.slice(k).sort());
      expect(results(out.plan)).toEqual(
        Object.fromEntries(order.map((id, i) => [id, `${id}@${i < k ? "first" : "resumed"}`])),
      );
      // A replayed step is not announced again, but its notifications are in the pass's record.
      const announced = f.emitted.filter((n) => n.title.endsWith(" ran")).map((n) => n.taskId!);
      expect(announced.sort()).toEqual([...f.started].sort());
      expect(out.notifications.filter((n) => n.title.endsWith(" ran"))).toHaveLength(6);
    },
  );

  it("matches saved results by call order also when the unfinished step is not the last one called", async () => {
    const { saved, order } = await firstPass();
    // The first process died while d2 (called fifth) still ran: everything else had saved its result.
    const crashed = saved.map((r, i) => (order[i] === "d2" ? undefined : r));
    const f = fakes("resumed", { runTask: replaying(crashed) });
    const out = await runEagerPass(input(dag()), f.hooks);
    expect(f.started).toEqual(["d2"]);
    expect(results(out.plan)).toMatchObject({ c3: "c3@first", d2: "d2@resumed" });
  });

  it("refuses a history whose saved result says a step that is ready now did not run", async () => {
    const f = fakes("resumed", { runTask: replaying([{ ran: false }]) });
    await expect(runEagerPass(input(dag()), f.hooks)).rejects.toMatchObject({ code: "STORAGE" });
  });
});
