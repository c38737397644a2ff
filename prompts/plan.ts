import type { PlanningRequest } from "../src/domain/request.js";
import { bullets, tag } from "./tags.js";

/** A tool as the planner sees it: what it does and how outputs flow between steps. */
interface PlanPromptTool {
  name: string;
  description: string;
  category: string;
  consumes: string[];
  produces: string[];
  /** The tool's parameters in one line ("city: string; nights: integer 1–60"): what a step's call can carry. */
  arguments?: string;
}

/** A worker type as the planner sees it. */
interface PlanPromptWorker {
  name: string;
  description: string;
  /** Tools this worker may call; a step's tools must all be among them. */
  tools?: string[];
}

/** Everything the planning prompt shows the model. */
export interface PlanPromptInput {
  request: PlanningRequest;
  tools: PlanPromptTool[];
  workers: PlanPromptWorker[];
  /** Lessons from this user's earlier episodes, in plain language. */
  lessons: string[];
}

const INSTRUCTIONS = `You are the planner of a planner-executor agent. Turn the user's request into a plan: a small
dependency graph of steps that workers will run. Each step is run by one worker type and may use only the tools
that worker is allowed to use.

Rules:
- Use only the tools and worker types listed below, spelled exactly as listed.
- Give each step an id made of letters, digits, "_", "-" or "." (for example "s1", "s2").
- A step that needs what another step produces lists that step's id in dependsOn. Never create a cycle.
- Steps that do not depend on each other run in parallel: do not chain them without a reason.
- Keep the plan as short as the request allows and within its constraints.
- If a lesson below says a tool has been unreliable, prefer an alternative or plan around it.

Account for the whole request in "understanding"; it is checked against the request before anything runs:
- Split it into parts (each thing asked, each thing ruled out such as "no charts", each limit or preference such as
  a budget, a number of people, "cheap", "pet-friendly"), quoting the request's own words exactly in "text", in the
  request's language. A part is "served" only by steps of this plan that do it (their ids in stepIds); something
  ruled out is "excluded" and no step may do it; a part no listed tool can do is "unsupported" with why; words you
  cannot read are "not_understood" with why. Never drop a part.
- A limit or preference ("constraint") is served only when a step carries it: a parameter of that step's tool takes
  it (see each tool's arguments), and you list it among the values with that step's id. If no parameter of any
  listed tool can carry it (a tool that cannot filter by it), it is "unsupported": say which is missing.
- List every value you took from the request with the exact words it came from ("source") and the ids of the steps
  whose tool takes it under that parameter name ("stepIds"); a step whose arguments you leave to its worker gets
  these values. Write numbers and dates as the request states them. A value you worked out rather than read (days
  from a number of nights, a count from a date range, a conversion, a clamp) goes in "changes" with from, to, the
  words it came from and why. List every default you assumed and why. Never change a value the user gave without
  listing the change.`;

const OUTPUT_FORMAT = `Answer with one JSON object and nothing else:
{
  "objective": "what the plan achieves, in one sentence",
  "contextSummary": "what you understood about the request, or null",
  "confidence": 0.0 to 1.0, how likely the plan is to succeed as written (or null),
  "steps": [
    {
      "id": "s1",
      "description": "what this step does",
      "workerType": "one of the worker types",
      "tools": ["tool names this step may use"],
      "paramsJson": a string holding the first tool's arguments as JSON, e.g. "{\\"topic\\": \\"sales\\"}", or null,
      "dependsOn": ["ids of steps that must finish first"],
      "expectedOutputs": ["names of what the step produces"] or null
    }
  ],
  "understanding": {
    "parts": [{"text": "the request's words", "description": "what you took it to mean", "kind": "task" | "exclusion" | "constraint", "status": "served" | "excluded" | "unsupported" | "not_understood", "stepIds": ["s1"], "why": "why it is not served, or null"}],
    "values": [{"name": "dir", "value": "docs", "source": "in docs", "stepIds": ["s1"]}],
    "assumptions": [{"name": "format", "value": "markdown", "why": "the request does not say", "stepIds": ["s2"]}],
    "changes": [{"name": "budget", "from": "1500 EUR", "to": "1705", "source": "1500 euros", "why": "the tools price in US dollars", "stepIds": ["s3"]}]
  }
}`;

/** The planning prompt: instructions, then the request, tools, workers and lessons as tagged sections. */
export function planPrompt(p: PlanPromptInput): string {
  return [
    INSTRUCTIONS,
    tag("request", formatRequest(p.request)),
    tag("tools", p.tools.map(formatTool).join("\n")),
    tag("workers", p.workers.map(formatWorker).join("\n")),
    tag("lessons", bullets(p.lessons)),
    tag("output_format", OUTPUT_FORMAT),
  ].join("\n\n");
}

function formatRequest(request: PlanningRequest): string {
  const c = request.constraints;
  const limits = [
    c.maxSteps !== undefined ? `at most ${c.maxSteps} steps` : null,
    c.timeoutMs !== undefined ? `finish within ${c.timeoutMs} ms` : null,
    c.budget !== undefined ? `budget ${c.budget}` : null,
    c.priority !== undefined ? `priority ${c.priority}` : null,
  ].filter((l): l is string => l !== null);
  const preferences = Object.entries(request.userContext.preferences);
  return [
    request.userIntent,
    limits.length > 0 ? `Constraints: ${limits.join("; ")}.` : "",
    preferences.length > 0
      ? `Preferences: ${preferences.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ")}.`
      : "",
  ]
    .filter((line) => line.length > 0)
    .join("\n");
}

function formatTool(t: PlanPromptTool): string {
  const flow = [
    t.consumes.length > 0 ? `needs ${t.consumes.join(", ")}` : "",
    t.produces.length > 0 ? `produces ${t.produces.join(", ")}` : "",
  ]
    .filter((s) => s.length > 0)
    .join("; ");
  const args = t.arguments ? `\n  arguments: ${t.arguments}` : "";
  return `- ${t.name} [${t.category}]: ${t.description}${flow ? ` (${flow})` : ""}${args}`;
}

function formatWorker(w: PlanPromptWorker): string {
  return `- ${w.name}: ${w.description}${w.tools ? ` Tools: ${w.tools.length > 0 ? w.tools.join(", ") : "none"}.` : ""}`;
}
