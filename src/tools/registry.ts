import { CandorError, ErrorCode } from "../errors.js";
import type { TaskStep } from "../domain/plan.js";
import { DEFAULT_STORAGE_BOUNDS, graphBoundsOf, type GraphBounds } from "../domain/config.js";
import {
  inputsOf,
  requiredInputs,
  type Interpretation,
  type RequestFacts,
  type ToolSpec,
  type Toolkit,
  type WorkerType,
} from "./types.js";

/** A toolkit's reader of requests, with the tools it speaks for. */
export interface Interpreter {
  toolkit: string;
  tools: readonly string[];
  interpret: (facts: RequestFacts) => Interpretation;
}

const SNAKE = /^[a-z][a-z0-9_]*$/;

/** What a step consumes: the inputs it cannot run without, and those it can (see ToolSpec.optionalConsumes). */
export interface StepInputs {
  required: readonly string[];
  optional: readonly string[];
}

/**
 * A tool's optional inputs must be something a registered tool produces: one nobody produces would always be
 * missing, and declaring it optional would hide that.
 */
function assertOptionalInputs(tools: readonly ToolSpec[]): void {
  const produced = new Set(tools.flatMap((t) => t.produces));
  for (const tool of tools) {
    for (const input of tool.optionalConsumes ?? []) {
      if (!produced.has(input)) {
        throw new CandorError(
          `Tool "${tool.name}" declares "${input}" as an optional input, but no registered tool produces it, so it would always be missing. Register a tool that produces ${input}, or remove it from optionalConsumes.`,
          ErrorCode.CONFIGURATION,
        );
      }
    }
  }
}

/** A worker granted this category may use every tool (the `general` fallback worker of seed 004). */
export const ALL_CATEGORIES = "*";

/**
 * The tools and worker types a graph may use. Built once (validated, immutable) and injected into the graph;
 * every grant decision goes through here so the rule "a worker only touches its tools" lives in one place.
 */
export class ToolRegistry {
  readonly tools: ReadonlyMap<string, ToolSpec>;
  readonly workers: ReadonlyMap<string, WorkerType>;
  /** The toolkits' readers of requests (Toolkit.interpret), in registration order. */
  readonly interpreters: readonly Interpreter[];
  /**
   * The graph's storage bounds (steps per plan, bytes of a tool call's arguments and result), carried here because
   * every planner, plan check and step runner is handed this registry: the bounds an app set reach each of them
   * without a second argument threaded through every call (resolved by buildAgentGraph; defaults otherwise).
   */
  readonly bounds: GraphBounds;

  private constructor(
    tools: Map<string, ToolSpec>,
    workers: Map<string, WorkerType>,
    interpreters: Interpreter[],
    bounds: GraphBounds,
  ) {
    this.tools = tools;
    this.workers = workers;
    this.interpreters = interpreters;
    this.bounds = bounds;
  }

  /** Validates and builds a registry; throws CONFIGURATION naming the first inconsistency. */
  static create(
    toolkits: readonly Toolkit[],
    bounds: GraphBounds = graphBoundsOf(DEFAULT_STORAGE_BOUNDS),
  ): ToolRegistry {
    const tools = new Map<string, ToolSpec>();
    const workers = new Map<string, WorkerType>();
    /** Which toolkit registered each worker type, to name both when one is registered twice. */
    const workerKits = new Map<string, string>();
    const interpreters: Interpreter[] = [];
    for (const kit of toolkits) {
      if (kit.interpret)
        interpreters.push({ toolkit: kit.name, tools: kit.tools.map((t) => t.name), interpret: kit.interpret });
      for (const tool of kit.tools) {
        if (!SNAKE.test(tool.name)) {
          throw new CandorError(
            `Tool name "${tool.name}" (toolkit ${kit.name}) must be snake_case, as models see it.`,
            ErrorCode.CONFIGURATION,
          );
        }
        if (tools.has(tool.name)) {
          throw new CandorError(
            `Tool "${tool.name}" is registered twice (toolkit ${kit.name}); tool names must be unique.`,
            ErrorCode.CONFIGURATION,
          );
        }
        // The toolkit's classifier is each of its tools' unless the tool brings its own.
        const classify = tool.classifyFailure ?? kit.classifyFailure;
        tools.set(tool.name, classify && !tool.classifyFailure ? { ...tool, classifyFailure: classify } : tool);
      }
      for (const worker of kit.workers) {
        if (workers.has(worker.name)) {
          throw new CandorError(
            `Worker type "${worker.name}" is registered twice: by toolkit ${workerKits.get(worker.name)} and by toolkit ${kit.name}. Worker types must be unique; rename one of them (an MCP server's worker type is its name under mcpServers in the MCP configuration, so rename the server there, e.g. "${worker.name}_mcp").`,
            ErrorCode.CONFIGURATION,
          );
        }
        workers.set(worker.name, worker);
        workerKits.set(worker.name, kit.name);
      }
    }
    if (tools.size === 0)
      throw new CandorError("No tools registered: give buildAgentGraph at least one toolkit.", ErrorCode.CONFIGURATION);
    assertOptionalInputs([...tools.values()]);
    const categories = new Set([...tools.values()].map((t) => t.category));
    for (const worker of workers.values()) {
      for (const name of worker.tools ?? []) {
        if (!tools.has(name)) {
          throw new CandorError(
            `Worker type "${worker.name}" is granted tool "${name}", which does not exist. Registered tools: ${[...tools.keys()].join(", ")}.`,
            ErrorCode.CONFIGURATION,
          );
        }
      }
      const reachable =
        worker.categories.some((c) => c === ALL_CATEGORIES || categories.has(c)) || (worker.tools?.length ?? 0) > 0;
      if (!reachable) {
        throw new CandorError(
          `Worker type "${worker.name}" grants no existing tool (categories: ${worker.categories.join(", ") || "none"}).`,
          ErrorCode.CONFIGURATION,
        );
      }
    }
    return new ToolRegistry(tools, workers, interpreters, bounds);
  }

  /** The faults injected into this registry's tools, as `tool=kind[*N]`; empty for real tools. */
  injectedFaults(): string[] {
    return [...this.tools.values()].flatMap((t) => (t.injectedFaults ?? []).map((f) => `${t.name}=${f}`));
  }

  tool(name: string): ToolSpec | undefined {
    return this.tools.get(name);
  }

  worker(name: string): WorkerType | undefined {
    return this.workers.get(name);
  }

  /** Every tool a worker type may use (its categories plus the tools granted by name). */
  grant(workerType: string): ToolSpec[] {
    const worker = this.workers.get(workerType);
    if (!worker) return [];
    const all = worker.categories.includes(ALL_CATEGORIES);
    return [...this.tools.values()].filter(
      (t) => all || worker.categories.includes(t.category) || (worker.tools ?? []).includes(t.name),
    );
  }

  isGranted(workerType: string, toolName: string): boolean {
    return this.grant(workerType).some((t) => t.name === toolName);
  }

  /** The tools a step may call: the step's own list, narrowed to its worker's grant. */
  toolsForStep(step: Pick<TaskStep, "workerType" | "tools">): ToolSpec[] {
    const granted = this.grant(step.workerType);
    return granted.filter((t) => step.tools.includes(t.name));
  }

  /** The best worker type for a tool: a specialist granting it, before a fallback worker. */
  workerForTool(toolName: string): WorkerType | undefined {
    const candidates = [...this.workers.values()].filter((w) => this.isGranted(w.name, toolName));
    candidates.sort(
      (a, b) =>
        Number(a.fallback ?? false) - Number(b.fallback ?? false) ||
        (a.tools?.includes(toolName) ? -1 : 0) - (b.tools?.includes(toolName) ? -1 : 0),
    );
    return candidates[0];
  }

  /**
   * What a step's tools consume, split into what they cannot run without and what they can (the scheduler's one
   * view of tools). An input is optional only when every tool of the step that consumes it declares it optional,
   * since a worker may call any of them. Unregistered tools count for nothing (planning validation names them).
   */
  inputsOf(step: Pick<TaskStep, "tools">): StepInputs {
    const tools = step.tools.map((name) => this.tools.get(name)).filter((t): t is ToolSpec => t !== undefined);
    // A step that acts on the world (a booking) never acts on part of what was planned: what it would do without a
    // skipped input is not what anyone approved, so for it every input is required.
    if (tools.some((t) => t.sideEffect !== "none"))
      return { required: [...new Set(tools.flatMap(inputsOf))], optional: [] };
    const required = [...new Set(tools.flatMap(requiredInputs))];
    const optional = [...new Set(tools.flatMap((t) => t.optionalConsumes ?? []))].filter((c) => !required.includes(c));
    return { required, optional };
  }

  /** Tools that produce any of the given outputs. */
  producersOf(outputs: readonly string[]): ToolSpec[] {
    return [...this.tools.values()].filter((t) => t.produces.some((p) => outputs.includes(p)));
  }
}
