/**
 * Embedding Candor in your own app: your own tool and worker type, your own checkpointer, the event stream,
 * and an approval handled in code. Run it with `npx tsx examples/embed/app.ts`.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "@langchain/langgraph";
import { z } from "zod";
import { CandorEvent, compileAgent, defineTool, memoryDecisionLog, openPersistence, renderReport, type Toolkit } from "../../src/index.js";

/** A toolkit of your own: one tool, one worker type that may use it. */
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
  ],
  workers: [{ name: "weather_agent", description: "Answers weather questions", categories: ["weather"], keywords: ["weather"] }],
};

export async function main(dbPath = join(mkdtempSync(join(tmpdir(), "candor-embed-")), "app.db")): Promise<string> {
  const persistence = openPersistence(dbPath);
  const decisions = memoryDecisionLog();
  const app = compileAgent({ toolkits: [weather], decisionLog: decisions }, persistence);
  const config = { configurable: { thread_id: "embed-1" } };
  try {
    // A high approval threshold makes even a good plan wait for a human, to show the approval round trip.
    let input: unknown = { request: { userIntent: "What is the weather in Porto?" }, settings: { approvalThreshold: 0.99 } };
    for (;;) {
      for await (const [mode, data] of await app.stream(input as never, { ...config, streamMode: ["custom", "updates"] })) {
        if (mode !== "custom") continue;
        const event = CandorEvent.parse(data);
        if (event.type === "notification") console.log(`[${event.notification.severity}] ${event.notification.title}`);
      }
      const state = await app.getState(config);
      const waiting = state.values.pendingInterrupt;
      if (!waiting) break;
      console.log(`Approval asked: ${waiting.question} — approving in code.`);
      input = new Command({ resume: { decision: "approve", comment: "approved by the embedding app" } });
    }
    const final = await app.getState(config);
    console.log(final.values.answer);
    console.log(renderReport(final.values.report!));
    console.log(`${decisions.entries.length} decisions logged`);
    return final.values.status;
  } finally {
    persistence.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const status = await main();
  process.exitCode = status === "completed" ? 0 : 1;
}
