import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { z } from "zod";
import type { ExecutionFeedback } from "../domain/feedback.js";
import { decideStep, feedbackOf, type CallRecord, type StepEnding } from "./evidence.js";
import type { TaskStep } from "../domain/plan.js";
import { argsHash } from "../tools/effects.js";
import type { ToolSpec } from "../tools/types.js";

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
 * The step one tool call of the loop runs as: the tool and the model's arguments, what that tool produces (not what
 * the loop's step must produce: a read in a loop that must end in a report is a read, its result the read's own), a
 * step id of its own (so the effect ledger records each call of the loop apart, and a replay reuses the right one),
 * one attempt per call (the model, told of the error, decides what to try next).
 */
export function callStep(
  step: TaskStep,
  call: ToolCall,
  index: number,
  tool: Pick<ToolSpec, "name" | "produces">,
): TaskStep {
  return {
    ...step,
    id: `${step.id}.call${index}`,
    tools: [tool.name],
    params: call.args,
    expectedOutputs: [...tool.produces],
    retry: { ...step.retry, maxAttempts: 1 },
  };
}

/** Longest tool result the model is shown; longer ones are cut and say so. */
const MAX_TOOL_MESSAGE_CHARS = 8000;

/** What the model is told of one call: the result, or the error as an error ToolMessage it can correct. */
export function toolMessage(
  call: ToolCall,
  outcome: { ok: true; result: unknown } | { ok: false; error: string },
  note = "",
) {
  const id = call.id ?? "";
  if (!outcome.ok)
    return new ToolMessage({ tool_call_id: id, name: call.name, status: "error", content: outcome.error });
  const text = typeof outcome.result === "string" ? outcome.result : (JSON.stringify(outcome.result) ?? "null");
  const content =
    text.length > MAX_TOOL_MESSAGE_CHARS
      ? `${text.slice(0, MAX_TOOL_MESSAGE_CHARS)} … (cut: the result has ${text.length} characters)`
      : text;
  return new ToolMessage({ tool_call_id: id, name: call.name, status: "success", content: `${note}${content}` });
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
  /** Every call the model asked for, in order, with how it ended (refused and denied ones too). */
  calls: readonly CallRecord[];
  modelCalls: number;
  maxModelCalls: number;
  durationMs: number;
  cost: number;
}

/**
 * The step's outcome once its loop ends, decided by the evidence rule (src/execution/evidence.ts) from the loop's
 * calls: what the step must produce comes from successful calls, never from the model's words; a failed call's
 * class is the step's when nothing made up for it. The model's final answer is kept beside the result, as its words.
 */
export function loopFeedback(r: LoopRecord): ExecutionFeedback {
  const text = finalText(r.messages);
  const stillCalling = nextToolCall(r.messages) !== null || lastAskedForTools(r.messages);
  const ending: StepEnding = stillCalling
    ? { kind: "out_of_calls", text, modelCalls: r.modelCalls, maxModelCalls: r.maxModelCalls }
    : { kind: "answered", text, modelCalls: r.modelCalls };
  const producers = (name: string) => r.tools.filter((t) => t.produces.includes(name)).map((t) => t.name);
  const verdict = decideStep({ step: r.step, calls: r.calls, ending, producers });
  const feedback = feedbackOf(verdict, {
    step: r.step,
    durationMs: r.durationMs,
    cost: r.cost,
    attempt: r.modelCalls,
    attempts: [],
  });
  return verdict.ok && text ? { ...feedback, outputs: { ...feedback.outputs, answer: text } } : feedback;
}

/** Times a loop's model is told it is not done before its answer is taken as its last word. */
export const MAX_NUDGES = 2;

/** Loop endings a model can still put right with a call: it answered without the evidence the step needs. */
const NUDGEABLE = new Set(["no_tool_call", "claimed_without_evidence"]);

/**
 * What the model is told when it answered without the evidence its step needs ("done" with no call, prose, a call
 * written as broken JSON in its text) and it has model calls left: what is still missing and which tools produce it.
 * Null when its answer stands: the evidence is there, a tool's failure decides the step (its class goes to
 * recovery), the calls are spent or it was told `MAX_NUDGES` times already.
 */
export function loopNudge(r: LoopRecord, nudgesSoFar: number): string | null {
  if (nudgesSoFar >= MAX_NUDGES || r.modelCalls >= r.maxModelCalls) return null;
  const f = loopFeedback(r);
  if (f.failureClass === null || !NUDGEABLE.has(f.failureClass)) return null;
  const produced = new Set(
    r.calls.filter((c) => c.outcome.kind === "succeeded").flatMap((c) => [...c.produces, c.tool]),
  );
  const missing = expectedOutputs(r.step, r.tools).filter(
    (e) => !produced.has(e.name) && !e.producedBy.some((t) => produced.has(t)),
  );
  const what =
    missing.length === 0
      ? "a successful tool call"
      : missing
          .map((m) => (m.producedBy.length > 0 ? `${m.name} (from ${m.producedBy.join(" or ")})` : m.name))
          .join(", ");
  return `Not done yet: nothing shows the step done until a tool call succeeds and produces ${what}. Your answer alone does not count. Call the tool now with complete, valid arguments; if you cannot, say why.`;
}

/** What the loop's successful calls produced, by output name (the latest call wins): later calls' inputs. */
export function producedBy(calls: readonly CallRecord[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of calls) {
    if (c.outcome.kind !== "succeeded") continue;
    for (const name of c.produces) out[name] = c.outcome.result;
  }
  return out;
}

/** The earlier successful call with the same tool and the same arguments, which a repeat gets back. */
export function earlierIdenticalCall(calls: readonly CallRecord[], tool: string, args: unknown): CallRecord | null {
  const hash = argsHash(args);
  return calls.find((c) => c.tool === tool && c.outcome.kind === "succeeded" && argsHash(c.args) === hash) ?? null;
}

/** The model's last answer asked for tools (the cap stopped the loop before they could run, or after). */
function lastAskedForTools(messages: readonly BaseMessage[]): boolean {
  const last = messages.at(-1);
  return last !== undefined && !AIMessage.isInstance(last);
}
