/**
 * Runs Candor's graph in this process with CandorTraceHandler on an in-memory exporter and prints the spans as
 * JSON (test/e2e/otel.test.ts reads them). A child process, because under Vitest @opentelemetry/sdk-trace-base
 * resolves to its ESM build (the `module` field), which Node cannot load, and because it registers a global context
 * manager. Three runs: one that stops for a person's approval, one started inside an app's
 * active span (with a context manager registered, as an app's OpenTelemetry setup does), one called from an app's
 * own LangChain runnable.
 *
 * Usage: node --import tsx test/graph/child-otel.ts <database file>
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { RunnableLambda } from "@langchain/core/runnables";
import { context, ROOT_CONTEXT, trace, type Context, type ContextManager } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { compileAgent } from "../../graphs/agent.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { CandorTraceHandler } from "../../src/observability/trace-handler.js";
import { threadConfig, tripInput } from "../fakes/graph-harness.js";
import { notesToolkit, PlannedReasoner } from "../fakes/notes-toolkit.js";
import { ScriptedChatModel } from "../fakes/scripted-chat-model.js";

/** OpenTelemetry's context manager for Node, in a few lines (its package is not a dependency of Candor). */
class AsyncContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

context.setGlobalContextManager(new AsyncContextManager());
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const persistence = openPersistence(process.argv[2] ?? "otel-child.db");
// A fully planned call of a tool that needs approval: the worker's gate asks before it, and no model is called.
const reasoner = new PlannedReasoner(
  [
    {
      id: "publish",
      description: "Publish the readme note",
      workerType: "writer",
      tools: ["publish_note"],
      params: { title: "Readme" },
      expectedOutputs: ["receipt"],
    },
  ],
  new ScriptedChatModel([]),
);
const graph = compileAgent({ toolkits: [notesToolkit()], reasoner }, persistence).withConfig({
  callbacks: [new CandorTraceHandler(provider.getTracer("test"))],
});

await graph.invoke(tripInput("publish the readme note"), threadConfig("otel-approval"));
const app = provider.getTracer("app").startSpan("handle request");
await context.with(trace.setSpan(context.active(), app), () =>
  graph.invoke(tripInput("publish the readme note"), threadConfig("otel-nested")),
);
app.end();
// Called from an app's own runnable, whose run the handler (bound to the graph alone) never hears of.
await RunnableLambda.from(() =>
  graph.invoke(tripInput("publish the readme note"), threadConfig("otel-in-runnable")),
).invoke(null);
persistence.close();

const spans = exporter.getFinishedSpans().map((s) => ({
  name: s.name,
  traceId: s.spanContext().traceId,
  spanId: s.spanContext().spanId,
  parentSpanId: s.parentSpanContext?.spanId ?? "",
  attributes: s.attributes,
  statusCode: s.status.code,
}));
process.stdout.write(JSON.stringify({ app: app.spanContext().spanId, spans }));
