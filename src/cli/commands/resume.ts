import { CandorError, ErrorCode } from "../../errors.js";
import type { CliIo, Exit } from "../io.js";
import { parseFlags, ResumeFlags } from "../options.js";
import { dbArgFor, executeThread, exitForStatus, presentOutcome } from "../present.js";
import { readOutcome, type ThreadInput } from "../session.js";
import { shellArg } from "../render.js";
import { describeReasoner, headerLines } from "./run.js";
import { openThread } from "./thread.js";

const DECISIONS = ["approve", "reject", "skip", "retry", "abort"] as const;

const asFlags = (decisions: readonly string[]) => decisions.map((d) => `--${d}`).join(", ");

/**
 * `candor resume <thread> [--approve|--reject|--skip|--retry|--abort] [--comment ...]`: answers a waiting
 * thread, or, with no decision, continues one that stopped part-way (a crash, Ctrl-C). A decision the thread
 * does not wait for is refused with the ones that fit; nothing is sent to the graph.
 */
export async function resumeCommand(rawId: string, rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(ResumeFlags, rawFlags);
  const given = DECISIONS.filter((d) => flags[d]);
  if (given.length > 1) {
    throw new CandorError(`Give one decision, not ${given.length} (${asFlags(given)}).`, ErrorCode.INVALID_REQUEST);
  }
  const decision = given[0] ?? null;
  if (flags.comment !== undefined && !decision) {
    throw new CandorError(`--comment goes with a decision (e.g. --reject --comment "too expensive").`, ErrorCode.INVALID_REQUEST);
  }
  const thread = await openThread(rawId, flags.db, io, "execute");
  const { threadId, session, dbPath } = thread;
  const prefix = io.invokedAs;
  const dbArg = dbArgFor(dbPath);
  const db = dbArg ? ` --db ${shellArg(dbArg)}` : "";
  try {
    const before = await readOutcome(session.graph, threadId);
    let input: ThreadInput;
    if (before.finished) {
      const see = `See its report with: ${prefix} report ${threadId}${db}`;
      if (decision) {
        throw new CandorError(`Thread ${threadId} has already finished (status ${before.status}); it is not waiting for a decision. ${see}.`, ErrorCode.INVALID_DECISION);
      }
      io.err(`Thread ${threadId} has already finished with status ${before.status}; there is nothing to continue. ${see}.`);
      return exitForStatus(before.status);
    }
    if (before.waitingFor) {
      const fits = before.waitingFor.decisions;
      if (!decision || !fits.includes(decision)) {
        const what = decision ? `--${decision} does not answer what thread ${threadId} waits for` : `Thread ${threadId} is waiting for a decision`;
        throw new CandorError(
          `${what}: ${before.waitingFor.question} Give one of: ${asFlags(fits)} (e.g. ${prefix} resume ${threadId} --${fits[0]}${db}).`,
          ErrorCode.INVALID_DECISION,
        );
      }
      input = { kind: "decision", decision, comment: flags.comment ?? null };
    } else {
      if (decision) {
        throw new CandorError(
          `Thread ${threadId} is not waiting for a decision: it stopped part-way (status ${before.status}, next: ${before.next.join(", ")}). Continue it without a decision: ${prefix} resume ${threadId}${db}.`,
          ErrorCode.INVALID_DECISION,
        );
      }
      input = { kind: "continue" };
    }
    const what: [string, string] =
      input.kind === "decision"
        ? ["decision", `--${input.decision}${input.comment ? ` (comment: ${input.comment})` : ""}`]
        : ["continue", `from ${before.next.join(", ")}, where the run stopped part-way`];
    io.err(
      headerLines(`Candor · reasoner: ${describeReasoner(thread.reasoner)} · resuming thread ${threadId}`, session, [
        ["request", thread.record?.request ?? before.values.request?.userIntent ?? ""],
        what,
        ["faults", thread.record?.faults.join(", ") ?? ""],
      ]).join("\n"),
    );
    const outcome = await executeThread(session, threadId, input, io);
    return presentOutcome(outcome, threadId, { io, json: flags.json, dbPath, reasoner: thread.reasoner.kind });
  } finally {
    session.close();
  }
}
