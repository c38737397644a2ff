/**
 * What the three anchors share (MEASUREMENT ONLY): the task text of a plan's steps, the scripted model's answers
 * for every role, the one `search` tool (which runs the bench tool of the step named in its query, so every
 * design waits exactly as long per step as Candor does) and the ReAct worker (agent ⇄ tools, the shape of
 * createReactAgent, which is deprecated in this LangGraph version and so built here from ToolNode).
 */
import type { BaseMessage } from "@langchain/core/messages";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { dagToolName, type DagStep } from "../fixtures.js";
import type { Toolkit } from "../../src/tools/types.js";
import { ScriptedChatModel, textOf, toolCall, type ScriptedReply } from "./scripted-model.js";

/** A step as the planners write it: its id first, so the tool and the scripts can tell which step it is. */
const taskText = (step: DagStep): string =>
  `Step ${step.id}: look up fact ${step.id}` +
  (step.dependsOn.length ? ` using the results of steps ${step.dependsOn.join(", ")}` : "");

const stepIdOf = (text: string): string => /^Step ([^:\s]+):/.exec(text.trim())?.[1] ?? "";

/** Section markers of the plan-and-execute replanner's prompt, which its script reads back. */
export const REPLAN_PLAN = "Original plan:";
export const REPLAN_DONE = "Steps done so far:";
export const REPLAN_END = "Return only the steps";
/** Each result line the DAG joiners are shown starts with this, so the script can count them. */
export const RESULT_PREFIX = "Result of step";

/** The one tool of every anchor: runs the bench tool of the step its query names. */
export function searchTool(toolkit: Toolkit): StructuredToolInterface {
  const tools = new Map(toolkit.tools.map((t) => [t.name, t]));
  return tool(
    async ({ query }: { query: string }, config) => {
      const id = stepIdOf(query);
      const run = tools.get(dagToolName(id));
      if (!run) throw new Error(`anchor search: no bench tool for step "${id}" (query "${query}")`);
      const signal = (config as { signal?: AbortSignal } | undefined)?.signal ?? new AbortController().signal;
      const out = await run.run({}, { signal, inputs: {}, stepId: id, attempt: 1 });
      return `fact<${id}>: ${JSON.stringify(out)}`;
    },
    { name: "search", description: "Look up a fact.", schema: z.object({ query: z.string() }) },
  );
}

/** The scripted model of an anchor over `plan`: what each role answers, chosen by the tools bound to the call. */
export function anchorModel(latencyMs: number, plan: readonly DagStep[]): ScriptedChatModel {
  const tasks = plan.map(taskText);
  const lines = (prompt: string, from: string, to: string) =>
    (prompt.split(from)[1] ?? "")
      .split(to)[0]!
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean);
  return new ScriptedChatModel(
    latencyMs,
    (messages: readonly BaseMessage[], tools: readonly string[]): ScriptedReply => {
      const last = messages.at(-1);
      const prompt = last ? textOf(last) : "";
      switch (tools.join(",")) {
        case "plan": // plan-and-execute planner
          return { content: "", toolCalls: [toolCall("plan", { steps: tasks }, "call_plan")] };
        case "plan,response": {
          // plan-and-execute replanner: the steps of the plan shown that are not done yet, or the answer
          const shown = lines(prompt, REPLAN_PLAN, REPLAN_DONE);
          const done = lines(prompt, REPLAN_DONE, REPLAN_END);
          const remaining = shown.filter((s) => !done.some((d) => d.startsWith(`${s} =>`)));
          return remaining.length > 0
            ? { content: "", toolCalls: [toolCall("plan", { steps: remaining }, "call_replan")] }
            : {
                content: "",
                toolCalls: [toolCall("response", { response: `answer from ${done.length} results` }, "call_response")],
              };
        }
        case "search": {
          // ReAct worker: the task → a search call; the search result → the step's answer
          const task = textOf(messages.find((m) => m.type === "human")!).split("\n")[0]!;
          const id = stepIdOf(task);
          if (last?.type === "tool") return { content: `${id} done: ${prompt}` };
          return { content: "", toolCalls: [toolCall("search", { query: task }, `call_${id}`)] };
        }
        case "dag_plan": // DAG planners: every step with the ids it needs
          return {
            content: "",
            toolCalls: [
              toolCall(
                "dag_plan",
                { steps: plan.map((s, i) => ({ id: s.id, task: tasks[i], deps: s.dependsOn })) },
                "call_dag_plan",
              ),
            ],
          };
        case "join": {
          const n = prompt.split("\n").filter((l) => l.trim().startsWith(RESULT_PREFIX)).length;
          return {
            content: "",
            toolCalls: [
              toolCall("join", { thought: `${n} results`, response: `answer from ${n} results` }, "call_join"),
            ],
          };
        }
        default:
          throw new Error(`anchor model: no script for tools [${tools.join(", ")}]`);
      }
    },
  );
}

/** A ReAct worker: agent (one model call) ⇄ tools, until the model answers without a tool call. */
export function reactWorker(model: ScriptedChatModel, tools: StructuredToolInterface[]) {
  const bound = model.bindTools(tools);
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state: typeof MessagesAnnotation.State, config) => ({
      messages: [await bound.invoke(state.messages, config)],
    }))
    .addNode("tools", new ToolNode(tools))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile();
}
