import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { z } from "zod";
import { preview } from "../json-limits.js";
import type { ToolSpec } from "../tools/types.js";

/*
 * A model-driven step's tool calls as the model wrote them: arguments it may have malformed, and how a call is shown
 * to the person watching. Nothing a model sends is run before it is checked, and nothing it sends is left unanswered.
 */

/**
 * The one argument an unparseable call is given, holding the text the model sent: a call must stay among the
 * message's tool calls to be answered (a reply to a call the conversation does not show is refused by the server),
 * and its text must survive the checkpoint, so it is kept in an object under a name no tool takes.
 */
const UNPARSED_ARGUMENTS = "candor_unparsed_arguments";

/**
 * Why a tool call's arguments cannot be used, or null when they are a JSON object (what every tool takes). A model
 * may send null, a list, a number, a string, or text that is not JSON at all (LangChain keeps that apart as an
 * invalid tool call; `answerableCalls` brings it back under UNPARSED_ARGUMENTS): each is answered to the model as an
 * error it can correct, never dropped and never run.
 */
export function malformedArguments(args: unknown): string | null {
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    if (typeof args === "string" && isObjectText(args)) return "are a JSON object encoded as a string (encoded twice)";
    return `are ${jsonKind(args)}, not a JSON object`;
  }
  const raw = (args as Record<string, unknown>)[UNPARSED_ARGUMENTS];
  if (Object.keys(args).length !== 1 || typeof raw !== "string") return null;
  try {
    JSON.parse(raw);
    return "could not be read as a tool call's arguments";
  } catch (e) {
    return `are not valid JSON (${preview(e instanceof Error ? e.message : String(e), 160)})`;
  }
}

/** Whether a string is the text of a JSON object (arguments a model encoded twice). */
function isObjectText(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v);
  } catch {
    return false;
  }
}

function jsonKind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (v === undefined) return "missing";
  return `a ${typeof v}`;
}

/** The tool's argument names, for an error that shows the model what to send: `{"path": …}`. */
export function argumentsShape(tool: ToolSpec): string {
  const schema = z.toJSONSchema(tool.schema, { unrepresentable: "any", io: "input" }) as { properties?: object };
  const names = Object.keys(schema.properties ?? {});
  return `{${names.map((n) => `"${n}": …`).join(", ")}}`;
}

/**
 * The model's answer with its invalid tool calls (arguments that are not JSON) turned into calls whose arguments
 * are the raw text, so the loop answers each with an error the model can correct. Left apart, such a call is never
 * answered: the model is not told, and the conversation sent back to it no longer shows the call.
 */
export function answerableCalls(answer: BaseMessage): BaseMessage {
  if (!AIMessage.isInstance(answer) || (answer.invalid_tool_calls ?? []).length === 0) return answer;
  const broken: ToolCall[] = (answer.invalid_tool_calls ?? []).map((c) => ({
    name: c.name ?? "(no name)",
    // Kept as the text it was: malformedArguments says why it is not JSON.
    args: { [UNPARSED_ARGUMENTS]: c.args ?? "" },
    ...(c.id ? { id: c.id } : {}),
    type: "tool_call",
  }));
  return new AIMessage({
    content: answer.content,
    tool_calls: [...(answer.tool_calls ?? []), ...broken],
    invalid_tool_calls: [],
    ...(answer.id ? { id: answer.id } : {}),
    response_metadata: answer.response_metadata,
    ...(answer.usage_metadata ? { usage_metadata: answer.usage_metadata } : {}),
  });
}

/** A call as a progress line shows it: the tool and its arguments, long arguments cut with their size named. */
export function callText(tool: string, args: unknown): string {
  return `${tool}(${preview(typeof args === "string" ? args : (JSON.stringify(args) ?? "undefined"), 200)})`;
}
