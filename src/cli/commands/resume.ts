import type { DecisionName } from "../../domain/approval.js";
import { CandorError, ErrorCode } from "../../errors.js";
import { preview } from "../../json-limits.js";
import { Exit, type CliIo } from "../io.js";
import { parseAdjustFlag, parseFlags, ResumeFlags } from "../options.js";
import { dbArgFor, dbFlagFor, executeThread, exitForStatus, presentOutcome } from "../present.js";
import type { ThreadRecord } from "../options.js";
import { readOutcome, startInput, type ThreadInput, type WaitingRequest } from "../session.js";
import { inLeasedThread } from "../thread-lease.js";
import { updateFromAssignments } from "../../replay.js";
import { resumeCommands, shellArg } from "../render.js";
import { describeReasoner, headerLines } from "../start-run.js";
import { decideInteractively, lastRefusal } from "../interactive.js";
import { openThread, type OpenThread } from "../open-thread.js";

/** A flag per decision, in the order the CLI lists them; a decision without its flag fails the typecheck below. */
const DECISIONS = [
  "approve",
  "reject",
  "adjust",
  "skip",
  "retry",
  "abort",
  "deny",
  "replan",
] as const satisfies readonly DecisionName[];
type DecisionFlag = (typeof DECISIONS)[number];
const everyDecision: Exclude<DecisionName, DecisionFlag> extends never ? true : never = true;
void everyDecision;

const asFlags = (decisions: readonly string[]) =>
  decisions
    .map((d) => (d === "adjust" ? "--adjust <json>" : d === "replan" ? `--replan "<guidance>"` : `--${d}`))
    .join(", ");

const isGiven = (flags: ResumeFlags, d: DecisionFlag) =>
  d === "adjust" ? flags.adjust !== undefined : d === "replan" ? flags.replan !== undefined : flags[d];

/**
 * The fields a decision sends beyond `decision` and `comment`, checked before anything is opened: `--set
 * key=value` (repeatable) gives a retry new parameters for the failed step; `--replan` carries the guidance.
 * Whether the parameters suit the step's tool is checked by the graph, which keeps the thread waiting if not.
 */
export function decisionExtras(
  flags: ResumeFlags,
  decision: DecisionFlag | null,
): { extra?: Record<string, unknown>; comment: string | null } {
  const comment = flags.comment ?? null;
  if (flags.set.length > 0) {
    if (decision !== "retry") {
      throw new CandorError(`--set goes with --retry (e.g. --retry --set maxPrice=300).`, ErrorCode.INVALID_REQUEST);
    }
    const bad = flags.set.find((a) => !/^\s*[A-Za-z_][\w.]*\s*=/.test(a));
    if (bad !== undefined) {
      throw new CandorError(
        `--set "${preview(bad)}" is not key=value: name one of the step's parameters and its new value, e.g. --retry --set maxPrice=300.`,
        ErrorCode.INVALID_REQUEST,
      );
    }
    return { extra: { params: updateFromAssignments({}, flags.set) }, comment };
  }
  if (decision === "replan") return { extra: { guidance: flags.replan }, comment };
  return { comment };
}

/**
 * `candor resume <thread> [--approve|--reject|--adjust <json|@file>|--skip|--retry [--set k=v]|--replan "<guidance>"|--abort|--deny]
 * [--comment ...]`: answers a waiting
 * thread, or, with no decision, continues one that stopped part-way (a crash, Ctrl-C). A decision the thread
 * does not wait for is refused with the ones that fit; nothing is sent to the graph.
 */
export async function resumeCommand(rawId: string, rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(ResumeFlags, rawFlags);
  const given = DECISIONS.filter((d) => isGiven(flags, d));
  if (given.length > 1) {
    throw new CandorError(`Give one decision, not ${given.length} (${asFlags(given)}).`, ErrorCode.INVALID_REQUEST);
  }
  const decision = given[0] ?? null;
  // Parsed before the database is opened, so a typo fails fast and touches nothing.
  const adjustments = flags.adjust === undefined ? undefined : parseAdjustFlag(flags.adjust);
  const extras = decisionExtras(flags, decision);
  if (flags.comment !== undefined && !decision) {
    throw new CandorError(
      `--comment goes with a decision (e.g. --reject --comment "too expensive").`,
      ErrorCode.INVALID_REQUEST,
    );
  }
  const thread = await openThread(rawId, flags.db, io, "execute");
  const { threadId, session, dbPath } = thread;
  const prefix = io.invokedAs;
  const dbArg = dbArgFor(dbPath);
  const db = dbArg ? ` --db ${shellArg(dbArg)}` : "";
  // Taken before the thread is read: a second process must not decide on a state the first is replacing.
  return inLeasedThread(session, threadId, io, async (signal) => {
    if (!thread.started && thread.record) {
      return await startAgain(
        thread,
        thread.record,
        decision,
        { ...io, signal },
        { json: flags.json, asking: flags.input && io.ask !== undefined },
      );
    }
    const before = await readOutcome(session.graph, threadId);
    let input: ThreadInput;
    if (before.finished) {
      const see = `See its report with: ${prefix} report ${threadId}${db}`;
      if (decision) {
        throw new CandorError(
          `Thread ${threadId} has already finished (status ${before.status}); it is not waiting for a decision. ${see}.`,
          ErrorCode.INVALID_DECISION,
        );
      }
      io.err(
        `Thread ${threadId} has already finished with status ${before.status}; there is nothing to continue. ${see}.`,
      );
      // With --json, stdout still carries the one JSON object a script reads: the finished outcome, as run gives it.
      if (flags.json)
        return presentOutcome(before, threadId, {
          io: { ...io, err: () => undefined },
          json: true,
          dbPath,
          reasoner: thread.reasoner.kind,
        });
      return exitForStatus(before.status);
    }
    // A model's answer is printed as it is written, as `run` prints it (not with --json: stdout is one document).
    const stream = { streamAnswer: !flags.json };
    // At a terminal, a waiting thread resumed without a decision asks for one inline (unless --no-input).
    const asking = flags.input && io.ask !== undefined;
    if (before.waitingFor && !decision && asking) {
      io.err(
        headerLines(
          `Candor · reasoner: ${describeReasoner(thread.reasoner)} · thread ${threadId} is waiting`,
          session,
          [["request", thread.record?.request ?? before.values.request?.userIntent ?? ""]],
        ).join("\n"),
      );
      const outcome = await decideInteractively(session, threadId, before, { ...io, signal }, stream);
      return presentOutcome(outcome, threadId, { io, json: flags.json, dbPath, reasoner: thread.reasoner.kind });
    }
    if (before.waitingFor && !decision) {
      // Away from a terminal this is what `run` does for the same waiting thread: say what it waits for, exit 3.
      io.err(
        `Thread ${threadId} is waiting for a decision; nothing was sent. Give one with one of the commands below.`,
      );
      return presentOutcome(before, threadId, { io, json: flags.json, dbPath, reasoner: thread.reasoner.kind });
    }
    if (before.waitingFor && decision) {
      const fits = before.waitingFor.decisions;
      if (!fits.includes(decision)) {
        throw new CandorError(
          `--${decision} does not answer what thread ${threadId} waits for: ${before.waitingFor.question} Give one of: ${asFlags(fits)} (e.g. ${prefix} resume ${threadId} --${fits[0]}${db}).`,
          ErrorCode.INVALID_DECISION,
        );
      }
      refusePlainRetryOfInfeasible(before.waitingFor, decision, extras, { threadId, prefix, dbArg });
      input = {
        kind: "decision",
        decision,
        comment: extras.comment,
        ...(adjustments ? { adjustments } : {}),
        ...(extras.extra ? { extra: extras.extra } : {}),
        interruptIds: before.interruptIds,
      };
    } else {
      if (decision) {
        throw new CandorError(
          `Thread ${threadId} is not waiting for a decision: it stopped part-way (status ${before.status}, next: ${before.next.join(", ")}). Continue it without a decision: ${prefix} resume ${threadId}${db}.`,
          ErrorCode.INVALID_DECISION,
        );
      }
      input = { kind: "continue" };
    }
    // A submitted thread goes back on the run queue with the decision: a worker continues it.
    const queued = session.persistence.backend === "postgres" ? session.persistence.queue : null;
    if (queued && (await queued.get(threadId))) {
      await queued.enqueue(threadId, input);
      if (flags.json) io.out(JSON.stringify({ threadId, state: "queued", db: session.persistence.dbPath }));
      io.err(
        `Thread ${threadId} is back on the run queue${input.kind === "decision" ? ` with --${input.decision}` : ""}: a worker continues it (${prefix} worker${db}). Follow it with: ${prefix} threads${db}`,
      );
      return Exit.COMPLETED;
    }
    const what: [string, string] =
      input.kind === "decision"
        ? [
            "decision",
            `--${input.decision}${input.adjustments ? ` ${JSON.stringify(input.adjustments)}` : ""}${input.extra ? ` ${JSON.stringify(input.extra)}` : ""}${input.comment ? ` (comment: ${input.comment})` : ""}`,
          ]
        : ["continue", `from ${before.next.join(", ")}, where the run stopped part-way`];
    io.err(
      headerLines(`Candor · reasoner: ${describeReasoner(thread.reasoner)} · resuming thread ${threadId}`, session, [
        ["request", thread.record?.request ?? before.values.request?.userIntent ?? ""],
        what,
        ["faults", thread.record?.faults.join(", ") ?? ""],
      ]).join("\n"),
    );
    const outcome = await executeThread(session, threadId, input, { ...io, signal }, undefined, stream);
    if (asking) {
      // Asks about whatever the thread waits for next, and says itself when the answer given here was refused.
      const final = await decideInteractively(session, threadId, outcome, { ...io, signal }, stream);
      return presentOutcome(final, threadId, { io, json: flags.json, dbPath, reasoner: thread.reasoner.kind });
    }
    if (input.kind === "decision" && outcome !== "interrupted" && outcome.waitingFor) {
      // A refused answer (e.g. an adjustment that makes a cycle, a parameter the tool refuses) leaves the
      // thread waiting; say why.
      const refused = await lastRefusal(session.graph, threadId);
      if (refused) io.err(`The decision was not applied: ${refused}`);
    }
    return presentOutcome(outcome, threadId, { io, json: flags.json, dbPath, reasoner: thread.reasoner.kind });
  });
}

/**
 * A thread stopped before its first checkpoint (Ctrl-C, a crash, right after `run` began) has only its record:
 * nothing ran and nothing waits. It starts again from the recorded request, user, faults and settings, as `run`
 * started it.
 */
async function startAgain(
  thread: OpenThread,
  record: ThreadRecord,
  decision: DecisionFlag | null,
  io: CliIo,
  opts: { json: boolean; asking: boolean },
): Promise<Exit> {
  const { threadId, session, dbPath } = thread;
  if (decision) {
    throw new CandorError(
      `Thread ${threadId} stopped before its first checkpoint: nothing ran, so it waits for no decision. Start it again without one: ${io.invokedAs} resume ${threadId}${dbFlagFor(dbPath)}.`,
      ErrorCode.INVALID_DECISION,
    );
  }
  io.err(
    headerLines(
      `Candor · reasoner: ${describeReasoner(thread.reasoner)} · starting thread ${threadId} again`,
      session,
      [
        ["request", record.request],
        ["start", "from its recorded request and settings: it stopped before its first checkpoint"],
        ["faults", record.faults.join(", ")],
      ],
    ).join("\n"),
  );
  const stream = { streamAnswer: !opts.json };
  const started = await executeThread(session, threadId, startInput(record), io, undefined, stream);
  const outcome = opts.asking ? await decideInteractively(session, threadId, started, io, stream) : started;
  return presentOutcome(outcome, threadId, { io, json: opts.json, dbPath, reasoner: thread.reasoner.kind });
}

/**
 * A plain retry of a limit that cannot be met would fail the same way, and the graph's refusal names the fix in
 * the library's JSON form; say it as the command to type instead, before anything is sent.
 */
function refusePlainRetryOfInfeasible(
  request: WaitingRequest,
  decision: DecisionFlag,
  extras: { extra?: Record<string, unknown> },
  ctx: { threadId: string; prefix: string; dbArg: string | null },
): void {
  if (request.kind !== "infeasible_constraint" || decision !== "retry" || extras.extra?.params !== undefined) return;
  const retry = resumeCommands(ctx.threadId, request, { commandPrefix: ctx.prefix, dbArg: ctx.dbArg }).find(
    (c) => c.decision === "retry",
  );
  const example =
    retry && / --set /.test(retry.command)
      ? retry.command
      : `${ctx.prefix} resume ${ctx.threadId} --retry --set <limit>=<a value that can be met>${ctx.dbArg ? ` --db ${shellArg(ctx.dbArg)}` : ""}`;
  throw new CandorError(
    `A plain --retry would fail the same way: the limit cannot be met as it is, so nothing was sent. Retry with a new limit: ${example} (or --replan "<guidance>", --skip, --abort).`,
    ErrorCode.INVALID_DECISION,
  );
}
