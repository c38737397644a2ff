import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";

/**
 * An OpenAI-compatible chat server on 127.0.0.1 for the honesty bench. Unlike bench/fake-openai.ts, which answers
 * with one well-formed reply, it lets a policy answer each request with anything a real server sends: plain text,
 * tool calls whose argument text may be broken JSON, several calls at once, or an HTTP error (429, 500). Each
 * request is parsed at the boundary (zod) and shown to the policy as what it asks for, the tools offered and the
 * conversation so far.
 */

/** What a request asks for, told apart as a model would: by its structured-output name, tools or instructions. */
export type RequestKind = "plan" | "review" | "synthesis" | "worker" | "recovery" | "reflection" | "other";

/** One tool call as it travels on the wire: the arguments are text, which a sloppy model may break. */
export interface WireCall {
  id: string;
  name: string;
  arguments: string;
}

/** A message of the conversation, as the client sent it. */
interface WireMessage {
  role: string;
  content: string;
  toolCalls: WireCall[];
  toolCallId: string | null;
}

/** What a policy sees of a request. */
export interface ModelRequest {
  kind: RequestKind;
  /** The structured output asked for (response_format's or a function's name), if any. */
  schemaName: string | null;
  /** Whether the structured output is asked for as a function call rather than as the message text. */
  schemaAsTool: boolean;
  /** Tools offered to call (a worker loop's grant), the structured-output function excluded. */
  tools: string[];
  messages: WireMessage[];
  /** Every message's text, joined. */
  prompt: string;
  /** The step a worker loop is doing ("Do step s2: …"), for worker requests. */
  stepId: string | null;
}

/** How the server answers: text, tool calls (with their argument text as given), or an HTTP error. */
export type ModelReply =
  | { type: "text"; content: string }
  | { type: "calls"; calls: { name: string; arguments: string }[]; content: string | null }
  | { type: "http"; status: number; message: string };

const WireBody = z.object({
  model: z.string().optional(),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  response_format: z.object({ json_schema: z.object({ name: z.string().optional() }).optional() }).nullish(),
  tools: z.array(z.object({ function: z.object({ name: z.string() }) })).nullish(),
  messages: z.array(
    z.object({
      role: z.string(),
      content: z.unknown(),
      tool_calls: z
        .array(z.object({ id: z.string(), function: z.object({ name: z.string(), arguments: z.string() }) }))
        .nullish(),
      tool_call_id: z.string().nullish(),
    }),
  ),
});

/** Structured outputs the reasoner asks for, by name: anything else with tools offered is a worker loop. */
const SCHEMA_KINDS: Record<string, RequestKind> = {
  plan: "plan",
  answer_review: "review",
  recovery: "recovery",
  reflection: "reflection",
};

/** Texts that open the reasoner's plain prompts (asked again without a schema after an unparseable answer). */
const PROMPT_KINDS: [string, RequestKind][] = [
  ["You are the planner of a planner-executor agent", "plan"],
  ["You write the final answer", "synthesis"],
  ["You review the results of a planner-executor agent", "review"],
  ["A step of a plan failed and no rule recognises the failure", "recovery"],
  ["You reflect on one run of a planner-executor agent", "reflection"],
];

/** The parts of a multi-part message content; only their text matters here. */
const ContentParts = z.array(z.object({ text: z.string().optional() }));

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  const parts = ContentParts.safeParse(content);
  return parts.success ? parts.data.map((p) => p.text ?? "").join("") : "";
}

/** Reads a request body into what a policy sees; throws (a 400 to the client) when it is not a chat request. */
function readRequest(raw: unknown): ModelRequest {
  const body = WireBody.parse(raw);
  const messages: WireMessage[] = body.messages.map((m) => ({
    role: m.role,
    content: textOf(m.content),
    toolCalls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
    toolCallId: m.tool_call_id ?? null,
  }));
  const prompt = messages.map((m) => m.content).join("\n");
  const offered = (body.tools ?? []).map((t) => t.function.name);
  const formatName = body.response_format?.json_schema?.name ?? null;
  const toolSchema = offered.find((name) => name in SCHEMA_KINDS) ?? null;
  const schemaName = formatName ?? toolSchema;
  const tools = offered.filter((name) => name !== toolSchema);
  const byPrompt = PROMPT_KINDS.find(([opening]) => prompt.includes(opening))?.[1];
  const kind: RequestKind =
    schemaName !== null && schemaName in SCHEMA_KINDS
      ? SCHEMA_KINDS[schemaName]!
      : tools.length > 0
        ? "worker"
        : (byPrompt ?? "other");
  const stepId = /Do step (\S+?):/.exec(prompt)?.[1] ?? null;
  return { kind, schemaName, schemaAsTool: toolSchema !== null, tools, messages, prompt, stepId };
}

export class FakeModelServer {
  /** Answers every request; set before each run. */
  respond: (req: ModelRequest) => ModelReply = () => ({ type: "text", content: "" });
  /** Every request seen since the last reset, with its reply. */
  readonly log: { req: ModelRequest; reply: ModelReply }[] = [];

  reset(): void {
    this.log.length = 0;
  }

  async start(): Promise<{ baseUrl: string; close: () => Promise<void> }> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((e: unknown) =>
        send(res, 400, { error: { message: `fake: ${String(e)}`, type: "invalid_request_error" } }),
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
    const raw: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const body = WireBody.parse(raw);
    const seen = readRequest(raw);
    const reply = this.respond(seen);
    this.log.push({ req: seen, reply });
    if (reply.type === "http") {
      const type = reply.status === 429 ? "rate_limit_exceeded" : "server_error";
      send(res, reply.status, { error: { message: reply.message, type, code: type } });
      return;
    }
    const n = this.log.length;
    const content = reply.type === "text" ? reply.content : reply.content;
    const calls =
      reply.type === "calls"
        ? reply.calls.map((c, i) => ({
            index: i,
            id: `call_h${n}_${i}`,
            type: "function",
            function: { name: c.name, arguments: c.arguments },
          }))
        : [];
    const promptTokens = Math.ceil(seen.prompt.length / 4);
    const completionTokens = Math.ceil((content ?? calls.map((c) => c.function.arguments).join("")).length / 4);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    };
    const base = { id: `chatcmpl-h${n}`, created: Math.floor(Date.now() / 1000), model: body.model ?? "fake-model" };
    const finish = calls.length > 0 ? "tool_calls" : "stop";
    if (body.stream) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const chunk = (choices: unknown[], extra: object = {}) =>
        res.write(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices, ...extra })}\n\n`);
      chunk([
        {
          index: 0,
          delta: { role: "assistant", content, ...(calls.length > 0 && { tool_calls: calls }) },
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
            ...(calls.length > 0 && { tool_calls: calls.map(({ index: _i, ...c }) => c) }),
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
