import { describe, expect, it } from "vitest";
import { Plan, TaskStep } from "../../src/domain/plan.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { openQuestions } from "../../src/domain/understanding.js";
import { checkModelUnderstanding } from "../../src/planning/check-understanding.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { countingTool } from "../fakes/toolkit-fixtures.js";

// Regression: a model's plan for "Publish the weekly report" over a toolkit whose tools have no keywords
// ("prepare", "publish") was overruled as "no tool can post", so every such plan was asked about.
describe("a model's record over tools without keywords", () => {
  const prepare = countingTool("prepare_data", { category: "ops", produces: ["report_data"] }).spec;
  const publish = countingTool("publish", { category: "ops", consumes: ["report_data"], produces: ["published"] }).spec;
  const registry = ToolRegistry.create([
    { name: "ops", tools: [prepare, publish], workers: [{ name: "ops", description: "ops", categories: ["ops"] }] },
  ]);
  const request = PlanningRequest.parse({ userIntent: "Publish the weekly report" });
  const steps = [
    { id: "prepare", tools: ["prepare_data"], params: {}, description: "Prepare the data" },
    { id: "publish", tools: ["publish"], params: {}, description: "Publish it" },
  ];
  const claimed = (stepIds: string[]) => ({
    parts: [
      {
        text: "Publish the weekly report",
        description: "publish the report",
        kind: "task",
        status: "served",
        stepIds,
        why: null,
      },
    ],
    values: [],
    assumptions: [],
    changes: [],
  });

  it("credits a planned tool with what its own name says it does", () => {
    const { understanding } = checkModelUnderstanding(
      request,
      planOf(steps),
      registry,
      claimed(["prepare", "publish"]),
    );
    expect(openQuestions(understanding)).toEqual([]);
  });

  it("still overrules a claim when no tool of the plan does the verb", () => {
    const { understanding } = checkModelUnderstanding(
      request,
      planOf(steps.slice(0, 1)),
      registry,
      claimed(["prepare"]),
    );
    expect(openQuestions(understanding).join(" ")).toMatch(/publish/i);
  });
});

/** A model's plan with these steps, one after the other. */
function planOf(steps: { id: string; tools: string[]; params: Record<string, unknown>; description: string }[]): Plan {
  const parsed = steps.map((st, i) =>
    TaskStep.parse({ ...st, workerType: "ops", dependsOn: i === 0 ? [] : [steps[i - 1]!.id] }),
  );
  return Plan.parse({
    planId: "plan-test",
    objective: "Publish the weekly report",
    steps: parsed,
    confidence: 0.8,
    createdBy: "llm",
  });
}
