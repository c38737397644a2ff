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
