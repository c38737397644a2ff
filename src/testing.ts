/**
 * Candor's testing entry (`candor/testing`): what an app needs to test its own toolkits and graphs offline, the
 * way Candor's own suite does.
 */
import { BaseChatModel, type BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

/** One scripted answer: text, or tool calls (each `[name, args]`). */
export type ScriptedTurn = string | { calls: [name: string, args: Record<string, unknown>][] };

/**
 * A chat model that answers from a script and throws on any call the script did not expect (STYLE 8): a test that
 * asks the model once more than it meant to fails there, not later. `bindTools` records the tools offered and
 * returns the same model, so one script covers every call. `seen` keeps what each call was shown.
 */
export class ScriptedChatModel extends BaseChatModel {
  readonly seen: BaseMessage[][] = [];
  /** The tool names offered with each bindTools call. */
  readonly offered: string[][] = [];
  private readonly script: ScriptedTurn[];
  private calls = 0;
  private readonly usage: { input: number; output: number } | null;

  /** `usage`: the tokens every answer reports (as a server does in usage_metadata); none when absent. */
  constructor(
    script: ScriptedTurn[],
    params: BaseChatModelParams = {},
    opts: { usage?: { input: number; output: number } } = {},
  ) {
    super(params);
    this.script = [...script];
    this.usage = opts.usage ?? null;
  }

  _llmType(): string {
    return "scripted";
  }

  override bindTools(tools: unknown[]): this {
    this.offered.push(tools.map((t) => (t as { function: { name: string } }).function.name));
    return this;
  }

  assertConsumed(): void {
    if (this.script.length > 0) throw new Error(`scripted model: ${this.script.length} answer(s) never asked for`);
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.seen.push(messages);
    const turn = this.script.shift();
    const n = ++this.calls;
    if (turn === undefined) throw new Error(`scripted model: unexpected call #${n} (the script has no answer left)`);
    const usage_metadata = this.usage
      ? {
          input_tokens: this.usage.input,
          output_tokens: this.usage.output,
          total_tokens: this.usage.input + this.usage.output,
        }
      : undefined;
    const message =
      typeof turn === "string"
        ? new AIMessage({ content: turn, ...(usage_metadata ? { usage_metadata } : {}) })
        : new AIMessage({
            content: "",
            tool_calls: turn.calls.map(([name, args], i) => ({ id: `s${n}_${i}`, name, args, type: "tool_call" })),
            ...(usage_metadata ? { usage_metadata } : {}),
          });
    return Promise.resolve({ generations: [{ message, text: typeof turn === "string" ? turn : "" }] });
  }
}
