import { z } from "zod";

export const SideEffect = z.enum(["none", "reversible", "irreversible"]);
export type SideEffect = z.infer<typeof SideEffect>;

/** What a tool receives besides its validated arguments. */
export interface ToolContext {
  /** Aborted when the step's time limit passes or the run is cancelled: long work must stop when it fires. */
  signal: AbortSignal;
  /** Outputs of the step's dependencies, keyed by output name (a dependency's `expectedOutputs`). */
  inputs: Record<string, unknown>;
  /**
   * Optional inputs (the tool's `optionalConsumes`) the step runs without, each with why it is missing (e.g.
   * "activities: skipped by a person"). A tool says in its result what it left out. Absent when nothing is missing.
   */
  missing?: Readonly<Record<string, string>>;
  /** The step being run, for tools that report on their own progress. */
  stepId: string;
  /** 1-based attempt within the step's retry policy. */
  attempt: number;
}

/**
 * A tool plus the metadata the planner, the worker grant and the replanning strategies rely on.
 * `run` may throw: the worker turns every throw into ExecutionFeedback (a failure is data, never swallowed).
 */
export interface ToolSpec<Args extends z.ZodType = z.ZodType> {
  /** snake_case, as a model sees it. */
  name: string;
  description: string;
  /** Worker types grant categories (e.g. "flights", "analysis"). */
  category: string;
  /** A short description of a step that calls this tool with these parameters (e.g. "Flights Madrid → Paris"). */
  describeStep?: (params: Record<string, unknown>) => string;
  /** Words in a request that suggest this tool (the rules planner matches them). */
  keywords: string[];
  /**
   * Whether a request is about what this tool does although none of its keywords appear (a trip named only by its
   * cities: "10 days in Rome from Madrid"). The rules planner asks it only when no tool's keywords match, so it
   * never adds a tool to a request that already named what it wants.
   */
  appliesTo?: (request: RequestFacts) => boolean;
  /** Output names this tool needs from earlier steps: they become the step's dependencies. */
  consumes: string[];
  /**
   * Which of `consumes` the tool can do without (a total without activities). When the step providing one is
   * skipped (given up after failing, or skipped by a person), this step still runs, with the input absent from
   * `ctx.inputs` and its reason in `ctx.missing`; a required input missing skips the step instead. Each must be
   * in `consumes` (it is still a dependency: the step waits for it) and produced by some registered tool.
   */
  optionalConsumes?: string[];
  /** Output names this tool produces. */
  produces: string[];
  sideEffect: SideEffect;
  needsApproval: boolean;
  /** Validates the call's arguments; a zod error becomes an invalid-parameters failure. */
  schema: Args;
  /**
   * What a successful call must return. A result that does not match (a garbled answer from a flaky service)
   * is a failure, not a success. Absent: any non-null result is accepted.
   */
  outputSchema?: z.ZodType;
  /** Typical duration and cost of one call, for plan estimates and progress ETAs. */
  estimates: { durationMs: number; cost: number };
  /** Turns the request into this tool's parameters (the rules planner's parameter extraction). */
  extractParams?: (request: RequestFacts) => Record<string, unknown>;
  /**
   * What `extractParams` had to assume because the request did not say (a default origin, a currency taken as
   * another), in plain language: shown with the plan, so a default never passes for something the user said.
   */
  assumptions?: (request: RequestFacts) => string[];
  /**
   * Parameters that widen the search when the first choice is unavailable (FIND_WORKAROUND), with a
   * plain-language description of the widening. Absent: the tool has no wider search.
   */
  widen?: (params: Record<string, unknown>) => { params: Record<string, unknown>; description: string } | null;
  /**
   * The parameter that caps what this tool's result may cost (ADJUST_PARAMETERS sets it after a budget
   * violation). Absent: the tool's cost cannot be steered.
   */
  costCapParam?: string;
  /**
   * Set by withFaults on a copy that misbehaves on purpose (e.g. ["timeout*1"]): a run that uses such tools is
   * simulated, and its outcome is kept apart from what real runs learn.
   */
  injectedFaults?: readonly string[];
  run: (args: z.infer<Args>, ctx: ToolContext) => Promise<unknown>;
}

/** What the rules planner extracted from the request, offered to each tool's `extractParams`. */
export interface RequestFacts {
  text: string;
  lower: string;
  constraints: { budget?: number; maxSteps?: number; timeoutMs?: number };
  preferences: Record<string, unknown>;
}

/** A worker role and the tools it may touch. */
export interface WorkerType {
  name: string;
  description: string;
  /** Tool categories this worker may use. */
  categories: string[];
  /** Extra tools granted by name, beyond the categories. */
  tools?: string[];
  /** Words that make this worker a good fit for a step (router ranking). */
  keywords?: string[];
  /** A catch-all worker ranks below specialists that can do the same step. */
  fallback?: boolean;
}

/** Tools and worker types as one unit, e.g. a demo domain or a built-in toolkit. */
export interface Toolkit {
  name: string;
  tools: ToolSpec[];
  workers: WorkerType[];
}

/**
 * A parameter as words in a step's description (`describeStep`): a string, number or boolean as it is, anything
 * else as JSON, `fallback` when it is missing. Never "[object Object]": a description shows what was really set.
 */
export function paramText(value: unknown, fallback: string): string {
  if (value === undefined || value === null) return fallback;
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value) ?? fallback;
}

/**
 * Declares a tool with its arguments typed from its schema. The registry stores tools with unknown arguments;
 * this is the one place that widening happens, and it is safe because the worker validates arguments with the
 * same schema before `run` is called.
 */
export function defineTool<Args extends z.ZodType>(spec: ToolSpec<Args>): ToolSpec {
  return spec;
}

/** The inputs a tool cannot run without: its `consumes` less its `optionalConsumes`. */
export function requiredInputs(tool: Pick<ToolSpec, "consumes" | "optionalConsumes">): string[] {
  return tool.consumes.filter((c) => !(tool.optionalConsumes ?? []).includes(c));
}

/**
 * Whether `candidate` can do `tool`'s job in a step: it produces every output the step needs and requires
 * nothing the step does not already receive (its inputs are what `tool` consumes). A tool that needs an extra
 * input (plan_days needs attractions) is a part of a decomposition, not a stand-in; one that merely could use an
 * extra input (an optional one) can stand in and runs without it.
 */
export function canStandIn(candidate: Pick<ToolSpec, "produces" | "consumes" | "optionalConsumes">, needed: readonly string[], received: readonly string[]): boolean {
  return needed.every((o) => candidate.produces.includes(o)) && requiredInputs(candidate).every((c) => received.includes(c));
}
