import type { ModelPlan } from "../../src/domain/plan.js";

/** A one-step model plan (flights Madrid → Paris), as the model would send it: shared by the answer-streaming tests. */
export const FLIGHTS_MODEL_PLAN: ModelPlan = {
  objective: "Flights",
  contextSummary: null,
  confidence: 0.9,
  steps: [
    {
      id: "s1",
      description: "Find flights Madrid → Paris",
      workerType: "flight_agent",
      tools: ["search_flights"],
      paramsJson: '{"origin":"Madrid","destination":"Paris","travellers":1}',
      dependsOn: [],
      expectedOutputs: ["flight"],
    },
  ],
  understanding: null,
};

/**
 * One step of a model plan as the model sends it (strict schema: parameters as a JSON string, null to leave them to
 * the worker's model), one tool and one output. The models bench builds its workspace plan with it too.
 */
export function modelStep(
  id: string,
  description: string,
  workerType: string,
  tool: string,
  dependsOn: string[],
  params: Record<string, unknown> | null,
  output: string,
): ModelPlan["steps"][number] {
  const paramsJson = params === null ? null : JSON.stringify(params);
  return { id, description, workerType, tools: [tool], paramsJson, dependsOn, expectedOutputs: [output] };
}

/**
 * The bench's workspace plan (bench/models.ts) as a model sends it: list src/, read, count, write the report. The
 * reading step's description is the test's; its parameters are left to the worker's model unless given.
 */
export function workspaceModelPlan(
  readDescription: string,
  readParams: Record<string, unknown> | null = null,
): ModelPlan {
  return {
    objective: "Report on the three largest files in src/",
    contextSummary: null,
    confidence: 0.9,
    steps: [
      modelStep(
        "s1",
        "List the files in src/ with their sizes",
        "reader",
        "list_files",
        [],
        { dir: "src" },
        "file_list",
      ),
      modelStep("s2", readDescription, "reader", "read_file", ["s1"], readParams, "text"),
      modelStep("s3", "Count the words and lines of what was read", "analyzer", "text_stats", ["s2"], {}, "analysis"),
      modelStep(
        "s4",
        "Write a report on what the files do",
        "reporter",
        "write_report",
        ["s3"],
        { title: "Files" },
        "report",
      ),
    ],
    understanding: null,
  };
}
