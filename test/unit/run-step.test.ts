import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ExecutionFeedback } from "../../src/domain/feedback.js";
import { TaskStep, type TaskStepInput } from "../../src/domain/plan.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { parseFaultSpecs, withFaults } from "../../src/tools/faults.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { runStep, type RunStepInput } from "../../src/execution/run-step.js";
import { sleep } from "../../src/tools/sleep.js";
import { countingTool, registryOf, travelPlan, travelRegistry } from "../fakes/toolkit-fixtures.js";

const worker = { name: "worker", description: "does general things", categories: ["general"] };

function stepFor(tool: string, extra: Partial<TaskStepInput> = {}): TaskStep {
  return TaskStep.parse({
    id: "s1",
    description: "a step",
    workerType: "worker",
    tools: [tool],
    retry: { maxAttempts: 1, backoffMs: [0] },
    ...extra,
  });
}

function run(step: TaskStep, registry: ToolRegistry, extra: Partial<RunStepInput> = {}) {
  return runStep({ step, inputs: {}, registry, dispatch: 1, ...extra });
}

async function timed<T>(p: Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await p;
  return { value, ms: performance.now() - start };
}

describe("runStep refuses tools outside the worker's grant, without running them", () => {
  const secret = countingTool("launch_rocket", { category: "dangerous" });
  const safe = countingTool("read_file");
  const registry = registryOf(
    [secret.spec, safe.spec],
    [worker, { name: "launcher", description: "", categories: ["dangerous"] }],
  );

  it("a tool of another category: wrong_tool, the tool's run is never called", async () => {
    const feedback = await run(stepFor("launch_rocket", { retry: { maxAttempts: 3, backoffMs: [0] } }), registry);
    expect(secret.calls).toHaveLength(0);
    expect(feedback).toMatchObject({
      feedbackType: "FAILURE",
      failureClass: "wrong_tool",
      attempt: 0,
      tool: "launch_rocket",
      cost: 0,
    });
    expect(feedback.errors[0]).toMatch(
      /launch_rocket is not granted to the worker worker, so the call was refused and nothing ran/,
    );
    expect(feedback.errors[0]).toContain("it may use: read_file");
  });

  it("a step listing a granted tool and a refused one runs neither", async () => {
    const feedback = await run(stepFor("read_file", { tools: ["read_file", "launch_rocket"] }), registry);
    expect(feedback.failureClass).toBe("wrong_tool");
    expect(safe.calls).toHaveLength(0);
    expect(secret.calls).toHaveLength(0);
  });

  it("a tool that does not exist is refused the same way", async () => {
    const feedback = await run(stepFor("no_such_tool"), registry);
    expect(feedback).toMatchObject({ failureClass: "wrong_tool", tool: "no_such_tool" });
  });

  it("a step with no tool fails as wrong_tool and says what to do", async () => {
    const feedback = await run(stepFor("read_file", { tools: [] }), registry);
    expect(feedback).toMatchObject({ failureClass: "wrong_tool", tool: null });
    expect(feedback.errors[0]).toMatch(/names no tool/);
    expect(safe.calls).toHaveLength(0);
  });

  it("the worker that holds the grant runs it", async () => {
    const feedback = await run(stepFor("launch_rocket", { workerType: "launcher" }), registry);
    expect(feedback.feedbackType).toBe("SUCCESS");
    expect(secret.calls).toHaveLength(1);
  });
});

describe("runStep validates parameters before calling the tool", () => {
  it("invalid parameters: invalid_parameters naming the field, no call, no retry", async () => {
    const tool = countingTool("add", { schema: z.object({ a: z.number(), b: z.number() }) });
    const registry = registryOf([tool.spec], [worker]);
    const feedback = await run(
      stepFor("add", { params: { a: 1, b: "two" }, retry: { maxAttempts: 3, backoffMs: [0] } }),
      registry,
    );
    expect(tool.calls).toHaveLength(0);
    expect(feedback).toMatchObject({ feedbackType: "FAILURE", failureClass: "invalid_parameters", attempt: 0 });
    expect(feedback.errors[0]).toMatch(/^Invalid parameters for add: b: /);
  });

  it("the tool receives the parsed arguments (defaults applied), the inputs, the step id and the attempt", async () => {
    const tool = countingTool("add", { schema: z.object({ a: z.number(), b: z.number().default(10) }) });
    const registry = registryOf([tool.spec], [worker]);
    await runStep({ step: stepFor("add", { params: { a: 1 } }), inputs: { upstream: 7 }, registry, dispatch: 3 });
    expect(tool.calls[0]?.args).toEqual({ a: 1, b: 10 });
    expect(tool.calls[0]?.ctx).toMatchObject({ inputs: { upstream: 7 }, stepId: "s1", attempt: 1 });
  });
});

describe("runStep of a step without an optional input", () => {
  it("tells the tool what is missing and why, and reports PARTIAL_SUCCESS: the result is real but lacks that input", async () => {
    const tool = countingTool("total", {
      consumes: ["base", "extra"],
      optionalConsumes: ["extra"],
      run: async () => ({ total: 1 }),
    });
    const registry = registryOf([tool.spec, countingTool("extras", { produces: ["extra"] }).spec], [worker]);
    const missingInputs = [
      { input: "extra", from: "extras", reason: "Skipped by a person after it failed: timed out" },
    ];
    const feedback = await runStep({
      step: stepFor("total", { missingInputs }),
      inputs: { base: 1 },
      registry,
      dispatch: 1,
    });
    expect(tool.calls[0]?.ctx).toMatchObject({
      inputs: { base: 1 },
      missing: { extra: "skipped by a person after it failed: timed out" },
    });
    expect(feedback).toMatchObject({ feedbackType: "PARTIAL_SUCCESS", outputs: { result: { total: 1 } }, errors: [] });
  });

  it("a step with every input gets no `missing` and reports SUCCESS", async () => {
    const tool = countingTool("total", { consumes: ["base"], run: async () => ({ total: 1 }) });
    const feedback = await runStep({
      step: stepFor("total"),
      inputs: { base: 1 },
      registry: registryOf([tool.spec], [worker]),
      dispatch: 1,
    });
    expect(tool.calls[0]?.ctx.missing).toBeUndefined();
    expect(feedback.feedbackType).toBe("SUCCESS");
  });
});

describe("runStep on success", () => {
  it("returns SUCCESS feedback that the feedback schema accepts, with the tool's cost", async () => {
    const tool = countingTool("echo", { estimates: { durationMs: 5, cost: 0.25 }, run: async () => ({ answer: 42 }) });
    const registry = registryOf([tool.spec], [worker]);
    const feedback = await runStep({ step: stepFor("echo", { params: { x: 1 } }), inputs: {}, registry, dispatch: 2 });
    expect(feedback).toMatchObject({
      taskId: "s1",
      feedbackType: "SUCCESS",
      outputs: { result: { answer: 42 } },
      errors: [],
      failureClass: null,
      cost: 0.25,
      attempt: 1,
      dispatch: 2,
      workerType: "worker",
      tool: "echo",
      params: { x: 1 },
    });
    expect(feedback.durationMs).toBeGreaterThanOrEqual(1);
    expect(() => ExecutionFeedback.parse(feedback)).not.toThrow();
  });
});

describe("runStep retries transient failures with the step's backoff", () => {
  it("503 twice, then success: three attempts, waits 30 then 60 ms, tells the caller before each retry", async () => {
    const tool = countingTool("flaky", {
      run: async (_args, _ctx, call) => {
        if (call <= 2) throw new Error("HTTP 503 Service Unavailable");
        return { ok: true };
      },
    });
    const registry = registryOf([tool.spec], [worker]);
    const announced: { attempt: number; nextInMs: number; failureClass: string }[] = [];
    const { value: feedback, ms } = await timed(
      run(stepFor("flaky", { retry: { maxAttempts: 3, backoffMs: [30, 60] } }), registry, {
        onAttemptFailed: (i) => announced.push(i),
      }),
    );
    expect(tool.calls).toHaveLength(3);
    expect(feedback).toMatchObject({ feedbackType: "SUCCESS", attempt: 3 });
    expect(feedback.attempts.map((a) => a.error)).toEqual([
      "HTTP 503 Service Unavailable",
      "HTTP 503 Service Unavailable",
      null,
    ]);
    expect(announced.map((a) => [a.attempt, a.nextInMs, a.failureClass])).toEqual([
      [1, 30, "agent_unavailable"],
      [2, 60, "agent_unavailable"],
    ]);
    expect(ms).toBeGreaterThanOrEqual(85);
  });

  it("repeats the last backoff value and stops at maxAttempts, keeping every error", async () => {
    const tool = countingTool("down", { run: async () => Promise.reject(new Error("read ECONNRESET")) });
    const registry = registryOf([tool.spec], [worker]);
    const announced: number[] = [];
    const feedback = await run(stepFor("down", { retry: { maxAttempts: 3, backoffMs: [5] } }), registry, {
      onAttemptFailed: (i) => announced.push(i.nextInMs),
    });
    expect(tool.calls).toHaveLength(3);
    expect(announced).toEqual([5, 5]);
    expect(feedback).toMatchObject({ feedbackType: "FAILURE", failureClass: "agent_unavailable", attempt: 3, cost: 0 });
    expect(feedback.errors).toEqual(["read ECONNRESET", "read ECONNRESET", "read ECONNRESET"]);
  });

  it("does not retry resource_unavailable: one call, the error's details kept as outputs", async () => {
    const tool = countingTool("book", {
      run: async () => {
        throw new CandorError("Preferred hotel fully booked", ErrorCode.RESOURCE_UNAVAILABLE, {
          details: { hotel: "H-1" },
        });
      },
    });
    const registry = registryOf([tool.spec], [worker]);
    const feedback = await run(stepFor("book", { retry: { maxAttempts: 3, backoffMs: [0] } }), registry);
    expect(tool.calls).toHaveLength(1);
    expect(feedback).toMatchObject({
      feedbackType: "FAILURE",
      failureClass: "resource_unavailable",
      attempt: 1,
      outputs: { hotel: "H-1" },
    });
  });

  it("does not retry a constraint violation, and reports it as CONSTRAINT_VIOLATION with its facts", async () => {
    const breakdown = { flight: 720, hotel: 660, activities: 103 };
    const tool = countingTool("check", {
      run: async () => {
        throw new CandorError("Total cost $2150 exceeds budget $2000", ErrorCode.CONSTRAINT_VIOLATION, {
          details: { total: 2150, budget: 2000, breakdown },
        });
      },
    });
    const registry = registryOf([tool.spec], [worker]);
    const feedback = await run(stepFor("check", { retry: { maxAttempts: 3, backoffMs: [0] } }), registry);
    expect(tool.calls).toHaveLength(1);
    expect(feedback).toMatchObject({
      feedbackType: "CONSTRAINT_VIOLATION",
      failureClass: "constraint_violated",
      outputs: { total: 2150, budget: 2000, breakdown },
    });
  });
});

describe("runStep enforces the step's time limit", () => {
  it("aborts the tool's AbortSignal at the limit and reports a timeout", async () => {
    let seen: AbortSignal | undefined;
    const tool = countingTool("hang", {
      run: async (_args, ctx) => {
        seen = ctx.signal;
        await sleep(10_000, ctx.signal);
        return { late: true };
      },
    });
    const registry = registryOf([tool.spec], [worker]);
    const { value: feedback, ms } = await timed(run(stepFor("hang", { timeoutMs: 50 }), registry));
    expect(ms).toBeLessThan(1000);
    expect(seen?.aborted).toBe(true);
    expect(CandorError.hasCode(seen?.reason, ErrorCode.TIMEOUT)).toBe(true);
    expect(feedback).toMatchObject({ feedbackType: "FAILURE", failureClass: "timeout", attempt: 1 });
    expect(feedback.errors[0]).toBe("hang timed out after 50 ms");
  });

  it("cuts off a tool that ignores its signal", async () => {
    const tool = countingTool("stubborn", {
      run: () => new Promise((resolve) => setTimeout(() => resolve({ late: true }), 600)),
    });
    const registry = registryOf([tool.spec], [worker]);
    const { value: feedback, ms } = await timed(run(stepFor("stubborn", { timeoutMs: 40 }), registry));
    expect(ms).toBeLessThan(400);
    expect(feedback.failureClass).toBe("timeout");
  });

  it("retries a timeout (it is transient) with a fresh limit per attempt", async () => {
    const tool = countingTool("slow_then_fast", {
      run: async (_args, ctx, call) => {
        if (call === 1) await sleep(10_000, ctx.signal);
        return { call };
      },
    });
    const registry = registryOf([tool.spec], [worker]);
    const feedback = await run(
      stepFor("slow_then_fast", { timeoutMs: 40, retry: { maxAttempts: 2, backoffMs: [0] } }),
      registry,
    );
    expect(feedback).toMatchObject({ feedbackType: "SUCCESS", attempt: 2, outputs: { result: { call: 2 } } });
    expect(feedback.attempts[0]?.error).toBe("slow_then_fast timed out after 40 ms");
  });

  it("times out the demo's hung flight search (an injected fault) through the same path", async () => {
    const registry = travelRegistry(["search_flights=timeout"]);
    const flight = {
      ...travelPlan(undefined, registry).steps[0]!,
      timeoutMs: 30,
      retry: { maxAttempts: 2, backoffMs: [0] },
    };
    const feedback = await runStep({ step: flight, inputs: {}, registry, dispatch: 1 });
    expect(feedback).toMatchObject({ taskId: "flight", failureClass: "timeout", attempt: 2, tool: "search_flights" });
  });
});

describe("runStep checks what the tool returned", () => {
  const Result = z.object({ price: z.number() });

  it("garbled output that does not match outputSchema is a failure, not a success", async () => {
    const tool = countingTool("quote", { outputSchema: Result, run: async () => ({ price: 12 }) });
    const registry = ToolRegistry.create(
      withFaults([{ name: "t", tools: [tool.spec], workers: [worker] }], parseFaultSpecs(["quote=garbage"])),
    );
    const feedback = await run(stepFor("quote"), registry);
    expect(feedback).toMatchObject({ feedbackType: "FAILURE", failureClass: "agent_unavailable" });
    expect(feedback.errors[0]).toMatch(/quote returned garbled output that does not match its schema/);
  });

  it("garbage is retried like any misbehaving service, and the tool's real answer then passes", async () => {
    const tool = countingTool("quote", { outputSchema: Result, run: async () => ({ price: 12 }) });
    const registry = ToolRegistry.create(
      withFaults([{ name: "t", tools: [tool.spec], workers: [worker] }], parseFaultSpecs(["quote=garbage*1"])),
    );
    const feedback = await run(stepFor("quote", { retry: { maxAttempts: 2, backoffMs: [0] } }), registry);
    expect(feedback).toMatchObject({ feedbackType: "SUCCESS", attempt: 2, outputs: { result: { price: 12 } } });
  });

  it("empty output is a failure", async () => {
    const tool = countingTool("nothing", { run: async () => null });
    const feedback = await run(stepFor("nothing"), registryOf([tool.spec], [worker]));
    expect(feedback.errors[0]).toBe("nothing returned empty output");
    expect(feedback.feedbackType).toBe("FAILURE");
  });
});

describe("runStep honours cancellation of the run", () => {
  it("stops a running attempt when the run's signal aborts, and does not retry", async () => {
    const tool = countingTool("long", {
      run: async (_a, ctx) => sleep(10_000, ctx.signal).then(() => ({ done: true })),
    });
    const registry = registryOf([tool.spec], [worker]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("user cancelled")), 30);
    const { value: feedback, ms } = await timed(
      run(stepFor("long", { timeoutMs: 5000, retry: { maxAttempts: 3, backoffMs: [0] } }), registry, {
        signal: controller.signal,
      }),
    );
    expect(ms).toBeLessThan(1000);
    expect(tool.calls).toHaveLength(1);
    expect(feedback).toMatchObject({ feedbackType: "FAILURE", attempt: 1 });
    expect(feedback.errors).toEqual(["user cancelled"]);
  });

  it("regression: a cancellation during the backoff wait starts no further attempt", async () => {
    // The next attempt used to run anyway (and could even report SUCCESS after the run was cancelled).
    const tool = countingTool("flaky", {
      run: async (_a, _c, call) => {
        if (call === 1) throw new Error("HTTP 503 Service Unavailable");
        return { ok: true };
      },
    });
    const registry = registryOf([tool.spec], [worker]);
    const controller = new AbortController();
    const feedback = await run(stepFor("flaky", { retry: { maxAttempts: 3, backoffMs: [5000] } }), registry, {
      signal: controller.signal,
      onAttemptFailed: () => setTimeout(() => controller.abort(new Error("user cancelled")), 20),
    });
    expect(tool.calls).toHaveLength(1);
    expect(feedback).toMatchObject({ feedbackType: "FAILURE", failureClass: "agent_unavailable", attempt: 1 });
  });

  it("many steps on one run signal at once: no MaxListeners warning, and no listener left on it after", async () => {
    const tool = countingTool("quick", { run: async (_a, ctx) => sleep(5, ctx.signal).then(() => ({ ok: true })) });
    const registry = registryOf([tool.spec], [worker]);
    const controller = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (w: Error) => void warnings.push(w);
    process.on("warning", onWarning);
    try {
      const all = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          run(stepFor("quick", { id: `s${i}` }), registry, { signal: controller.signal }),
        ),
      );
      // A warning is emitted on a later tick.
      await sleep(10);
      expect(all.every((f) => f.feedbackType === "SUCCESS")).toBe(true);
      expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("regression: an already-cancelled run never calls the tool", async () => {
    const tool = countingTool("never");
    const controller = new AbortController();
    controller.abort(new Error("user cancelled"));
    const feedback = await run(stepFor("never"), registryOf([tool.spec], [worker]), { signal: controller.signal });
    expect(tool.calls).toHaveLength(0);
    expect(feedback.feedbackType).toBe("FAILURE");
    expect(feedback.errors[0]).toMatch(/never was not called: the run was cancelled \(user cancelled\)/);
  });
});
