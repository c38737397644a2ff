import { describe, expect, it } from "vitest";
import type { ExecutionFeedback } from "../../src/domain/feedback.js";
import { Plan } from "../../src/domain/plan.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { decompose } from "../../src/replanning/strategies/index.js";
import { generalToolkit } from "../../src/tools/general.js";
import { reportTitleIn } from "../../src/tools/builtin/workspace-reading.js";
import { workspaceToolkit } from "../../src/tools/builtin/workspace.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { applied, strategyInput } from "../fakes/toolkit-fixtures.js";

// Regression (honesty bench W4 --reactive): a reactive run asked to "write a report titled Todo stats" failed and was
// decomposed into read → count → write; the write part was given {"title": "Candor report"}, the tool's default
// written in as if chosen, so the report was named candor-report.md and nothing said the title was not the one asked.

describe("the title a request gives its report", () => {
  it.each([
    ["Count the words in notes/todo.txt and write a report titled Todo stats", "Todo stats"],
    ['write a report called "Weekly todo", then stop', "Weekly todo"],
    ["écris un rapport intitulé « Bilan mensuel »", "Bilan mensuel"],
    ["escribe un informe titulado Resumen de gastos, por favor", "Resumen de gastos"],
  ])("%s → %s", (text, title) => {
    expect(reportTitleIn(text)?.title).toBe(title);
  });

  it("is nothing when the request gives none", () => {
    expect(reportTitleIn("count the words in notes/todo.txt and write a report")).toBeNull();
  });
});

describe("DECOMPOSE: a part's parameters are what the step and the request give, never its tool's defaults", () => {
  // As the graph builds it: the `general` worker, which may use every tool, runs a reactive step.
  const registry = ToolRegistry.create([workspaceToolkit(), generalToolkit()]);
  const failedStep = (id: string) =>
    Plan.parse({
      planId: "plan-d",
      objective: "count and report",
      confidence: 0.5,
      steps: [
        {
          id,
          description: "Count the words in notes/todo.txt and write a report",
          workerType: "general",
          tools: [],
          expectedOutputs: ["report"],
          status: "failed",
        },
      ],
    });
  const failure = (id: string): ExecutionFeedback => ({
    taskId: id,
    feedbackType: "FAILURE",
    outputs: {},
    errors: ["the model answered without a successful call"],
    failureClass: "too_complex",
    durationMs: 1,
    cost: 0,
    at: new Date().toISOString(),
    attempt: 1,
    dispatch: 1,
    workerType: "general",
    tool: null,
    params: {},
    attempts: [],
    errorType: null,
    trace: null,
    evidence: null,
    limits: [],
  });
  const decomposed = (text: string) => {
    const plan = failedStep("job");
    const input = {
      ...strategyInput(plan, "job", [failure("job")], registry),
      request: PlanningRequest.parse({ userIntent: text }),
    };
    const { plan: revised, revision } = applied(decompose(input));
    return revision.newStepIds.map((id) => revised.steps.find((s) => s.id === id)!);
  };

  it("the write part takes the title the request gave", () => {
    const parts = decomposed("Count the words in notes/todo.txt and write a report titled Todo stats");
    expect(parts.at(-1)!.tools).toEqual(["write_report"]);
    expect(parts.at(-1)!.params).toEqual({ title: "Todo stats" });
  });

  it("a parameter nobody gave stays left out, not filled with the tool's default", () => {
    const parts = decomposed("Count the words in notes/todo.txt and write a report");
    for (const p of parts) expect(Object.values(p.params)).not.toContain("Candor report");
  });
});
