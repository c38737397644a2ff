import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TaskStep } from "../../src/domain/plan.js";
import { CandorError, ErrorCode, errorMessage } from "../../src/errors.js";
import { classifyFailure, feedbackTypeFor, isTransient } from "../../src/replanning/classify.js";
import { STRATEGY_PREFERENCES } from "../../src/replanning/select.js";
import { runStep } from "../../src/execution/run-step.js";
import type { FailureClass } from "../../src/domain/feedback.js";
import { travelRegistry } from "../fakes/toolkit-fixtures.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { defineTool, type Toolkit } from "../../src/tools/types.js";
import { classifyTravelFailure } from "../../examples/travel/tools.js";

describe("seed 000 scenario 3: classify the failure, then pick the strategy", () => {
  it.each([
    ["Agent timeout after 10s", "timeout", "FAILURE", "RETRY_DIFFERENT_AGENT"],
    ["Task too complex to execute", "too_complex", "FAILURE", "DECOMPOSE"],
    ["Total cost $2150 exceeds budget $2000", "constraint_violated", "CONSTRAINT_VIOLATION", "ADJUST_PARAMETERS"],
    ["Dependency task_001 failed", "dependency_failed", "DEPENDENCY_FAILURE", "FIX_DEPENDENCIES"],
  ] as const)("%j → %s → %s → %s", (message, cls, type, strategy) => {
    const got = classifyFailure(message);
    expect(got).toBe(cls);
    expect(feedbackTypeFor(got)).toBe(type);
    expect(STRATEGY_PREFERENCES[got][0]).toBe(strategy);
  });
});

describe("classifyFailure by wording", () => {
  it.each<[string, FailureClass]>([
    ["504 Gateway Timeout", "timeout"],
    ["request timed out", "timeout"],
    ["connect ETIMEDOUT 10.0.0.1:443", "timeout"],
    ["deadline exceeded", "timeout"],
    ["search_flights timed out after 1200 ms", "timeout"],
    ["no availability for those dates", "resource_unavailable"],
    ["Concert tickets sold out", "resource_unavailable"],
    ["Preferred hotel fully booked", "resource_unavailable"],
    ["The requested room is not available", "resource_unavailable"],
    ["Total exceeds the limit", "constraint_violated"],
    ["order is over budget by $40", "constraint_violated"],
    ["503 Service Unavailable", "agent_unavailable"],
    ["Agent unavailable", "agent_unavailable"],
    ["Rate limit exceeded (429)", "agent_unavailable"],
    ["read ECONNRESET", "agent_unavailable"],
    ["search_hotels failed: simulated internal error (HTTP 500)", "agent_unavailable"],
    ["search_hotels returned garbled output that does not match its schema (Invalid input)", "agent_unavailable"],
    ["cannot be done in one step", "too_complex"],
    ["Tool x is not granted to the reader worker", "wrong_tool"],
    ["403 Forbidden", "policy_blocked"],
    ["Invalid parameters for search_flights: destination: is required", "invalid_parameters"],
    ["Dependencies flight, hotel failed", "dependency_failed"],
    ["something odd happened", "unknown"],
  ])("%j → %s", (message, cls) => {
    expect(classifyFailure(message)).toBe(cls);
  });

  it("treats a rate limit as a busy service, not as a broken constraint", () => {
    expect(classifyFailure("rate limit exceeded")).not.toBe("constraint_violated");
  });

  it("treats a booked-out resource as unavailable stock, not as an unavailable agent", () => {
    expect(classifyFailure("Hotel unavailable: fully booked")).toBe("resource_unavailable");
  });
});

describe("classifyFailure by the thrown value", () => {
  it("a ZodError thrown by argument parsing is invalid_parameters, whatever its message says", () => {
    const thrown = (() => {
      try {
        z.object({ city: z.string() }).parse({ city: 42 });
      } catch (e) {
        return e;
      }
      throw new Error("zod did not throw");
    })();
    expect(classifyFailure(errorMessage(thrown), thrown)).toBe("invalid_parameters");
    // The same text without the ZodError would not be recognised.
    expect(classifyFailure("weird text", thrown)).toBe("invalid_parameters");
  });

  it.each<[string, FailureClass]>([
    [ErrorCode.TIMEOUT, "timeout"],
    [ErrorCode.CONSTRAINT_VIOLATION, "constraint_violated"],
    [ErrorCode.RESOURCE_UNAVAILABLE, "resource_unavailable"],
    [ErrorCode.TOOL_NOT_GRANTED, "wrong_tool"],
  ])("a CandorError with code %s is %s regardless of its wording", (code, cls) => {
    expect(classifyFailure("no useful words here", new CandorError("no useful words here", code as ErrorCode))).toBe(
      cls,
    );
  });

  it("a TOOL_FAILED error that declares its failure class in details is classified by it", () => {
    const e = new CandorError("Invalid destination: no flights to Narnia", ErrorCode.TOOL_FAILED, {
      details: { failureClass: "invalid_parameters" },
    });
    expect(classifyFailure(e.message, e)).toBe("invalid_parameters");
  });

  it("an undeclared or bogus failure class in details falls back to the wording", () => {
    const bogus = new CandorError("connect ETIMEDOUT", ErrorCode.TOOL_FAILED, {
      details: { failureClass: "gremlins" },
    });
    expect(classifyFailure(bogus.message, bogus)).toBe("timeout");
  });

  it("regression: the travel tools' unknown-city errors are invalid parameters, so they are not retried or worked around", async () => {
    // The classifier ignored TOOL_FAILED's declared class: "no flights to Narnia" read as a sold-out resource.
    const registry = travelRegistry();
    const step = TaskStep.parse({
      id: "flight",
      description: "Find flights",
      workerType: "flight_agent",
      tools: ["search_flights"],
      params: { origin: "Madrid", destination: "Narnia", travellers: 1 },
      retry: { maxAttempts: 3, backoffMs: [0] },
    });
    const feedback = await runStep({ step, inputs: {}, registry, dispatch: 1 });
    expect(feedback.failureClass).toBe("invalid_parameters");
    // The argument schema refuses the unknown city before any call: no attempt is made, let alone retried.
    expect(feedback.attempt).toBe(0);
    expect(feedback.errors[0]).toMatch(/"Narnia" is not a city the travel tools serve/);
    expect(STRATEGY_PREFERENCES[feedback.failureClass!][0]).toBe("RETRY_WITH_PARAMS");
  });
});

describe("feedbackTypeFor and isTransient", () => {
  it("reports only constraint and dependency failures with their own feedback types", () => {
    const all: FailureClass[] = [
      "timeout",
      "agent_unavailable",
      "too_complex",
      "constraint_violated",
      "dependency_failed",
      "resource_unavailable",
      "invalid_parameters",
      "wrong_tool",
      "policy_blocked",
      "unknown",
    ];
    expect(Object.fromEntries(all.map((c) => [c, feedbackTypeFor(c)]))).toEqual({
      timeout: "FAILURE",
      agent_unavailable: "FAILURE",
      too_complex: "FAILURE",
      constraint_violated: "CONSTRAINT_VIOLATION",
      dependency_failed: "DEPENDENCY_FAILURE",
      resource_unavailable: "FAILURE",
      invalid_parameters: "FAILURE",
      wrong_tool: "FAILURE",
      policy_blocked: "FAILURE",
      unknown: "FAILURE",
    });
  });

  it("retries only what might go away by itself", () => {
    expect(["timeout", "agent_unavailable", "unknown"].every((c) => isTransient(c as FailureClass))).toBe(true);
    for (const c of [
      "resource_unavailable",
      "constraint_violated",
      "invalid_parameters",
      "wrong_tool",
      "policy_blocked",
      "too_complex",
      "dependency_failed",
    ] as const) {
      expect(isTransient(c), c).toBe(false);
    }
  });

  it("ends every preference list with SKIP", () => {
    for (const [cls, list] of Object.entries(STRATEGY_PREFERENCES)) expect(list[list.length - 1], cls).toBe("SKIP");
  });
});

describe("a toolkit's own classifier: its domain's words, not Candor's", () => {
  /** A ferry line whose booking tool reports "no cabins left"; its classifier knows what that means. */
  const ferryKit = (own?: (m: string) => FailureClass | null): Toolkit => ({
    name: "ferries",
    tools: [
      defineTool({
        name: "reserve_cabin",
        description: "Reserve a cabin",
        category: "ferries",
        keywords: [],
        consumes: [],
        produces: ["cabin"],
        sideEffect: "none",
        needsApproval: false,
        schema: z.object({}),
        estimates: { durationMs: 1, cost: 0 },
        run: async () => Promise.reject(new Error("reserve_cabin: no cabins left on the 09:00 sailing")),
        ...(own ? { classifyFailure: own } : {}),
      }),
    ],
    workers: [{ name: "purser", description: "Books cabins", categories: ["ferries"] }],
    classifyFailure: (m) => (/no cabins left/.test(m) ? "resource_unavailable" : null),
  });
  const step = TaskStep.parse({
    id: "cabin",
    description: "Reserve a cabin",
    workerType: "purser",
    tools: ["reserve_cabin"],
    retry: { maxAttempts: 1, backoffMs: [0] },
  });

  it("Candor's generic rules do not read the domain's words", () => {
    expect(classifyFailure("reserve_cabin: no cabins left on the 09:00 sailing")).toBe("unknown");
  });

  it("the toolkit's classifier classifies its tools' errors, so recovery gets a class it can act on", async () => {
    const feedback = await runStep({ step, inputs: {}, registry: ToolRegistry.create([ferryKit()]), dispatch: 1 });
    expect(feedback.failureClass).toBe("resource_unavailable");
    expect(STRATEGY_PREFERENCES.resource_unavailable[0]).toBe("FIND_WORKAROUND");
  });

  it("a tool's own classifier comes before its toolkit's, and null leaves the error to the generic rules", async () => {
    const own = await runStep({
      step,
      inputs: {},
      registry: ToolRegistry.create([ferryKit(() => "too_complex")]),
      dispatch: 1,
    });
    expect(own.failureClass).toBe("too_complex");
    const none = await runStep({
      step,
      inputs: {},
      registry: ToolRegistry.create([ferryKit(() => null)]),
      dispatch: 1,
    });
    expect(none.failureClass).toBe("unknown");
  });

  it("the travel toolkit reads its own wording: nothing left to sell, a place no provider knows", () => {
    expect(classifyTravelFailure("no seats left on IB895")).toBe("resource_unavailable");
    expect(classifyTravelFailure("no flights to Narnia")).toBe("invalid_parameters");
    expect(classifyTravelFailure("something odd happened")).toBeNull();
  });
});
