import { randomBytes } from "node:crypto";
import { z } from "zod";
import { RunSettings } from "../domain/request.js";
import { DEFAULT_DB_PATH, DEFAULT_MODEL, type CandorEnv } from "../env.js";
import { CandorError, ErrorCode } from "../errors.js";

/** The trip the CLI suggests when it needs an example request. */
export const EXAMPLE_REQUEST = "Plan a 2-day trip from Paris to Rome for 1 person";

/** Thread ids become store keys and shell arguments: keep them to characters that need no quoting. */
export const ThreadId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "a thread id is 1-64 letters, digits, '_' or '-' (e.g. run-1a2b3c4d)");

const Probability = (flag: string) => {
  const message = `${flag} must be a number between 0 and 1, e.g. ${flag} 0.8`;
  return z.coerce.number({ error: message }).min(0, message).max(1, message);
};

/** Flags every command that opens the database accepts. */
export const CommonFlags = z.object({
  db: z.string().trim().min(1, "--db needs a file path").optional(),
  debug: z.boolean().default(false),
  json: z.boolean().default(false),
});

export const ReasonerKind = z.enum(["rules", "llm"], { error: "--reasoner must be rules or llm" });
export type ReasonerKind = z.infer<typeof ReasonerKind>;

/** `candor run` and `candor demo`. */
export const RunFlags = CommonFlags.extend({
  thread: ThreadId.optional(),
  user: z.string().trim().regex(/^[A-Za-z0-9_@-]{1,64}$/, "--user is 1-64 letters, digits, '_', '-' or '@'").default("default"),
  model: z.string().trim().min(1, "--model needs a model name").optional(),
  reasoner: ReasonerKind.optional(),
  fault: z.array(z.string()).default([]),
  maxRevisions: z.coerce
    .number({ error: "--max-revisions must be a whole number, e.g. --max-revisions 2" })
    .int("--max-revisions must be a whole number, e.g. --max-revisions 2")
    .min(0, "--max-revisions must be 0 or more, e.g. --max-revisions 2")
    .optional(),
  approvalThreshold: Probability("--approval-threshold").optional(),
  abortBelow: Probability("--abort-below").optional(),
  /** False with --no-input: never ask at the terminal, exit 3 with the commands to continue (as in a script). */
  input: z.boolean().default(true),
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
  set: z.array(z.string()).default([]),
  /** Guidance text for a replan decision. */
  replan: z.string().trim().min(1, "--replan needs guidance text, e.g. --replan \"use the train instead\"").optional(),
  /** The adjustments of an ADJUST decision, as JSON or @file (parsed by the resume command). */
  adjust: z.string().trim().min(1, "--adjust needs a JSON list of {taskId, field, newValue} or @file").optional(),
  comment: z.string().optional(),
  /** False with --no-input: never ask at the terminal, exit 3 with the commands to continue (as in a script). */
  input: z.boolean().default(true),
});
export type ResumeFlags = z.infer<typeof ResumeFlags>;

export const HistoryFlags = CommonFlags.extend({
  limit: z.coerce.number({ error: "--limit must be a whole number" }).int().positive("--limit must be 1 or more").optional(),
});
export type HistoryFlags = z.infer<typeof HistoryFlags>;

/** `candor replay` and `candor fork`. */
export const ReplayFlags = CommonFlags.extend({
  from: z.string().trim().min(1, "--from needs a checkpoint id (see: history <thread>)"),
  set: z.array(z.string()).default([]),
  asNode: z.string().trim().min(1).optional(),
});
export type ReplayFlags = z.infer<typeof ReplayFlags>;

/** `candor threads`. */
export const ThreadsFlags = CommonFlags.extend({
  limit: z.coerce.number({ error: "--limit must be a whole number" }).int().positive("--limit must be 1 or more").optional(),
});
export type ThreadsFlags = z.infer<typeof ThreadsFlags>;

export const LogsFlags = CommonFlags.extend({
  thread: z.string().optional(),
  plan: z.string().optional(),
  step: z.string().optional(),
  operation: z.string().optional(),
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
  const flag = issue?.path.length ? `--${String(issue.path[0]).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` : "a flag";
  const message = issue?.message ?? "invalid value";
  throw new CandorError(message.startsWith("--") ? `${message}.` : `${flag}: ${message}.`, ErrorCode.INVALID_REQUEST);
}

/** The database path: --db, else CANDOR_DB, else .candor/candor.db. */
export function resolveDbPath(flag: string | undefined, env: CandorEnv): string {
  return flag ?? env.CANDOR_DB ?? DEFAULT_DB_PATH;
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
    throw new CandorError("--model only applies to the llm reasoner, but --reasoner rules was given. Drop one of them.", ErrorCode.INVALID_REQUEST);
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
  createdAt: z.string(),
});
export type ThreadRecord = z.infer<typeof ThreadRecord>;

export const THREADS_NAMESPACE = ["candor", "threads"];
