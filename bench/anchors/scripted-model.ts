/**
 * A scripted chat model for the anchors (MEASUREMENT ONLY, not an LLM): every call waits a fixed latency, then
 * answers whatever the anchor's script says for these messages and the tools bound to the call. Tools travel as
 * call options on a RunnableBinding, as with ChatOpenAI, so bindTools and withStructuredOutput behave as usual.
 */
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BindToolsInput,
} from "@langchain/core/language_models/chat_models";
import { AIMessageChunk, type BaseMessage, type ToolCall } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import type { ToolDefinition } from "@langchain/core/language_models/base";
import { sleep } from "../../src/tools/sleep.js";

export interface ScriptedReply {
  content: string;
  toolCalls?: ToolCall[];
}

/** What the model answers: a pure function of the conversation and the names of the tools bound to the call. */
export type Script = (messages: readonly BaseMessage[], tools: readonly string[]) => ScriptedReply;

interface ScriptedCallOptions extends BaseChatModelCallOptions {
  tools?: ToolDefinition[];
}

export const toolCall = (name: string, args: Record<string, unknown>, id: string): ToolCall => ({
  name,
  args,
  id,
  type: "tool_call",
});

/** The text of a message, whatever its content's shape. */
export const textOf = (m: BaseMessage): string =>
  typeof m.content === "string" ? m.content : JSON.stringify(m.content);

export class ScriptedChatModel extends BaseChatModel<ScriptedCallOptions> {
  /** Calls made since construction, for the table (and to check both runs of a design made the same calls). */
  calls = 0;

  constructor(
    private readonly latencyMs: number,
    private readonly script: Script,
  ) {
    super({});
  }

  _llmType(): string {
    return "scripted";
  }

  override bindTools(tools: BindToolsInput[], kwargs?: Partial<ScriptedCallOptions>) {
    return this.withConfig({ ...kwargs, tools: tools.map((t) => convertToOpenAITool(t)) });
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    this.calls++;
    // A 0 ms call waits for no timer: setTimeout(0) is 1 ms, which no model of 0 ms would cost (Candor's reasoner
    // skips it too, bench/execution/drive.ts).
    if (this.latencyMs > 0) await sleep(this.latencyMs, options.signal);
    const names = (options.tools ?? []).map((t) => t.function.name).sort();
    const reply = this.script(messages, names);
    // A chunk, not an AIMessage: BaseChatModel.withStructuredOutput's parser expects one.
    const message = new AIMessageChunk({ content: reply.content, tool_calls: reply.toolCalls ?? [] });
    return { generations: [{ text: reply.content, message }] };
  }
}
