import type { ExecutionFeedback } from "../src/domain/feedback.js";
import type { Plan, TaskStep } from "../src/domain/plan.js";
import type { FailureContext } from "../src/domain/feedback.js";
import { bullets, tag } from "./tags.js";

/** A tool as the recovery prompt shows it: what it does and what it produces (a swap must produce the same). */
interface ReplanPromptTool {
  name: string;
  description: string;
  produces: string[];
  /** The tool's arguments as JSON Schema properties, so proposed params can fit them; absent when unknown. */
  arguments?: string;
}

/** A worker type and the tools it may call. */
interface ReplanPromptWorker {
  name: string;
  tools: string[];
}

/** Everything the recovery prompt shows the model about one failure no rule recognised (seed 003). */
export interface ReplanPromptInput {
  failure: FailureContext;
  plan: Plan;
  tools: ReplanPromptTool[];
  workers: ReplanPromptWorker[];
}

/** Longest rendering of the tool's output or of one parameter set; a huge trace must not crowd out the rest. */
const MAX_JSON_CHARS = 1500;

const INSTRUCTIONS = `A step of a plan failed and no rule recognises the failure. Choose ONE recovery strategy for that
step, so the plan can still reach its objective. Keep the plan's goal and its dependencies: the replacement must
produce what the failed step was expected to produce, because later steps need it.

Strategies you may choose:
- RETRY_WITH_PARAMS: the same tool again with corrected parameters (put them in paramsJson).
- SWAP_TOOL: another listed tool that produces the same outputs (its name in tool; paramsJson if they change).
- DECOMPOSE: 2 to 4 smaller steps run in order; the last one must produce the failed step's outputs.
- RETRY_DIFFERENT_AGENT: the same step on another listed worker type (put its name in workerType).
- SKIP: give up on the step; the answer will say what is missing.
ADJUST_PARAMETERS, FIX_DEPENDENCIES and FIND_WORKAROUND exist too, but Candor chooses them from its own rules;
do not pick them.

Use only tools and worker types listed below, spelled exactly as listed. Parameters must fit the tool's arguments.
Do not propose what already failed (see previous attempts).
Confidence is how likely your strategy is to make the step succeed, from 0.0 to 1.0. If you are unsure, say so
with a low confidence (below 0.6): a low-confidence proposal is not applied, and that is better than a guess.`;

const OUTPUT_FORMAT = `Answer with one JSON object and nothing else:
{
  "strategy": "RETRY_WITH_PARAMS" | "SWAP_TOOL" | "DECOMPOSE" | "RETRY_DIFFERENT_AGENT" | "SKIP",
  "rationale": "2-3 sentences: why this failure happened and why this strategy fixes it",
  "confidence": 0.0 to 1.0,
  "modifications": {
    "paramsJson": the tool's new arguments as a JSON-encoded string, e.g. "{\\"city\\": \\"Lyon\\"}", or null,
    "tool": "a tool name" or null,
    "workerType": "a worker type" or null,
    "substeps": [{"description": "...", "tool": "a tool name", "paramsJson": "{...}" or null}] or null
  }
}`;

const EXAMPLES = `Each example answers a different failure; only the shape matters.

RETRY_WITH_PARAMS (the date was in the wrong format):
{"strategy": "RETRY_WITH_PARAMS", "rationale": "The API rejected the date format. The same search with an ISO date should work.", "confidence": 0.8, "modifications": {"paramsJson": "{\\"date\\": \\"2025-06-01\\"}", "tool": null, "workerType": null, "substeps": null}}

SWAP_TOOL (the primary service is down but a mirror produces the same data):
{"strategy": "SWAP_TOOL", "rationale": "fetch_primary returns 502 for every call. fetch_mirror produces the same data set.", "confidence": 0.75, "modifications": {"paramsJson": null, "tool": "fetch_mirror", "workerType": null, "substeps": null}}

DECOMPOSE (one request was too large):
{"strategy": "DECOMPOSE", "rationale": "The whole year is too large for one call. Two half-year fetches and a merge produce the same output.", "confidence": 0.7, "modifications": {"paramsJson": null, "tool": null, "workerType": null, "substeps": [{"description": "Fetch January to June", "tool": "fetch_range", "paramsJson": "{\\"from\\": \\"01\\", \\"to\\": \\"06\\"}"}, {"description": "Fetch July to December", "tool": "fetch_range", "paramsJson": "{\\"from\\": \\"07\\", \\"to\\": \\"12\\"}"}, {"description": "Merge both halves", "tool": "merge_data", "paramsJson": null}]}}

RETRY_DIFFERENT_AGENT (the worker lost its session; another worker may use a tool with the same output):
{"strategy": "RETRY_DIFFERENT_AGENT", "rationale": "The reader worker's session expired. The general worker can run the same step.", "confidence": 0.65, "modifications": {"paramsJson": null, "tool": null, "workerType": "general", "substeps": null}}

ADJUST_PARAMETERS (chosen by Candor's rules after a budget violation; shown for completeness):
{"strategy": "ADJUST_PARAMETERS", "rationale": "The total exceeded the budget. Cap the price of the costliest item.", "confidence": 0.7, "modifications": {"paramsJson": "{\\"maxPrice\\": 150}", "tool": null, "workerType": null, "substeps": null}}

FIX_DEPENDENCIES (chosen by Candor's rules when an upstream step broke; shown for completeness):
{"strategy": "FIX_DEPENDENCIES", "rationale": "The step failed because its input was missing. Repair the upstream step first.", "confidence": 0.6, "modifications": {"paramsJson": null, "tool": null, "workerType": null, "substeps": null}}

FIND_WORKAROUND (chosen by Candor's rules when something is unavailable; shown for completeness):
{"strategy": "FIND_WORKAROUND", "rationale": "The file is locked by another process. Read its latest backup instead.", "confidence": 0.6, "modifications": {"paramsJson": "{\\"fromBackup\\": true}", "tool": null, "workerType": null, "substeps": null}}

SKIP (nothing listed can produce the output; unsure):
{"strategy": "SKIP", "rationale": "The error says the account is closed. No listed tool can get this data.", "confidence": 0.9, "modifications": {"paramsJson": null, "tool": null, "workerType": null, "substeps": null}}`;

/**
 * The recovery prompt (seed 003): instructions, then the failed step, its error, every previous attempt, what the
 * tool returned, its parameters, the tools and workers available, and one example answer per strategy.
 */
export function replanStrategyPrompt(p: ReplanPromptInput): string {
  const { failure } = p;
  return [
    INSTRUCTIONS,
    tag("objective", p.plan.objective),
    tag("failed_step", formatStep(failure.step, failure)),
    tag(
      "error",
      `${failure.error}${failure.errorType ? ` [${failure.errorType}]` : ""}${failure.failureClass !== "unknown" ? ` (classified as ${failure.failureClass})` : ""}`,
    ),
    tag("trace", failure.trace ?? ""),
    tag("previous_attempts", formatAttempts(failure.history)),
    tag("tool_output", Object.keys(failure.outputs).length > 0 ? formatJson(failure.outputs) : ""),
    tag("params", formatJson(failure.params)),
    tag("available_tools", bullets(p.tools.map(formatTool))),
    tag("workers", bullets(p.workers.map((w) => `${w.name}: ${w.tools.length > 0 ? w.tools.join(", ") : "no tools"}`))),
    tag("examples", EXAMPLES),
    tag("output_format", OUTPUT_FORMAT),
  ].join("\n\n");
}

function formatTool(t: ReplanPromptTool): string {
  const produces = t.produces.length > 0 ? ` (produces ${t.produces.join(", ")})` : "";
  return `${t.name}: ${t.description}${produces}${t.arguments ? ` Arguments: ${t.arguments}` : ""}`;
}

function formatStep(step: TaskStep, failure: FailureContext): string {
  return [
    `id: ${step.id}`,
    `description: ${step.description}`,
    `worker: ${step.workerType}`,
    `tool: ${failure.tool ?? step.tools[0] ?? "none"}`,
    `expected outputs: ${step.expectedOutputs.length > 0 ? step.expectedOutputs.join(", ") : "none named"}`,
    `depends on: ${step.dependsOn.length > 0 ? step.dependsOn.join(", ") : "nothing"}`,
    `workers that already failed it: ${[...new Set([...step.failedWorkers, failure.feedback.workerType ?? step.workerType])].join(", ")}`,
  ].join("\n");
}

/** Every failed dispatch, oldest first, with each worker attempt's own error where there is one. */
function formatAttempts(history: readonly ExecutionFeedback[]): string {
  const lines: string[] = [];
  history.forEach((f, i) => {
    const who = [f.taskId, f.workerType, f.tool].filter((x): x is string => x !== null).join(" / ");
    lines.push(`${i + 1}. ${who} with ${formatJson(f.params)}: ${f.errors.join("; ") || "no error message"}`);
    for (const a of f.attempts) if (a.error !== null) lines.push(`   attempt ${a.attempt}: ${a.error}`);
  });
  return lines.join("\n");
}

function formatJson(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_JSON_CHARS ? `${text.slice(0, MAX_JSON_CHARS - 3)}...` : text;
}
