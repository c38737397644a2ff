import { jsonrepair } from "jsonrepair";
import { z } from "zod";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import { newPlanId, Plan, TaskStep, type TaskStepInput } from "../domain/plan.js";
import type { PlanningRequest } from "../domain/request.js";
import type { PlanResult, WorkerModel } from "../reasoning/types.js";
import { ALL_CATEGORIES, type ToolRegistry } from "../tools/registry.js";
import { checkModelUnderstanding, withUnderstanding } from "./check-understanding.js";
import { assertPlanSize, assignOrder, criticalPathMs, validatePlan } from "./validate.js";

/**
 * Tolerant plan parsing (seed 004 "JSON tolerante"): models wrap JSON in fences and prose, leave trailing commas
 * and forget optional fields. Everything here turns model text into a validated Plan or a CandorError that says
 * what was wrong; `parsePlanText` turns that error into seed 004's one-step fallback plan instead of throwing.
 */

/** Confidence given to a model's plan when the model does not rate it. */
const DEFAULT_CONFIDENCE = 0.7;
/** Confidence of the one-step fallback plan: low enough that the approval threshold (0.5) asks a human. */
const FALLBACK_CONFIDENCE = 0.3;
/** Worker type the fallback plan runs on (seed 004's catch-all worker). */
const FALLBACK_WORKER = "general";

/** JSON found in model text, with what had to be done to get it. */
export interface ExtractedJson {
  value: unknown;
  /** Plain-language repairs (fence removed, prose ignored, syntax repaired); empty when the text was clean JSON. */
  notes: string[];
}

/**
 * Finds the JSON object in a model's answer: strips markdown fences, ignores prose around the outermost {...}
 * and repairs trailing commas, single quotes, unquoted keys and comments. Throws MODEL_OUTPUT saying what was
 * wrong when there is no usable JSON.
 */
export function extractJson(text: string, expected = "the plan"): unknown {
  return extractJsonWithNotes(text, expected).value;
}

/** `extractJson`, also reporting the repairs it made so callers can say so. `expected` names what the JSON is. */
export function extractJsonWithNotes(text: string, expected = "the plan"): ExtractedJson {
  const trimmed = text.trim();
  if (trimmed.length === 0) {
    throw new CandorError(
      `The model returned an empty answer where ${expected} (JSON) was expected.`,
      ErrorCode.MODEL_OUTPUT,
    );
  }
  const direct = parseStrict(trimmed);
  if (direct !== undefined && isContainer(direct)) return { value: direct, notes: [] };

  const notes: string[] = [];
  let body = trimmed;
  const fenced = fencedBlock(trimmed);
  if (fenced !== null) {
    body = fenced;
    notes.push("The model wrapped its JSON in a markdown code fence; the fence was removed.");
  }

  const span = outermostSpan(body);
  if (span === null) {
    throw new CandorError(
      `The model's answer contains no JSON object: ${preview(trimmed)}. Expected ${expected} as a JSON object.`,
      ErrorCode.MODEL_OUTPUT,
    );
  }
  if (span.before.trim() || span.after.trim())
    notes.push("The model surrounded its JSON with prose; the prose was ignored.");

  // Strict parses first, so a stray brace in the prose never makes jsonrepair "repair" the wrong span.
  const candidates = [span.json, ...balancedObjects(body).sort((a, b) => b.length - a.length)];
  for (const candidate of candidates) {
    const value = parseStrict(candidate);
    if (value !== undefined && isContainer(value)) return { value, notes };
  }
  let lastError: unknown;
  for (const candidate of candidates) {
    try {
      const value: unknown = JSON.parse(jsonrepair(candidate));
      if (isContainer(value)) {
        notes.push(
          "The model's JSON was malformed (e.g. trailing commas, single quotes, unquoted keys) and was repaired.",
        );
        return { value, notes };
      }
    } catch (e) {
      lastError = e;
    }
  }
  throw new CandorError(
    `The model's answer has JSON that could not be repaired (${errorMessage(lastError ?? "not an object")}): ${preview(span.json)}.`,
    ErrorCode.MODEL_OUTPUT,
    { cause: lastError },
  );
}

function parseStrict(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Not strict JSON: the caller goes on to the tolerant paths, so there is nothing to report yet.
    return undefined;
  }
}

function isContainer(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}

/** The first fenced block that looks like JSON (a fence cut off by a length limit counts up to the end). */
function fencedBlock(text: string): string | null {
  for (const match of text.matchAll(/```[^\n`]*\n?([\s\S]*?)(?:```|$)/g)) {
    const inner = match[1] ?? "";
    if (/[{[]/.test(inner)) return inner.trim();
  }
  return null;
}

/** From the first `{` (or a leading `[`) to the last matching closer; to the end when the JSON was cut off. */
function outermostSpan(text: string): { before: string; json: string; after: string } | null {
  const open = text.trimStart().startsWith("[") ? text.indexOf("[") : text.indexOf("{");
  if (open < 0) return null;
  const closer = text[open] === "[" ? "]" : "}";
  const close = text.lastIndexOf(closer);
  const end = close > open ? close + 1 : text.length;
  return { before: text.slice(0, open), json: text.slice(open, end), after: text.slice(end) };
}

/** Every top-level balanced {...} in the text, respecting double-quoted strings. */
function balancedObjects(text: string): string[] {
  const found: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{") {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === "}" && depth > 0) {
      depth--;
      if (depth === 0) found.push(text.slice(start, i + 1));
    }
  }
  return found;
}

function preview(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(flat.length > max ? `${flat.slice(0, max - 1)}…` : flat);
}

const IdLike = z.union([z.string(), z.number()]).transform((v) => String(v).trim());

/**
 * Accepts every ModelPlan (the strict-mode schema models are asked for) plus the looser shapes models produce
 * without a schema: missing optional fields, numeric ids, `params` as an object, a single tool as a string.
 */
const LooseStep = z.object({
  id: IdLike.nullish(),
  description: z.string().trim().min(1, "a step needs a description"),
  workerType: z.string().nullish(),
  tools: z.union([z.array(z.string()), z.string().transform((t) => [t])]).nullish(),
  params: z.record(z.string(), z.unknown()).nullish(),
  paramsJson: z.string().nullish(),
  dependsOn: z.array(IdLike).nullish(),
  expectedOutputs: z.array(z.string()).nullish(),
});
type LooseStep = z.infer<typeof LooseStep>;

const LoosePlan = z.object({
  objective: z.string().nullish(),
  contextSummary: z.string().nullish(),
  confidence: z.number().nullish(),
  steps: z.array(LooseStep).min(1, "a plan needs at least one step"),
  /** The model's understanding record, checked against the request by check-understanding.ts. */
  understanding: z.unknown().nullish(),
});

/**
 * Builds a validated Plan from a model's (or rules planner's) raw object, filling what it left out from the
 * registry. Throws MODEL_OUTPUT when the shape is unusable and the validation's CandorError (e.g. PLAN_CYCLE
 * naming the cycle, PLAN_UNKNOWN_REFERENCE naming the tool) when the plan is not executable.
 */
export function toPlan(
  raw: unknown,
  request: PlanningRequest,
  registry: ToolRegistry,
  createdBy: "llm" | "rules",
): Plan {
  return toPlanResult(raw, request, registry, createdBy).plan;
}

/**
 * `toPlan`, also returning the repairs it made (worker types reassigned, ids renamed) as notes. `workers`: the model
 * that runs the steps whose call the plan leaves open, so that their descriptions count (see checkModelUnderstanding).
 */
export function toPlanResult(
  raw: unknown,
  request: PlanningRequest,
  registry: ToolRegistry,
  createdBy: "llm" | "rules",
  workers?: WorkerModel,
): PlanResult {
  const shaped = normaliseShape(raw);
  // Counted before the steps are parsed: a huge plan is refused without the cost of reading every step.
  if (isRecord(shaped) && Array.isArray(shaped.steps))
    assertPlanSize(shaped.steps.length, request, registry.bounds.maxPlanSteps);
  const parsed = LoosePlan.safeParse(shaped);
  if (!parsed.success) {
    throw new CandorError(
      `The plan does not have the expected shape: ${describeIssues(parsed.error)}. Each step needs at least a description.`,
      ErrorCode.MODEL_OUTPUT,
      { cause: parsed.error },
    );
  }
  const loose = parsed.data;
  const notes: string[] = [];
  const author = createdBy === "llm" ? "The model" : "The planner";

  const ids = assignIds(loose.steps, notes);
  const built: TaskStep[] = loose.steps.map((step, i) => {
    const id = ids.byIndex[i] ?? `s${i + 1}`;
    const tools = step.tools ?? [];
    const known = tools.flatMap((t) => registry.tool(t) ?? []);
    const input: TaskStepInput = {
      id,
      description: step.description,
      workerType: chooseWorker(id, step.workerType ?? null, tools, registry, notes),
      tools,
      params: step.params ?? paramsFromJson(id, step.paramsJson ?? null),
      dependsOn: [...new Set((step.dependsOn ?? []).map((d) => ids.byOriginal.get(d) ?? d))],
      expectedOutputs: step.expectedOutputs?.length ? step.expectedOutputs : (known[0]?.produces ?? []),
      ...(known.length > 0
        ? {
            estimates: {
              durationMs: known.reduce((sum, t) => sum + t.estimates.durationMs, 0),
              cost: known.reduce((sum, t) => sum + t.estimates.cost, 0),
            },
          }
        : {}),
    };
    const result = TaskStep.safeParse(input);
    if (!result.success) {
      throw new CandorError(`Step "${id}" is not usable: ${describeIssues(result.error)}.`, ErrorCode.MODEL_OUTPUT, {
        cause: result.error,
      });
    }
    return result.data;
  });

  const steps = assignOrder(built);
  const confidence = readConfidence(loose.confidence ?? null, author, notes);
  const plan = Plan.parse({
    planId: newPlanId(),
    objective: loose.objective?.trim() || request.userIntent,
    contextSummary: loose.contextSummary ?? "",
    steps,
    confidence: confidence.value,
    confidenceReasons: [confidence.reason],
    estimatedDurationMs: criticalPathMs(steps),
    estimatedCost: steps.reduce((sum, s) => sum + s.estimates.cost, 0),
    createdBy,
  });
  validatePlan(plan, request, registry);
  // Whoever made the plan, its record is checked against the request: nothing claimed is taken on trust.
  const checked = checkModelUnderstanding(request, plan, registry, loose.understanding, workers);
  return {
    plan: withUnderstanding(plan, { ...checked.understanding, by: createdBy }),
    notes: [...notes, ...checked.notes],
  };
}

/** Unwraps `{plan: {...}}`, takes a bare array as the steps, and maps snake_case keys and `tasks` (seed 004). */
function normaliseShape(raw: unknown): unknown {
  let value = camelKeys(raw);
  if (Array.isArray(value)) value = { steps: value };
  if (isRecord(value) && !("steps" in value) && isRecord(value.plan)) value = value.plan;
  if (isRecord(value) && !("steps" in value) && Array.isArray(value.tasks)) value = { ...value, steps: value.tasks };
  return value;
}

function camelKeys(value: unknown, depth = 0): unknown {
  // Only the plan and step levels: tool parameters are the tool's business and keep their own spelling.
  if (depth > 3) return value;
  if (Array.isArray(value)) return value.map((v) => camelKeys(v, depth + 1));
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()),
      k === "params" ? v : camelKeys(v, depth + 1),
    ]),
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describeIssues(error: z.ZodError): string {
  const issues = error.issues.slice(0, 3).map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`);
  const more = error.issues.length > 3 ? ` (and ${error.issues.length - 3} more)` : "";
  return `${issues.join("; ")}${more}`;
}

/** Step ids the validator accepts, keeping dependencies pointing at the same steps. */
function assignIds(
  steps: readonly LooseStep[],
  notes: string[],
): { byIndex: string[]; byOriginal: Map<string, string> } {
  const byOriginal = new Map<string, string>();
  const byIndex = steps.map((step, i) => {
    const original = step.id ?? "";
    const clean = original.replace(/[^A-Za-z0-9_.-]+/g, "_").replace(/^_+|_+$/g, "") || `s${i + 1}`;
    if (original && clean !== original)
      notes.push(`Step id "${original}" was renamed "${clean}" (ids use letters, digits, '_', '-', '.').`);
    if (original && !byOriginal.has(original)) byOriginal.set(original, clean);
    return clean;
  });
  return { byIndex, byOriginal };
}

/**
 * The worker type for a step: the planner's choice when it is registered and may use the step's tools;
 * otherwise the best worker for the step's first tool, otherwise the catch-all worker. An unregistered choice
 * with nothing to go on is kept, so validation names it.
 */
function chooseWorker(
  stepId: string,
  given: string | null,
  tools: readonly string[],
  registry: ToolRegistry,
  notes: string[],
): string {
  const known = tools.filter((t) => registry.tool(t));
  const grantsAll = (worker: string): boolean => known.every((t) => registry.isGranted(worker, t));
  const name = given?.trim() ?? "";
  if (name && registry.worker(name) && grantsAll(name)) return name;

  const first = known[0];
  const forTool = first === undefined ? undefined : registry.workerForTool(first);
  const pick =
    (forTool && grantsAll(forTool.name) ? forTool : undefined) ??
    [...registry.workers.values()]
      .sort((a, b) => Number(isCatchAll(a)) - Number(isCatchAll(b)))
      .find((w) => known.length > 0 && grantsAll(w.name)) ??
    (known.length === 0 ? [...registry.workers.values()].find(isCatchAll) : undefined);
  if (!pick) return name || FALLBACK_WORKER;

  const why = !name
    ? "no worker type was given"
    : !registry.worker(name)
      ? `worker type "${name}" is not registered`
      : `worker type "${name}" may not use ${known.filter((t) => !registry.isGranted(name, t)).join(", ")}`;
  notes.push(`Step "${stepId}": ${why}; assigned "${pick.name}"${first ? `, which may use ${known.join(", ")}` : ""}.`);
  return pick.name;
}

function isCatchAll(worker: { categories: string[]; fallback?: boolean }): boolean {
  return worker.fallback === true || worker.categories.includes(ALL_CATEGORIES);
}

/**
 * Reads parameters a model sent JSON-encoded (strict structured output forbids free-form objects): null when it
 * sent none, repaired when the JSON is malformed, refused when it is not JSON or not an object.
 */
export function readParamsJson(
  json: string | null,
):
  { ok: true; value: Record<string, unknown> | null } | { ok: false; problem: "is not JSON" | "is not a JSON object" } {
  if (json === null || json.trim() === "" || json.trim() === "null") return { ok: true, value: null };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    try {
      value = JSON.parse(jsonrepair(json));
    } catch {
      return { ok: false, problem: "is not JSON" };
    }
  }
  return isRecord(value) ? { ok: true, value } : { ok: false, problem: "is not a JSON object" };
}

function paramsFromJson(stepId: string, json: string | null): Record<string, unknown> {
  const read = readParamsJson(json);
  if (!read.ok)
    throw new CandorError(
      `Step "${stepId}" has paramsJson that ${read.problem}: ${preview(json ?? "")}.`,
      ErrorCode.MODEL_OUTPUT,
    );
  return read.value ?? {};
}

function readConfidence(raw: number | null, author: string, notes: string[]): { value: number; reason: string } {
  if (raw === null)
    return { value: DEFAULT_CONFIDENCE, reason: `${author} gave no confidence; ${DEFAULT_CONFIDENCE} assumed.` };
  if (raw >= 0 && raw <= 1) return { value: raw, reason: `${author} rated its plan ${raw}.` };
  if (raw > 1 && raw <= 100) {
    notes.push(`${author} gave confidence ${raw}, read as a percentage (${raw / 100}).`);
    return { value: raw / 100, reason: `${author} rated its plan ${raw}%.` };
  }
  notes.push(`${author} gave confidence ${raw}, outside 0..1; ${DEFAULT_CONFIDENCE} assumed.`);
  return {
    value: DEFAULT_CONFIDENCE,
    reason: `${author} gave an out-of-range confidence (${raw}); ${DEFAULT_CONFIDENCE} assumed.`,
  };
}

/**
 * Seed 004's linear fallback: one step on the `general` worker that carries the whole request, with low
 * confidence so the approval threshold stops it before anything runs. `reason` says why no real plan was made.
 */
export function fallbackPlan(request: PlanningRequest, reason: string): Plan {
  const step = TaskStep.parse({
    id: "s1",
    description: request.userIntent,
    workerType: FALLBACK_WORKER,
    tools: [],
    order: 1,
  });
  return Plan.parse({
    planId: newPlanId(),
    objective: request.userIntent,
    steps: [step],
    confidence: FALLBACK_CONFIDENCE,
    confidenceReasons: [reason],
    estimatedDurationMs: criticalPathMs([step]),
    estimatedCost: 0,
    createdBy: "fallback",
  });
}

/**
 * Model text → validated plan, with notes on every repair. Throws MODEL_OUTPUT or the validation's CandorError;
 * use `parsePlanText` when a fallback plan is wanted instead.
 */
export function planFromText(
  text: string,
  request: PlanningRequest,
  registry: ToolRegistry,
  workers?: WorkerModel,
): PlanResult {
  const extracted = extractJsonWithNotes(text);
  const result = toPlanResult(extracted.value, request, registry, "llm", workers);
  return { plan: result.plan, notes: [...extracted.notes, ...result.notes] };
}
