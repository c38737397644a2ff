import { randomUUID } from "node:crypto";
import { z } from "zod";
import { interruptsOf } from "../interrupts.js";
import { RunSettings } from "../domain/request.js";
import type { RunState } from "../memory/postgres-queue.js";
import { parseDecision, type DecisionContext } from "../replanning/human-decision.js";
import type { RunRoute, RunRouter } from "./server.js";
import { formatSse, jsonResponse } from "./sse.js";
import type { StateReader } from "./state.js";

/** What a worker is sent for a person's answer: Candor's decision, as `candor resume` queues it. */
interface QueuedDecision {
  kind: "decision";
  decision: string;
  comment: string | null;
  adjustments?: unknown[];
  extra?: Record<string, unknown>;
  interruptIds: string[];
}

/** What the API starts a thread with: the request, who asks, and the run's settings. */
export interface QueuedStart {
  request: string;
  userId: string;
  tokenBudget?: number;
  settings: RunSettings;
}

/** The run queue in PostgreSQL as the API uses it (implemented by `candor serve` over Candor's own queue). */
export interface RunQueuePort {
  /** Where the thread stands on the queue; null when it was never queued. */
  state(threadId: string): Promise<{ state: RunState; note: string | null } | null>;
  /** Records the thread as `candor submit` does (so any worker can start it) and queues its start. */
  start(threadId: string, start: QueuedStart): Promise<void>;
  /** Queues a person's decision: a worker resumes the thread with it. */
  decide(threadId: string, decision: QueuedDecision): Promise<void>;
  /** What the thread waits for (and the ids of the interrupts that ask it), or null when it is not waiting. */
  waiting(threadId: string): Promise<{ request: DecisionContext; interruptIds: string[] } | null>;
}

const Json = z.record(z.string(), z.unknown());

/** The part of the Agent Protocol's RunCreate a queued run reads; the rest is not used by Candor's worker. */
const RunBody = z.looseObject({
  assistant_id: z.string(),
  input: z.unknown().optional(),
  command: z.looseObject({ resume: z.unknown().optional() }).nullish(),
  context: Json.nullish(),
});

/** Candor's own input, or a chat's (`messages`): what a worker is started with. */
const StartInput = z.looseObject({
  request: z
    .looseObject({
      userIntent: z.string().trim().min(1),
      userContext: z.looseObject({ userId: z.string().min(1).optional() }).optional(),
      constraints: z.looseObject({ tokenBudget: z.number().int().positive().optional() }).optional(),
    })
    .optional(),
  messages: z.array(z.unknown()).optional(),
  settings: Json.optional(),
});

/** States after which a queued run is over: the worker answered, finished, or could not run it. */
const SETTLED: ReadonlySet<RunState> = new Set(["waiting", "done", "failed"]);
/** How often a queued run's follower reads the thread while a worker runs it. */
const FOLLOW_MS = 250;

function problem(status: number, error: string): Response {
  return Response.json({ error }, { status });
}

/** The text of the last human message of a chat's input (`{type: "human"}` or `{role: "user"}`), or null. */
export function lastHumanText(messages: readonly unknown[]): string | null {
  for (const m of [...messages].reverse()) {
    const parsed = z
      .looseObject({ type: z.string().optional(), role: z.string().optional(), content: z.unknown() })
      .safeParse(m);
    if (!parsed.success) continue;
    const { type, role, content } = parsed.data;
    if (type !== "human" && role !== "user" && role !== "human") continue;
    if (typeof content === "string") return content.trim() || null;
    if (Array.isArray(content)) {
      const text = content
        .flatMap((c) => {
          const part = z.looseObject({ type: z.literal("text"), text: z.string() }).safeParse(c);
          return part.success ? [part.data.text] : [];
        })
        .join("\n")
        .trim();
      return text || null;
    }
  }
  return null;
}

/** A run's input as the queue's start, or the reason it cannot be one. */
export function startFrom(input: unknown, context: Record<string, unknown> | null | undefined) {
  const parsed = StartInput.safeParse(input);
  if (!parsed.success)
    return { ok: false as const, reason: "the input must be Candor's {request: {userIntent}} or a chat's {messages}" };
  const { request, messages, settings } = parsed.data;
  const text = request?.userIntent ?? lastHumanText(messages ?? []);
  if (!text) return { ok: false as const, reason: "the input holds no request: no userIntent and no human message" };
  // The assistant's context (LangGraph's per-run configuration) first; the input's own settings win over it.
  const runSettings = RunSettings.safeParse({ ...pickSettings(context), ...settings });
  if (!runSettings.success)
    return { ok: false as const, reason: `the settings are invalid: ${runSettings.error.issues[0]?.message}` };
  const start: QueuedStart = {
    request: text,
    userId: request?.userContext?.userId ?? "default",
    settings: runSettings.data,
    ...(request?.constraints?.tokenBudget !== undefined ? { tokenBudget: request.constraints.tokenBudget } : {}),
  };
  return { ok: true as const, value: start };
}

/** The keys of a context that are run settings (a context may hold others, for other graphs). */
function pickSettings(context: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const keys = new Set(Object.keys(RunSettings.shape));
  return Object.fromEntries(Object.entries(context ?? {}).filter(([k]) => keys.has(k)));
}

/**
 * Runs through the API on PostgreSQL: each goes to the run queue that `candor worker`s take (a start, or a
 * person's answer as the decision `candor resume` would queue), and its stream follows the thread's checkpoints
 * while a worker runs it: a `values` event per new checkpoint, until the worker settles it.
 */
export function queuedRuns(port: RunQueuePort, graph: StateReader): RunRouter {
  return async (request: Request, route: RunRoute): Promise<Response | null> => {
    const body = RunBody.safeParse(await request.json().catch(() => null));
    if (!body.success) return problem(422, `The run is malformed: ${body.error.issues[0]?.message ?? "not JSON"}.`);
    const queued = await port.state(route.threadId);
    if (queued && !SETTLED.has(queued.state))
      return problem(
        409,
        `Thread ${route.threadId} already has a run ${queued.state === "queued" ? "waiting for a worker" : "that a worker is running"}; send the next one once it is over.`,
      );
    const sent = await send(port, graph, route.threadId, body.data);
    if (!sent.ok) return problem(sent.status, sent.reason);
    const runId = randomUUID();
    if (route.kind === "create") return Response.json(runObject(runId, route.threadId, body.data.assistant_id));
    const events = follow(port, graph, route.threadId, runId, request.signal);
    if (route.kind === "wait") {
      let last: unknown = {};
      for await (const e of events) {
        if (e.event === "error") return jsonResponse(e.data, 500);
        if (e.event === "values") last = e.data;
      }
      return jsonResponse(last);
    }
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await events.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(formatSse(next.value.event, next.value.data)));
      },
      async cancel() {
        await events.return(undefined);
      },
    });
    return new Response(stream, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "content-location": `/threads/${route.threadId}/runs/${runId}`,
      },
    });
  };
}

/** Queues the run: a person's answer when it carries `command.resume`, else a new thread's start. */
async function send(
  port: RunQueuePort,
  graph: StateReader,
  threadId: string,
  body: z.infer<typeof RunBody>,
): Promise<{ ok: true } | { ok: false; status: number; reason: string }> {
  const waiting = await port.waiting(threadId);
  if (body.command?.resume !== undefined) {
    if (!waiting) return { ok: false, status: 409, reason: `Thread ${threadId} is not waiting for a person's answer.` };
    const parsed = parseDecision(body.command.resume, waiting.request);
    if (!parsed.ok) return { ok: false, status: 422, reason: parsed.error };
    const { decision, comment, adjustments, params, guidance } = parsed.decision;
    const extra = { ...(params ? { params } : {}), ...(guidance ? { guidance } : {}) };
    await port.decide(threadId, {
      kind: "decision",
      decision,
      comment,
      ...(adjustments ? { adjustments } : {}),
      ...(Object.keys(extra).length > 0 ? { extra } : {}),
      interruptIds: waiting.interruptIds,
    });
    return { ok: true };
  }
  const head = await graph.getState({ configurable: { thread_id: threadId } });
  if ((await port.state(threadId)) !== null || head.createdAt !== undefined)
    return {
      ok: false,
      status: 409,
      reason: `Thread ${threadId} has run already: a new request needs a new thread (threads.create), and an answer goes in command.resume.`,
    };
  const start = startFrom(body.input, body.context);
  if (!start.ok) return { ok: false, status: 422, reason: `The run cannot start: ${start.reason}.` };
  await port.start(threadId, start.value);
  return { ok: true };
}

/** The Agent Protocol's Run for a run just queued. */
function runObject(runId: string, threadId: string, assistantId: string): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    run_id: runId,
    thread_id: threadId,
    assistant_id: assistantId,
    status: "pending",
    metadata: {},
    multitask_strategy: "reject",
    created_at: now,
    updated_at: now,
  };
}

/**
 * What a client streaming a queued run sees: `metadata`, then the thread's values at each new checkpoint a worker
 * writes, the last with `__interrupt__` when it waits for a person, or `error` when no worker could run it. Ends
 * when the worker settles the run, or when the client goes away (the worker runs on).
 */
async function* follow(
  port: RunQueuePort,
  graph: StateReader,
  threadId: string,
  runId: string,
  signal: AbortSignal,
): AsyncGenerator<{ event: string; data: unknown }> {
  yield { event: "metadata", data: { run_id: runId, attempt: 1 } };
  const config = { configurable: { thread_id: threadId } };
  let seen: unknown = (await graph.getState(config)).config?.configurable?.checkpoint_id;
  while (!signal.aborted) {
    const queued = await port.state(threadId);
    const snapshot = await graph.getState(config, { subgraphs: true });
    const settled = queued !== null && SETTLED.has(queued.state);
    const at: unknown = snapshot.config?.configurable?.checkpoint_id;
    if (at !== seen || settled) {
      seen = at;
      const pending = settled ? interruptsOf(snapshot) : [];
      yield {
        event: "values",
        data: pending.length > 0 ? { ...snapshot.values, __interrupt__: pending } : snapshot.values,
      };
    }
    if (settled) {
      if (queued.state === "failed")
        yield { event: "error", data: { error: "RunFailed", message: queued.note ?? "the worker could not run it" } };
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, FOLLOW_MS);
      signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}
