import { z } from "zod";
import { CandorError, ErrorCode } from "../errors.js";
import type { Result } from "../result.js";
import { RunSettings } from "./request.js";

/**
 * Run settings the LangGraph platform's way (issue 13): an assistant made in Studio or with the SDK carries them in
 * its `context` (or `config.configurable`), and a run takes them when its input does not say otherwise.
 * Precedence, field by field: the input state's `settings` › the assistant's context › its configurable › the
 * defaults. UNDERSTAND fixes the result in state, so a resumed thread keeps it whatever the assistant says later.
 */

/** The names of the run settings, in one list: what the input may fix and what an assistant may carry. */
export const SettingName = z.enum(["maxRevisions", "approvalThreshold", "abortBelow", "maxStepFailures", "planner"]);
export type SettingName = z.infer<typeof SettingName>;

/** A setting's own schema (bounds and all), without its default: absent means "not said here". */
const bare = <K extends SettingName>(name: K) => RunSettings.shape[name].unwrap();

/** What an assistant may carry. Every field optional: an assistant that says nothing leaves the defaults. */
export const CandorConfig = z
  .object({
    maxRevisions: bare("maxRevisions")
      .optional()
      .describe("Plan revisions allowed before the run asks a person (default 3)."),
    approvalThreshold: bare("approvalThreshold")
      .optional()
      .describe("Plans whose confidence is below this wait for a person's approval (0–1, default 0.5)."),
    abortBelow: bare("abortBelow")
      .optional()
      .describe("After revisions, a confidence below this stops the run for a person (0–1, default 0.3)."),
    maxStepFailures: bare("maxStepFailures")
      .optional()
      .describe("Failures of one step (with its replacements) before the run asks a person (default 3)."),
    planner: bare("planner")
      .optional()
      .describe(
        "false: reactive mode, no plan; one general worker with every tool runs the request (needs a model). Default true.",
      ),
  })
  .strict();
export type CandorConfig = z.infer<typeof CandorConfig>;

/**
 * The graph's context schema (`new StateGraph(AgentState, { context })`): what Studio's configuration panel
 * lists. Each field falls back to undefined instead of failing, because LangGraph checks the context with it
 * before any node runs and would throw a bare zod error; resolveRunSettings checks the raw values again and
 * refuses a bad one with a coded error in plain words. Not strict: the context may carry things other than
 * settings.
 */
export const CandorContextSchema = z.object(
  Object.fromEntries(
    SettingName.options.map((name) => [name, (CandorConfig.shape[name] as z.ZodOptional).catch(undefined)]),
  ) as {
    [K in SettingName]: z.ZodCatch<(typeof CandorConfig.shape)[K]>;
  },
);

/**
 * The input's settings as written into state: any of the settings (validated, no defaults filled in), so the
 * fields the input left out can still come from the assistant. `fixed` is accepted (a fork writes back the whole
 * value it read) but ignored: the state's reducer works it out from the fields written.
 */
export const RunSettingsPatch = CandorConfig.extend({ fixed: z.array(SettingName).optional() }).strict();
export type RunSettingsPatch = z.infer<typeof RunSettingsPatch>;

/** Settings as kept in state: the values, and which of them are fixed for this run (by the input or UNDERSTAND). */
export const StateSettings = RunSettings.extend({
  /**
   * Settings fixed for this run: those the input (or a person, or a fork) wrote, and all of them once UNDERSTAND
   * has resolved them. The others may still come from the assistant.
   */
  fixed: z.array(SettingName).default(() => []),
});
export type StateSettings = z.infer<typeof StateSettings>;

/** The settings when nothing was said: RunSettings' defaults, none fixed. */
export function defaultStateSettings(): StateSettings {
  return { ...RunSettings.parse({}), fixed: [] };
}

/**
 * Folds writes into the state's settings: each write's fields replace the current ones and become fixed. Merging
 * is associative, as a DeltaValue's reducer must be.
 */
export function mergeSettings(current: StateSettings, writes: readonly RunSettingsPatch[]): StateSettings {
  let next = current;
  for (const write of writes) {
    const given = SettingName.options.filter((name) => write[name] !== undefined);
    const values = Object.fromEntries(given.map((name) => [name, write[name]]));
    next = {
      ...next,
      ...values,
      fixed: SettingName.options.filter((n) => next.fixed.includes(n) || given.includes(n)),
    };
  }
  return next;
}

/** Where each resolved setting came from, for the user. */
export type SettingSource = "input" | "assistant" | "default";

export interface ResolvedSettings {
  /** The run's effective settings, every one fixed: what UNDERSTAND writes into state. */
  settings: StateSettings;
  sources: Record<SettingName, SettingSource>;
  /** Context keys that are not settings (a typo, or a reasoner/model the graph cannot switch per run), to tell the user. */
  ignored: string[];
}

/** Context keys a run may carry that are not settings and are not worth a word (LangGraph's and the platform's own). */
const isPlatformKey = (key: string) => key.startsWith("__") || key.startsWith("langgraph_");

/**
 * The run's effective settings: per field, the input's (a field it fixed) over the assistant's context over its
 * configurable over the defaults. Pure; `context` and `configurable` are the raw values LangGraph passed.
 * @throws CandorError CONFIGURATION naming every bad assistant setting and what it must be; nothing runs.
 */
export function resolveRunSettings(args: {
  state: StateSettings;
  context?: unknown;
  configurable?: unknown;
}): ResolvedSettings {
  const problems: string[] = [];
  const ignored: string[] = [];
  const read = (raw: unknown, where: string, reportUnknown: boolean): CandorConfig => {
    if (raw === undefined || raw === null) return {};
    if (typeof raw !== "object" || Array.isArray(raw)) {
      problems.push(`the ${where} is not an object of settings`);
      return {};
    }
    const entries = Object.entries(raw as Record<string, unknown>);
    const picked: Record<string, unknown> = {};
    for (const [key, value] of entries) {
      if (SettingName.safeParse(key).success) {
        // null and undefined mean "not said": Studio's form sends a cleared field as null.
        if (value !== undefined && value !== null) picked[key] = value;
      } else if (reportUnknown && !isPlatformKey(key)) ignored.push(key);
    }
    const parsed = CandorConfig.safeParse(picked);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues)
      problems.push(
        `${where} ${issue.path.join(".")} is ${JSON.stringify(picked[String(issue.path[0])])}: ${issue.message}`,
      );
    return {};
  };
  const context = read(args.context, "context", true);
  // configurable also carries thread_id, checkpoint_ns and the like: only settings are read, nothing else is named.
  const configurable = read(args.configurable, "configurable", false);
  if (problems.length > 0) {
    throw new CandorError(
      `The assistant's settings are not usable, nothing was run: ${problems.join("; ")}. Fix them in the assistant's configuration (Studio or the SDK) or leave them out to use the defaults.`,
      ErrorCode.CONFIGURATION,
      { details: { problems } },
    );
  }
  const defaults = RunSettings.parse({});
  const values: Record<string, unknown> = {};
  const sources = {} as Record<SettingName, SettingSource>;
  for (const name of SettingName.options) {
    const fromAssistant = context[name] ?? configurable[name];
    if (args.state.fixed.includes(name)) [values[name], sources[name]] = [args.state[name], "input"];
    else if (fromAssistant !== undefined) [values[name], sources[name]] = [fromAssistant, "assistant"];
    else [values[name], sources[name]] = [defaults[name], "default"];
  }
  // Parsed, not cast: the settings are of several types now, and each value was already checked where it came from.
  return { settings: { ...RunSettings.parse(values), fixed: [...SettingName.options] }, sources, ignored };
}

/** What the user is told about the settings, or null when all came from the input and the defaults quietly. */
export function settingsNote(resolved: ResolvedSettings): string | null {
  const fromAssistant = SettingName.options.filter((n) => resolved.sources[n] === "assistant");
  const parts = [
    ...(fromAssistant.length > 0
      ? [`from the assistant's configuration: ${fromAssistant.map((n) => `${n} ${resolved.settings[n]}`).join(", ")}`]
      : []),
    ...(resolved.ignored.length > 0
      ? [
          `context key(s) ${resolved.ignored.join(", ")} ignored: not settings this graph reads (the settings are ${SettingName.options.join(", ")}; the reasoner and model are chosen when the graph is built, e.g. the CLI's --reasoner and --model)`,
        ]
      : []),
  ];
  return parts.length > 0 ? `Settings ${parts.join("; ")}.` : null;
}

const KIB = 1024;
const MIB = 1024 * KIB;

/** A bound's unit: a count of steps, or bytes of JSON in UTF-8 (which a setting may write with a KiB/MiB/GiB suffix). */
type BoundUnit = "steps" | "bytes";

/** Who enforces a bound, and so where an app sets it: the graph (buildAgentGraph's `bounds`) or the store (openDatabase's). */
type BoundOwner = "graph" | "store";

interface BoundSetting {
  /** What the bound limits, as messages say it ("the bound on …"). */
  what: string;
  unit: BoundUnit;
  min: number;
  max: number;
  default: number;
  /** The CLI's environment variable (read by src/env.ts, checked against min and max). */
  variable: string;
  owner: BoundOwner;
}

/**
 * The largest byte bound: V8 cannot hold a string of more than 2^29 - 24 characters, so a larger bound could never be
 * reached by the JSON text it measures; and a value within it stays below SQLite's 1 GB limit on one string or blob,
 * whose "string or blob too big" is what the bounds exist to prevent.
 */
const MAX_BYTES = 512 * MIB;

/**
 * Bounds on what Candor stores (issue 24), in one table keyed by name: a model's 5,000-step plan, a 10 MB tool answer
 * or a 10 MB log line must be refused or cut at the door, with the bound named, not discovered as "string or blob too
 * big" by the database or as gigabytes of checkpoints. Each has a default, and each is settable: by an environment
 * variable for the CLI, and for an app by the graph builder's `bounds` (what the graph enforces) or openDatabase's
 * (the store's bound). A request's `constraints.maxSteps` sets the steps bound for that request.
 */
export const STORAGE_BOUND_SETTINGS = {
  /**
   * Most steps in one plan, whoever wrote it, when the request's constraints.maxSteps says nothing. 1,000 is the
   * largest plan the execution bench runs to completion (bench/execution.ts).
   */
  maxPlanSteps: {
    what: "steps per plan",
    unit: "steps",
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    default: 1000,
    variable: "CANDOR_MAX_PLAN_STEPS",
    owner: "graph",
  },
  /** Most bytes (JSON, UTF-8) of one tool call's arguments; a call with more is refused before the tool runs. */
  maxToolArgumentBytes: {
    what: "tool arguments",
    unit: "bytes",
    min: 1 * KIB,
    max: MAX_BYTES,
    default: 1 * MIB,
    variable: "CANDOR_MAX_TOOL_ARGUMENT_BYTES",
    owner: "graph",
  },
  /**
   * Most bytes (JSON, UTF-8) of one tool result a step keeps (in its checkpoints and the effect ledger); a larger one
   * is kept cut, marked truncated.
   */
  maxToolResultBytes: {
    what: "stored tool results",
    unit: "bytes",
    min: 1 * KIB,
    max: MAX_BYTES,
    default: 1 * MIB,
    variable: "CANDOR_MAX_TOOL_RESULT_BYTES",
    owner: "graph",
  },
  /** Most bytes (JSON, UTF-8) of one value in the long-term store (episodes, thread records); a larger put is refused. */
  maxStoredValueBytes: {
    what: "stored values",
    unit: "bytes",
    min: 1 * KIB,
    max: MAX_BYTES,
    default: 16 * MIB,
    variable: "CANDOR_MAX_STORED_VALUE_BYTES",
    owner: "store",
  },
  /** Most bytes of one decision-log line; longer text in it is cut, the cut said in the line. */
  maxLogLineBytes: {
    what: "a decision-log line",
    unit: "bytes",
    min: 1 * KIB,
    max: MAX_BYTES,
    default: 64 * KIB,
    variable: "CANDOR_MAX_LOG_LINE_BYTES",
    owner: "graph",
  },
} as const satisfies Record<string, BoundSetting>;

export type StorageBoundName = keyof typeof STORAGE_BOUND_SETTINGS;

const boundNames = Object.keys(STORAGE_BOUND_SETTINGS) as StorageBoundName[];

const boundSchema = (name: StorageBoundName) => {
  const s = STORAGE_BOUND_SETTINGS[name];
  return z.number().int().min(s.min).max(s.max).default(s.default);
};

/** The storage bounds, every one filled in (see STORAGE_BOUND_SETTINGS for what each limits, and its default). */
export const StorageBounds = z.object({
  maxPlanSteps: boundSchema("maxPlanSteps"),
  maxToolArgumentBytes: boundSchema("maxToolArgumentBytes"),
  maxToolResultBytes: boundSchema("maxToolResultBytes"),
  maxStoredValueBytes: boundSchema("maxStoredValueBytes"),
  maxLogLineBytes: boundSchema("maxLogLineBytes"),
});
export type StorageBounds = z.infer<typeof StorageBounds>;

/** The bounds when nothing sets them. */
export const DEFAULT_STORAGE_BOUNDS: StorageBounds = StorageBounds.parse({});

/** The bounds the graph enforces (plan validation, tool calls, the decision log it is given): all but the store's. */
export type GraphBounds = Omit<StorageBounds, "maxStoredValueBytes">;

/** The graph's part of a set of bounds (what buildAgentGraph takes), leaving out the store's. */
export function graphBoundsOf<B extends Partial<StorageBounds>>(bounds: B): Omit<B, "maxStoredValueBytes"> {
  return Object.fromEntries(Object.entries(bounds).filter(([name]) => name !== "maxStoredValueBytes")) as Omit<
    B,
    "maxStoredValueBytes"
  >;
}

const figure = (n: number) => n.toLocaleString("en-US");

/** A bound's value as messages say it: "1,000 steps", "65,536 bytes (64 KiB)". */
export function describeBound(name: StorageBoundName, value: number): string {
  if (STORAGE_BOUND_SETTINGS[name].unit === "steps") return `${figure(value)} step${value === 1 ? "" : "s"}`;
  const unit = [
    [MIB * 1024, "GiB"],
    [MIB, "MiB"],
    [KIB, "KiB"],
  ] as const;
  const whole = unit.find(([size]) => value >= size && value % size === 0);
  return whole ? `${figure(value)} bytes (${figure(value / whole[0])} ${whole[1]})` : `${figure(value)} bytes`;
}

/** How a bound is changed, for the message of a bound that was hit: its variable, and the option an app sets. */
export function howToSetBound(name: StorageBoundName): string {
  const s = STORAGE_BOUND_SETTINGS[name];
  const option = s.owner === "graph" ? "buildAgentGraph's" : "openDatabase's";
  return `${s.variable} for the CLI, ${option} bounds.${name} in an app`;
}

/** What a setting of this bound must be, as a refusal says it. */
function boundRange(name: StorageBoundName): string {
  const s = STORAGE_BOUND_SETTINGS[name];
  if (s.unit === "steps") return `a whole number of steps, at least ${figure(s.min)}`;
  return `a whole number of bytes from ${describeBound(name, s.min)} to ${describeBound(name, s.max)}`;
}

const BYTE_SUFFIXES: Readonly<Record<string, number>> = { "": 1, kib: KIB, mib: MIB, gib: 1024 * MIB };

/**
 * A bound written as text (an environment variable): a plain whole number, or for bytes one with a KiB, MiB or GiB
 * suffix (`64KiB`, `1 MiB`). KB and MB are refused rather than guessed: they mean 1,000 to some and 1,024 to others.
 * The refusal says what the bound must be and quotes what was given (cut, with control characters escaped).
 */
export function readBoundText(name: StorageBoundName, text: string): Result<number> {
  const s = STORAGE_BOUND_SETTINGS[name];
  const m = /^\s*(\d{1,16})\s*([a-z]*)\s*$/i.exec(text);
  const factor = m ? BYTE_SUFFIXES[(m[2] ?? "").toLowerCase()] : undefined;
  const value = m && factor !== undefined && (s.unit === "bytes" || factor === 1) ? Number(m[1]) * factor : null;
  if (value !== null && Number.isSafeInteger(value) && value >= s.min && value <= s.max) return { ok: true, value };
  const quoted = JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
  const suffixes = s.unit === "bytes" ? ", written as such or with a KiB, MiB or GiB suffix (64KiB, 1MiB)" : "";
  return {
    ok: false,
    reason: `the bound on ${s.what} (${name}) must be ${boundRange(name)}${suffixes}; it is ${quoted}`,
  };
}

/**
 * The graph's bounds from what an app gave buildAgentGraph: each one given checked against its range, the others
 * their defaults. The store's bound is refused here rather than ignored: the graph cannot enforce it, and an app that
 * set it on the graph would believe its store bounded.
 *
 * @throws CandorError CONFIGURATION naming every bad bound, what it must be and what it was; nothing is built.
 */
export function resolveGraphBounds(given: unknown): GraphBounds {
  const defaults = graphBoundsOf(DEFAULT_STORAGE_BOUNDS);
  if (given === undefined || given === null) return defaults;
  const problems: string[] = [];
  const values: Record<string, number> = {};
  if (typeof given !== "object" || Array.isArray(given)) problems.push("bounds is not an object of bounds");
  else
    for (const [key, value] of Object.entries(given as Record<string, unknown>)) {
      const name = boundNames.find((n) => n === key);
      if (value === undefined) continue;
      if (!name) problems.push(`${key} is not a bound (the bounds are ${boundNames.join(", ")})`);
      else if (STORAGE_BOUND_SETTINGS[name].owner === "store")
        problems.push(`${name} is the store's bound, not the graph's: pass it to openDatabase(location, { bounds })`);
      else if (StorageBounds.shape[name].safeParse(value).success && typeof value === "number") values[name] = value;
      else {
        const shown = typeof value === "number" ? String(value) : (JSON.stringify(value)?.slice(0, 40) ?? typeof value);
        problems.push(`bounds.${name} must be ${boundRange(name)}; it is ${shown}`);
      }
    }
  if (problems.length > 0) {
    throw new CandorError(
      `buildAgentGraph cannot use the bounds it was given, nothing was built: ${problems.join("; ")}. Fix them, or leave a bound out to keep its default.`,
      ErrorCode.CONFIGURATION,
      { details: { problems } },
    );
  }
  return { ...defaults, ...values };
}
