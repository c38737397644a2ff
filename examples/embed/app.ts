/**
 * Embedding Candor in your own app: your own tools and worker types, your own checkpointer, the event stream,
 * and approvals handled in code — the plan's, and the one a worker asks before a call that cannot be undone.
 * Run it with `npm run example:embed`.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  answerRequests,
  CandorEvent,
  compileAgent,
  defineTool,
  memoryDecisionLog,
  openPersistence,
  pendingRequests,
  renderReport,
  type AgentStateValue,
  type Toolkit,
} from "candor";

/** What the app "posted", so you can see the irreversible call ran once. */
export const posted: string[] = [];

/** A toolkit of your own: a read-only tool, an irreversible one, and the worker types that may use them. */
const weather: Toolkit = {
  name: "weather",
  tools: [
    defineTool({
      name: "get_forecast",
      description: "Get the weather forecast for a city",
      category: "weather",
      keywords: ["weather", "forecast", "rain", "sunny"],
      consumes: [],
      produces: ["forecast"],
      sideEffect: "none",
      needsApproval: false,
      schema: z.object({ city: z.string().min(1) }),
      estimates: { durationMs: 50, cost: 0.001 },
      extractParams: (facts) => ({ city: /in ([A-Z][a-z]+)/.exec(facts.text)?.[1] ?? "Lisbon" }),
      describeStep: (p) => `Forecast for ${String(p.city)}`,
      run: async ({ city }) => ({ summary: `${city}: sunny, 24 °C` }),
    }),
    defineTool({
      name: "post_to_team",
      description: "Post the forecast to the team's channel",
      category: "messaging",
      keywords: ["post", "team", "channel"],
      // It works on the forecast an earlier step produced, so it runs after get_forecast.
      consumes: ["forecast"],
      produces: ["post"],
      // A post cannot be taken back: the worker asks a person before the call, with the exact call and inputs.
      sideEffect: "irreversible",
      needsApproval: true,
      schema: z.object({}),
      estimates: { durationMs: 20, cost: 0 },
      describeStep: () => "Post the forecast to the team",
      run: async (_args, ctx) => {
        const forecast = z.object({ summary: z.string() }).parse(ctx.inputs.forecast);
        posted.push(forecast.summary);
        return { summary: `posted "${forecast.summary}"` };
      },
    }),
  ],
  workers: [
    { name: "weather_agent", description: "Answers weather questions", categories: ["weather"], keywords: ["weather"] },
    { name: "messenger", description: "Posts messages for the team", categories: ["messaging"], keywords: ["post"] },
  ],
};

export async function main(dbPath = join(mkdtempSync(join(tmpdir(), "candor-embed-")), "app.db")): Promise<string> {
  const persistence = openPersistence(dbPath);
  const decisions = memoryDecisionLog();
  const app = compileAgent({ toolkits: [weather], decisionLog: decisions }, persistence);
  const config = { configurable: { thread_id: "embed-1" } };
  try {
    // A high approval threshold makes even a good plan wait for a human, to show the approval round trip.
    let input: unknown = {
      request: { userIntent: "What is the weather in Porto? Post it to the team." },
      settings: { approvalThreshold: 0.99 },
    };
    for (;;) {
      for await (const [mode, data] of await app.stream(input as never, {
        ...config,
        streamMode: ["custom", "updates"],
      })) {
        if (mode !== "custom") continue;
        const event = CandorEvent.parse(data);
        if (event.type === "notification") console.log(`[${event.notification.severity}] ${event.notification.title}`);
      }
      // Everything the thread waits on: the plan's approval, or a worker's tool approval (inside the subgraph).
      const pending = await pendingRequests(app, config);
      if (pending.length === 0) break;
      for (const { request } of pending) {
        if (request?.kind === "tool_approval")
          console.log(
            `Tool approval asked: ${request.tool}(${JSON.stringify(request.args)}) on ${JSON.stringify(request.inputs)} — approving in code.`,
          );
        else console.log(`Approval asked: ${request?.question} — approving in code.`);
      }
      input = answerRequests(pending, { decision: "approve", comment: "approved by the embedding app" });
    }
    // The checkpoint holds the state this graph wrote, so its values have the state's type.
    const final = (await app.getState(config)).values as AgentStateValue;
    console.log(final.answer);
    console.log(renderReport(final.report!));
    console.log(`${decisions.entries.length} decisions logged`);
    return final.status;
  } finally {
    persistence.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const status = await main();
  process.exitCode = status === "completed" ? 0 : 1;
}
