import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import { createEmbedServer } from "@langchain/langgraph-api/experimental/embed";
import { z } from "zod";
import { errorMessage } from "../errors.js";
import { LEASE_TTL_MS, type ThreadLeases } from "../memory/lease.js";
import { keepLease, type LeaseTiming } from "../memory/lease-keeper.js";
import { assistants, resolveRun } from "./assistants.js";
import { presentedToken, tokenMatches } from "./auth.js";
import type { FetchHandler } from "./http.js";
import { jsonResponse, onBodyEnd, parseSse } from "./sse.js";
import { toThreadState, viewThread, type StateReader } from "./state.js";
import { GRAPH_ID, threadSaver, type ForeignThread } from "./threads.js";

type AnyPregel = Parameters<typeof createEmbedServer>[0]["graph"][string];

/** What `candor serve` serves. */
export interface ServeDeps {
  /** The agent compiled on the database below (its checkpointer and store). */
  graph: AnyPregel & StateReader;
  checkpointer: BaseCheckpointSaver;
  store: BaseStore;
  /** One writer per thread: a run through the API holds the thread's lease, as `candor run` and workers do. */
  leases: ThreadLeases;
  /** How long a run's lease lasts and how often it is renewed (default: the CLI's). */
  leaseTiming?: LeaseTiming;
  /** Told what the server did on its own that nobody asked it about (a lease lost, so a run stopped). */
  onNotice?: (message: string) => void;
  /** Threads started outside the API (the CLI, workers), so `threads.search` lists them too. */
  foreign(): Promise<ForeignThread[]>;
  /** Every request must carry it (`Authorization: Bearer`, or `x-api-key`); null: no token asked. */
  token: string | null;
  /** Candor's version, for GET /info. */
  version: string;
  /** Where a run goes instead of running in this process (PostgreSQL: the workers' queue); null: here. */
  runs?: RunRouter | null;
}

/** Takes the run routes over (PostgreSQL: runs go to the worker queue); answers null to leave a route to the embed. */
export type RunRouter = (request: Request, route: RunRoute) => Promise<Response | null>;

export type RunRoute =
  { kind: "stream"; threadId: string } | { kind: "wait"; threadId: string } | { kind: "create"; threadId: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const CORS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
  "access-control-expose-headers": "content-location, x-pagination-total, content-type",
  "access-control-max-age": "600",
};

function withCors(response: Response): Response {
  const headers = new Headers(response.headers);
  for (const [k, v] of Object.entries(CORS)) headers.set(k, v);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

const json = jsonResponse;

/**
 * The Agent Protocol over Candor's database: @langchain/langgraph-api's embed server (threads, state, history,
 * runs and their streams, over Candor's checkpointer and store), behind a token check, plus what the embed server
 * leaves out and the SDK and chat apps call: /ok, /info, the assistant, `runs.wait`, and reading threads whose ids
 * are not UUIDs (the CLI's `run-…`), which the embed server's routes refuse.
 */
export function serveHandler(deps: ServeDeps): FetchHandler {
  const threads = threadSaver({
    store: deps.store,
    foreign: () => deps.foreign(),
    view: (id) => viewThread(deps.graph, deps.leases, id),
  });
  const known = assistants(deps.store);
  const embed = createEmbedServer({
    graph: { [GRAPH_ID]: deps.graph },
    threads,
    checkpointer: deps.checkpointer,
    store: deps.store,
  });
  const handle: FetchHandler = async (request) => {
    // A browser asks before a cross-origin call, without credentials; the answer holds no data.
    if (request.method === "OPTIONS") {
      const allow = request.headers.get("access-control-request-headers") ?? "authorization, content-type, x-api-key";
      return new Response(null, { status: 204, headers: { ...CORS, "access-control-allow-headers": allow } });
    }
    if (deps.token !== null && !tokenMatches(presentedToken(request.headers), deps.token)) {
      return new Response(
        JSON.stringify({
          error: "Unauthorized: send the server's token as `Authorization: Bearer <token>` or `x-api-key`.",
        }),
        { status: 401, headers: { "content-type": "application/json", "www-authenticate": "Bearer" } },
      );
    }
    return withCors(await route(request));
  };
  const route = async (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url);
    const own = await ownRoute(request, pathname);
    return own ?? (await embed.fetch(request));
  };
  const ownRoute = async (request: Request, pathname: string): Promise<Response | null> => {
    const method = request.method;
    if (method === "GET" && pathname === "/ok") return json({ ok: true });
    if (method === "GET" && pathname === "/info") return json({ version: deps.version, flags: { assistants: true } });
    if (pathname === "/assistants" || pathname.startsWith("/assistants/")) return assistantRoute(request, pathname);
    const runs = /^\/threads\/([^/]+)\/runs(\/stream|\/wait)?$/.exec(pathname);
    if (method === "POST" && runs) {
      const threadId = decodeURIComponent(runs[1]!);
      const kind = runs[2] === "/stream" ? "stream" : runs[2] === "/wait" ? "wait" : "create";
      const resolved = await withAssistant(request);
      if (resolved instanceof Response) return resolved;
      if (deps.runs) {
        await threads.get(threadId);
        const routed = await deps.runs(resolved, { kind, threadId });
        if (routed) return routed;
      }
      if (kind === "stream") return streamHere(resolved, threadId);
      if (kind === "wait") return waitHere(resolved, threadId);
      return startHere(resolved, threadId);
    }
    const read = /^\/threads\/([^/]+)(\/state|\/history)?$/.exec(pathname);
    if (read && !UUID.test(decodeURIComponent(read[1]!)))
      return readForeign(request, decodeURIComponent(read[1]!), read[2]);
    return null;
  };

  const assistantRoute = async (request: Request, pathname: string): Promise<Response | null> => {
    if (request.method === "POST" && pathname === "/assistants") {
      const made = await known.create(await request.json().catch(() => null));
      return made.ok ? json(made.value) : json({ error: `Cannot create it: ${made.reason}.` }, 422);
    }
    if (request.method === "POST" && pathname === "/assistants/search") return json(await known.list());
    const id = /^\/assistants\/([^/]+)$/.exec(pathname)?.[1];
    if (request.method !== "GET" || id === undefined) return null;
    const found = await known.find(decodeURIComponent(id));
    return found ? json(found) : json({ error: `Assistant ${id} not found` }, 404);
  };

  /** The run with its assistant resolved to the graph and the assistant's context, or the 404/422 that says why not. */
  const withAssistant = async (request: Request): Promise<Request | Response> => {
    const body = z.looseObject({ assistant_id: z.string() }).safeParse(await request.json().catch(() => null));
    if (!body.success) return json({ error: "The run must be a JSON object with an assistant_id." }, 422);
    const assistant = await known.find(body.data.assistant_id);
    if (!assistant) return json({ error: `Assistant ${body.data.assistant_id} not found` }, 404);
    const headers = new Headers(request.headers);
    headers.delete("content-length");
    return new Request(request.url, {
      method: request.method,
      headers,
      body: JSON.stringify(resolveRun(body.data, assistant)),
      signal: request.signal,
    });
  };

  /** A run streamed from this process, under the thread's lease. */
  const streamHere = async (request: Request, threadId: string): Promise<Response> => {
    const held = await deps.leases.acquire(threadId, deps.leaseTiming?.ttlMs ?? LEASE_TTL_MS);
    if (!held.acquired) {
      const { pid, host } = held.heldBy;
      return json(
        {
          error: `Thread ${threadId} is busy: another process (pid ${pid} on ${host}) is running it. Wait until it finishes (its status is "busy" until then) and send the run again.`,
        },
        409,
      );
    }
    // The run is aborted when the lease is lost or cannot be renewed, as the CLI's are: the embed server runs the
    // graph under the request's signal, so the request is remade with one that the client's going away or the lease
    // keeper aborts. What happened is said on the server's stderr and in the stream's error event.
    const kept = keepLease(deps.leases, held.lease, {
      ...(deps.leaseTiming ? { timing: deps.leaseTiming } : {}),
      signal: request.signal,
      onStop: (message) => deps.onNotice?.(message),
    });
    const release = () =>
      void kept
        .release()
        .catch((e: unknown) =>
          deps.onNotice?.(
            `Could not give back the lease on thread ${threadId}: ${errorMessage(e)}. It ends when it expires.`,
          ),
        );
    try {
      return onBodyEnd(await embed.fetch(new Request(request, { signal: kept.signal })), release);
    } catch (e) {
      release();
      throw e;
    }
  };

  /**
   * A background run (`runs.create`), made here: the embed server would only start it once a client joins its
   * stream, so a client that creates a run and then reads the thread would wait forever. It is streamed to nobody
   * under the thread's lease; the answer is the run, once it has started.
   */
  const startHere = async (request: Request, threadId: string): Promise<Response> => {
    const body = (await request.json().catch(() => null)) as Record<string, unknown> | null;
    if (body === null || typeof body !== "object")
      return json({ error: "The body must be a JSON object (RunCreate)." }, 422);
    const streamed = await streamHere(
      new Request(new URL(`/threads/${encodeURIComponent(threadId)}/runs/stream`, request.url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...body, stream_mode: ["values"] }),
      }),
      threadId,
    );
    if (!streamed.ok || !streamed.body) return streamed;
    const reader = (streamed.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let head = "";
    // The first event is the run's metadata (its id); the rest is read and dropped, so the run goes on to its end.
    while (!head.includes("\n\n")) {
      const { done, value } = await reader.read();
      if (done) break;
      head += decoder.decode(value, { stream: true });
    }
    // Nobody reads this run's stream, so what would have told a client it failed is told on the server's stderr.
    const told = (why: string) => deps.onNotice?.(`The background run on thread ${threadId} failed: ${why}`);
    void (async () => {
      // Read event by event, keeping only an unfinished one: the run's values are not held in memory.
      let pending = head.slice(head.indexOf("\n\n") + 2);
      for (;;) {
        const { done, value } = await reader.read();
        pending += done ? "\n\n" : decoder.decode(value, { stream: true });
        const end = pending.lastIndexOf("\n\n") + 2;
        if (end > 1) {
          for (const e of parseSse(pending.slice(0, end)).filter((x) => x.event === "error")) told(e.data);
          pending = pending.slice(end);
        }
        if (done) return;
      }
    })().catch((e: unknown) => told(`its stream could not be read (${errorMessage(e)})`));
    const meta = parseSse(head).find((e) => e.event === "metadata");
    const runId = z.object({ run_id: z.string() }).safeParse(meta ? jsonOrNull(meta.data) : null);
    if (!runId.success)
      return json({ error: `The run on thread ${threadId} did not start: its stream named no run.` }, 502);
    const now = new Date().toISOString();
    return json({
      run_id: runId.data.run_id,
      thread_id: threadId,
      assistant_id: body.assistant_id,
      status: "running",
      metadata: {},
      multitask_strategy: "reject",
      created_at: now,
      updated_at: now,
    });
  };

  /** `runs.wait`: the run streamed here to its end; the answer is its last values (or its error). */
  const waitHere = async (request: Request, threadId: string): Promise<Response> => {
    const body = (await request.json().catch(() => null)) as Record<string, unknown> | null;
    if (body === null || typeof body !== "object")
      return json({ error: "The body must be a JSON object (RunCreate)." }, 422);
    const url = new URL(`/threads/${encodeURIComponent(threadId)}/runs/stream`, request.url);
    const streamed = await streamHere(
      new Request(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...body, stream_mode: ["values"] }),
        signal: request.signal,
      }),
      threadId,
    );
    if (!streamed.ok) return streamed;
    const events = parseSse(await streamed.text());
    const error = events.find((e) => e.event === "error");
    if (error) return new Response(error.data, { status: 500, headers: { "content-type": "application/json" } });
    const last = events.filter((e) => e.event === "values").at(-1);
    return new Response(last?.data ?? "{}", { headers: { "content-type": "application/json" } });
  };

  /** GET a thread, its state or its history, for ids the embed server's routes refuse (not UUIDs). */
  const readForeign = async (
    request: Request,
    threadId: string,
    what: string | undefined,
  ): Promise<Response | null> => {
    const config = { configurable: { thread_id: threadId } };
    if (what === undefined && request.method === "GET") return json(await threads.get(threadId));
    if (what === "/state" && request.method === "GET") {
      await threads.get(threadId);
      return json(toThreadState(await deps.graph.getState(config, { subgraphs: true })));
    }
    if (what === "/history" && request.method === "POST") {
      await threads.get(threadId);
      const body = (await request.json().catch(() => ({}))) as { limit?: unknown };
      const limit = typeof body.limit === "number" && body.limit > 0 ? Math.min(body.limit, 1000) : 10;
      const out: Record<string, unknown>[] = [];
      for await (const s of deps.graph.getStateHistory(config, { limit })) out.push(toThreadState(s));
      return json(out);
    }
    return null;
  };
  return async (request) => {
    try {
      return await handle(request);
    } catch (e) {
      if (e && typeof e === "object" && "getResponse" in e && typeof e.getResponse === "function")
        return withCors((e as { getResponse(): Response }).getResponse());
      throw e;
    }
  };
}

/** `text` parsed as JSON, or null when it is not JSON (a stream's event data is not trusted to be). */
function jsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
