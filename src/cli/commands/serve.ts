import { createRequire } from "node:module";
import { z } from "zod";
import { CandorError, ErrorCode } from "../../errors.js";
import { describeDatabase, isPostgresUrl } from "../../memory/persistence.js";
import { checkToken } from "../../serve/auth.js";
import { listen } from "../../serve/http.js";
import { queuedRuns, type RunQueuePort } from "../../serve/queued-runs.js";
import { serveHandler } from "../../serve/server.js";
import type { ForeignThread } from "../../serve/threads.js";
import { closing } from "../closing.js";
import { Exit, type CliIo } from "../io.js";
import {
  chooseReasoner,
  CommonFlags,
  newThreadRecord,
  parseFlags,
  resolveDbPath,
  THREADS_NAMESPACE,
  ThreadRecord,
  type ReasonerChoice,
} from "../options.js";
import { openSession, readOutcome, saveThreadRecord, type Session } from "../session.js";

const VERSION = z.object({ version: z.string() }).parse(createRequire(import.meta.url)("candor/package.json")).version;

/** LangGraph's own default port, where the SDK, Studio and the chat apps look first. */
export const DEFAULT_PORT = 2024;
const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

const portMessage = "--port must be a whole number from 0 to 65535 (0: any free port), e.g. --port 2024";

/** `candor serve`'s flags, parsed at the boundary. */
export const ServeFlags = CommonFlags.extend({
  port: z
    .string({ error: portMessage })
    .trim()
    .regex(/^\d{1,5}$/, portMessage)
    .transform(Number)
    .pipe(z.number().int().min(0, portMessage).max(65_535, portMessage))
    .default(DEFAULT_PORT),
  host: z.string().trim().min(1, "--host needs an address, e.g. --host 127.0.0.1").default("127.0.0.1"),
  authToken: z.string().optional(),
  model: z.string().trim().min(1).optional(),
  reasoner: z.enum(["rules", "llm"], { error: "--reasoner must be rules or llm" }).optional(),
});
export type ServeFlags = z.infer<typeof ServeFlags>;

/**
 * The token every request must carry: --auth-token, else CANDOR_SERVE_TOKEN; none on the loopback address. A server
 * reachable from other machines without a token would run anyone's requests, so that is refused.
 */
function tokenFor(flags: ServeFlags, io: CliIo): string | null {
  const given = flags.authToken ?? io.env.CANDOR_SERVE_TOKEN;
  if (given !== undefined) return checkToken(given);
  if (LOOPBACK.has(flags.host)) return null;
  throw new CandorError(
    `--host ${flags.host} makes the server reachable from other machines, and no token was given: anyone who reaches it could run requests. Pass --auth-token (or set CANDOR_SERVE_TOKEN), or leave out --host to serve this machine only (127.0.0.1).`,
    ErrorCode.INVALID_REQUEST,
  );
}

/** The threads the CLI and workers started (their records), for `threads.search`. */
async function cliThreads(session: Session): Promise<ForeignThread[]> {
  const items = await session.persistence.store.search(THREADS_NAMESPACE, { limit: 100_000 });
  return items.flatMap((item) => {
    const parsed = ThreadRecord.safeParse(item.value);
    if (!parsed.success) return [];
    const r = parsed.data;
    return [
      {
        threadId: r.threadId,
        createdAt: r.createdAt,
        metadata: { source: "cli", request: r.request, user_id: r.userId },
      },
    ];
  });
}

/**
 * `candor serve`: the LangGraph Agent Protocol over Candor's database, for @langchain/langgraph-sdk, useStream and
 * the chat apps. On SQLite runs are made in this process; on PostgreSQL they go to the run queue `candor worker`s
 * take. Serves until Ctrl-C or SIGTERM.
 */
export async function serveCommand(rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(ServeFlags, rawFlags);
  const token = tokenFor(flags, io);
  const reasoner = chooseReasoner(flags, io.env);
  const location = resolveDbPath(flags.db, io.env);
  const session = await openSession({
    dbPath: location,
    reasoner,
    faults: [],
    env: io.env,
    onNote: (note) => io.err(note),
  });
  return closing(
    session,
    async () => {
      const handler = serveHandler({
        graph: session.graph,
        checkpointer: session.persistence.checkpointer,
        store: session.persistence.store,
        leases: session.persistence.leases,
        onNotice: (message) => io.err(`candor serve: ${message}`),
        foreign: () => cliThreads(session),
        token,
        version: VERSION,
        runs:
          session.persistence.backend === "postgres" ? queuedRuns(workerQueue(session, reasoner), session.graph) : null,
      });
      const server = await listen(handler, flags.host, flags.port);
      const where = isPostgresUrl(location) ? "PostgreSQL" : "SQLite";
      if (flags.json) io.out(JSON.stringify({ url: server.url, db: describeDatabase(location), auth: token !== null }));
      io.err(
        `candor serve: the LangGraph API on ${server.url} over ${where} ${describeDatabase(location)}${token ? " (every request needs the token)" : ""}. Ctrl-C stops it.`,
      );
      await untilStopped(io.signal);
      io.err("candor serve: stopping");
      await server.close();
      return Exit.COMPLETED;
    },
    { where: session.persistence.dbPath },
  );
}

/**
 * The workers' run queue for the API: a thread started through it is recorded as `candor submit` records one (so
 * any worker can run it, and `candor threads` lists it), and an answer is queued as `candor resume` queues one.
 */
function workerQueue(session: Session, reasoner: ReasonerChoice): RunQueuePort {
  const { persistence } = session;
  if (persistence.backend !== "postgres") throw new Error("the run queue is PostgreSQL's");
  const { queue } = persistence;
  return {
    state: async (threadId) => {
      const row = await queue.get(threadId);
      return row && { state: row.state, note: row.note };
    },
    start: async (threadId, start) => {
      const flags = { user: start.userId, fault: [], tokenBudget: start.tokenBudget };
      await saveThreadRecord(persistence, newThreadRecord(threadId, start.request, flags, reasoner, start.settings));
      await queue.enqueue(threadId, { kind: "start" });
    },
    decide: (threadId, decision) => queue.enqueue(threadId, decision),
    waiting: async (threadId) => {
      const outcome = await readOutcome(session.graph, threadId);
      return outcome.waitingFor && { request: outcome.waitingFor, interruptIds: outcome.interruptIds };
    },
  };
}

/** Resolves on Ctrl-C (the CLI's signal) or SIGTERM. */
function untilStopped(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off("SIGTERM", done);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    process.once("SIGTERM", done);
    if (signal?.aborted) done();
    else signal?.addEventListener("abort", done, { once: true });
  });
}
