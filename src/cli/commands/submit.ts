import { CandorError, ErrorCode } from "../../errors.js";
import { describeDatabase, isPostgresUrl, openDatabase } from "../../memory/persistence.js";
import { storageBoundsOf } from "../../env.js";
import { closing } from "../closing.js";
import { Exit, type CliIo } from "../io.js";
import {
  checkReactive,
  chooseReasoner,
  newThreadId,
  parseFlags,
  resolveDbPath,
  resolveMcpPath,
  resolveDocsPath,
  RunFlags,
  settingsFromFlags,
  newThreadRecord,
} from "../options.js";
import { dbFlagFor } from "../present.js";
import { shellArg } from "../render.js";
import { buildToolkits, saveThreadRecord, threadExists } from "../session.js";
import { requestOf } from "../start-run.js";
import { loadMcpConfig } from "../../tools/mcp/config.js";

/**
 * `candor submit "<request>"`: records a new thread as `run` would and puts it on the run queue in PostgreSQL,
 * prints its id and returns; a `candor worker` runs it. Everything is checked first (flags, faults, model key),
 * so a bad submission never reaches the queue.
 */
export async function submitCommand(requestText: string, rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(RunFlags, rawFlags);
  const request = requestOf(requestText, flags.user, io, "submit");
  const reasoner = chooseReasoner(flags, io.env);
  checkReactive(flags, reasoner, io.env);
  buildToolkits(flags.fault);
  // The worker starts the servers; a configuration it could not read is refused here, before anything is queued.
  const mcp = resolveMcpPath(flags.mcp, io.env);
  if (mcp) loadMcpConfig(mcp);
  const docs = resolveDocsPath(flags.docs, io.env);
  const location = resolveDbPath(flags.db, io.env);
  if (!isPostgresUrl(location)) {
    throw new CandorError(
      `submit puts the thread on a run queue in PostgreSQL, and ${describeDatabase(location)} is a SQLite file. Pass --db postgres://… (or set CANDOR_DB) for a queue that workers take from, or run it here with: ${io.invokedAs} run ${shellArg(requestText)}.`,
      ErrorCode.INVALID_REQUEST,
    );
  }
  const settings = settingsFromFlags(flags);
  const persistence = await openDatabase(location, { bounds: storageBoundsOf(io.env) });
  return closing(
    persistence,
    async () => {
      if (persistence.backend !== "postgres") throw new Error("a postgres:// URL opened something else");
      const threadId = flags.thread ?? newThreadId();
      if ((await threadExists(persistence, threadId)) || (await persistence.queue.get(threadId))) {
        throw new CandorError(
          `Thread "${threadId}" already exists in ${persistence.dbPath}. Leave out --thread to submit a new one.`,
          ErrorCode.INVALID_REQUEST,
        );
      }
      const record = newThreadRecord(threadId, request.userIntent, flags, reasoner, settings, { mcp, docs });
      await saveThreadRecord(persistence, record);
      await persistence.queue.enqueue(threadId, { kind: "start" });
      if (flags.json) io.out(JSON.stringify({ threadId, state: "queued", db: persistence.dbPath }));
      else io.out(threadId);
      io.err(
        `Queued thread ${threadId}: a worker runs it (${io.invokedAs} worker${dbFlagFor(location)}). Follow it with: ${io.invokedAs} threads${dbFlagFor(location)}`,
      );
      return Exit.COMPLETED;
    },
    { where: persistence.dbPath },
  );
}
