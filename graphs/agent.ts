import { END, START, StateGraph, type BaseCheckpointSaver, type BaseStore } from "@langchain/langgraph";
import { CandorError, ErrorCode } from "../src/errors.js";
import { RulesReasoner } from "../src/reasoning/rules.js";
import type { Reasoner } from "../src/reasoning/types.js";
import { generalToolkit } from "../src/tools/general.js";
import { ToolRegistry } from "../src/tools/registry.js";
import type { EffectLedger } from "../src/tools/effects.js";
import type { Toolkit } from "../src/tools/types.js";
import { boundedDecisionLog, silentDecisionLog, type DecisionLog } from "../src/transparency/decision-log.js";
import { routeAfterRevision, strategyNode } from "../nodes/apply-strategy.js";
import type { NodeDeps } from "../nodes/deps.js";
import { executeNode, routeAfterExecute } from "../nodes/execute.js";
import { converseNode, routeAfterConverse, routeFromStart, withChat, type StateNode } from "../nodes/chat.js";
import { cooperative } from "../src/tools/cooperate.js";
import { endingRun, finalizeNode } from "../nodes/finalize.js";
import { humanInterruptNode, routeAfterHumanInterrupt } from "../nodes/human-interrupt.js";
import { Node, type NodeId } from "../nodes/names.js";
import { reflectNode } from "../nodes/reflect.js";
import { replanWithGuidanceNode, routeAfterReplanWithGuidance } from "../nodes/replan-with-guidance.js";
import { routeAfterSelectStrategy, selectStrategyNode, STRATEGY_NODES } from "../nodes/select-strategy.js";
import { AgentState, type AgentStateUpdate, type AgentStateValue } from "../nodes/state.js";
import { CandorContextSchema, resolveGraphBounds, type GraphBounds } from "../src/domain/config.js";
import type { InteropZodObject } from "@langchain/core/utils/types";
import { routeAfterSynthesize, synthesizeNode } from "../nodes/synthesize.js";
import { routeAfterUnderstand, understandNode } from "../nodes/understand.js";
import { buildWorkerGraph } from "./worker.js";
import { metered } from "../nodes/usage.js";

export interface AgentDeps {
  /** Tools and worker types the agent may use. The `general` fallback worker is added unless one is given. */
  toolkits: readonly Toolkit[];
  /** Planning and synthesis; the offline rules reasoner by default. */
  reasoner?: Reasoner;
  /** Where decisions are logged (seed 000 scenario 19); silent by default. */
  decisionLog?: DecisionLog;
  /** The decision log's file, shown to users as where details are. */
  logFile?: string | null;
  /**
   * The effect ledger (openEffectLedger(persistence.store.db)): calls with side effects are recorded and never
   * repeated after a crash or a replay. Absent: no ledger.
   */
  ledger?: EffectLedger;
  /**
   * Bounds the graph holds its runs to, each absent one its default (STORAGE_BOUND_SETTINGS, src/domain/config.ts):
   * steps per plan when a request's constraints.maxSteps sets none, bytes of one tool call's arguments (refused
   * over it) and of one tool result a step keeps (kept cut, marked truncated), bytes of one decision-log line (its
   * text cut). The store's bound on a stored value is set where the database is opened (openDatabase's `bounds`).
   */
  bounds?: Partial<GraphBounds>;
}

/**
 * The uncompiled graph, named by its parts: the inferred type spells out every field of the state and every
 * node's update, too long for tsc to write into the published declarations (TS7056).
 */
export type AgentGraph = StateGraph<
  typeof AgentState,
  AgentStateValue,
  AgentStateUpdate,
  NodeId | typeof START,
  typeof AgentState,
  typeof AgentState,
  InteropZodObject
>;

/**
 * Builds Candor's main graph, uncompiled: the caller compiles it with its own checkpointer and store (the CLI
 * and tests with SQLite; Studio injects its own). Validates the toolkits and bounds first and throws a coded
 * CONFIGURATION error — before any model or tool is called — for duplicates, grants of missing tools, and a bound
 * out of its range or not the graph's.
 */
export function buildAgentGraph(deps: AgentDeps): AgentGraph {
  // Checked as unknown: a JavaScript caller may pass anything, and narrowing the typed array with Array.isArray
  // would turn its elements into `any`.
  const given: unknown = deps.toolkits;
  if (!Array.isArray(given) || given.length === 0) {
    throw new CandorError(
      "buildAgentGraph needs at least one toolkit (e.g. travelToolkit()).",
      ErrorCode.CONFIGURATION,
    );
  }
  const bounds = resolveGraphBounds(deps.bounds);
  const hasGeneral = deps.toolkits.some((k) => k.workers.some((w) => w.name === "general"));
  // The registry carries the bounds to every planner, plan check and step runner (they are all handed it).
  const registry = ToolRegistry.create(hasGeneral ? deps.toolkits : [...deps.toolkits, generalToolkit()], bounds);
  const nodeDeps: NodeDeps = {
    registry,
    reasoner: deps.reasoner ?? new RulesReasoner(),
    decisionLog:
      deps.decisionLog && deps.decisionLog !== silentDecisionLog
        ? boundedDecisionLog(deps.decisionLog, bounds.maxLogLineBytes)
        : silentDecisionLog,
    logFile: deps.logFile ?? null,
    ...(deps.ledger ? { ledger: deps.ledger } : {}),
  };

  // Every node answers in the chat (withChat) and starts behind a yield point, so a process running many threads
  // serves its timers and sockets between nodes (src/tools/cooperate.ts).
  const node = (fn: StateNode) => cooperative(withChat(fn));
  const strategyTargets = Object.values(STRATEGY_NODES);
  // The context schema lists the run settings an assistant may carry (Studio's configuration panel, the SDK's
  // `context`); UNDERSTAND resolves them against the input's (src/domain/config.ts). Typed as any zod object:
  // LangGraph would otherwise type a run's `context` with every setting required, and a caller gives any of them.
  const graph = new StateGraph(AgentState, { context: CandorContextSchema as InteropZodObject })
    .addNode(Node.CONVERSE, converseNode())
    // Nodes that may call the model run metered: their calls' tokens and cost go into `tokens` (nodes/usage.ts).
    .addNode(Node.UNDERSTAND, node(metered(nodeDeps, "planning", understandNode(nodeDeps))))
    .addNode(Node.EXECUTE, node(metered(nodeDeps, "grading", executeNode(nodeDeps))))
    .addNode(Node.WORKER, buildWorkerGraph(nodeDeps).compile())
    .addNode(Node.SYNTHESIZE, node(metered(nodeDeps, "synthesis", synthesizeNode(nodeDeps), { asks: true })))
    .addNode(Node.SELECT_STRATEGY, node(metered(nodeDeps, "recovery", selectStrategyNode(nodeDeps))))
    .addNode(Node.HUMAN_INTERRUPT, node(metered(nodeDeps, "planning", humanInterruptNode(nodeDeps))))
    .addNode(Node.REPLAN_WITH_GUIDANCE, node(metered(nodeDeps, "planning", replanWithGuidanceNode(nodeDeps))))
    // REFLECT ends the run itself (the report, the outcome): a FINALIZE node after it cost a superstep on every run.
    .addNode(Node.REFLECT, node(endingRun(nodeDeps, metered(nodeDeps, "reflection", reflectNode(nodeDeps)))))
    // Reached only when UNDERSTAND ends a run that has no plan to reflect on.
    .addNode(Node.FINALIZE, node(finalizeNode(nodeDeps)))
    .addNode(Node.RETRY_DIFFERENT_AGENT, node(strategyNode("RETRY_DIFFERENT_AGENT", nodeDeps)))
    .addNode(Node.RETRY_WITH_PARAMS, node(strategyNode("RETRY_WITH_PARAMS", nodeDeps)))
    .addNode(Node.SWAP_TOOL, node(strategyNode("SWAP_TOOL", nodeDeps)))
    .addNode(Node.DECOMPOSE, node(strategyNode("DECOMPOSE", nodeDeps)))
    .addNode(Node.ADJUST_PARAMETERS, node(strategyNode("ADJUST_PARAMETERS", nodeDeps)))
    .addNode(Node.FIX_DEPENDENCIES, node(strategyNode("FIX_DEPENDENCIES", nodeDeps)))
    .addNode(Node.FIND_WORKAROUND, node(strategyNode("FIND_WORKAROUND", nodeDeps)))
    .addNode(Node.SKIP, node(strategyNode("SKIP", nodeDeps)));
  for (const id of strategyTargets)
    graph.addConditionalEdges(id, routeAfterRevision, [Node.SELECT_STRATEGY, Node.EXECUTE]);
  return (
    graph
      // Chat clients start a run with a message, also to answer a question (nodes/chat.ts).
      .addConditionalEdges(START, routeFromStart, [Node.UNDERSTAND, Node.HUMAN_INTERRUPT, Node.CONVERSE])
      .addConditionalEdges(Node.CONVERSE, routeAfterConverse, [Node.UNDERSTAND, Node.EXECUTE, END])
      .addConditionalEdges(Node.UNDERSTAND, routeAfterUnderstand, [Node.FINALIZE, Node.HUMAN_INTERRUPT, Node.EXECUTE])
      .addConditionalEdges(Node.EXECUTE, routeAfterExecute, [Node.WORKER, Node.SYNTHESIZE])
      .addEdge(Node.WORKER, Node.EXECUTE)
      .addConditionalEdges(Node.SYNTHESIZE, routeAfterSynthesize, [Node.SELECT_STRATEGY, Node.REFLECT])
      .addConditionalEdges(Node.SELECT_STRATEGY, routeAfterSelectStrategy, [
        Node.HUMAN_INTERRUPT,
        Node.SYNTHESIZE,
        ...strategyTargets,
      ])
      .addConditionalEdges(Node.HUMAN_INTERRUPT, routeAfterHumanInterrupt, [
        Node.EXECUTE,
        Node.SELECT_STRATEGY,
        Node.REPLAN_WITH_GUIDANCE,
        Node.REFLECT,
        Node.HUMAN_INTERRUPT,
      ])
      .addConditionalEdges(Node.REPLAN_WITH_GUIDANCE, routeAfterReplanWithGuidance, [
        Node.EXECUTE,
        Node.HUMAN_INTERRUPT,
      ])
      .addEdge(Node.REFLECT, END)
      .addEdge(Node.FINALIZE, END)
  );
}

/** Compiles the agent with a checkpointer and a store (what the CLI, apps and tests do). */
export function compileAgent(
  deps: AgentDeps,
  persistence: { checkpointer?: BaseCheckpointSaver; store?: BaseStore } = {},
) {
  return buildAgentGraph(deps)
    .compile({ checkpointer: persistence.checkpointer, store: persistence.store, name: "candor" })
    .withConfig({ recursionLimit: RECURSION_LIMIT });
}

/**
 * Loops are bounded by the revision cap in state, not by LangGraph's recursion limit, whose default (25
 * supersteps) a healthy run with a few recoveries can exceed. This limit is only a backstop against a bug.
 */
export const RECURSION_LIMIT = 1000;
