import { describe, expect, it } from "vitest";
import { replanStrategyPrompt } from "../../prompts/replan.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { buildFailureContext } from "../../src/replanning/context.js";
import { runStep } from "../../src/execution/run-step.js";
import { explainRevision } from "../../src/transparency/explain.js";
import { skip } from "../../src/replanning/strategies/index.js";
import { countingTool, plan, registryOf, step } from "../fakes/toolkit-fixtures.js";

/** Seed 003 item 3: the failure context carries the error type and the traceback, for the model only. */
describe("failure context: error type and trace", () => {
  const boom = countingTool("fetch", {
    run: async () => {
      throw new TypeError("cannot read properties of undefined (reading 'rows')");
    },
  });
  const booked = countingTool("book", {
    run: async () => {
      throw new CandorError("Hotel Lux is fully booked", ErrorCode.RESOURCE_UNAVAILABLE);
    },
  });
  const registry = registryOf([boom.spec, booked.spec], [{ name: "w", description: "w", categories: ["general"] }]);
  const one = (tool: string) =>
    step({
      id: "s1",
      description: "Fetch rows",
      workerType: "w",
      tools: [tool],
      retry: { maxAttempts: 1, backoffMs: [0] },
      dispatches: 1,
      status: "failed",
    });

  it("records the thrown error's name and the first lines of its stack", async () => {
    const fb = await runStep({ step: one("fetch"), inputs: {}, registry, dispatch: 1 });
    expect(fb.errorType).toBe("TypeError");
    expect(fb.trace?.split("\n")[0]).toBe("TypeError: cannot read properties of undefined (reading 'rows')");
    expect(fb.trace?.split("\n").length).toBeLessThanOrEqual(6);
  });

  it("records a Candor error's code as its type", async () => {
    const fb = await runStep({ step: one("book"), inputs: {}, registry, dispatch: 1 });
    expect(fb.errorType).toBe("RESOURCE_UNAVAILABLE");
  });

  it("hands type and trace to the recovery prompt, and keeps the trace out of what the user reads", async () => {
    const s = one("fetch");
    const fb = await runStep({ step: s, inputs: {}, registry, dispatch: 1 });
    const failure = buildFailureContext(s, [fb]);
    expect(failure.errorType).toBe("TypeError");
    const prompt = replanStrategyPrompt({ failure, plan: plan([s]), tools: [], workers: [] });
    expect(prompt).toContain("[TypeError]");
    expect(prompt).toContain("<trace>");
    const outcome = skip({ plan: plan([s]), failure, registry, feedback: [fb], revisionNumber: 1 });
    if (!outcome.applies) throw new Error("SKIP always applies");
    const told = explainRevision(outcome.revision, s, failure.error, null);
    expect(`${told.title}\n${told.message}`).not.toMatch(/\n\s+at |TypeError:/);
  });
});
