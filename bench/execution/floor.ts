/**
 * The floor: a bare LangGraph StateGraph of the same shape as Candor's run of a plan — a node that sets the plan,
 * a scheduling node, one Send per ready step to a plain worker node each wave, and a node that writes the
 * answer — with no validation, no notifications and nothing else. What Candor costs above it is Candor's own.
 */
import {
  Annotation,
  END,
  START,
  Send,
  StateGraph,
  task,
  type BaseCheckpointSaver,
  type LangGraphRunnableConfig,
} from "@langchain/langgraph";
import { dagToolName, type DagStep } from "../fixtures.js";
import type { Toolkit } from "../../src/tools/types.js";

const FloorState = Annotation.Root({
  steps: Annotation<DagStep[]>({ reducer: (_, next) => next, default: () => [] }),
  results: Annotation<Record<string, string>>({ reducer: (a, b) => ({ ...a, ...b }), default: () => ({}) }),
  answer: Annotation<string>({ reducer: (_, next) => next, default: () => "" }),
});
type FloorValue = typeof FloorState.State;
interface FloorTask {
  step: DagStep;
  inputs: Record<string, string>;
}

/** A long plan in narrow waves takes two supersteps per wave; LangGraph's default limit (25) is far too low. */
export const FLOOR_RECURSION_LIMIT = 10_000;

/** Every step not yet done whose dependencies all are, each sent with its dependencies' results. */
function route(state: FloorValue): Send[] | "finish" {
  const ready = state.steps.filter((s) => !(s.id in state.results) && s.dependsOn.every((d) => d in state.results));
  if (ready.length === 0) return "finish";
  return ready.map(
    (step) =>
      new Send("worker", {
        step,
        inputs: Object.fromEntries(step.dependsOn.map((d) => [d, state.results[d]!])),
      } satisfies FloorTask),
  );
}

/** Runs a step's tool from dagToolkit (the same functions Candor's workers call) and returns its result as text. */
function stepRunner(toolkit: Toolkit) {
  const tools = new Map(toolkit.tools.map((t) => [t.name, t]));
  return async (step: DagStep, inputs: Record<string, string>, signal: AbortSignal | undefined): Promise<string> => {
    const tool = tools.get(dagToolName(step.id));
    if (!tool) throw new Error(`floor: no tool for step ${step.id}`);
    const out = await tool.run(
      {},
      { signal: signal ?? new AbortController().signal, inputs, stepId: step.id, attempt: 1 },
    );
    return JSON.stringify(out);
  };
}

/** The floor for `steps`, whose tools come from dagToolkit(steps). */
export function buildFloor(steps: readonly DagStep[], toolkit: Toolkit, checkpointer?: BaseCheckpointSaver) {
  const runTool = stepRunner(toolkit);
  const worker = async (task: FloorTask, config: LangGraphRunnableConfig) => ({
    results: { [task.step.id]: await runTool(task.step, task.inputs, config.signal) },
  });
  return new StateGraph(FloorState)
    .addNode("plan", () => ({ steps: [...steps] }))
    .addNode("execute", () => ({}))
    .addNode("worker", worker)
    .addNode("finish", (state: FloorValue) => ({ answer: `${Object.keys(state.results).length} results` }))
    .addEdge(START, "plan")
    .addEdge("plan", "execute")
    .addConditionalEdges("execute", route, ["worker", "finish"])
    .addEdge("worker", "execute")
    .addEdge("finish", END)
    .compile({ checkpointer, name: "floor" });
}

/**
 * The eager floor: the least a graph with Candor's card can cost on this stack. The card's supersteps in a line —
 * understand (sets the plan), execute (every step a LangGraph task() started the moment its last dependency ends,
 * as Candor's EXECUTE does), synthesize, reflect — with nothing in them: no validation, no notifications, no
 * bookkeeping. What a whole run costs above the critical path here is LangGraph's own (its supersteps,
 * checkpoints and task commits); what Candor costs above this floor is Candor's.
 */
export function buildEagerFloor(steps: readonly DagStep[], toolkit: Toolkit, checkpointer?: BaseCheckpointSaver) {
  const runTool = stepRunner(toolkit);
  const byId = new Map(steps.map((s) => [s.id, s]));
  const execute = async (state: FloorValue, config: LangGraphRunnableConfig) => {
    const runStep = task("worker", async (id: string, inputs: Record<string, string>) =>
      runTool(byId.get(id)!, inputs, config.signal),
    );
    const results: Record<string, string> = {};
    const started = new Set<string>();
    await new Promise<void>((resolve, reject) => {
      const startReady = () => {
        if (Object.keys(results).length === state.steps.length) return resolve();
        for (const step of state.steps) {
          if (started.has(step.id) || !step.dependsOn.every((d) => d in results)) continue;
          started.add(step.id);
          const inputs = Object.fromEntries(step.dependsOn.map((d) => [d, results[d]!]));
          // task() types an async function's result as a promise of a promise; at run time it is one promise.
          (runStep(step.id, inputs) as unknown as Promise<string>).then((out) => {
            results[step.id] = out;
            startReady();
          }, reject);
        }
      };
      startReady();
    });
    return { results };
  };
  return new StateGraph(FloorState)
    .addNode("understand", () => ({ steps: [...steps] }))
    .addNode("execute", execute)
    .addNode("synthesize", (state: FloorValue) => ({ answer: `${Object.keys(state.results).length} results` }))
    .addNode("reflect", () => ({}))
    .addEdge(START, "understand")
    .addEdge("understand", "execute")
    .addEdge("execute", "synthesize")
    .addEdge("synthesize", "reflect")
    .addEdge("reflect", END)
    .compile({ checkpointer, name: "eager-floor" });
}
