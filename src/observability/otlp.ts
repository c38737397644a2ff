import type { Agent as HttpAgent, ClientRequestArgs } from "node:http";
import type { Duplex } from "node:stream";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { CandorEnv } from "../env.js";
import { errorMessage } from "../errors.js";
import type { CandorTraceHandler } from "./trace-handler.js";

/*
 * The OTLP pipeline: a tracer provider whose batches go to an OTLP/HTTP endpoint (JSON, as
 * @opentelemetry/exporter-trace-otlp-http sends it), and the handler that fills it. Everything OpenTelemetry's SDK
 * brings is imported here, and only when a pipeline is started: a run without an endpoint loads none of it.
 * The exporter reads the standard variables itself (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, and the
 * _TRACES_ forms), the provider its sampler (OTEL_TRACES_SAMPLER), the resource OTEL_SERVICE_NAME and
 * OTEL_RESOURCE_ATTRIBUTES.
 */

type TracingEnv = Pick<
  CandorEnv,
  "OTEL_EXPORTER_OTLP_ENDPOINT" | "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" | "OTEL_SDK_DISABLED" | "OTEL_TRACES_EXPORTER"
>;

/**
 * Where spans go, as the OTLP exporters resolve it: the traces endpoint as given, else the base endpoint with
 * `v1/traces` appended. Null when neither is set, or OpenTelemetry is switched off (OTEL_SDK_DISABLED,
 * OTEL_TRACES_EXPORTER=none): then nothing is loaded and nothing is sent.
 */
export function otlpTracesUrl(env: TracingEnv): string | null {
  if (env.OTEL_SDK_DISABLED === true || env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === "none") return null;
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!base) return null;
  return `${base}${base.endsWith("/") ? "" : "/"}v1/traces`;
}

export interface OtlpTracingOptions {
  /** The traces endpoint (`otlpTracesUrl`). */
  url: string;
  /** service.name unless OTEL_SERVICE_NAME says otherwise (default `candor`). */
  serviceName?: string;
  serviceVersion?: string;
}

/** A started pipeline: pass `handler` in the graph's callbacks, `flush` before the process ends. */
export interface OtlpTracing {
  handler: CandorTraceHandler;
  url: string;
  /**
   * Sends the spans not sent yet and closes the exporter. Null when every span went; else one sentence saying what
   * was not sent and why: spans an earlier batch could not send, a connection refused (said at once: the exporter
   * would retry for its whole timeout), or no answer within `timeoutMs`.
   */
  flush(timeoutMs: number): Promise<string | null>;
}

/** Network errors that mean the endpoint cannot be reached now, not that one request went wrong. */
const UNREACHABLE = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** Starts the pipeline: loads the SDK and the exporter, builds the provider and its handler. */
export async function startOtlpTracing(options: OtlpTracingOptions): Promise<OtlpTracing> {
  const [sdk, { OTLPTraceExporter }, resources, { CandorTraceHandler }] = await Promise.all([
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
    import("./trace-handler.js"),
  ]);
  const watch = new ConnectionWatch();
  const exporter = new CountingExporter(
    new OTLPTraceExporter({ url: options.url, httpAgentOptions: (protocol) => watch.agent(protocol) }),
  );
  const resource = resources
    .defaultResource()
    .merge(
      resources.resourceFromAttributes({
        "service.name": options.serviceName ?? "candor",
        ...(options.serviceVersion ? { "service.version": options.serviceVersion } : {}),
      }),
    )
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over Candor's defaults.
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new sdk.BasicTracerProvider({ resource, spanProcessors: [new sdk.BatchSpanProcessor(exporter)] });
  const handler = new CandorTraceHandler(provider.getTracer("candor", options.serviceVersion));
  const incomplete = (why: string) =>
    `OpenTelemetry spans were not all sent to ${options.url} (${why}); the trace may be incomplete`;

  return {
    handler,
    url: options.url,
    async flush(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`no answer within ${timeoutMs / 1000} s`), timeoutMs);
      });
      try {
        const why = await Promise.race([
          provider.forceFlush().then(
            () => exporter.failure(),
            (e: unknown) => exporter.failure() ?? errorMessage(e),
          ),
          watch.unreachable(),
          late,
        ]);
        if (why) return incomplete(why);
        await provider.shutdown();
        return null;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** ExportResultCode.SUCCESS of @opentelemetry/core, which Candor does not depend on directly. */
const EXPORT_SUCCESS = 0;

/** Passes batches to the OTLP exporter and remembers the ones it could not send, with the first reason. */
class CountingExporter implements SpanExporter {
  private lost = 0;
  private reason: string | null = null;

  constructor(private readonly inner: SpanExporter) {}

  export(...[spans, done]: Parameters<SpanExporter["export"]>): void {
    this.inner.export(spans, (result) => {
      if (result.error !== undefined || Number(result.code) !== EXPORT_SUCCESS) {
        this.lost += spans.length;
        this.reason ??= result.error ? errorMessage(result.error) : "the endpoint refused them";
      }
      done(result);
    });
  }

  /** Why spans were lost so far, or null when none were. */
  failure(): string | null {
    return this.lost === 0 ? null : `${this.lost} span(s) not sent: ${this.reason}`;
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * The exporter's HTTP agent, watched for connections that fail: the exporter retries a refused connection with
 * back-off for its whole timeout (10 s by default), which a person waiting for the CLI to exit should not sit through
 * for an endpoint that is not there. A `createConnection` override is Node's documented way to see each socket.
 */
class ConnectionWatch {
  private listeners: ((why: string) => void)[] = [];

  async agent(protocol: string): Promise<HttpAgent> {
    // An https.Agent is an http.Agent that speaks TLS: one base type for both.
    const Base: typeof HttpAgent = (protocol === "https:" ? await import("node:https") : await import("node:http"))
      .Agent;
    const seen = (e: NodeJS.ErrnoException) => this.failed(e);
    class WatchedAgent extends Base {
      override createConnection(options: ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void) {
        const socket = super.createConnection(options, callback);
        socket?.once("error", seen);
        return socket;
      }
    }
    return new WatchedAgent({ keepAlive: true });
  }

  private failed(e: NodeJS.ErrnoException): void {
    if (e.code === undefined || !UNREACHABLE.has(e.code)) return;
    const why = errorMessage(e);
    for (const listener of this.listeners.splice(0)) listener(why);
  }

  /** Resolves when a connection is refused (or its host unknown) from now on. */
  unreachable(): Promise<string> {
    return new Promise((resolve) => this.listeners.push(resolve));
  }
}
