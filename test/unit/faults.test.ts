import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { classifyFailure } from "../../src/replanning/classify.js";
import {
  FAULT_KINDS,
  SLOW_FACTOR,
  parseFaultSpec,
  parseFaultSpecs,
  withFaults,
  type FaultSpec,
} from "../../src/tools/faults.js";
import { sleep } from "../../src/tools/sleep.js";
import type { ToolContext, ToolSpec, Toolkit } from "../../src/tools/types.js";

function fakeKit(durationMs = 10): { kit: Toolkit; calls: { echo: number; other: number } } {
  const calls = { echo: 0, other: 0 };
  const echo: ToolSpec = {
    name: "echo",
    description: "returns its input",
    category: "test",
    keywords: [],
    consumes: [],
    produces: ["echo"],
    sideEffect: "none",
    needsApproval: false,
    schema: z.object({ x: z.number() }),
    estimates: { durationMs, cost: 0 },
    run: async (args) => {
      calls.echo++;
      return { ok: true, args };
    },
  };
  const other: ToolSpec = { ...echo, name: "other", run: async () => (calls.other++, { other: true }) };
  return { kit: { name: "fake", tools: [echo, other], workers: [] }, calls };
}

function ctx(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, inputs: {}, stepId: "s1", attempt: 1 };
}

function tool(kits: Toolkit[], name: string): ToolSpec {
  const found = kits.flatMap((k) => k.tools).find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name} in the test toolkit`);
  return found;
}

async function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  const pending = Symbol("pending");
  const winner = await Promise.race([
    p.then(
      () => true,
      () => true,
    ),
    new Promise((r) => setTimeout(() => r(pending), ms)),
  ]);
  return winner !== pending;
}

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error("expected a throw");
}

afterEach(() => {
  vi.useRealTimers();
});

describe("parseFaultSpec", () => {
  it("parses tool=kind as a fault on every call", () => {
    expect(parseFaultSpec("search_flights=timeout")).toEqual({ tool: "search_flights", kind: "timeout", times: null });
  });

  it("parses tool=kind*N as a fault on the first N calls", () => {
    expect(parseFaultSpec("search_hotels=unavailable*1")).toEqual({
      tool: "search_hotels",
      kind: "unavailable",
      times: 1,
    });
    expect(parseFaultSpec("  echo = Slow * 3 ")).toEqual({ tool: "echo", kind: "slow", times: 3 });
  });

  it("accepts every documented kind", () => {
    for (const kind of FAULT_KINDS) expect(parseFaultSpec(`echo=${kind}`).kind).toBe(kind);
  });

  it.each([
    "",
    "search_flights",
    "search_flights=",
    "=timeout",
    "search_flights=explode",
    "echo=timeout*0",
    "echo=timeout*x",
    "echo=timeout*1*2",
    "echo:timeout",
    "9tool=error",
  ])("rejects %j with INVALID_REQUEST naming the expected form and the kinds", (spec) => {
    const e = caught(() => parseFaultSpec(spec));
    expect(CandorError.hasCode(e, ErrorCode.INVALID_REQUEST)).toBe(true);
    const message = (e as Error).message;
    expect(message).toContain("tool=kind[*N]");
    for (const kind of FAULT_KINDS) expect(message).toContain(kind);
    expect(message).not.toContain("\n");
  });

  it("parses several specs, including comma-separated flag values", () => {
    expect(parseFaultSpecs(["a=error*1, b=garbage", "c=slow"]).map((f) => `${f.tool}:${f.kind}:${f.times}`)).toEqual([
      "a:error:1",
      "b:garbage:null",
      "c:slow:null",
    ]);
  });
});

describe("withFaults", () => {
  it("rejects a fault on an unknown tool, listing the known tools", () => {
    const { kit } = fakeKit();
    const e = caught(() => withFaults([kit], [{ tool: "nope", kind: "error", times: null }]));
    expect(CandorError.hasCode(e, ErrorCode.INVALID_REQUEST)).toBe(true);
    expect((e as Error).message).toContain("nope");
    expect((e as Error).message).toContain("echo, other");
  });

  it("wraps only the named tools and leaves the original toolkit untouched", async () => {
    const { kit, calls } = fakeKit();
    const faulty = withFaults([kit], [parseFaultSpec("echo=error")]);
    expect(tool(faulty, "other")).toBe(tool([kit], "other"));
    expect(tool(faulty, "echo")).not.toBe(tool([kit], "echo"));
    await expect(tool([kit], "echo").run({ x: 1 }, ctx())).resolves.toEqual({ ok: true, args: { x: 1 } });
    expect(calls.echo).toBe(1);
  });

  it("error: throws a plain Error that reads like a provider's HTTP 500", async () => {
    const { kit, calls } = fakeKit();
    const echo = tool(withFaults([kit], [parseFaultSpec("echo=error")]), "echo");
    const e = await echo.run({ x: 1 }, ctx()).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(Error);
    expect(CandorError.isInstance(e)).toBe(false);
    expect((e as Error).message).toBe("echo failed: simulated internal error (HTTP 500)");
    expect(calls.echo).toBe(0);
  });

  it("unavailable: throws RESOURCE_UNAVAILABLE saying the option is fully booked", async () => {
    const { kit } = fakeKit();
    const echo = tool(withFaults([kit], [parseFaultSpec("echo=unavailable")]), "echo");
    const e = await echo.run({ x: 1 }, ctx()).catch((err: unknown) => err);
    expect(CandorError.hasCode(e, ErrorCode.RESOURCE_UNAVAILABLE)).toBe(true);
    expect((e as Error).message).toBe("echo: the requested option is fully booked / unavailable");
  });

  it("complex: throws TOOL_FAILED that classifies as too_complex, marked as injected, without running the tool", async () => {
    const { kit, calls } = fakeKit();
    const echo = tool(withFaults([kit], [parseFaultSpec("echo=complex*1")]), "echo");
    const e = await echo.run({ x: 1 }, ctx()).catch((err: unknown) => err);
    expect(CandorError.hasCode(e, ErrorCode.TOOL_FAILED)).toBe(true);
    expect((e as Error).message).toBe(
      "echo: the request is too complex to handle in one step (simulated); split it into smaller steps",
    );
    expect((e as CandorError).details).toEqual({ tool: "echo", injected: true, failureClass: "too_complex" });
    expect(classifyFailure((e as Error).message, e)).toBe("too_complex");
    // The wording alone classifies the same, for a caller that only kept the message.
    expect(classifyFailure((e as Error).message)).toBe("too_complex");
    expect(calls.echo).toBe(0);
    await expect(echo.run({ x: 2 }, ctx())).resolves.toEqual({ ok: true, args: { x: 2 } });
  });

  it("timeout: hangs until the signal aborts, then rejects with the abort reason, using no timer", async () => {
    vi.useFakeTimers();
    const { kit, calls } = fakeKit();
    const echo = tool(withFaults([kit], [parseFaultSpec("echo=timeout")]), "echo");
    const controller = new AbortController();
    const call = echo.run({ x: 1 }, ctx(controller.signal));
    const outcome = call.then(
      () => "resolved",
      (e: unknown) => e,
    );
    await vi.advanceTimersByTimeAsync(60_000);
    expect(vi.getTimerCount()).toBe(0);
    const reason = new Error("step s1 timed out after 100 ms");
    controller.abort(reason);
    expect(await outcome).toBe(reason);
    expect(calls.echo).toBe(0);
  });

  it("timeout: rejects at once when the signal is already aborted", async () => {
    const { kit } = fakeKit();
    const echo = tool(withFaults([kit], [parseFaultSpec("echo=timeout")]), "echo");
    const reason = new Error("cancelled");
    await expect(echo.run({ x: 1 }, ctx(AbortSignal.abort(reason)))).rejects.toBe(reason);
  });

  it("timeout: does not settle on its own", async () => {
    const { kit } = fakeKit();
    const echo = tool(withFaults([kit], [parseFaultSpec("echo=timeout")]), "echo");
    const controller = new AbortController();
    const call = echo.run({ x: 1 }, ctx(controller.signal));
    expect(await settledWithin(call, 30)).toBe(false);
    controller.abort(new Error("done"));
    await expect(call).rejects.toThrow("done");
  });

  it("*N: the first N calls fail, then the tool behaves", async () => {
    const { kit, calls } = fakeKit();
    const echo = tool(withFaults([kit], [parseFaultSpec("echo=error*2")]), "echo");
    await expect(echo.run({ x: 1 }, ctx())).rejects.toThrow("HTTP 500");
    await expect(echo.run({ x: 2 }, ctx())).rejects.toThrow("HTTP 500");
    await expect(echo.run({ x: 3 }, ctx())).resolves.toEqual({ ok: true, args: { x: 3 } });
    await expect(echo.run({ x: 4 }, ctx())).resolves.toEqual({ ok: true, args: { x: 4 } });
    expect(calls.echo).toBe(2);
  });

  it("without *N every call fails", async () => {
    const { kit, calls } = fakeKit();
    const echo = tool(withFaults([kit], [parseFaultSpec("echo=unavailable")]), "echo");
    for (let i = 0; i < 5; i++) await expect(echo.run({ x: i }, ctx())).rejects.toThrow("fully booked");
    expect(calls.echo).toBe(0);
  });

  it("several faults on one tool apply in order", async () => {
    const { kit } = fakeKit();
    const faults: FaultSpec[] = parseFaultSpecs(["echo=unavailable*1", "echo=error*1"]);
    const echo = tool(withFaults([kit], faults), "echo");
    await expect(echo.run({ x: 1 }, ctx())).rejects.toThrow("fully booked");
    await expect(echo.run({ x: 2 }, ctx())).rejects.toThrow("HTTP 500");
    await expect(echo.run({ x: 3 }, ctx())).resolves.toEqual({ ok: true, args: { x: 3 } });
  });

  it("counters belong to one wrapping: wrapping again starts afresh", async () => {
    const { kit } = fakeKit();
    const spec = [parseFaultSpec("echo=error*1")];
    const first = tool(withFaults([kit], spec), "echo");
    await expect(first.run({ x: 1 }, ctx())).rejects.toThrow("HTTP 500");
    await expect(first.run({ x: 1 }, ctx())).resolves.toBeTruthy();
    const second = tool(withFaults([kit], spec), "echo");
    await expect(second.run({ x: 1 }, ctx())).rejects.toThrow("HTTP 500");
  });

  it(`slow: waits ${SLOW_FACTOR}× the estimate, then runs normally`, async () => {
    vi.useFakeTimers();
    const { kit, calls } = fakeKit(20);
    const echo = tool(withFaults([kit], [parseFaultSpec("echo=slow*1")]), "echo");
    const call = echo.run({ x: 7 }, ctx());
    await vi.advanceTimersByTimeAsync(20 * SLOW_FACTOR - 1);
    expect(calls.echo).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    await expect(call).resolves.toEqual({ ok: true, args: { x: 7 } });
    expect(calls.echo).toBe(1);
  });

  it("slow: an abort during the wait rejects with its reason, clears the timer and never runs the tool", async () => {
    vi.useFakeTimers();
    const { kit, calls } = fakeKit(1000);
    const echo = tool(withFaults([kit], [parseFaultSpec("echo=slow")]), "echo");
    const controller = new AbortController();
    const outcome = echo.run({ x: 1 }, ctx(controller.signal)).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10);
    expect(vi.getTimerCount()).toBe(1);
    const reason = new Error("too slow");
    controller.abort(reason);
    expect(await outcome).toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls.echo).toBe(0);
  });

  it("garbage: returns a nonsense string instead of the structured output", async () => {
    const { kit, calls } = fakeKit();
    const echo = tool(withFaults([kit], [parseFaultSpec("echo=garbage*1")]), "echo");
    const out = await echo.run({ x: 1 }, ctx());
    expect(typeof out).toBe("string");
    expect(() => JSON.parse(out as string)).toThrow();
    expect(calls.echo).toBe(0);
    await expect(echo.run({ x: 1 }, ctx())).resolves.toEqual({ ok: true, args: { x: 1 } });
  });
});

describe("sleep", () => {
  it("resolves after the delay", async () => {
    vi.useFakeTimers();
    let done = false;
    const p = sleep(50).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(49);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await p;
    expect(done).toBe(true);
  });

  it("rejects with the signal's reason and clears its timer when aborted", async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const outcome = sleep(10_000, controller.signal).catch((e: unknown) => e);
    expect(vi.getTimerCount()).toBe(1);
    const reason = new Error("stop");
    controller.abort(reason);
    expect(await outcome).toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects at once for an already-aborted signal without starting a timer", async () => {
    vi.useFakeTimers();
    const reason = new Error("already");
    const outcome = sleep(10, AbortSignal.abort(reason)).catch((e: unknown) => e);
    expect(vi.getTimerCount()).toBe(0);
    expect(await outcome).toBe(reason);
  });
});
