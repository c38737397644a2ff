import { databaseMayExist } from "../../memory/persistence.js";
import { CandorError, ErrorCode } from "../../errors.js";
import { closing } from "../closing.js";
import type { Exit, CliIo } from "../io.js";
import { parseFlags, resolveDbPath, ReviewFlags } from "../options.js";
import { loadThreadRecord, openExisting } from "../session.js";
import { startRun } from "../start-run.js";

/**
 * The request a review runs: words the debugging tools know, so the rules planner plans review_runs (or
 * get_run_context for a named thread) → get_run_transcript → write_debug_report, and a model reads what is wanted.
 */
export function reviewRequest(threadId?: string): string {
  return threadId
    ? `Debug report on thread ${threadId}: its context and transcript`
    : "Review recent runs for anomalies, with the transcript, in a debug report";
}

/**
 * `candor review [--thread T]`: seed 004's `/dev-review`. Runs a review as a thread of its own with the debugging
 * tools alone (the `reviewer` worker), on the database the reviewed runs used, and writes a debug report under
 * .candor/reports. It reads the database and writes only the report (and its own thread's checkpoints).
 */
export async function reviewCommand(rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(ReviewFlags, rawFlags);
  const dbPath = resolveDbPath(flags.db, io.env);
  if (flags.thread) {
    // An unknown thread is a usage error now, not a failed step later.
    const persistence = await openExisting(dbPath, flags.thread);
    const threadId = flags.thread;
    await closing(persistence, () => loadThreadRecord(persistence, threadId), { where: persistence.dbPath });
  } else if (!databaseMayExist(dbPath)) {
    throw new CandorError(
      `Nothing to review: there is no Candor database at ${dbPath}. Review the database your runs used with --db, or run something first: ${io.invokedAs} run "<request>".`,
      ErrorCode.INVALID_REQUEST,
    );
  }
  const runFlags = {
    ...(flags.db ? { db: flags.db } : {}),
    json: flags.json,
    debug: flags.debug,
    user: flags.user,
    input: flags.input,
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.reasoner ? { reasoner: flags.reasoner } : {}),
  };
  return (await startRun(reviewRequest(flags.thread), runFlags, io, false, { debugTools: "alone" })).exit;
}
