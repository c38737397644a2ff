import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A minimal OpenAI-compatible server on 127.0.0.1 for the bench (a trimmed copy of the test fake, which bench code
 * must not import). It answers every POST /v1/chat/completions and counts each request by what it asks for:
 * a plan (structured output named "plan"), the final answer (the synthesis prompt), the review of the answer
 * (structured output named "answer_review"), or anything else — which,
 * during a run, can only be a recovery judgement.
 */
export type RequestKind = "plan" | "synthesis" | "review" | "other";

/** A scripted answer: text, or one tool call (what a model-driven worker's loop asks for). */
export type ScriptedReply = { content: string } | { toolCall: { name: string; arguments: Record<string, unknown> } };

/** What a scripted responder sees of a request. */
export interface SeenRequest {
  kind: RequestKind;
  /** The tools offered (a worker loop's grant); empty for plain prompts. */
  tools: string[];
  /** The messages' text, joined. */
  prompt: string;
  /** How many tool results the conversation already holds (a worker loop's turn number). */
  toolResults: number;
}

export class CountingOpenAIServer {
  readonly counts: Record<RequestKind, number> = { plan: 0, synthesis: 0, review: 0, other: 0 };
  /** What a planning request is answered with (a ModelPlan as JSON); set per scenario. */
  planJson: unknown = null;
  /** Fixed latency added to every call, so wall time reflects how many calls a run makes. */
  latencyMs = 0;
  /** Answers a request before the defaults above; undefined falls back to them. */
  reply: ((req: SeenRequest) => ScriptedReply | undefined) | null = null;
  /** Every request seen since the last reset, in order. */
  readonly seen: SeenRequest[] = [];

  reset(): void {
    this.counts.plan = 0;
    this.counts.synthesis = 0;
    this.counts.review = 0;
    this.counts.other = 0;
    this.seen.length = 0;
  }

  async start(): Promise<{ baseUrl: string; close: () => Promise<void> }> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((e: unknown) =>
        send(res, 500, { error: { message: `fake: ${String(e)}`, type: "server_error" } }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return {
      baseUrl: `http://127.0.0.1:${port}/v1`,
      close: () =>
        new Promise<void>((resolve, reject) => {
          server.closeAllConnections();
          server.close((e) => (e ? reject(e) : resolve()));
        }),
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      model?: string;
      messages?: { role?: string; content: unknown }[];
      stream?: boolean;
      stream_options?: { include_usage?: boolean };
      response_format?: { json_schema?: { name?: string } };
      tools?: { function: { name: string } }[];
    };
    const prompt = (body.messages ?? [])
      .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
      .join("\n");
    const wantsPlan =
      body.response_format?.json_schema?.name === "plan" || (body.tools ?? []).some((t) => t.function.name === "plan");
    const wantsReview =
      body.response_format?.json_schema?.name === "answer_review" ||
      (body.tools ?? []).some((t) => t.function.name === "answer_review");
    const kind: RequestKind = wantsPlan
      ? "plan"
      : wantsReview
        ? "review"
        : prompt.includes("You write the final answer")
          ? "synthesis"
          : "other";
    this.counts[kind]++;
    const tools = (body.tools ?? []).map((t) => t.function.name);
    const toolResults = (body.messages ?? []).filter((m) => m.role === "tool").length;
    const seen: SeenRequest = { kind, tools, prompt, toolResults };
    this.seen.push(seen);
    if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
    const scripted = this.reply?.(seen);
    // A review that judges nothing leaves the understanding record to decide, as the rules reasoner does.
    const content =
      scripted !== undefined
        ? "content" in scripted
          ? scripted.content
          : null
        : kind === "plan"
          ? JSON.stringify(this.planJson)
          : kind === "synthesis"
            ? "Here is your result."
            : kind === "review"
              ? '{"parts":[]}'
              : "{}";
    const toolCall =
      scripted !== undefined && "toolCall" in scripted
        ? {
            id: `call_bench_${this.seen.length}`,
            name: scripted.toolCall.name,
            arguments: JSON.stringify(scripted.toolCall.arguments),
          }
        : null;
    // Tokens roughly as a tokenizer would count them (4 characters each), so prompt growth shows in the figures.
    const promptTokens = Math.ceil(prompt.length / 4);
    const completionTokens = Math.ceil((content ?? toolCall?.arguments ?? "").length / 4);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    };
    const base = {
      id: `chatcmpl-bench-${this.seen.length}`,
      created: Math.floor(Date.now() / 1000),
      model: body.model ?? "fake-model",
    };
    const toolCalls = toolCall
      ? [
          {
            index: 0,
            id: toolCall.id,
            type: "function",
            function: { name: toolCall.name, arguments: toolCall.arguments },
          },
        ]
      : undefined;
    const finish = toolCall ? "tool_calls" : "stop";
    if (body.stream) {
      // The CLI streams its calls: one delta with the whole message, a finish, then the usage when asked for.
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const chunk = (choices: unknown[], extra: object = {}) =>
        res.write(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices, ...extra })}\n\n`);
      chunk([
        {
          index: 0,
          delta: { role: "assistant", content, ...(toolCalls && { tool_calls: toolCalls }) },
          finish_reason: null,
          logprobs: null,
        },
      ]);
      chunk([{ index: 0, delta: {}, finish_reason: finish, logprobs: null }]);
      if (body.stream_options?.include_usage) chunk([], { usage });
      res.end("data: [DONE]\n\n");
      return;
    }
    send(res, 200, {
      ...base,
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content,
            refusal: null,
            ...(toolCalls && { tool_calls: toolCalls.map(({ index: _i, ...t }) => t) }),
          },
          finish_reason: finish,
          logprobs: null,
        },
      ],
      usage,
    });
  }
}

function send(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
