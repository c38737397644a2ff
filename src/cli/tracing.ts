import type { CandorEnv } from "../env.js";
import { errorMessage } from "../errors.js";
import { createRequire } from "node:module";
import { z } from "zod";
import { otlpTracesUrl, startOtlpTracing, type OtlpTracing } from "../observability/otlp.js";
import type { CandorTraceHandler } from "../observability/trace-handler.js";

/*
 * LangSmith tracing is LangChain's own: LANGSMITH_TRACING=true with LANGSMITH_API_KEY (and LANGSMITH_PROJECT,
 * LANGSMITH_ENDPOINT) makes every graph, node and model call a traced run, posted in the background. A CLI process
 * must not end before those posts are sent, so it waits for them here, within a bound, after the command is done.
 */

/*
 * OpenTelemetry is Candor's own: with OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set, the
 * first session of the process starts one OTLP pipeline, every graph it compiles reports to its handler, and the
 * CLI flushes it with LangSmith's traces before it exits. Unset, none of OpenTelemetry is loaded.
 */

/** service.version, from Candor's own package.json. */
const PackageVersion = z.object({ version: z.string() });

/** The process's OTLP pipeline, once a session asked for it: one provider and one exporter for every graph. */
let otlp: Promise<OtlpTracing> | null = null;

/**
 * The handler a session's graph reports to when OpenTelemetry is on, else null (and nothing is loaded). A pipeline
 * that cannot start leaves the run untraced, not failed: flushTraces says so when the command is done.
 */
export async function otelHandler(env: CandorEnv): Promise<CandorTraceHandler | null> {
  const url = otlpTracesUrl(env);
  if (url === null) return null;
  if (!otlp) {
    const pkg = PackageVersion.safeParse(createRequire(import.meta.url)("candor/package.json"));
    otlp = startOtlpTracing({ url, ...(pkg.success ? { serviceVersion: pkg.data.version } : {}) });
  }
  return otlp.then(
    (p) => p.handler,
    () => null,
  );
}

/** The global where LangChain keeps its async-local context once its runtime is loaded (a shared Symbol.for key). */
const LANGCHAIN_CONTEXT = Symbol.for("ls:tracing_async_local_storage");

/** How long the CLI waits for traces to be sent before it exits anyway (and says so). */
const TRACE_FLUSH_TIMEOUT_MS = 10_000;

/** Whether LangChain traces to LangSmith in this process (the variables LangChain itself reads). */
export function tracingEnabled(env: Pick<CandorEnv, "LANGSMITH_TRACING" | "LANGCHAIN_TRACING_V2">): boolean {
  return [env.LANGSMITH_TRACING, env.LANGCHAIN_TRACING_V2].some((v) => v?.trim().toLowerCase() === "true");
}

/**
 * Waits, side by side, for LangSmith's traces and for the OpenTelemetry spans of this process. Returns null when
 * everything was sent, else why not in one line (the run is unaffected; the trace may be partial).
 */
export async function flushTraces(
  env: Pick<CandorEnv, "LANGSMITH_TRACING" | "LANGCHAIN_TRACING_V2"> | undefined,
  timeoutMs = TRACE_FLUSH_TIMEOUT_MS,
): Promise<string | null> {
  const pipeline = otlp;
  const spans = pipeline ? pipeline.then((p) => p.flush(timeoutMs)).catch((e: unknown) => otelFailed(e)) : null;
  const unsent = await Promise.all([flushLangSmith(env, timeoutMs), spans]);
  return unsent.filter((why) => why !== null).join("; ") || null;
}

/** A pipeline that could not even start (the SDK failed to load): said once, at the end, like unsent spans. */
function otelFailed(e: unknown): string {
  return `OpenTelemetry tracing could not start (${errorMessage(e)}); no spans were sent`;
}

/**
 * Waits for LangChain's background callbacks and, with tracing on, for the LangSmith client's pending trace
 * batches. Returns null when everything was sent, else why not. Without tracing it only drains the callbacks: the
 * untraced path builds no client and sends nothing.
 */
async function flushLangSmith(
  env: Pick<CandorEnv, "LANGSMITH_TRACING" | "LANGCHAIN_TRACING_V2"> | undefined,
  timeoutMs: number,
): Promise<string | null> {
  const traced = env !== undefined && tracingEnabled(env);
  // LangChain queues background callbacks only where its runnables ran, and every command that runs one loads
  // @langchain/langgraph or @langchain/core's context, which install this global. When it is absent (help, threads,
  // logs…) there is nothing to wait for, and importing LangChain's callbacks only to find that out cost 0.3 s.
  if (!traced && !(LANGCHAIN_CONTEXT in globalThis)) return null;
  const work = (async () => {
    const { awaitAllCallbacks } = await import("@langchain/core/callbacks/promises");
    await awaitAllCallbacks();
    if (!traced) return;
    // A tracer built without a client uses LangChain's default client, the one every run of this process posted to.
    const { LangChainTracer } = await import("@langchain/core/tracers/tracer_langchain");
    const client = new LangChainTracer().client as { awaitPendingTraceBatches?: () => Promise<void> };
    await client.awaitPendingTraceBatches?.();
  })();
  // Not unref'd: a pending flush must keep the process alive until it ends or this fires, never end it mid-await.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(
      () => resolve(`LangSmith traces were not all sent within ${timeoutMs / 1000} s; the trace may be incomplete`),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([work.then(() => null), late]);
  } catch (e) {
    return `LangSmith traces could not be sent (${errorMessage(e)}); the trace may be incomplete`;
  } finally {
    clearTimeout(timer);
  }
}
