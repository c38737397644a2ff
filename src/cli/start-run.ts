import { PlanningRequest } from "../domain/request.js";
import { CandorError, ErrorCode } from "../errors.js";
import { decideInteractively } from "./interactive.js";
import { closing } from "./closing.js";
import { Exit, inline, type CliIo } from "./io.js";
import {
  checkReactive,
  chooseReasoner,
  EXAMPLE_REQUEST,
  newThreadId,
  parseFlags,
  resolveDbPath,
  resolveMcpPath,
  resolveDocsPath,
  withDocs,
  RunFlags,
  settingsFromFlags,
  type ReasonerChoice,
  newThreadRecord,
  type DebugTools,
} from "./options.js";
import { dbFlagFor, executeThread, presentOutcome } from "./present.js";
import { noteLine, shellArg } from "./render.js";
import { openSession, saveThreadRecord, startInput, threadExists, type Session } from "./session.js";
import { whileHolding } from "./thread-lease.js";

/*
 * Starting a run, and the header every command that runs a thread prints: shared by `run`, `review`, the demo,
 * `resume` and `replay` (no command imports another).
 */

/** The first lines a run or resume prints: reasoner and thread first, then what it runs on. */
export function headerLines(title: string, session: Session, fields: [string, string][]): string[] {
  const rows: [string, string][] = [
    ...fields,
    ["database", `${session.persistence.dbPath} (decisions: ${session.logFile})`],
  ];
  return [title, ...rows.filter(([, v]) => v).map(([k, v]) => `  ${`${k}:`.padEnd(10)} ${v}`), ""];
}

export function describeReasoner(choice: ReasonerChoice): string {
  return choice.kind === "llm" ? `llm (model ${choice.model})` : "rules (offline)";
}

/** The request a command was given, for `user`; an empty one is refused with an example of `command`. */
export function requestOf(text: string, user: string, io: Pick<CliIo, "invokedAs">, command: string): PlanningRequest {
  const request = PlanningRequest.safeParse({ userIntent: text, userContext: { userId: user } });
  if (request.success) return request.data;
  const tooLong = request.error.issues.find((i) => i.code === "too_big");
  throw new CandorError(
    tooLong
      ? `${tooLong.message.charAt(0).toUpperCase()}${tooLong.message.slice(1)}.`
      : `The request is empty: say what you want done, e.g. ${io.invokedAs} ${command} ${shellArg(EXAMPLE_REQUEST)}.`,
    ErrorCode.INVALID_REQUEST,
  );
}

/**
 * Shared by `run` and the demo, which needs the thread id for its closing hints. A `framed` run (the demo) has
 * already shown its request and faults and ends with its own hints, so it skips those lines.
 */
export async function startRun(
  requestText: string,
  rawFlags: unknown,
  io: CliIo,
  framed = false,
  /** The debugging tools `candor review` runs with alone; otherwise --debug-tools or CANDOR_DEBUG_TOOLS add them. */
  review?: { debugTools: DebugTools },
): Promise<{ exit: Exit; threadId: string }> {
  const flags = parseFlags(RunFlags, rawFlags);
  const debugTools = review?.debugTools ?? (flags.debugTools || io.env.CANDOR_DEBUG_TOOLS ? "added" : undefined);
  const request = requestOf(requestText, flags.user, io, "run");
  const reasoner = chooseReasoner(flags, io.env);
  checkReactive(flags, reasoner, io.env);
  const settings = settingsFromFlags(flags);
  const threadId = flags.thread ?? newThreadId();
  const dbPath = resolveDbPath(flags.db, io.env);
  const mcp = resolveMcpPath(flags.mcp, io.env);
  const docs = resolveDocsPath(flags.docs, io.env);
  const session = await openSession({
    mcp,
    dbPath,
    reasoner,
    faults: flags.fault,
    env: withDocs(io.env, docs),
    onNote: (note) => io.err(noteLine(note)),
    ...(debugTools ? { debugTools } : {}),
  });
  return closing(
    session,
    async () => {
      return await whileHolding(
        session,
        threadId,
        io,
        () => ({ exit: Exit.BUSY, threadId }),
        async (signal) => {
          if (await threadExists(session.persistence, threadId)) {
            throw new CandorError(
              `Thread "${threadId}" already exists in ${session.persistence.dbPath}. Continue it with: ${io.invokedAs} resume ${threadId}${dbFlagFor(dbPath)}, or leave out --thread to start a new one.`,
              ErrorCode.INVALID_REQUEST,
            );
          }
          // Everything `run` needs to start it, so `resume` can start it again if it stops before its first checkpoint.
          const record = {
            ...newThreadRecord(threadId, request.userIntent, flags, reasoner, settings, { mcp, docs }),
            ...(debugTools ? { debugTools } : {}),
          };
          await saveThreadRecord(session.persistence, record);
          io.err(
            headerLines(
              `Candor · reasoner: ${describeReasoner(reasoner)} · thread ${threadId}`,
              session,
              framed
                ? []
                : [
                    ["request", inline(request.userIntent)],
                    ["faults", flags.fault.join(", ")],
                    ["mcp", mcp ?? ""],
                  ],
            ).join("\n"),
          );
          const started = await executeThread(session, threadId, startInput(record), { ...io, signal }, undefined, {
            streamAnswer: !flags.json,
          });
          // At a terminal the person answers here, with the lease still held; otherwise (or --no-input) the run exits 3.
          const outcome = flags.input
            ? await decideInteractively(session, threadId, started, { ...io, signal }, { streamAnswer: !flags.json })
            : started;
          const exit = presentOutcome(outcome, threadId, {
            io,
            json: flags.json,
            dbPath,
            reasoner: reasoner.kind,
            footer: !framed,
          });
          return { exit, threadId };
        },
      );
    },
    { where: session.persistence.dbPath },
  );
}
