import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { PlanAdjustment } from "../domain/approval.js";
import { RunSettings } from "../domain/request.js";
import { DEFAULT_DB_PATH, DEFAULT_MODEL, type CandorEnv } from "../env.js";
import { Node, type NodeId } from "../../nodes/names.js";
import { CandorError, ErrorCode } from "../errors.js";
import { CLI_JSON_LIMITS, parseCliJson, preview } from "../json-limits.js";
import { readGivenFile } from "../safe-read.js";
import { FAULT_KINDS } from "../tools/fault-kinds.js";
import { FLAG_BOUNDS, LOG_OPERATIONS } from "./catalog.js";

/** The request the CLI suggests when it needs an example: one the default toolkits serve (src/app). */
export { EXAMPLE_REQUEST } from "../app/example-request.js";

/** Thread ids become store keys and shell arguments: keep them to characters that need no quoting. */
export const ThreadId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "a thread id is 1-64 letters, digits, '_' or '-' (e.g. run-1a2b3c4d)");

/*
 * Every flag is parsed here, at the boundary, with the bounds it is documented with (docs/cli.md, "Flags").
 * Commander hands over strings: numbers are read from their digits (`1e9`, `0x1`, "" and "Infinity" are
 * not numbers a person types for these flags), and a value that is itself a flag (`--replan --db x.db`) means
 * the real value was left out.
 */

const FLAG_LIKE = /^--[A-Za-z]/;

/** A text value (`what` it is, for messages); refused when empty or when it is the next flag (its value was left out). */
const text = (flag: string, example: string, what = "a value") =>
  z
    .string()
    .trim()
    .min(1, `${flag} needs ${what}, e.g. ${flag} ${example}`)
    .superRefine((v, ctx) => {
      if (FLAG_LIKE.test(v))
        ctx.addIssue({
          code: "custom",
          message: `${flag} needs ${what}, but the next word is the flag "${v}": put it right after ${flag} (quoted if it has spaces), e.g. ${flag} ${example}`,
        });
    });

/** A whole number within bounds, written in digits. */
const wholeNumber = (flag: string, { min, max }: { min: number; max: number }, example: number) => {
  const message = `${flag} must be a whole number from ${min} to ${max}, e.g. ${flag} ${example}`;
  return z
    .string({ error: message })
    .trim()
    .regex(/^\d{1,9}$/, message)
    .transform(Number)
    .pipe(z.number().int().min(min, message).max(max, message));
};

/** A number from 0 to 1, written as a decimal (0.8, .8, 1). */
const Probability = (flag: string) => {
  const message = `${flag} must be a number between 0 and 1, e.g. ${flag} 0.8`;
  return z
    .string({ error: message })
    .trim()
    .regex(/^(\d+\.?\d*|\.\d+)$/, message)
    .transform(Number)
    .pipe(z.number().min(0, message).max(1, message));
};

/** `--fault tool=kind[*N]`, repeatable, each value possibly a comma-separated list; every entry must be a fault. */
const FaultFlags = z.array(z.string()).superRefine((values, ctx) => {
  const form = `write tool=kind[*N] with kind one of ${FAULT_KINDS.join(", ")} and N from ${FLAG_BOUNDS.faultCalls.min} to ${FLAG_BOUNDS.faultCalls.max}, e.g. --fault read_file=timeout*1`;
  for (const value of values) {
    for (const entry of value.split(",").map((e) => e.trim())) {
      const problem = faultProblem(entry);
      if (problem) {
        ctx.addIssue({ code: "custom", message: `--fault ${JSON.stringify(value)} is malformed: ${problem}; ${form}` });
        return;
      }
    }
  }
});

/** Why one comma-separated entry of --fault is not a fault, or null. Unknown tools are refused when tools are built. */
function faultProblem(entry: string): string | null {
  if (entry === "") return "an entry is empty";
  if (FLAG_LIKE.test(entry)) return `"${entry}" is a flag, not a fault (the fault was left out)`;
  const m = /^[A-Za-z][A-Za-z0-9_]*\s*=\s*([A-Za-z]+)\s*(?:\*\s*(\d+))?$/.exec(entry);
  if (!m) return `"${entry}" is not of the form tool=kind[*N]`;
  if (!(FAULT_KINDS as readonly string[]).includes(m[1]!.toLowerCase())) return `"${m[1]}" is not a fault kind`;
  const { min, max } = FLAG_BOUNDS.faultCalls;
  if (m[2] !== undefined && (m[2].length > 9 || Number(m[2]) < min || Number(m[2]) > max))
    return `the number of failing calls ${m[2]} is not from ${min} to ${max}`;
  return null;
}

/** Flags every command that opens the database accepts. */
export const CommonFlags = z.object({
  db: text("--db", "runs.db").optional(),
  debug: z.boolean().default(false),
  json: z.boolean().default(false),
});

const ReasonerKind = z.enum(["rules", "llm"], { error: "--reasoner must be rules or llm" });
type ReasonerKind = z.infer<typeof ReasonerKind>;

/** `candor run` and `candor demo`. */
export const RunFlags = CommonFlags.extend({
  thread: text("--thread", "run-1a2b3c4d").pipe(ThreadId).optional(),
  user: text("--user", "me")
    .pipe(z.string().regex(/^[A-Za-z0-9_@-]{1,64}$/, "--user is 1-64 letters, digits, '_', '-' or '@'"))
    .default("default"),
  model: text("--model", "gpt-4o-mini").optional(),
  reasoner: ReasonerKind.optional(),
  fault: FaultFlags.default([]),
  maxRevisions: wholeNumber("--max-revisions", FLAG_BOUNDS.maxRevisions, 2).optional(),
  approvalThreshold: Probability("--approval-threshold").optional(),
  abortBelow: Probability("--abort-below").optional(),
  /** Reactive mode: no plan, one `general` worker loop with every tool (settings.planner false); needs a model. */
  reactive: z.boolean().default(false),
  /** A JSON file of MCP servers whose tools the run may use. */
  mcp: text("--mcp", "mcp.json", "a file").optional(),
  /** A folder of documents for the docs toolkit's search_docs (as CANDOR_DOCS). */
  docs: text("--docs", "./docs", "a folder").optional(),
  /** The request's `constraints.tokenBudget` (not `budget`, which is the money a plan may spend). */
  tokenBudget: wholeNumber("--token-budget", FLAG_BOUNDS.tokenBudget, 50000).optional(),
  /** False with --no-input: never ask at the terminal, exit 3 with the commands to continue (as in a script). */
  input: z.boolean().default(true),
  /** Add the debugging tools (review_runs, …) to the run's tools; CANDOR_DEBUG_TOOLS=1 does too. */
  debugTools: z.boolean().default(false),
});
export type RunFlags = z.infer<typeof RunFlags>;

/** `candor resume`. */
export const ResumeFlags = CommonFlags.extend({
  approve: z.boolean().default(false),
  reject: z.boolean().default(false),
  skip: z.boolean().default(false),
  retry: z.boolean().default(false),
  abort: z.boolean().default(false),
  deny: z.boolean().default(false),
  /** `key=value` parameters for --retry (repeatable). */
  set: z.array(text("--set", "maxPrice=300")).default([]),
  /** Guidance text for a replan decision. */
  replan: text("--replan", '"use the train instead"', "guidance text").optional(),
  /** The adjustments of an ADJUST decision, as JSON or @file (parsed by the resume command). */
  adjust: text("--adjust", `'[{"taskId":"s2","field":"params.limit","newValue":3}]' (or @file)`).optional(),
  comment: text("--comment", '"too expensive"').optional(),
  /** False with --no-input: never ask at the terminal, exit 3 with the commands to continue (as in a script). */
  input: z.boolean().default(true),
});
export type ResumeFlags = z.infer<typeof ResumeFlags>;

export const HistoryFlags = CommonFlags.extend({
  limit: wholeNumber("--limit", FLAG_BOUNDS.limit, 10).optional(),
});
export type HistoryFlags = z.infer<typeof HistoryFlags>;

/** The nodes an update can count as coming from (`fork --as-node`). */
const AsNode = z.enum(Object.values(Node) as [NodeId, ...NodeId[]], {
  error: `--as-node must be one of the graph's nodes: ${Object.values(Node).join(", ")}`,
});

/** `candor replay` and `candor fork`. */
export const ReplayFlags = CommonFlags.extend({
  from: text("--from", "<checkpoint id from: history <thread>>"),
  set: z.array(text("--set", "settings.maxRevisions=1")).default([]),
  asNode: AsNode.optional(),
});
export type ReplayFlags = z.infer<typeof ReplayFlags>;

/** `candor threads`. */
export const ThreadsFlags = CommonFlags.extend({
  limit: wholeNumber("--limit", FLAG_BOUNDS.limit, 10).optional(),
});
export type ThreadsFlags = z.infer<typeof ThreadsFlags>;

/** `candor worker`. */
export const WorkerFlags = CommonFlags.extend({
  /** Exit once nothing is queued or running (benchmarks, scripts) instead of waiting for more threads. */
  exitWhenIdle: z.boolean().default(false),
});
export type WorkerFlags = z.infer<typeof WorkerFlags>;

/** `candor review`: the run flags that make sense for a review, and the thread to look into. */
export const ReviewFlags = CommonFlags.extend({
  thread: text("--thread", "run-1a2b3c4d").pipe(ThreadId).optional(),
  user: RunFlags.shape.user,
  model: RunFlags.shape.model,
  reasoner: RunFlags.shape.reasoner,
  input: RunFlags.shape.input,
});
export type ReviewFlags = z.infer<typeof ReviewFlags>;

export const LogsFlags = CommonFlags.extend({
  thread: text("--thread", "run-1a2b3c4d").pipe(ThreadId).optional(),
  plan: text("--plan", "plan-3c40fe49").optional(),
  step: text("--step", "s2").optional(),
  operation: z.enum(LOG_OPERATIONS, { error: `--operation must be one of ${LOG_OPERATIONS.join(", ")}` }).optional(),
});
export type LogsFlags = z.infer<typeof LogsFlags>;

/**
 * Parses commander's raw option object with a flag schema. A bad value becomes one INVALID_REQUEST message that
 * names the flag and what it accepts, never a zod dump.
 */
export function parseFlags<T extends z.ZodType>(schema: T, raw: unknown): z.infer<T> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const flag = issue?.path.length
    ? `--${String(issue.path[0]).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`
    : "a flag";
  const message = issue?.message ?? "invalid value";
  throw new CandorError(message.startsWith("--") ? `${message}.` : `${flag}: ${message}.`, ErrorCode.INVALID_REQUEST);
}

const ADJUST_EXAMPLE = `--adjust '[{"taskId":"s2","field":"params.limit","newValue":3}]'`;

/**
 * Reads --adjust: inline JSON or @file, a list of {taskId, field, newValue} (or {adjustments: [...]}). Whether
 * the edits fit the plan is checked by the graph, which keeps the thread waiting with the reason if not.
 */
export function parseAdjustFlag(value: string, cwd = process.cwd()): PlanAdjustment[] {
  let text = value;
  if (value.startsWith("@")) {
    text = readGivenFile(path.resolve(cwd, value.slice(1)), {
      what: "--adjust",
      given: preview(value.slice(1)),
      code: ErrorCode.INVALID_REQUEST,
      maxBytes: CLI_JSON_LIMITS.maxBytes,
    });
  }
  const json = parseCliJson(text, "--adjust", `Example: ${ADJUST_EXAMPLE}.`);
  const list =
    json !== null && typeof json === "object" && !Array.isArray(json) && "adjustments" in json
      ? json.adjustments
      : json;
  const parsed = z.array(PlanAdjustment).min(1, "the list is empty").safeParse(list);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CandorError(
      `--adjust must be a list of {taskId, field, newValue} (${issue?.path.join(".") || "value"}: ${issue?.message}). Example: ${ADJUST_EXAMPLE}.`,
      ErrorCode.INVALID_REQUEST,
    );
  }
  return parsed.data;
}

/** The database path: --db, else CANDOR_DB, else .candor/candor.db. */
export function resolveDbPath(flag: string | undefined, env: CandorEnv): string {
  return flag ?? env.CANDOR_DB ?? DEFAULT_DB_PATH;
}

/** The MCP configuration file a run uses, as an absolute path (a resume may run elsewhere): --mcp, else CANDOR_MCP. */
export function resolveMcpPath(flag: string | undefined, env: CandorEnv): string | null {
  const file = flag ?? env.CANDOR_MCP;
  return file ? path.resolve(file) : null;
}

/** The documents folder a run searches, as an absolute path (a resume may run elsewhere): --docs, else CANDOR_DOCS. */
export function resolveDocsPath(flag: string | undefined, env: CandorEnv): string | null {
  const dir = flag ?? env.CANDOR_DOCS;
  if (!dir) return null;
  const absolute = path.resolve(dir);
  // Refused here, before a database is opened or a thread recorded, rather than as a failed step mid-run.
  if (!statSync(absolute, { throwIfNoEntry: false })?.isDirectory()) {
    throw new CandorError(
      `${flag !== undefined ? "--docs" : "CANDOR_DOCS"} names ${absolute}, which is not a folder, so nothing was run. Pass a folder of documents (Markdown or text) for search_docs, or leave it out.`,
      ErrorCode.CONFIGURATION,
    );
  }
  return absolute;
}

/** The environment a session runs with: the process's, with the run's documents folder when it has one. */
export function withDocs(env: CandorEnv, docs: string | null | undefined): CandorEnv {
  return docs ? { ...env, CANDOR_DOCS: docs } : env;
}

/** A new thread id, short enough to type: run-<8 hex>. */
export function newThreadId(): string {
  return `run-${randomBytes(4).toString("hex")}`;
}

/** Which reasoner a run uses and why; `model` is null for rules. */
export interface ReasonerChoice {
  kind: ReasonerKind;
  model: string | null;
}

/**
 * --model implies the llm reasoner; without --reasoner the llm reasoner is used when OPENAI_API_KEY is set.
 * Asking for the model without a key is a usage error, reported before anything is opened.
 */
export function chooseReasoner(flags: Pick<RunFlags, "model" | "reasoner">, env: CandorEnv): ReasonerChoice {
  if (flags.reasoner === "rules" && flags.model) {
    throw new CandorError(
      "--model only applies to the llm reasoner, but --reasoner rules was given. Drop one of them.",
      ErrorCode.INVALID_REQUEST,
    );
  }
  const kind: ReasonerKind = flags.reasoner ?? (flags.model || env.OPENAI_API_KEY ? "llm" : "rules");
  if (kind === "rules") return { kind, model: null };
  if (!env.OPENAI_API_KEY) {
    const asked = flags.model ? `--model ${flags.model}` : "--reasoner llm";
    throw new CandorError(
      `${asked} needs a chat model, but OPENAI_API_KEY is not set. Set OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible server such as Ollama), or use --reasoner rules to plan offline.`,
      ErrorCode.CONFIGURATION,
    );
  }
  return { kind, model: flags.model ?? env.CANDOR_MODEL ?? DEFAULT_MODEL };
}

/** The run settings the flags of `run` and `submit` give (what they leave out takes its default). */
export function settingsFromFlags(
  flags: Pick<RunFlags, "maxRevisions" | "approvalThreshold" | "abortBelow" | "reactive">,
): RunSettings {
  return RunSettings.parse({
    ...(flags.maxRevisions !== undefined && { maxRevisions: flags.maxRevisions }),
    ...(flags.approvalThreshold !== undefined && { approvalThreshold: flags.approvalThreshold }),
    ...(flags.abortBelow !== undefined && { abortBelow: flags.abortBelow }),
    ...(flags.reactive && { planner: false }),
  });
}

/**
 * Refuses --reactive when the run would have no model to drive its worker loop, before anything is opened: the
 * rules reasoner, or model-driven workers turned off (CANDOR_MAX_MODEL_CALLS=0).
 */
export function checkReactive(flags: Pick<RunFlags, "reactive">, reasoner: ReasonerChoice, env: CandorEnv): void {
  if (!flags.reactive) return;
  const why =
    reasoner.kind === "rules"
      ? "no chat model is configured (the rules reasoner plans offline and cannot run a worker loop)"
      : env.CANDOR_MAX_MODEL_CALLS === 0
        ? "CANDOR_MAX_MODEL_CALLS is 0, which turns model-driven workers off"
        : null;
  if (why === null) return;
  throw new CandorError(
    `--reactive runs the request as one worker loop driven by a chat model, but ${why}, so nothing was run. Pass --model <model> with OPENAI_API_KEY set (OPENAI_BASE_URL for an OpenAI-compatible server)${env.CANDOR_MAX_MODEL_CALLS === 0 ? " and unset CANDOR_MAX_MODEL_CALLS" : ""}, or drop --reactive to plan the request.`,
    ErrorCode.CONFIGURATION,
  );
}
/** Whether a session has the debugging tools: beside the default tools (`--debug-tools`), or alone (a review). */
export const DebugTools = z.enum(["added", "alone"]);
export type DebugTools = z.infer<typeof DebugTools>;

/** What `run` stores per thread under ["candor", "threads"], so `resume` rebuilds the same tools in a new process. */
export const ThreadRecord = z.object({
  threadId: ThreadId,
  request: z.string(),
  userId: z.string(),
  reasoner: ReasonerKind,
  model: z.string().nullable(),
  faults: z.array(z.string()),
  /** The run's settings, so a thread stopped before its first checkpoint can be started again as it was. */
  settings: RunSettings.optional(),
  /** The MCP configuration file (absolute) whose servers' tools the run offers, so `resume` starts the same ones. */
  mcp: z.string().nullable().optional(),
  /** The documents folder (absolute) its docs toolkit searched (`--docs`, CANDOR_DOCS), so `resume` searches it too. */
  docs: z.string().nullable().optional(),
  /** The debugging tools it ran with: added to the others (`--debug-tools`), or alone (`candor review`). */
  debugTools: DebugTools.optional(),
  /** The request's token budget (`--token-budget`), absent when it has none. */
  tokenBudget: z.number().int().positive().optional(),
  createdAt: z.string(),
});
export type ThreadRecord = z.infer<typeof ThreadRecord>;

/** What `run` and `submit` record before a thread starts, so `resume` (or a worker) can start it as it was asked. */
export function newThreadRecord(
  threadId: string,
  request: string,
  flags: { user: string; fault: string[]; tokenBudget?: number | undefined },
  reasoner: { kind: ThreadRecord["reasoner"]; model: string | null },
  settings: ThreadRecord["settings"],
  paths: { mcp?: string | null; docs?: string | null } = {},
): ThreadRecord {
  const { mcp, docs } = paths;
  return {
    threadId,
    request,
    userId: flags.user,
    reasoner: reasoner.kind,
    model: reasoner.model,
    faults: flags.fault,
    settings,
    ...(mcp ? { mcp } : {}),
    ...(docs ? { docs } : {}),
    ...(flags.tokenBudget !== undefined ? { tokenBudget: flags.tokenBudget } : {}),
    createdAt: new Date().toISOString(),
  };
}

export const THREADS_NAMESPACE = ["candor", "threads"];
