/**
 * Two LLMCompiler-style anchors (MEASUREMENT ONLY). Both: planner (one structured-output call: the steps with the
 * ids each needs) → run the steps → joiner (one structured-output call: the answer) → END.
 *
 * - `buildDagWaves`: every ready step is a ReAct worker (model → tool → model) sent with Send, one superstep per
 *   wave, with a barrier node re-evaluating readiness: what people build with LangGraph's own parallelism.
 * - `buildTaskFetching`: LLMCompiler's task-fetching unit: inside one node, each step's tool is called the moment
 *   its dependencies' calls return, with no model call per step (the planner already gave every call). Fastest
 *   possible, but the node is one unit of work: a crash in it re-runs every call.
 */
import { HumanMessage } from "@langchain/core/messages";
import { ChatPromptTemplate } from "@langchain/core/prompts";
import type { StructuredToolInterface } from "@langchain/core/tools";
import {
  Annotation,
  END,
  START,
  Send,
  StateGraph,
  type BaseCheckpointSaver,
  type LangGraphRunnableConfig,
} from "@langchain/langgraph";
import { z } from "zod";
import { textOf, type ScriptedChatModel } from "./scripted-model.js";
import { RESULT_PREFIX, reactWorker } from "./workload.js";

const PlannedStep = z.object({
  id: z.string().describe("the step's id"),
  task: z.string().describe("what the step must do"),
  deps: z.array(z.string()).describe("ids of the steps whose results it needs"),
});
type PlannedStep = z.infer<typeof PlannedStep>;
const dagPlanSchema = z.object({ steps: z.array(PlannedStep).describe("the plan's steps with their dependencies") });
const joinSchema = z.object({
  thought: z.string().describe("whether the results answer the objective"),
  response: z.string().describe("the final answer"),
});

const DagState = Annotation.Root({
  input: Annotation<string>({ reducer: (x, y) => y ?? x, default: () => "" }),
  steps: Annotation<PlannedStep[]>({ reducer: (x, y) => y ?? x, default: () => [] }),
  results: Annotation<Record<string, string>>({ reducer: (a, b) => ({ ...a, ...b }), default: () => ({}) }),
  response: Annotation<string>({ reducer: (x, y) => y ?? x, default: () => "" }),
});
type S = typeof DagState.State;
interface WorkerInput {
  step: PlannedStep;
  depResults: string[];
}

const plannerPrompt = ChatPromptTemplate.fromTemplate(
  `Plan the objective for the utmost parallelism: each step a self-contained task, with the ids of the earlier
steps whose results it needs; steps with no unmet dependency run in parallel.

{objective}`,
);
const joinerPrompt = ChatPromptTemplate.fromTemplate(
  `Answer the objective from the results of the executed plan, or say what is missing.

Objective: {input}

{results}`,
);

function parts(model: ScriptedChatModel) {
  const planner = plannerPrompt.pipe(model.withStructuredOutput(dagPlanSchema, { name: "dag_plan" }));
  const joiner = joinerPrompt.pipe(model.withStructuredOutput(joinSchema, { name: "join" }));
  const plan = async (state: S, config: LangGraphRunnableConfig) =>
    (await planner.invoke({ objective: state.input }, config)).steps;
  const join = async (state: S, config: LangGraphRunnableConfig): Promise<Partial<S>> => {
    const results = state.steps.map((s) => `${RESULT_PREFIX} ${s.id}: ${state.results[s.id]}`).join("\n");
    return { response: (await joiner.invoke({ input: state.input, results }, config)).response };
  };
  return { plan, join };
}

const withContext = (task: string, depResults: readonly string[]) =>
  depResults.length ? `${task}\nResults of prerequisite steps:\n${depResults.join("\n")}` : task;

export function buildDagWaves(
  model: ScriptedChatModel,
  tools: StructuredToolInterface[],
  checkpointer?: BaseCheckpointSaver,
) {
  const worker = reactWorker(model, tools);
  const { plan, join } = parts(model);
  // Fan-out over the barrier's merged state: one Send per step whose dependencies are all done.
  const route = (state: S): Send[] | "joiner" => {
    const done = (id: string) => id in state.results;
    const ready = state.steps.filter((s) => !done(s.id) && s.deps.every(done));
    if (ready.length > 0)
      return ready.map(
        (step) =>
          new Send("worker", { step, depResults: step.deps.map((d) => state.results[d]!) } satisfies WorkerInput),
      );
    if (state.steps.every((s) => done(s.id))) return "joiner";
    throw new Error("DAG anchor: the plan's dependencies cannot be satisfied");
  };
  const work = async (input: WorkerInput, config: LangGraphRunnableConfig): Promise<Partial<S>> => {
    const { messages } = await worker.invoke(
      { messages: [new HumanMessage(withContext(input.step.task, input.depResults))] },
      config,
    );
    const answer = messages.at(-1);
    return { results: { [input.step.id]: answer ? textOf(answer) : "" } };
  };
  return new StateGraph(DagState)
    .addNode("planner", async (state: S, config: LangGraphRunnableConfig) => ({ steps: await plan(state, config) }))
    .addNode("worker", work)
    .addNode("schedule", () => ({}))
    .addNode("joiner", join)
    .addEdge(START, "planner")
    .addConditionalEdges("planner", route, ["worker", "joiner"])
    .addEdge("worker", "schedule")
    .addConditionalEdges("schedule", route, ["worker", "joiner"])
    .addEdge("joiner", END)
    .compile({ checkpointer, name: "dag-waves" });
}

export function buildTaskFetching(
  model: ScriptedChatModel,
  tools: StructuredToolInterface[],
  checkpointer?: BaseCheckpointSaver,
) {
  const search = tools[0];
  if (!search) throw new Error("task-fetching anchor: needs the search tool");
  const { plan, join } = parts(model);
  const planAndSchedule = async (state: S, config: LangGraphRunnableConfig): Promise<Partial<S>> => {
    const steps = await plan(state, config);
    const byId = new Map(steps.map((s) => [s.id, s]));
    const running = new Map<string, Promise<string>>();
    // Each call starts as soon as the calls it needs have returned (memoised: a shared dependency runs once).
    const run = (step: PlannedStep): Promise<string> => {
      const known = running.get(step.id);
      if (known) return known;
      const started = (async () => {
        const deps = await Promise.all(
          step.deps.map((d) => {
            const dep = byId.get(d);
            if (!dep) throw new Error(`task-fetching anchor: step ${step.id} needs unknown step ${d}`);
            return run(dep);
          }),
        );
        return String(await search.invoke({ query: withContext(step.task, deps) }, config));
      })();
      running.set(step.id, started);
      return started;
    };
    const outs = await Promise.all(steps.map(run));
    return { steps, results: Object.fromEntries(steps.map((s, i) => [s.id, outs[i]!])) };
  };
  return new StateGraph(DagState)
    .addNode("plan_and_schedule", planAndSchedule)
    .addNode("joiner", join)
    .addEdge(START, "plan_and_schedule")
    .addEdge("plan_and_schedule", "joiner")
    .addEdge("joiner", END)
    .compile({ checkpointer, name: "task-fetching" });
}
