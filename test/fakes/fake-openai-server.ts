import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";

/**
 * A local stand-in for an OpenAI-compatible server (POST /v1/chat/completions), so tests run the real
 * `ChatOpenAI` — request building, response parsing, structured output — without any network beyond 127.0.0.1.
 * It answers from a script and fails loudly (HTTP 500 naming the request) when the script runs out.
 */

/** One scripted answer. A bare string is shorthand for `{ content }`. */
export type ScriptedResponse =
  | string
  | {
      /** The assistant message's text (e.g. a JSON plan, possibly malformed on purpose). */
      content: string;
      /** Wait this long before answering (to exercise timeouts and cancellation). */
      delayMs?: number;
    }
  | {
      /** Serialised as the assistant message's text. */
      json: unknown;
      delayMs?: number;
    }
  | {
      /** A single tool call; `arguments` objects are JSON-encoded, strings are sent as they are. */
      toolCall: { name: string; arguments: string | Record<string, unknown> };
      delayMs?: number;
    }
  | {
      /** An HTTP error with an OpenAI-shaped error body. */
      status: number;
      error: string;
      delayMs?: number;
    };

/** What the server received, so tests can assert on the prompt and on the request options. */
export interface RecordedRequest {
  /** 1-based position of the request. */
  n: number;
  path: string;
  /** The parsed JSON body (model, messages, response_format, tools, stream, ...). */
  body: ChatCompletionBody;
}

/** The parts of a chat-completions request body the fake reads; everything else is kept as received. */
export interface ChatCompletionBody {
  model?: string;
  stream?: boolean;
  messages?: { role: string; content: unknown }[];
  response_format?: { type: string; json_schema?: { name?: string; strict?: boolean; schema?: unknown } };
  tools?: { type: string; function: { name: string; strict?: boolean; parameters?: unknown } }[];
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

export interface RunningFakeServer {
  /** The value for ChatOpenAI's `configuration.baseURL` (ends in /v1). */
  baseUrl: string;
  close: () => Promise<void>;
}

/** A scripted OpenAI-compatible server. Create it with the answers it should give, then `start()`. */
export class FakeOpenAIServer {
  readonly requests: RecordedRequest[] = [];
  /** Requests the script did not expect, with the reason; a test that sees any has found a bug. */
  readonly unexpected: string[] = [];
  private readonly script: ScriptedResponse[];
  private count = 0;
  private readonly waiters: { n: number; resolve: () => void }[] = [];

  constructor(script: ScriptedResponse[] = []) {
    this.script = [...script];
  }

  /** Appends answers to the script. */
  push(...responses: ScriptedResponse[]): void {
    this.script.push(...responses);
  }

  /** Scripted answers not yet given. */
  get remaining(): number {
    return this.script.length;
  }

  /** Throws when answers are left over or unexpected requests arrived: a test should consume exactly its script. */
  assertConsumed(): void {
    if (this.unexpected.length > 0) throw new Error(`fake server: ${this.unexpected.join("; ")}`);
    if (this.script.length > 0)
      throw new Error(`fake server: ${this.script.length} scripted response(s) were never requested`);
  }

  /** Resolves once request `n` (1-based) has arrived, e.g. to cancel a call only after it reached the server. */
  received(n: number): Promise<void> {
    if (this.requests.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  /** The text of every message of request `n` (1-based), joined: what the model was shown. */
  promptOf(n: number): string {
    const req = this.requests[n - 1];
    if (!req) throw new Error(`fake server: no request #${n} (received ${this.requests.length})`);
    return (req.body.messages ?? [])
      .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
      .join("\n");
  }

  /** Listens on 127.0.0.1 on a free port. */
  async start(): Promise<RunningFakeServer> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((e: unknown) => {
        // A bug in the fake must surface in the test, not hang the client.
        this.unexpected.push(`internal error: ${String(e)}`);
        if (!res.headersSent) sendError(res, 500, `fake server internal error: ${String(e)}`);
        else res.end();
      });
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
    const n = ++this.count;
    const path = req.url ?? "";
    const text = await readBody(req);
    if (req.method !== "POST" || !path.endsWith("/chat/completions")) {
      this.unexpected.push(`request #${n} to ${req.method} ${path}, which the fake does not implement`);
      sendError(res, 404, `fake server: ${req.method} ${path} is not implemented (only POST /v1/chat/completions)`);
      return;
    }
    let body: ChatCompletionBody;
    try {
      body = JSON.parse(text) as ChatCompletionBody;
    } catch {
      this.unexpected.push(`request #${n} had a body that is not JSON`);
      sendError(res, 400, `fake server: request #${n} body is not JSON`);
      return;
    }
    this.requests.push({ n, path, body });
    for (const w of this.waiters.filter((w) => w.n <= this.requests.length)) {
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve();
    }

    // Mirror OpenAI's own rejection of schemas strict mode cannot take, so a `.optional()` or a record in a
    // model-facing schema fails here the way it would against the real API.
    const schemaProblem = strictSchemaProblem(body);
    if (schemaProblem) {
      this.unexpected.push(`request #${n}: ${schemaProblem}`);
      sendError(res, 400, `fake server: invalid schema for strict mode: ${schemaProblem}`);
      return;
    }

    const next = this.script.shift();
    if (next === undefined) {
      const message = `fake server: unexpected request #${n} (the script has no response left)`;
      this.unexpected.push(message);
      sendError(res, 500, message);
      return;
    }
    const scripted = typeof next === "string" ? { content: next } : next;
    if (scripted.delayMs) {
      const closed = await delay(scripted.delayMs, req);
      if (closed) return;
    }
    if ("status" in scripted) {
      sendError(res, scripted.status, scripted.error);
      return;
    }
    const message = toAssistantMessage(scripted);
    if (body.stream) sendStream(res, n, body, message);
    else sendJson(res, 200, completion(n, body, message));
  }
}

interface AssistantMessage {
  content: string | null;
  toolCall?: { id: string; name: string; arguments: string };
}

function toAssistantMessage(
  s:
    | { content: string }
    | { json: unknown }
    | { toolCall: { name: string; arguments: string | Record<string, unknown> } },
): AssistantMessage {
  if ("content" in s) return { content: s.content };
  if ("json" in s) return { content: JSON.stringify(s.json) };
  const args = typeof s.toolCall.arguments === "string" ? s.toolCall.arguments : JSON.stringify(s.toolCall.arguments);
  return { content: null, toolCall: { id: "call_fake_1", name: s.toolCall.name, arguments: args } };
}

function completion(n: number, body: ChatCompletionBody, m: AssistantMessage): unknown {
  return {
    id: `chatcmpl-fake-${n}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? "fake-model",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: m.content,
          refusal: null,
          ...(m.toolCall
            ? {
                tool_calls: [
                  {
                    id: m.toolCall.id,
                    type: "function",
                    function: { name: m.toolCall.name, arguments: m.toolCall.arguments },
                  },
                ],
              }
            : {}),
        },
        finish_reason: m.toolCall ? "tool_calls" : "stop",
        logprobs: null,
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
  };
}

/** Server-sent events the way OpenAI streams: a role delta, the text (or tool arguments) in pieces, a finish. */
function sendStream(res: ServerResponse, n: number, body: ChatCompletionBody, m: AssistantMessage): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const base = {
    id: `chatcmpl-fake-${n}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? "fake-model",
  };
  const send = (delta: unknown, finish: string | null = null): void => {
    res.write(
      `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] })}\n\n`,
    );
  };
  send({ role: "assistant", content: m.toolCall ? null : "" });
  if (m.toolCall) {
    send({
      tool_calls: [
        { index: 0, id: m.toolCall.id, type: "function", function: { name: m.toolCall.name, arguments: "" } },
      ],
    });
    for (const piece of pieces(m.toolCall.arguments))
      send({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
  } else {
    for (const piece of pieces(m.content ?? "")) send({ content: piece });
  }
  send({}, m.toolCall ? "tool_calls" : "stop");
  if (body.stream_options?.include_usage) {
    res.write(
      `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } })}\n\n`,
    );
  }
  res.end("data: [DONE]\n\n");
}

/** Splits text into a few chunks so the client really has to reassemble it. */
function pieces(text: string): string[] {
  const size = Math.max(1, Math.ceil(text.length / 4));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, {
    error: { message, type: status >= 500 ? "server_error" : "invalid_request_error", param: null, code: null },
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Resolves true when the client hung up first (it aborted), so the fake does not write to a dead socket. */
function delay(ms: number, req: IncomingMessage): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      req.socket.off("close", onClose);
      resolve(false);
    }, ms);
    const onClose = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    req.socket.once("close", onClose);
  });
}

/** The first strict-mode violation in the request's schemas, or null. Checks only what OpenAI rejects most often. */
export function strictSchemaProblem(body: ChatCompletionBody): string | null {
  const schemas: { where: string; schema: unknown }[] = [];
  const rf = body.response_format;
  if (rf?.type === "json_schema" && rf.json_schema?.strict)
    schemas.push({ where: "response_format", schema: rf.json_schema.schema });
  for (const tool of body.tools ?? []) {
    if (tool.function.strict) schemas.push({ where: `tool ${tool.function.name}`, schema: tool.function.parameters });
  }
  for (const { where, schema } of schemas) {
    const problem = walkStrict(schema, "#");
    if (problem) return `${where}: ${problem}`;
  }
  return null;
}

function walkStrict(node: unknown, path: string): string | null {
  if (typeof node !== "object" || node === null) return null;
  const s = node as Record<string, unknown>;
  if ("propertyNames" in s || (typeof s.additionalProperties === "object" && s.additionalProperties !== null)) {
    return `${path} is a free-form object (a record); strict mode needs fixed properties`;
  }
  if (s.type === "object" || "properties" in s) {
    const props = Object.keys((s.properties as Record<string, unknown> | undefined) ?? {});
    const required = new Set((s.required as string[] | undefined) ?? []);
    const missing = props.filter((p) => !required.has(p));
    if (missing.length > 0)
      return `${path}: properties ${missing.join(", ")} are not in "required" (use .nullable(), not .optional())`;
    if (s.additionalProperties !== false) return `${path}: "additionalProperties" must be false`;
  }
  for (const [key, value] of Object.entries(s)) {
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) {
        const p = walkStrict(item, `${path}/${key}/${i}`);
        if (p) return p;
      }
    } else if (typeof value === "object" && value !== null) {
      const p = walkStrict(value, `${path}/${key}`);
      if (p) return p;
    }
  }
  return null;
}

/**
 * Scripted servers for one test file: `serve(script)` starts one; after each test every server is closed, and each
 * must have answered exactly its script (a leftover or surprise request fails the test).
 */
export function scriptedServersPerTest(): {
  serve: (script: ScriptedResponse[]) => Promise<{ fake: FakeOpenAIServer; baseUrl: string }>;
} {
  const servers: { fake: FakeOpenAIServer; close: () => Promise<void> }[] = [];
  afterEach(async () => {
    const all = servers.splice(0);
    await Promise.all(all.map((s) => s.close()));
    for (const s of all) s.fake.assertConsumed();
  });
  return {
    serve: async (script) => {
      const fake = new FakeOpenAIServer(script);
      const { baseUrl, close } = await fake.start();
      servers.push({ fake, close });
      return { fake, baseUrl };
    },
  };
}
