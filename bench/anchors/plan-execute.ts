/**
 * The plan-and-execute anchor (MEASUREMENT ONLY), after LangGraph's plan-and-execute tutorial: planner (one
 * structured-output call) → agent (a ReAct worker on the first step only) → replanner (one call: the remaining
 * steps, or the answer) → agent | END. One step at a time, a replanner call after every step. Prompts are
 * paraphrased (the scripted model reads only the markers it needs); the structure is what is measured.
 */
import { HumanMessage } from "@langchain/core/messages";
import { JsonOutputToolsParser, type ParsedToolCall } from "@langchain/core/output_parsers/openai_tools";
import { ChatPromptTemplate } from "@langchain/core/prompts";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import {
  Annotation,
  END,
  START,
  StateGraph,
  type BaseCheckpointSaver,
  type LangGraphRunnableConfig,
} from "@langchain/langgraph";
import { z } from "zod";
import { textOf, type ScriptedChatModel } from "./scripted-model.js";
import { REPLAN_DONE, REPLAN_END, REPLAN_PLAN, reactWorker } from "./workload.js";

const PlanExecuteState = Annotation.Root({
  input: Annotation<string>({ reducer: (x, y) => y ?? x, default: () => "" }),
  plan: Annotation<string[]>({ reducer: (x, y) => y ?? x, default: () => [] }),
  pastSteps: Annotation<[string, string][]>({ reducer: (x, y) => x.concat(y), default: () => [] }),
  response: Annotation<string>({ reducer: (x, y) => y ?? x, default: () => "" }),
});
type S = typeof PlanExecuteState.State;

const planSchema = z.object({ steps: z.array(z.string()).describe("the steps to follow, in order") });
const responseSchema = z.object({ response: z.string().describe("the answer to the user") });
const asTool = (name: string, description: string, schema: z.ZodType) => ({
  type: "function" as const,
  function: { name, description, parameters: toJsonSchema(schema) },
});

const plannerPrompt = ChatPromptTemplate.fromTemplate(
  `Make a short step-by-step plan for this objective; each step self-contained, the last one gives the answer.

{objective}`,
);
const replannerPrompt = ChatPromptTemplate.fromTemplate(
  `Revise the plan for the objective below. Objective: {input}
${REPLAN_PLAN}
{plan}
${REPLAN_DONE}
{pastSteps}
${REPLAN_END} still needed, or the final response if none are left.`,
);

export function buildPlanExecute(
  model: ScriptedChatModel,
  tools: StructuredToolInterface[],
  checkpointer?: BaseCheckpointSaver,
) {
  const agent = reactWorker(model, tools);
  const planner = plannerPrompt.pipe(model.withStructuredOutput(planSchema, { name: "plan" }));
  const replanner = replannerPrompt
    .pipe(
      model.bindTools([
        asTool("plan", "The steps still to follow.", planSchema),
        asTool("response", "Response to the user.", responseSchema),
      ]),
    )
    .pipe(new JsonOutputToolsParser<ParsedToolCall[]>());

  const planStep = async (state: S, config: LangGraphRunnableConfig): Promise<Partial<S>> => {
    const plan = await planner.invoke({ objective: state.input }, config);
    return { plan: plan.steps };
  };
  const executeStep = async (state: S, config: LangGraphRunnableConfig): Promise<Partial<S>> => {
    const task = state.plan[0];
    if (task === undefined) throw new Error("plan-and-execute: agent reached with an empty plan");
    const { messages } = await agent.invoke({ messages: [new HumanMessage(task)] }, config);
    const answer = messages.at(-1);
    return { pastSteps: [[task, answer ? textOf(answer) : ""]], plan: state.plan.slice(1) };
  };
  const replanStep = async (state: S, config: LangGraphRunnableConfig): Promise<Partial<S>> => {
    const [call] = await replanner.invoke(
      {
        input: state.input,
        plan: state.plan.join("\n"),
        pastSteps: state.pastSteps.map(([step, result]) => `${step} => ${result}`).join("\n"),
      },
      config,
    );
    if (!call) throw new Error("plan-and-execute: the replanner called no tool");
    if (call.type === "response") return { response: responseSchema.parse(call.args).response };
    return { plan: planSchema.parse(call.args).steps };
  };

  return new StateGraph(PlanExecuteState)
    .addNode("planner", planStep)
    .addNode("agent", executeStep)
    .addNode("replan", replanStep)
    .addEdge(START, "planner")
    .addEdge("planner", "agent")
    .addEdge("agent", "replan")
    .addConditionalEdges("replan", (state: S) => (state.response ? END : "agent"), [END, "agent"])
    .compile({ checkpointer, name: "plan-and-execute" });
}
