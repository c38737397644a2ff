import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { z } from "zod";
import { newPlanId, Plan, type PlanInput } from "../../src/domain/plan.js";
import type { PlanResult, Reasoner, SynthesisInput, WorkerModel } from "../../src/reasoning/types.js";
import { defineTool, type Toolkit } from "../../src/tools/types.js";
import { workerPrompt } from "../../prompts/worker.js";

/** Test fixtures of model-driven workers: a small notes toolkit and a reasoner that plans given steps. */
export const NOTES: Record<string, string> = { readme: "Candor plans and runs steps", todo: "write the tests" };
const TextOut = z.object({ name: z.string(), text: z.string() });

/** Notes a `writer` may read, count and publish (publishing cannot be undone); deleting is an `admin`'s job. */
export function notesToolkit(): Toolkit {
  return {
    name: "notes",
    tools: [
      defineTool({
        name: "read_note",
        description: "Read a note by name",
        category: "notes",
        keywords: [],
        consumes: [],
        produces: ["text"],
        sideEffect: "none",
        needsApproval: false,
        schema: z.object({ name: z.string().min(1) }),
        outputSchema: TextOut,
        estimates: { durationMs: 1, cost: 0 },
        run: async ({ name }) => {
          const text = NOTES[name];
          if (text === undefined) throw new Error(`no note named "${name}"; the notes are: readme, todo`);
          return Promise.resolve({ name, text });
        },
      }),
      defineTool({
        name: "count_words",
        description: "Count the words of the text read before",
        category: "notes",
        keywords: [],
        consumes: ["text"],
        produces: ["analysis"],
        sideEffect: "none",
        needsApproval: false,
        schema: z.looseObject({}),
        estimates: { durationMs: 1, cost: 0 },
        run: async (_args, ctx) => {
          const source = TextOut.parse(ctx.inputs.text);
          return Promise.resolve({ words: source.text.split(/\s+/).length });
        },
      }),
      defineTool({
        name: "publish_note",
        description: "Publish a note under a title (cannot be undone)",
        category: "notes",
        keywords: [],
        consumes: [],
        produces: ["receipt"],
        sideEffect: "irreversible",
        needsApproval: true,
        schema: z.object({ title: z.string().min(1) }),
        estimates: { durationMs: 1, cost: 0 },
        run: async ({ title }) => Promise.resolve({ published: title }),
      }),
      defineTool({
        name: "delete_notes",
        description: "Delete every note",
        category: "admin",
        keywords: [],
        consumes: [],
        produces: ["deleted"],
        sideEffect: "irreversible",
        needsApproval: false,
        schema: z.looseObject({}),
        estimates: { durationMs: 1, cost: 0 },
        run: async () => Promise.resolve({ deleted: true }),
      }),
    ],
    workers: [
      { name: "writer", description: "Reads, counts and publishes notes", categories: ["notes"] },
      { name: "admin", description: "Administers notes", categories: ["admin"] },
    ],
  };
}

/** Plans the given steps (as a model would) and lends its chat model to the workers. */
export class PlannedReasoner implements Reasoner {
  readonly kind = "llm" as const;
  readonly workerModel: WorkerModel;
  constructor(
    private readonly steps: PlanInput["steps"],
    model: BaseChatModel,
    maxModelCalls = 6,
  ) {
    this.workerModel = { model, maxModelCalls, prompt: workerPrompt };
  }
  plan(): Promise<PlanResult> {
    const plan = Plan.parse({
      planId: newPlanId(),
      objective: "work with notes",
      confidence: 0.9,
      createdBy: "llm",
      steps: this.steps,
    });
    return Promise.resolve({ plan, notes: [] });
  }
  synthesize(input: SynthesisInput): Promise<string> {
    return Promise.resolve(`Results of ${Object.keys(input.results).join(", ")}`);
  }
  proposeRecovery(): Promise<null> {
    return Promise.resolve(null);
  }
}

/** A step that must publish a note but was planned without the title: its model fills it in. */
export const PUBLISH_STEP = {
  id: "publish",
  description: "Publish the readme note",
  workerType: "writer",
  tools: ["publish_note"],
  expectedOutputs: ["receipt"],
};
