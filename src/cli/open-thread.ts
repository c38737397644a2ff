import { storageBoundsOf } from "../env.js";
import { CandorError, ErrorCode } from "../errors.js";
import { databaseMayExist, openDatabase, type Persistence } from "../memory/persistence.js";
import { closeAfterFailure } from "./closing.js";
import type { CliIo } from "./io.js";
import { resolveDbPath, ThreadId, withDocs, type ReasonerChoice, type ThreadRecord } from "./options.js";
import { noteLine } from "./render.js";
import { loadThreadRecord, openExisting, sessionOn, type Session, type StoredThread } from "./session.js";

export interface OpenThread {
  threadId: string;
  dbPath: string;
  session: Session;
  /** How the thread was started; null when it was started outside the CLI. */
  record: ThreadRecord | null;
  /** False when the run stopped before its first checkpoint: there is only its record, nothing ran. */
  started: boolean;
  reasoner: ReasonerChoice;
}

export function parseThreadId(raw: string): string {
  const parsed = ThreadId.safeParse(raw);
  if (!parsed.success) {
    throw new CandorError(
      `"${raw}" is not a thread id: ${parsed.error.issues[0]?.message ?? "invalid"}.`,
      ErrorCode.INVALID_REQUEST,
    );
  }
  return parsed.data;
}

/**
 * Opens an existing thread with the tools and faults it was started with. `execute` rebuilds its reasoner too
 * (a model thread needs OPENAI_API_KEY again); `read` only looks at checkpoints, so it never needs a model.
 * `readOnly` (commands that only read: history, report) opens the database read-only: nothing is created or
 * written, and a database this user may not write is read all the same.
 */
export async function openThread(
  rawId: string,
  dbFlag: string | undefined,
  io: CliIo,
  mode: "read" | "execute",
  { readOnly = false }: { readOnly?: boolean } = {},
): Promise<OpenThread> {
  const threadId = parseThreadId(rawId);
  const dbPath = resolveDbPath(dbFlag, io.env);
  const persistence = readOnly
    ? await openExistingReadOnly(dbPath, threadId)
    : await openExisting(dbPath, threadId, storageBoundsOf(io.env));
  let stored: StoredThread;
  try {
    stored = await loadThreadRecord(persistence, threadId);
  } catch (e) {
    return closeAfterFailure(persistence, e, { where: persistence.dbPath });
  }
  const { record, started } = stored;
  const startedWith: ReasonerChoice = record
    ? { kind: record.reasoner, model: record.model }
    : { kind: "rules", model: null };
  if (mode === "execute" && startedWith.kind === "llm" && !io.env.OPENAI_API_KEY) {
    return closeAfterFailure(
      persistence,
      new CandorError(
        `Thread ${threadId} was started with the llm reasoner (model ${startedWith.model}), so continuing it needs OPENAI_API_KEY. Set it (and OPENAI_BASE_URL if the run used another server) and run the command again.`,
        ErrorCode.CONFIGURATION,
      ),
      { where: persistence.dbPath },
    );
  }
  const reasoner: ReasonerChoice = mode === "execute" ? startedWith : { kind: "rules", model: null };
  const session = await sessionOn(persistence, {
    reasoner,
    faults: record?.faults ?? [],
    // Reading a thread calls no tool: its MCP servers are started only to run it.
    mcp: mode === "execute" ? record?.mcp : null,
    // The documents folder the run searched, if it named one: a resume searches the same.
    env: withDocs(io.env, record?.docs),
    onNote: (note) => io.err(noteLine(note)),
    // A thread that ran with the debugging tools is continued with them: its plan may name them.
    ...(record?.debugTools ? { debugTools: record.debugTools } : {}),
  });
  return { threadId, dbPath, session, record, started, reasoner: startedWith };
}

/**
 * `openExisting`, read-only: a thread is looked for only in a database that exists, which is never created. No
 * bound applies: nothing is stored.
 */
export async function openExistingReadOnly(dbPath: string, threadId: string): Promise<Persistence> {
  if (!databaseMayExist(dbPath)) {
    throw new CandorError(
      `There is no thread "${threadId}": no Candor database exists at ${dbPath}. Pass --db with the database the run used, or start a run with: run "<request>".`,
      ErrorCode.UNKNOWN_THREAD,
    );
  }
  return openDatabase(dbPath, { readOnly: true });
}
