import { CandorError, ErrorCode } from "../../errors.js";
import { checkpointAt, forkCheckpoint, updateFromAssignments } from "../../replay.js";
import { Exit, type CliIo } from "../io.js";
import { parseFlags, ReplayFlags } from "../options.js";
import { executeThread, presentOutcome } from "../present.js";
import { whileHolding } from "../thread-lease.js";
import { describeReasoner, headerLines } from "./run.js";
import { openThread, type OpenThread } from "./thread.js";

/** `candor replay <thread> --from <checkpoint>`: runs the thread again from that checkpoint, on a new branch. */
export async function replayCommand(rawId: string, rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(ReplayFlags, rawFlags);
  if (flags.set.length > 0) {
    throw new CandorError(`replay runs a checkpoint unchanged; to change state first, use: ${io.invokedAs} fork ${rawId} --from ${flags.from} --set key=value.`, ErrorCode.INVALID_REQUEST);
  }
  return onBranch(rawId, flags, io, "replay", async (thread) => {
    await checkpointAt(thread.session.graph, thread.threadId, flags.from);
    return { checkpointId: flags.from, what: ["replay", `from checkpoint ${flags.from}`] };
  });
}

/**
 * `candor fork <thread> --from <checkpoint> --set key=value ...`: writes the changed state on top of the
 * checkpoint as a new branch (validated by the graph's state schema) and runs the branch.
 */
export async function forkCommand(rawId: string, rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(ReplayFlags, rawFlags);
  if (flags.set.length === 0) {
    throw new CandorError(`fork needs at least one --set key=value (e.g. --set settings.maxRevisions=1). To run the checkpoint unchanged, use: ${io.invokedAs} replay ${rawId} --from ${flags.from}.`, ErrorCode.INVALID_REQUEST);
  }
  // Malformed assignments fail before the database is opened.
  updateFromAssignments({}, flags.set);
  return onBranch(rawId, flags, io, "fork", async ({ session, threadId }) => {
    const base = await checkpointAt(session.graph, threadId, flags.from);
    const update = updateFromAssignments(base.values as Record<string, unknown>, flags.set);
    const config = await forkCheckpoint(session.graph, threadId, flags.from, update, flags.asNode);
    const forked = String(config.configurable?.checkpoint_id);
    return { checkpointId: forked, what: ["fork", `checkpoint ${flags.from} → new checkpoint ${forked} with ${flags.set.join(", ")}`] };
  });
}

/** Opens and leases the thread, lets `prepare` pick the checkpoint to start from, then streams from it. */
async function onBranch(
  rawId: string,
  flags: ReplayFlags,
  io: CliIo,
  verb: string,
  prepare: (thread: OpenThread) => Promise<{ checkpointId: string; what: [string, string] }>,
): Promise<Exit> {
  const thread = await openThread(rawId, flags.db, io, "execute");
  const { threadId, session, dbPath } = thread;
  try {
    return await whileHolding(session, threadId, io, () => Exit.BUSY, async (signal) => {
      const { checkpointId, what } = await prepare(thread);
      io.err(
        headerLines(`Candor · reasoner: ${describeReasoner(thread.reasoner)} · ${verb} of thread ${threadId}`, session, [
          ["request", thread.record?.request ?? ""],
          what,
          ["faults", thread.record?.faults.join(", ") ?? ""],
        ]).join("\n"),
      );
      const outcome = await executeThread(session, threadId, { kind: "continue" }, { ...io, signal }, checkpointId);
      return presentOutcome(outcome, threadId, { io, json: flags.json, dbPath, reasoner: thread.reasoner.kind });
    });
  } finally {
    session.close();
  }
}
