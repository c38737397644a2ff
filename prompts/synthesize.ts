import { resultEntries, type TaskStep } from "../src/domain/plan.js";
import { partsToReview } from "../src/planning/coverage.js";
import type { SynthesisInput } from "../src/reasoning/types.js";
import { bullets, tag } from "./tags.js";

const INSTRUCTIONS = `You write the final answer of a planner-executor agent from the results its steps produced.
Answer the user's request directly, using only the results below. Do not invent results.
If anything is missing, say plainly what is missing and why, and what the user could do about it.
Write plain text for the user; do not mention step ids or internal tool names unless they help.`;

/** Longest rendering of one step's result; longer results are cut so one step cannot crowd out the rest. */
const MAX_RESULT_CHARS = 2000;

/** The synthesis prompt: instructions, the request, the plan's objective, the results and what is missing. */
export function synthesizePrompt(p: SynthesisInput): string {
  const results = p.plan.steps
    .filter((s) => s.id in p.results)
    .map((s) => `- ${s.description} (${s.id}): ${formatEntries(s, p.results[s.id])}`);
  return [
    INSTRUCTIONS,
    tag("request", p.request.userIntent),
    tag("objective", p.plan.objective),
    tag("results", results.join("\n")),
    tag("missing", bullets(p.missing.map((m) => `${m.description} (${m.id}): ${m.reason}`))),
  ].join("\n\n");
}

/** A reactive step's result one tool at a time, each cut on its own, so a booking is not cut away by the searches. */
function formatEntries(step: TaskStep, result: unknown): string {
  const entries = resultEntries(step, result);
  if (entries.length === 1 && entries[0]!.label === null) return formatResult(result);
  return entries.map((e) => `\n  - ${e.label}: ${formatResult(e.value)}`).join("");
}

function formatResult(result: unknown): string {
  const text = typeof result === "string" ? result : (JSON.stringify(result) ?? String(result));
  return text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS - 3)}...` : text;
}

const REVIEW_INSTRUCTIONS = `You review the results of a planner-executor agent before it answers. For each part of
the user's request listed below, say whether the results actually answer it: "answered": true only when a result
below gives what that part asks for. A part whose status is not "served" has no step behind it; say so. Give a short
"why" for every part that is not answered (null when it is). Judge only from the results shown; do not invent any.`;

const REVIEW_FORMAT = `Answer with one JSON object and nothing else:
{"parts": [{"partId": "p1", "answered": true, "why": null}]}`;

/** The review prompt: the request, its parts with the steps serving each, and the results. */
export function reviewPrompt(p: SynthesisInput): string {
  // Only the parts whose steps answered: the rest are missing already (said in the answer), not the model's call.
  const parts = partsToReview(p.plan).map(
    (part) =>
      `- ${part.id} [${part.status}${part.stepIds.length > 0 ? `; steps ${part.stepIds.join(", ")}` : ""}]: "${part.text}" (${part.description})`,
  );
  const results = p.plan.steps
    .filter((s) => s.id in p.results)
    .map((s) => `- ${s.id} (${s.description}): ${formatResult(p.results[s.id])}`);
  return [
    REVIEW_INSTRUCTIONS,
    tag("request", p.request.userIntent),
    tag("parts", parts.join("\n")),
    tag("results", results.join("\n")),
    tag("output_format", REVIEW_FORMAT),
  ].join("\n\n");
}
