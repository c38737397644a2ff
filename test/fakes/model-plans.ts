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
 * the worker's model), one tool and one output.
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
