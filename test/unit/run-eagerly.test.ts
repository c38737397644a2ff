import { describe, expect, it } from "vitest";
import type { ExecutionFeedback } from "../../src/domain/feedback.js";
import type { Plan, TaskStep } from "../../src/domain/plan.js";
import { runEagerly, type EagerHooks } from "../../src/execution/run-eagerly.js";
import { failure, feedback, plan } from "../fakes/toolkit-fixtures.js";

/**
 * A launcher whose steps finish when the test says so, recording what was running at each moment: the test
 * drives the order of outcomes, so "a step starts the moment its last dependency settles" is checked without
 * any timing.
 */
function controlled(outcomes: Record<string, "ok" | "fail"> = {}) {
  const finish = new Map<string, () => void>();
  const started: string[] = [];
  const events: string[] = [];
  const hooks: EagerHooks = {
    inputsOf: () => ({ required: [], optional: [] }),
    deferred: () => false,
    launch: (step: TaskStep, inputs: Record<string, unknown>) =>
      new Promise<ExecutionFeedback>((resolve) => {
        started.push(step.id);
        events.push(
          `start ${step.id}${Object.keys(inputs).length ? ` with ${Object.keys(inputs).sort().join(",")}` : ""}`,
        );
        finish.set(step.id, () =>
          resolve(
            outcomes[step.id] === "fail"
              ? failure(step.id, "boom", { dispatch: step.dispatches })
              : feedback({ taskId: step.id, dispatch: step.dispatches, outputs: { result: `${step.id}!` } }),
          ),
        );
      }),
    onSettled: (step) => events.push(`end ${step.id} ${step.status}`),
  };
  /** Lets the step finish, then lets the scheduler react (a few turns of the event loop). */
  const end = async (id: string) => {
    const f = finish.get(id);
    if (!f) throw new Error(`${id} is not running (started: ${started.join(", ")})`);
    finish.delete(id);
    f();
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  const running = () => [...finish.keys()].sort();
  return { hooks, end, running, started, events };
}

const tick = () => new Promise((r) => setImmediate(r));

/** a1 → a2 → a3 beside a slow b1, and c joining a3 and b1 (the issue's irregular DAG). */
const irregular = (): Plan =>
  plan([
    { id: "a1", tools: ["t"] },
    { id: "a2", tools: ["t"], dependsOn: ["a1"] },
    { id: "a3", tools: ["t"], dependsOn: ["a2"] },
    { id: "b1", tools: ["t"] },
    { id: "c", tools: ["t"], dependsOn: ["a3", "b1"] },
  ]);

describe("runEagerly", () => {
  it("starts each step the moment its last dependency settles, never waiting for a sibling", async () => {
    const c = controlled();
    const pass = runEagerly(irregular(), c.hooks);
    await tick();
    expect(c.running()).toEqual(["a1", "b1"]);
    await c.end("a1");
    // b1 (the slow sibling) still runs, and a2 has already started.
    expect(c.running()).toEqual(["a2", "b1"]);
    await c.end("a2");
    expect(c.running()).toEqual(["a3", "b1"]);
    await c.end("a3");
    expect(c.running()).toEqual(["b1"]);
    await c.end("b1");
    expect(c.running()).toEqual(["c"]);
    await c.end("c");
    const out = await pass;
    expect(out.plan.steps.map((s) => [s.id, s.status, s.dispatches])).toEqual([
      ["a1", "done", 1],
      ["a2", "done", 1],
      ["a3", "done", 1],
      ["b1", "done", 1],
      ["c", "done", 1],
    ]);
    expect(out.feedback.map((f) => f.taskId)).toEqual(["a1", "a2", "a3", "b1", "c"]);
    // The join was given both inputs, each step's own result.
    expect(c.events).toContain("start c with a3,b1");
  });

  it("reports each outcome on its own, in the order they happen", async () => {
    const c = controlled();
    const pass = runEagerly(irregular(), c.hooks);
    await tick();
    await c.end("b1");
    await c.end("a1");
    await c.end("a2");
    await c.end("a3");
    await c.end("c");
    await pass;
    expect(c.events.filter((e) => e.startsWith("end"))).toEqual([
      "end b1 done",
      "end a1 done",
      "end a2 done",
      "end a3 done",
      "end c done",
    ]);
  });

  it("keeps independent branches running after a failure, and leaves the failed step's dependents waiting", async () => {
    const c = controlled({ a1: "fail" });
    const pass = runEagerly(irregular(), c.hooks);
    await tick();
    await c.end("a1");
    expect(c.running()).toEqual(["b1"]);
    await c.end("b1");
    const out = await pass;
    const status = Object.fromEntries(out.plan.steps.map((s) => [s.id, s.status]));
    // a1 is being recovered (a strategy's job, after the pass): what needs it waits, and is not skipped.
    expect(status).toEqual({ a1: "failed", a2: "pending", a3: "pending", b1: "done", c: "pending" });
    expect(c.started).toEqual(["a1", "b1"]);
  });

  it("leaves a deferred step running (for the approval gate) and what depends on it waiting", async () => {
    const c = controlled();
    const p = plan([
      { id: "search", tools: ["t"] },
      { id: "book", tools: ["t"], dependsOn: ["search"] },
      { id: "thanks", tools: ["t"], dependsOn: ["book"] },
      { id: "other", tools: ["t"] },
    ]);
    const dispatched: string[] = [];
    const pass = runEagerly(p, {
      ...c.hooks,
      deferred: (s) => s.id === "book",
      onDispatched: (s) => dispatched.push(s.id),
    });
    await tick();
    await c.end("search");
    await c.end("other");
    const out = await pass;
    expect(Object.fromEntries(out.plan.steps.map((s) => [s.id, s.status]))).toEqual({
      search: "done",
      book: "running",
      thanks: "pending",
      other: "done",
    });
    expect(out.plan.steps.find((s) => s.id === "book")!.dispatches).toBe(1);
    expect(dispatched).toEqual(["search", "other", "book"]);
    expect(c.started).not.toContain("book");
  });

  it("skips what can no longer run, cascading, with a DEPENDENCY_FAILURE record for each", async () => {
    const c = controlled();
    const p = plan([
      { id: "gone", tools: ["t"], status: "skipped", skipReason: "given up", skipCause: "failed" },
      { id: "mid", tools: ["t"], dependsOn: ["gone"] },
      { id: "end", tools: ["t"], dependsOn: ["mid"] },
      { id: "fallback", tools: ["t"], dependsOn: ["gone"], condition: { type: "failure" } },
    ]);
    const skippedSeen: string[] = [];
    const pass = runEagerly(p, { ...c.hooks, onSkipped: (s) => skippedSeen.push(...s.map((x) => x.step.id)) });
    await tick();
    expect(c.running()).toEqual(["fallback"]);
    await c.end("fallback");
    const out = await pass;
    expect(skippedSeen).toEqual(["mid", "end"]);
    expect(out.feedback.filter((f) => f.feedbackType === "DEPENDENCY_FAILURE").map((f) => f.taskId)).toEqual([
      "mid",
      "end",
    ]);
    expect(out.plan.steps.find((s) => s.id === "end")!.skipReason).toMatch(/Dependency mid failed/);
  });

  it("stops the pass with the error when a launch throws (a bug, not a step failure)", async () => {
    const p = plan([{ id: "x", tools: ["t"] }]);
    await expect(
      runEagerly(p, {
        inputsOf: () => ({ required: [], optional: [] }),
        deferred: () => false,
        launch: () => Promise.reject(new Error("configuration is broken")),
      }),
    ).rejects.toThrow("configuration is broken");
  });

  it("runs a 1,000-step chain beside 1,000 independent steps to the end", async () => {
    const steps = [
      ...Array.from({ length: 1000 }, (_, i) => ({ id: `c${i}`, tools: ["t"], dependsOn: i ? [`c${i - 1}`] : [] })),
      ...Array.from({ length: 1000 }, (_, i) => ({ id: `w${i}`, tools: ["t"] })),
    ];
    const out = await runEagerly(plan(steps), {
      inputsOf: () => ({ required: [], optional: [] }),
      deferred: () => false,
      launch: async (step) => feedback({ taskId: step.id, dispatch: step.dispatches }),
    });
    expect(out.plan.steps.every((s) => s.status === "done")).toBe(true);
    expect(out.feedback).toHaveLength(2000);
  });
});
