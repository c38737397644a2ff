import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { z } from "zod";
import type { ExecutionFeedback, FailureClass } from "../domain/feedback.js";
import type { TaskStep } from "../domain/plan.js";
import type { WorkerModel } from "../reasoning/types.js";
import { feedbackTypeFor } from "../replanning/classify.js";
import { generalToolkit } from "../tools/builtin/general.js";
import { ToolRegistry } from "../tools/registry.js";
import type { Toolkit, ToolSpec } from "../tools/types.js";

/**
 * Whether a step runs as a model-driven tool loop rather than one direct call. The rule: a model is configured
 * for workers, and the plan does not fully determine the call — the step names no tool (the loop gets its worker's
 * whole grant), or its first tool is granted but the planned parameters do not satisfy that tool's schema (a model
 * plan that left them incomplete; the loop gets the step's granted tools). A determined call (a rules plan, or a
 * model plan with complete parameters) stays a direct call: fast and free. A step naming a tool its worker may not
 * use also stays direct: runStep refuses it in code, and replanning (SWAP_TOOL, RETRY_DIFFERENT_AGENT) fixes the
 * plan, which a model could only paper over.
 */
export function isModelDriven(step: TaskStep, registry: ToolRegistry, workers: WorkerModel | undefined): boolean {
  if (!workers) return false;
  const first = step.tools[0];
  if (first === undefined) return registry.grant(step.workerType).length > 0;
  if (step.tools.some((t) => !registry.isGranted(step.workerType, t))) return false;
  const tool = registry.tool(first);
  return tool !== undefined && !tool.schema.safeParse(step.params).success;
}

/**
 * Which steps of a plan the agent built from these toolkits and this reasoner runs model-driven, for views that
 * have no graph (the CLI's plan view). The registry is made as buildAgentGraph makes it (the `general` fallback
 * worker added unless a toolkit has one), so both answer alike.
 */
export function modelDrivenPredicate(
  toolkits: readonly Toolkit[],
  workers: WorkerModel | undefined,
): (step: TaskStep) => boolean {
  if (!workers) return () => false;
  const hasGeneral = toolkits.some((k) => k.workers.some((w) => w.name === "general"));
  const registry = ToolRegistry.create(hasGeneral ? toolkits : [...toolkits, generalToolkit()]);
  return (step) => isModelDriven(step, registry, workers);
}

/** The tools a model-driven step may call: the step's own list within its worker's grant, or the whole grant. */
export function loopTools(step: TaskStep, registry: ToolRegistry): ToolSpec[] {
  return step.tools.length > 0 ? registry.toolsForStep(step) : registry.grant(step.workerType);
}

/** A tool as a chat model is offered it (OpenAI's function format, the arguments as JSON Schema). */
export interface ToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export function toolDefinitions(tools: readonly ToolSpec[]): ToolDefinition[] {
  return tools.map((t) => ({
    type: "function",
    function: {
      name: t.name,
      description: t.description,
      // io "input": a parameter with a default is optional to the caller, as the schema will fill it in.
      parameters: z.toJSONSchema(t.schema, { unrepresentable: "any", io: "input" }),
    },
  }));
}

/** What the step must produce, each with the loop tools that produce it (none: the model's final answer is it). */
export function expectedOutputs(step: TaskStep, tools: readonly ToolSpec[]): { name: string; producedBy: string[] }[] {
  return step.expectedOutputs.map((name) => ({
    name,
    producedBy: tools.filter((t) => t.produces.includes(name)).map((t) => t.name),
  }));
}

/** The next tool call the model asked for and has no answer yet, with its position among the loop's calls. */
export function nextToolCall(messages: readonly BaseMessage[]): { call: ToolCall; index: number } | null {
  const answered = new Set(
    messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m)).map((m) => m.tool_call_id),
  );
  let index = 0;
  for (const m of messages) {
    if (!AIMessage.isInstance(m)) continue;
    for (const call of m.tool_calls ?? []) {
      // Positions, not the model's ids, key the ledger: some servers reuse one id for every call.
      index += 1;
      if (call.id !== undefined && !answered.has(call.id)) return { call, index };
    }
  }
  return null;
}

/**
 * The step one tool call of the loop runs as: the tool and the model's arguments, a step id of its own (so the
 * effect ledger records each call of the loop apart, and a replay reuses the right one), one attempt per call (the
 * model, told of the error, decides what to try next).
 */
export function callStep(step: TaskStep, call: ToolCall, index: number): TaskStep {
  return {
    ...step,
    id: `${step.id}.call${index}`,
    tools: [call.name],
    params: call.args,
    retry: { ...step.retry, maxAttempts: 1 },
  };
}

/** Longest tool result the model is shown; longer ones are cut and say so. */
const MAX_TOOL_MESSAGE_CHARS = 8000;

/** What the model is told of one call: the result, or the error as an error ToolMessage it can correct. */
export function toolMessage(call: ToolCall, outcome: { ok: true; result: unknown } | { ok: false; error: string }) {
  const id = call.id ?? "";
  if (!outcome.ok)
    return new ToolMessage({ tool_call_id: id, name: call.name, status: "error", content: outcome.error });
  const text = typeof outcome.result === "string" ? outcome.result : (JSON.stringify(outcome.result) ?? "null");
  const content =
    text.length > MAX_TOOL_MESSAGE_CHARS
      ? `${text.slice(0, MAX_TOOL_MESSAGE_CHARS)} … (cut: the result has ${text.length} characters)`
      : text;
  return new ToolMessage({ tool_call_id: id, name: call.name, status: "success", content });
}

/** The text of a model's last answer (its final summary when it stopped calling tools). */
function finalText(messages: readonly BaseMessage[]): string {
  const last = [...messages].reverse().find((m) => AIMessage.isInstance(m));
  if (!last) return "";
  return typeof last.content === "string"
    ? last.content.trim()
    : last.content
        .map((part) => (typeof part === "object" && "text" in part ? String(part.text) : ""))
        .join("")
        .trim();
}

/** What the loop did, as the step's feedback records it. */
export interface LoopRecord {
  step: TaskStep;
  tools: readonly ToolSpec[];
  messages: readonly BaseMessage[];
  /** What successful calls produced, by output name. */
  produced: Record<string, unknown>;
  /** Tools called successfully, in order. */
  called: readonly string[];
  modelCalls: number;
  maxModelCalls: number;
  durationMs: number;
  cost: number;
}

/**
 * The step's outcome once its loop ends, checked against what it must produce: each expected output a loop tool
 * produces must have come from a successful call of it (its result already checked against that tool's output
 * schema); one no tool produces is the model's final answer, which must not be empty; a step expecting nothing
 * needs a final answer. Anything missing fails the step as `no_result`, saying whether the model stopped or ran
 * out of calls. The result is the one expected output, the outputs by name when there are several, or the answer.
 */
export function loopFeedback(r: LoopRecord): ExecutionFeedback {
  const answer = finalText(r.messages);
  const stillCalling = nextToolCall(r.messages) !== null || lastAskedForTools(r.messages);
  const values: Record<string, unknown> = {};
  const missing: string[] = [];
  for (const e of expectedOutputs(r.step, r.tools)) {
    if (e.name in r.produced) values[e.name] = r.produced[e.name];
    else if (e.producedBy.length === 0 && answer.length > 0 && !stillCalling) values[e.name] = answer;
    else missing.push(e.producedBy.length > 0 ? `${e.name} (from ${e.producedBy.join(" or ")})` : e.name);
  }
  if (r.step.expectedOutputs.length === 0 && (answer.length === 0 || stillCalling)) missing.push("a final answer");
  const base = {
    taskId: r.step.id,
    dispatch: r.step.dispatches,
    workerType: r.step.workerType,
    params: r.step.params,
    durationMs: Math.max(1, r.durationMs),
    cost: r.cost,
    at: new Date().toISOString(),
    attempt: r.modelCalls,
    tool: r.called.at(-1) ?? null,
    attempts: [],
    errorType: null,
    trace: null,
  };
  if (missing.length > 0) {
    const how = stillCalling
      ? `used its ${r.maxModelCalls} model calls`
      : `stopped after ${r.modelCalls} model call${r.modelCalls === 1 ? "" : "s"}`;
    const what = r.called.length > 0 ? `it called ${r.called.join(", ")}` : "it made no successful tool call";
    const ended = stillCalling ? "" : ` and answered "${cut(answer, 200)}"`;
    // No tool failed: the loop did. Naming the last tool called would make replanning avoid a tool that worked.
    return failedLoop(
      { ...base, tool: null },
      `The ${r.step.workerType} worker's model ${how} without producing ${missing.join(", ")}: ${what}${ended}.`,
      "no_result",
      r.produced,
    );
  }
  const names = r.step.expectedOutputs;
  const result = names.length === 1 ? values[names[0]!] : names.length > 1 ? values : answer;
  return {
    ...base,
    feedbackType: (r.step.missingInputs ?? []).length > 0 ? "PARTIAL_SUCCESS" : "SUCCESS",
    outputs: { result, answer },
    errors: [],
    failureClass: null,
  };
}

type FeedbackBase = Omit<ExecutionFeedback, "feedbackType" | "outputs" | "errors" | "failureClass">;

function failedLoop(
  base: FeedbackBase,
  message: string,
  failureClass: FailureClass,
  outputs: Record<string, unknown>,
): ExecutionFeedback {
  return { ...base, feedbackType: feedbackTypeFor(failureClass), outputs, errors: [message], failureClass };
}

/** The model's last answer asked for tools (the cap stopped the loop before they could run, or after). */
function lastAskedForTools(messages: readonly BaseMessage[]): boolean {
  const last = messages.at(-1);
  return last !== undefined && !AIMessage.isInstance(last);
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
