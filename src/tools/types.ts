import { z } from "zod";
import type { FailureClass } from "../domain/feedback.js";
import type { MeaningKind } from "../domain/understanding.js";
import type { Analysis, Span } from "../planning/lexicon.js";

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
   * Output names this tool uses when the plan has them and can do without (an itinerary without a hotel when
   * the user has a place to stay; a total without activities). At planning, the step depends on those produced
   * in the plan; when none is, the planner plans the producer of the first, so the tool always gets something to
   * work on. At run time, when the step providing one is skipped (given up after failing, or skipped by a
   * person), this step still runs, with the input absent from `ctx.inputs` and the reason in `ctx.missing`; a
   * required input (`consumes`) missing skips the step instead. Each must be produced by some registered tool.
   */
  optionalConsumes?: string[];
  /**
   * The optional inputs are the same thing at different stages (book_trip books the itinerary, or else the flight
   * and hotel it was made from): an input already upstream of another planned input is left out of the step's
   * dependencies — unless that other input is a constraint check's, which carries none of what it checks.
   */
  prefersCombinedInput?: boolean;
  /**
   * The tool checks a limit on what other tools produce (a budget): its keywords ("under", "budget") say how the
   * request is bounded, not what it wants done, so they never stop the planner from recognising the request.
   */
  constraintCheck?: boolean;
  /** Output names this tool produces. */
  produces: string[];
  sideEffect: SideEffect;
  /**
   * Words that say this tool's effect took place, for a tool with a side effect ("booked", "report written"): each
   * entry is one or more words that must all appear in one clause of a sentence, in any order. SYNTHESIZE takes such
   * a sentence out of an answer when no call of the tool succeeded in the run (src/transparency/answer-check.ts).
   * Absent, or besides these: the regular past tense of the verb the name starts with, next to another word of the
   * name or of what it produces ("publish_note": "published" … "note"), which misses irregular verbs ("written").
   */
  effectWords?: readonly string[];
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
  /**
   * Classifies this tool's errors in its domain's words before Candor's generic rules do ("no seats left" is
   * resource_unavailable); null leaves the error to them. A toolkit's `classifyFailure` is every tool's default.
   */
  classifyFailure?: FailureClassifier;
  run: (args: z.infer<Args>, ctx: ToolContext) => Promise<unknown>;
}

/** A domain's own reading of an error: the class it knows the error to be, or null when it does not know. */
export type FailureClassifier = (message: string, error: unknown) => FailureClass | null;

/** What the rules planner extracted from the request, offered to each tool's `extractParams`. */
export interface RequestFacts {
  text: string;
  lower: string;
  constraints: { budget?: number; maxSteps?: number; timeoutMs?: number };
  preferences: Record<string, unknown>;
  /** The generic reading of the request (clauses, negations, numbers, amounts …); absent in hand-made facts. */
  analysis?: Analysis;
}

/**
 * What a toolkit read in a request, in its own domain, for the understanding record: each value with the words
 * it came from and the tools it feeds, the defaults and changes it made, the values it refuses, and every other
 * piece of text it read (so the planner can find what nobody read). Tools not in the plan drop out of it.
 */
export interface Interpretation {
  values: { name: string; value: unknown; source: Span; tools: string[] }[];
  assumptions: { name: string; value: unknown; why: string; tools: string[] }[];
  changes: { name: string; from: unknown; to: unknown; source: string; why: string; tools: string[] }[];
  /** Values given in the request that the toolkit will not use as they are ("-2 people"): a person decides. */
  refusals: { name: string; text: string; why: string; tools: string[] }[];
  /** Other words it read: direction words, a negated place it honours, a unit. */
  consumed: Span[];
  /**
   * What the request rules out in the domain's own words: outputs no step may produce ("we're driving" rules out
   * flights), or nothing the plan has to drop ("I don't want to go to Paris": honoured by the values) — `description`
   * says what ("not Paris").
   */
  exclusions: { outputs: string[]; span: Span; why: string; description?: string }[];
  /** Its own kind of words that it could not read ("Atlantis" is no city it knows). */
  notUnderstood: { span: Span; kind: MeaningKind; why: string }[];
  /**
   * Several steps for one output (a multi-city trip: a flight per leg, a hotel per city), by output name: each
   * instance has a key (the suffix of its step id, letters, digits and "_") and the parameters of the tool that
   * produces the output. An output absent here gets one step, with its tool's `extractParams`. Consumers of the
   * output then receive every instance's result, as a list (see schedule.ts `dependencyInputs`).
   */
  instances?: Record<string, { key: string; params: Record<string, unknown> }[]>;
  /**
   * Words that ask for a tool in a form no keyword list holds ("how many lines", "what can we do in Lisbon"), with
   * the tools they ask for: the planner takes them as it takes a tool's own keywords.
   */
  asks?: { span: Span; tools: string[] }[];
  /**
   * Outputs the request does not ask for although words of the domain would bring in their tools ("things to do in
   * Rome this weekend" asks for activities, not flights): no step produces them. Unlike an exclusion, nothing was
   * ruled out by the user; the toolkit says why as an assumption.
   */
  unasked?: string[];
}

/** An interpretation that read nothing. */
export function emptyInterpretation(): Interpretation {
  return { values: [], assumptions: [], changes: [], refusals: [], consumed: [], exclusions: [], notUnderstood: [] };
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
  /** Reads the request in the toolkit's domain for the understanding record (see Interpretation). */
  interpret?: (facts: RequestFacts) => Interpretation;
  /** Classifies its tools' errors in the domain's words (see ToolSpec.classifyFailure); a tool's own comes first. */
  classifyFailure?: FailureClassifier;
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

/** Every input a tool may work on: what it needs, then what it uses when the plan has it. */
export function inputsOf(tool: Pick<ToolSpec, "consumes" | "optionalConsumes">): string[] {
  return [...new Set([...tool.consumes, ...(tool.optionalConsumes ?? [])])];
}

/**
 * Whether `candidate` can do `tool`'s job in a step: it produces every output the step needs and requires
 * nothing the step does not already receive (its inputs are what `tool` consumes). A tool that needs an extra
 * input (plan_days needs attractions) is a part of a decomposition, not a stand-in; one that merely could use an
 * extra input (an optional one) can stand in and runs without it.
 */
export function canStandIn(
  candidate: Pick<ToolSpec, "produces" | "consumes" | "optionalConsumes">,
  needed: readonly string[],
  received: readonly string[],
): boolean {
  return (
    needed.every((o) => candidate.produces.includes(o)) && requiredInputs(candidate).every((c) => received.includes(c))
  );
}
