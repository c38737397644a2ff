import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { z } from "zod";

/*
 * A local stand-in for an OpenTelemetry collector's OTLP/HTTP traces endpoint (POST /v1/traces), so tests see what
 * Candor's exporter really sends: the JSON encoding of ExportTraceServiceRequest, which
 * @opentelemetry/exporter-trace-otlp-http sends. Anything else (protobuf, another path, a body that is not that JSON)
 * is refused and recorded as unexpected, so a test that gets any has found a bug.
 */

/** An attribute value as OTLP/JSON encodes it (64-bit integers may come as strings). */
const AnyValue: z.ZodType<AnyValue> = z.lazy(() =>
  z.object({
    stringValue: z.string().optional(),
    boolValue: z.boolean().optional(),
    intValue: z.union([z.number(), z.string()]).optional(),
    doubleValue: z.number().optional(),
    arrayValue: z.object({ values: z.array(AnyValue).default([]) }).optional(),
  }),
);
interface AnyValue {
  stringValue?: string | undefined;
  boolValue?: boolean | undefined;
  intValue?: number | string | undefined;
  doubleValue?: number | undefined;
  arrayValue?: { values: AnyValue[] } | undefined;
}
const KeyValue = z.object({ key: z.string(), value: AnyValue });
const Nanos = z.union([z.string(), z.number()]);

const OtlpSpan = z.object({
  traceId: z.string(),
  spanId: z.string(),
  parentSpanId: z.string().optional(),
  name: z.string(),
  kind: z.number().optional(),
  startTimeUnixNano: Nanos,
  endTimeUnixNano: Nanos,
  attributes: z.array(KeyValue).default([]),
  events: z.array(z.object({ name: z.string(), attributes: z.array(KeyValue).default([]) })).default([]),
  status: z.object({ code: z.number().optional(), message: z.string().optional() }).default({}),
});

const ExportTraceServiceRequest = z.object({
  resourceSpans: z.array(
    z.object({
      resource: z.object({ attributes: z.array(KeyValue).default([]) }).default({ attributes: [] }),
      scopeSpans: z.array(z.object({ spans: z.array(OtlpSpan).default([]) })).default([]),
    }),
  ),
});

/** An attribute's value decoded: a string, number, boolean or a list of them. */
type AttributeValue = string | number | boolean | AttributeValue[] | null;

/** One span as received, decoded. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** SpanKind as OTLP numbers it: 1 internal, 2 server, 3 client. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttributeValue>;
  events: { name: string; attributes: Record<string, AttributeValue> }[];
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage: string;
  /** The attributes of the resource the span came with (service.name …). */
  resource: Record<string, AttributeValue>;
}

function decode(v: AnyValue): AttributeValue {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue !== undefined) return v.arrayValue.values.map(decode);
  return null;
}

function attributes(list: readonly z.infer<typeof KeyValue>[]): Record<string, AttributeValue> {
  return Object.fromEntries(list.map((kv) => [kv.key, decode(kv.value)]));
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return req.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body;
}

export interface OtlpReceiver {
  /** The base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT takes it (the exporter appends /v1/traces). */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Requests the receiver refused, with why. */
  unexpected: string[];
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1, on a free port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const unexpected: string[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const type = req.headers["content-type"] ?? "";
      if (req.method !== "POST" || req.url !== "/v1/traces" || !type.startsWith("application/json")) {
        unexpected.push(`${req.method} ${req.url} (${type})`);
        res.writeHead(415).end();
        return;
      }
      const parsed = ExportTraceServiceRequest.safeParse(JSON.parse(body.toString("utf8")));
      if (!parsed.success) {
        unexpected.push(`a body that is not ExportTraceServiceRequest JSON: ${parsed.error.message}`);
        res.writeHead(400).end();
        return;
      }
      for (const rs of parsed.data.resourceSpans) {
        const resource = attributes(rs.resource.attributes);
        for (const s of rs.scopeSpans.flatMap((scope) => scope.spans)) {
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? "",
            name: s.name,
            kind: s.kind ?? 0,
            startNs: BigInt(s.startTimeUnixNano),
            endNs: BigInt(s.endTimeUnixNano),
            attributes: attributes(s.attributes),
            events: s.events.map((e) => ({ name: e.name, attributes: attributes(e.attributes) })),
            statusCode: s.status.code ?? 0,
            statusMessage: s.status.message ?? "",
            resource,
          });
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    })().catch((e: unknown) => {
      unexpected.push(`receiver error: ${String(e)}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    unexpected,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}
