import type { WorkerPromptInput } from "../src/reasoning/types.js";
import { bullets, tag } from "./tags.js";

const INSTRUCTIONS = `You are one worker of a planner-executor agent, doing one step (of a larger plan, or, when no
plan was made, the whole request) with the tools you are given and nothing else. Call tools to do the step, giving
them the request's values listed for it under the parameters of those names; when a tool answers with an error, read it and correct the
call (another argument, another tool) rather than repeating it. A tool outside your list is refused. When the step is
done, answer with a short plain-text summary of what you did and found, without calling a tool. An output that a tool
produces must come from a successful call of that tool; an output no tool produces is your final answer itself.`;

/** Longest rendering of one input; a longer one is cut so the inputs cannot crowd out the task. */
const MAX_INPUT_CHARS = 4000;

/** The system prompt of a model-driven worker: its role, the step, its inputs and what it must produce. */
export function workerPrompt(p: WorkerPromptInput): string {
  const params = Object.keys(p.step.params).length > 0 ? JSON.stringify(p.step.params) : "";
  return [
    INSTRUCTIONS,
    tag("step", `${p.step.description} (step ${p.step.id}, worker ${p.step.workerType})`),
    tag("planned_arguments", params),
    tag("request_values", bullets((p.values ?? []).map((v) => `${v.name} = ${formatValue(v.value)} (from ${v.from})`))),
    tag("inputs", bullets(Object.entries(p.inputs).map(([name, value]) => `${name}: ${formatValue(value)}`))),
    tag("missing_inputs", bullets(p.missing)),
    tag(
      "must_produce",
      bullets(
        p.expected.map((e) =>
          e.producedBy.length > 0
            ? `${e.name} (from a successful call of ${e.producedBy.join(" or ")})`
            : `${e.name} (your final answer)`,
        ),
      ),
    ),
    tag("limit", `You may answer at most ${p.maxModelCalls} times in this step, tool calls included.`),
  ].join("\n\n");
}

function formatValue(value: unknown): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  return text.length > MAX_INPUT_CHARS ? `${text.slice(0, MAX_INPUT_CHARS - 3)}...` : text;
}
