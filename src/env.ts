import { existsSync } from "node:fs";
import { parseEnv } from "node:util";
import { z } from "zod";
import { STORAGE_BOUND_SETTINGS, readBoundText, type StorageBoundName, type StorageBounds } from "./domain/config.js";
import { CandorError, ErrorCode } from "./errors.js";
import { readGivenFile } from "./safe-read.js";

/**
 * The only module that reads process.env. Everything else receives settings through function arguments or
 * the graph's deps, so tests and embedding apps never depend on the caller's shell.
 */
/**
 * A storage bound's variable: a whole number (bytes may carry a KiB, MiB or GiB suffix) within the bound's range,
 * refused with a message naming the variable, what it must be and what it is.
 */
const boundVariable = (name: StorageBoundName) =>
  z
    .string()
    .transform((text, ctx) => {
      const read = readBoundText(name, text);
      if (read.ok) return read.value;
      ctx.addIssue({ code: "custom", message: read.reason });
      return z.NEVER;
    })
    .optional();

const EnvSchema = z.object({
  OPENAI_API_KEY: z.string().optional(),
  OPENAI_BASE_URL: z.url().optional(),
  CANDOR_MODEL: z.string().optional(),
  CANDOR_DB: z.string().optional(),
  CANDOR_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).optional(),
  /** A folder of documents for the docs toolkit's search_docs (indexed in the database). */
  CANDOR_DOCS: z.string().optional(),
  /** USD a user's model reflections may cost per day (default 5). */
  CANDOR_REFLECTION_BUDGET_USD: z.coerce.number().min(0).optional(),
  /** JSON: model name → {input, output} USD per million tokens ("*" for any other model). */
  CANDOR_MODEL_PRICES: z.string().optional(),
  /** A JSON file of the same shape, read first (CANDOR_MODEL_PRICES then overrides it). */
  CANDOR_PRICES_FILE: z.string().optional(),
  /** Model calls a model-driven step may make (default 6); 0 keeps every step a direct call. */
  CANDOR_MAX_MODEL_CALLS: z.coerce.number().int().min(0).optional(),
  /** A JSON file of MCP servers whose tools runs may use (docs/mcp.md). */
  CANDOR_MCP: z.string().optional(),
  /** LangSmith tracing ("true" turns it on; LangChain reads the LANGSMITH_* variables itself). */
  LANGSMITH_TRACING: z.string().optional(),
  /** The older name of LANGSMITH_TRACING, still honoured by LangChain. */
  LANGCHAIN_TRACING_V2: z.string().optional(),
  /**
   * OpenTelemetry (docs/observability.md): spans go over OTLP/HTTP to the traces endpoint, or to the base endpoint's
   * /v1/traces; unset, nothing of OpenTelemetry is loaded. The exporter reads the other OTEL_* variables itself.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  /** true switches OpenTelemetry off whatever the endpoints say (the SDK's standard switch). */
  OTEL_SDK_DISABLED: z.stringbool().optional(),
  /** `none` switches traces off; Candor exports only over OTLP, so any other value means OTLP. */
  OTEL_TRACES_EXPORTER: z.string().optional(),
  /** 1 (or true) adds the debugging tools to every run, as --debug-tools does. */
  CANDOR_DEBUG_TOOLS: z.stringbool().optional(),
  /**
   * 1 (or true) lets the workspace and docs tools read files that have more than one name (hard links), which they
   * refuse by default: another name of the file may lie outside the folder.
   */
  CANDOR_ALLOW_HARD_LINKS: z.stringbool().optional(),
  /** The token every request to `candor serve` must carry, when --auth-token is not given (docs/serve.md). */
  CANDOR_SERVE_TOKEN: z.string().optional(),
  /** The storage bounds (STORAGE_BOUND_SETTINGS in src/domain/config.ts, docs/security.md); unset, their defaults. */
  CANDOR_MAX_PLAN_STEPS: boundVariable("maxPlanSteps"),
  CANDOR_MAX_TOOL_ARGUMENT_BYTES: boundVariable("maxToolArgumentBytes"),
  CANDOR_MAX_TOOL_RESULT_BYTES: boundVariable("maxToolResultBytes"),
  CANDOR_MAX_STORED_VALUE_BYTES: boundVariable("maxStoredValueBytes"),
  CANDOR_MAX_LOG_LINE_BYTES: boundVariable("maxLogLineBytes"),
});
export type CandorEnv = z.infer<typeof EnvSchema>;

export function readEnv(source: NodeJS.ProcessEnv = process.env): CandorEnv {
  const clean = Object.fromEntries(
    Object.entries(source).filter(([k, v]) => k in EnvSchema.shape && v !== undefined && v !== ""),
  );
  const parsed = EnvSchema.safeParse(clean);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CandorError(
      `Environment variable ${String(issue?.path[0])} is invalid: ${issue?.message}. Fix or unset it (see .env.example).`,
      ErrorCode.CONFIGURATION,
    );
  }
  return parsed.data;
}

/**
 * The storage bounds the environment sets, by name; those it leaves unset are absent (their defaults apply where the
 * bound is enforced). The variable of each bound is its STORAGE_BOUND_SETTINGS entry's.
 */
export function storageBoundsOf(env: CandorEnv): Partial<StorageBounds> {
  const bounds: Partial<StorageBounds> = {};
  for (const [name, setting] of Object.entries(STORAGE_BOUND_SETTINGS) as [StorageBoundName, { variable: string }][]) {
    const value = env[setting.variable as keyof CandorEnv];
    if (typeof value === "number") bounds[name] = value;
  }
  return bounds;
}

export const DEFAULT_DB_PATH = ".candor/candor.db";
export const DEFAULT_MODEL = "gpt-4o-mini";

/**
 * Loads `.env` from the working directory into process.env when the file exists (variables already set win). Only
 * the CLI calls this: a library must not read files its host did not ask it to. Read through readGivenFile, not
 * process.loadEnvFile: a FIFO or a device named `.env` must be refused, not waited on forever.
 */
export function loadDotEnv(path = ".env"): boolean {
  if (!existsSync(path)) return false;
  const parsed = parseEnv(readGivenFile(path, { what: "The working directory's .env", code: ErrorCode.CONFIGURATION }));
  for (const [key, value] of Object.entries(parsed)) if (process.env[key] === undefined) process.env[key] = value;
  return true;
}
