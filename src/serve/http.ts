import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { CandorError, ErrorCode } from "../errors.js";

/** What answers a request: the embed server's `fetch`, wrapped by `candor serve`'s own routes. */
export type FetchHandler = (request: Request) => Promise<Response>;

/** A listening server: where it answers, and how to stop it. */
export interface Listening {
  /** `http://host:port`, the port the system gave when 0 was asked. */
  url: string;
  port: number;
  /** Stops accepting, ends open streams (a run streaming to a client is aborted) and resolves once closed. */
  close(): Promise<void>;
}

/**
 * Serves `handle` on host:port with node:http. Only the transport is here: the routes are the embed server's. A
 * response body is piped as it comes, so server-sent events reach the client as they are written; a client that
 * goes away aborts its request's signal, which stops the run it was streaming.
 *
 * @throws CandorError INVALID_REQUEST when the port is in use or may not be bound, saying what to do.
 */
export async function listen(handle: FetchHandler, host: string, port: number): Promise<Listening> {
  const server = createServer((req, res) => void answer(handle, req, res));
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) => reject(bindError(e, host, port)));
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === "object" && address ? address.port : port;
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${bound}`,
    port: bound,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function bindError(e: NodeJS.ErrnoException, host: string, port: number): Error {
  if (e.code === "EADDRINUSE") {
    return new CandorError(
      `Port ${port} on ${host} is already in use by another program, so candor serve could not start. Pass another port with --port (for example --port ${port + 1}), or stop what listens there.`,
      ErrorCode.INVALID_REQUEST,
      { cause: e },
    );
  }
  if (e.code === "EACCES") {
    return new CandorError(
      `This user may not listen on port ${port} (ports below 1024 need privileges). Pass --port with a port from 1024 to 65535.`,
      ErrorCode.INVALID_REQUEST,
      { cause: e },
    );
  }
  if (e.code === "EADDRNOTAVAIL" || e.code === "ENOTFOUND") {
    return new CandorError(
      `${host} is not an address of this machine, so candor serve cannot listen on it. Pass --host 127.0.0.1 (the default: this machine only) or --host 0.0.0.0 (every interface: set --auth-token too).`,
      ErrorCode.INVALID_REQUEST,
      { cause: e },
    );
  }
  return e;
}

async function answer(handle: FetchHandler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const gone = new AbortController();
  // `close` on the response before it finished: the client went away mid-stream.
  res.once("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  let response: Response;
  try {
    response = await handle(toRequest(req, gone.signal));
  } catch (e) {
    // The routes turn their own failures into responses; this is a bug, answered rather than crashing the server.
    response = Response.json(
      { error: `internal error: ${e instanceof Error ? e.message : String(e)}` },
      { status: 500 },
    );
  }
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    headers[key] = key === "set-cookie" ? response.headers.getSetCookie() : value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  res.flushHeaders();
  const body = Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>);
  body.on("error", () => res.destroy());
  gone.signal.addEventListener("abort", () => body.destroy(), { once: true });
  body.pipe(res);
}

const ORIGIN = "http://candor.invalid";

function toRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(key, v);
    else if (value !== undefined) headers.set(key, value);
  }
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  // A fixed origin: the Host header is the client's to choose, and only the path and query route a request.
  return new Request(new URL(req.url ?? "/", ORIGIN), {
    method,
    headers,
    signal,
    // `duplex: "half"`: Node's fetch requires it with a body that is a stream.
    ...(hasBody ? { body: Readable.toWeb(req), duplex: "half" } : {}),
  });
}
