import type { ModelPlan } from "../../src/domain/plan.js";
import type { HonestyCase, RightStep } from "./cases.js";
import type { ModelReply, ModelRequest } from "./fake-model.js";

/**
 * A perfect model for one request of the honesty bench: it plans the request's right plan, does each worker loop
 * with one needed tool call per turn and then a final answer, and writes the answer and the review only from the
 * results it is shown. It is honest too: when a right call fails, it says so instead of claiming the step.
 */

/** How the plan hands out arguments: every step's (`args`), or none, leaving them to the workers (`workers`). */
export type PlanArguments = "args" | "workers";

/** A step's right call as the model sends it. */
interface Call {
  name: string;
  args: Record<string, unknown>;
}

/** Tools a replanned step may be given in place of the plan's own, and whose arguments they take. */
const STAND_INS: Record<string, { tool: string; pick?: string[] }> = {
  search_flights_backup: { tool: "search_flights" },
  find_attractions: { tool: "search_activities", pick: ["city"] },
  plan_days: { tool: "search_activities" },
};

/** Longest rendering of one result in a worker's final answer. */
const MAX_RESULT_CHARS = 1500;

export function perfectPolicy(c: HonestyCase, planArgs: PlanArguments): (req: ModelRequest) => ModelReply {
  return (req) => {
    switch (req.kind) {
      case "plan": {
        const json = JSON.stringify(rightPlan(c, planArgs));
        return req.schemaAsTool && req.schemaName
          ? { type: "calls", calls: [{ name: req.schemaName, arguments: json }], content: null }
          : { type: "text", content: json };
      }
      case "worker":
        return workerTurn(c, req);
      case "synthesis":
        return { type: "text", content: synthesis(req.prompt) };
      case "review":
        return structured(req, JSON.stringify(review(req.prompt)));
      case "recovery":
        return structured(req, JSON.stringify(recovery(c, req.prompt)));
      case "reflection":
        return structured(req, JSON.stringify(REFLECTION));
      case "other":
        return { type: "text", content: "{}" };
      default:
        return { type: "text", content: "{}" };
    }
  };
}

function structured(req: ModelRequest, json: string): ModelReply {
  return req.schemaAsTool && req.schemaName
    ? { type: "calls", calls: [{ name: req.schemaName, arguments: json }], content: null }
    : { type: "text", content: json };
}

/** The request's right plan as a model sends it, with an understanding record that serves the whole request. */
function rightPlan(c: HonestyCase, planArgs: PlanArguments): ModelPlan {
  return {
    objective: c.request,
    contextSummary: null,
    confidence: 0.9,
    steps: c.steps.map((s) => ({
      id: s.id,
      description: s.description,
      workerType: s.worker,
      tools: [s.tool],
      paramsJson: planArgs === "args" ? JSON.stringify(s.args) : null,
      dependsOn: s.dependsOn,
      expectedOutputs: [s.output],
    })),
    understanding: {
      parts: [
        {
          text: c.request,
          description: c.request,
          kind: "task",
          status: "served",
          stepIds: c.steps.map((s) => s.id),
          why: null,
        },
      ],
      values: [],
      assumptions: [],
      changes: [],
    },
  };
}

/** The tagged section of a prompt (`<name>…</name>`), or "" when it has none or it says "(none)". */
function section(prompt: string, name: string): string {
  const m = new RegExp(`<${name}>\\n([\\s\\S]*?)\\n</${name}>`).exec(prompt);
  const body = m?.[1]?.trim() ?? "";
  return body === "(none)" ? "" : body;
}

/**
 * The calls a worker loop must make: its step's right call (a replanned step's by its tool), or, for a loop offered
 * many tools (reactive mode, or a step naming none), every right call those tools can make, in order. Planned
 * arguments the request does not fix (a cap a revision added) are kept; the request's own values win over them.
 */
function scriptOf(c: HonestyCase, req: ModelRequest): Call[] {
  const planned = parseRecord(section(req.prompt, "planned_arguments"));
  const byId = c.steps.find((s) => s.id === req.stepId);
  if (byId && req.tools.includes(byId.tool)) return [{ name: byId.tool, args: { ...planned, ...byId.args } }];
  if (req.tools.length === 1) {
    const call = standIn(c, req.tools[0]!);
    return call ? [{ name: call.name, args: { ...planned, ...call.args } }] : [];
  }
  return c.steps.filter((s) => req.tools.includes(s.tool)).map((s) => ({ name: s.tool, args: s.args }));
}

/** The right call of a tool: the plan's own step with it, or the step a stand-in tool replaces. */
function standIn(c: HonestyCase, tool: string): Call | null {
  const own = c.steps.find((s) => s.tool === tool);
  if (own) return { name: tool, args: own.args };
  const alias = STAND_INS[tool];
  const replaced: RightStep | undefined = alias ? c.steps.find((s) => s.tool === alias.tool) : undefined;
  if (!alias || !replaced) return null;
  const args = alias.pick
    ? Object.fromEntries(Object.entries(replaced.args).filter(([k]) => alias.pick!.includes(k)))
    : replaced.args;
  return { name: tool, args };
}

/** The loop's calls so far, each with its result (ok when the tool answered with its JSON result, not an error). */
function history(req: ModelRequest): { name: string; args: string; ok: boolean; content: string }[] {
  const results = new Map(
    req.messages.filter((m) => m.role === "tool" && m.toolCallId).map((m) => [m.toolCallId!, m.content]),
  );
  return req.messages
    .flatMap((m) => m.toolCalls)
    .filter((call) => results.has(call.id))
    .map((call) => {
      const content = results.get(call.id)!;
      return { name: call.name, args: call.arguments, ok: isRecord(parse(content)), content };
    });
}

/** One turn of a perfect worker: the first right call not yet made with success, else the answer. */
function workerTurn(c: HonestyCase, req: ModelRequest): ModelReply {
  const script = scriptOf(c, req);
  const done = history(req);
  const same = (call: Call, h: { name: string; args: string }) =>
    h.name === call.name && canonical(parse(h.args)) === canonical(call.args);
  for (const call of script) {
    if (done.some((h) => h.ok && same(call, h))) continue;
    const failed = done.find((h) => !h.ok && same(call, h));
    // The right call failed: a perfect model does not claim the step, it says what stopped it.
    if (failed)
      return { type: "text", content: `I could not complete this step: ${call.name} failed: ${failed.content}` };
    return { type: "calls", calls: [{ name: call.name, arguments: JSON.stringify(call.args) }], content: null };
  }
  if (script.length === 0)
    return { type: "text", content: `I cannot do this step with the tools I was given (${req.tools.join(", ")}).` };
  const shown = done
    .filter((h) => h.ok)
    .map(
      (h) =>
        `${h.name}: ${h.content.length > MAX_RESULT_CHARS ? `${h.content.slice(0, MAX_RESULT_CHARS)}…` : h.content}`,
    );
  return { type: "text", content: `Done. What the tools returned:\n${shown.join("\n")}` };
}

/** The answer from the results shown, with what is missing said plainly. */
function synthesis(prompt: string): string {
  const results = section(prompt, "results");
  const missing = section(prompt, "missing");
  return [
    results ? `From the results:\n${results}` : "No step produced a result.",
    missing ? `Not done:\n${missing}` : "",
  ]
    .filter((x) => x.length > 0)
    .join("\n\n");
}

/**
 * Each part is answered when every step serving it has a result shown, its own or its replacement's (s5_retry for
 * s5: the record may still name the step a revision replaced).
 */
function review(prompt: string): { parts: { partId: string; answered: boolean; why: string | null }[] } {
  const shown = [...section(prompt, "results").matchAll(/^- (\S+) \(/gm)].map((m) => m[1]!);
  const hasResult = (id: string) => shown.some((s) => s === id || new RegExp(`^${id}[_.-]`).test(s));
  const parts = [...section(prompt, "parts").matchAll(/^- (\S+) \[([^\]]*)\]/gm)].map((m) => {
    const steps = /steps ([^;]+)$/.exec(m[2]!)?.[1]?.split(/,\s*/) ?? [];
    const served = m[2]!.startsWith("served");
    const answered = served && steps.length > 0 && steps.every((s) => hasResult(s.trim()));
    return { partId: m[1]!, answered, why: answered ? null : "no result shown answers it" };
  });
  return { parts };
}

/** A recovery: the loop's own failure is retried with the right arguments; a real failure of the world is skipped. */
function recovery(c: HonestyCase, prompt: string) {
  const tool = /^tool: (\S+)$/m.exec(section(prompt, "failed_step"))?.[1] ?? "";
  const call = standIn(c, tool);
  const loopFailed = /worker's model/.test(section(prompt, "error"));
  const none = { paramsJson: null, tool: null, workerType: null, substeps: null };
  return call && loopFailed
    ? {
        strategy: "RETRY_WITH_PARAMS",
        rationale: "The worker's model did not make the call. The same step with its arguments given should work.",
        confidence: 0.8,
        modifications: { ...none, paramsJson: JSON.stringify(call.args) },
      }
    : {
        strategy: "SKIP",
        rationale: "The tool itself reported the failure. No listed tool can produce this output another way.",
        confidence: 0.7,
        modifications: none,
      };
}

const REFLECTION = {
  whatHappened: "The run finished; some steps needed more than one model call.",
  why: "The worker model's first answers were not always usable tool calls.",
  rootCause: "The strategy of trusting the first answer of the worker model assumed it always calls a tool.",
  patternsIdentified: [],
  strategyAdjustments: [],
  learning: "Check each worker answer for a usable tool call before relying on it; ask again when it has none.",
};

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (_e) {
    return undefined;
  }
}

function parseRecord(text: string): Record<string, unknown> {
  const v = parse(text);
  return isRecord(v) ? v : {};
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** JSON with sorted keys, so two argument objects compare by value. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (isRecord(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(",")}}`;
  return JSON.stringify(v) ?? "undefined";
}
