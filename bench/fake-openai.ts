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

export class CountingOpenAIServer {
  readonly counts: Record<RequestKind, number> = { plan: 0, synthesis: 0, review: 0, other: 0 };
  /** What a planning request is answered with (a ModelPlan as JSON); set per scenario. */
  planJson: unknown = null;

  reset(): void {
    this.counts.plan = 0;
    this.counts.synthesis = 0;
    this.counts.review = 0;
    this.counts.other = 0;
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
      messages?: { content: unknown }[];
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
    // A review that judges nothing leaves the understanding record to decide, as the rules reasoner does.
    const content =
      kind === "plan"
        ? JSON.stringify(this.planJson)
        : kind === "synthesis"
          ? "Here is your result."
          : kind === "review"
            ? '{"parts":[]}'
            : "{}";
    send(res, 200, {
      id: `chatcmpl-bench-${Date.now()}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model ?? "fake-model",
      choices: [
        { index: 0, message: { role: "assistant", content, refusal: null }, finish_reason: "stop", logprobs: null },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
    });
  }
}

function send(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
