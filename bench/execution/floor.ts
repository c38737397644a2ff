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

/** The floor for `steps`, whose tools come from dagToolkit(steps) (the same functions Candor's workers call). */
export function buildFloor(steps: readonly DagStep[], toolkit: Toolkit, checkpointer?: BaseCheckpointSaver) {
  const tools = new Map(toolkit.tools.map((t) => [t.name, t]));
  const worker = async (task: FloorTask, config: LangGraphRunnableConfig) => {
    const tool = tools.get(dagToolName(task.step.id));
    if (!tool) throw new Error(`floor: no tool for step ${task.step.id}`);
    const out = await tool.run(
      {},
      { signal: config.signal ?? new AbortController().signal, inputs: task.inputs, stepId: task.step.id, attempt: 1 },
    );
    return { results: { [task.step.id]: JSON.stringify(out) } };
  };
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
