import { existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { isPostgresUrl, openDatabase, sqliteDecisionJournal } from "../../memory/persistence.js";
import { closing } from "../closing.js";
import { Exit, type CliIo } from "../io.js";
import { LogsFlags, parseFlags, resolveDbPath } from "../options.js";
import { stamp } from "../render.js";

/** The fields of a decision-log line that `logs` filters and shows; anything else is kept for --json. */
const LogLine = z.looseObject({
  time: z.string().optional(),
  operation: z.string(),
  planId: z.string().nullable().optional(),
  taskId: z.string().nullable().optional(),
  threadId: z.string().nullable().optional(),
  decision: z.string().optional(),
  reasoning: z.string().optional(),
  confidenceBefore: z.number().nullable().optional(),
  confidenceAfter: z.number().nullable().optional(),
});
type LogLine = z.infer<typeof LogLine>;

function confidence(l: LogLine): string {
  const before = typeof l.confidenceBefore === "number" ? l.confidenceBefore.toFixed(2) : null;
  const after = typeof l.confidenceAfter === "number" ? l.confidenceAfter.toFixed(2) : null;
  if (before && after) return ` (confidence ${before} → ${after})`;
  return before || after ? ` (confidence ${before ?? after})` : "";
}

/**
 * `candor logs`: the decision log of the database, filtered by thread, plan, step and operation. A thread the
 * database does not know is a usage error (exit 2, naming its threads), as it is for `report` and `history`.
 */
export async function logsCommand(rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(LogsFlags, rawFlags);
  const dbPath = resolveDbPath(flags.db, io.env);
  if (flags.thread) await requireThread(dbPath, flags.thread);
  const { where, lines } = await readDecisions(dbPath);
  if (lines === null) {
    io.err(
      `No decision log at ${where} yet: run or resume writes it. Pass --db if your runs used another database.${isPostgresUrl(dbPath) ? "" : legacyNote(where)}`,
    );
    return Exit.COMPLETED;
  }
  const matches: { raw: string; line: LogLine }[] = [];
  for (const raw of lines) {
    if (!raw.trim()) continue;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      continue; // A line cut short by a crash is not a decision.
    }
    const parsed = LogLine.safeParse(json);
    if (!parsed.success) continue;
    const l = parsed.data;
    if (flags.thread && l.threadId !== flags.thread) continue;
    if (flags.plan && l.planId !== flags.plan) continue;
    if (flags.step && l.taskId !== flags.step) continue;
    if (flags.operation && l.operation !== flags.operation) continue;
    matches.push({ raw, line: l });
  }
  if (matches.length === 0) {
    const filters = (["thread", "plan", "step", "operation"] as const)
      .filter((k) => flags[k])
      .map((k) => `--${k} ${flags[k]}`);
    io.err(`No decisions in ${where}${filters.length ? ` match ${filters.join(" ")}` : ""}.`);
    return Exit.COMPLETED;
  }
  if (flags.json) {
    for (const m of matches) io.out(m.raw);
    return Exit.COMPLETED;
  }
  for (const { line: l } of matches) {
    const where = [l.planId, l.taskId].filter(Boolean).join(" / ");
    io.out(`${stamp(l.time ?? "")}  ${l.operation.padEnd(14)} ${where}`);
    io.out(`    decision: ${l.decision ?? "-"}${confidence(l)}`);
    if (l.reasoning) io.out(`    why: ${l.reasoning}`);
  }
  return Exit.COMPLETED;
}

/**
 * Fails with UNKNOWN_THREAD (naming the database's threads) unless the database has the thread. The session
 * module brings the agent with it, so it is imported only here: reading the log needs neither graph nor toolkits.
 */
async function requireThread(dbPath: string, given: string): Promise<void> {
  const [{ loadThreadRecord }, { openExistingReadOnly, parseThreadId }] = await Promise.all([
    import("../session.js"),
    import("../open-thread.js"),
  ]);
  const threadId = parseThreadId(given);
  const persistence = await openExistingReadOnly(dbPath, threadId);
  await closing(persistence, () => loadThreadRecord(persistence, threadId), { where: persistence.dbPath });
}

/**
 * The database's decisions as JSON lines: from the file beside a SQLite database (read without opening the
 * database), or from the table of a PostgreSQL one.
 */
async function readDecisions(dbPath: string): Promise<{ where: string; lines: string[] | null }> {
  if (!isPostgresUrl(dbPath)) {
    const journal = sqliteDecisionJournal(dbPath);
    return { where: journal.where, lines: await journal.read() };
  }
  const persistence = await openDatabase(dbPath, { readOnly: true });
  return closing(
    persistence,
    async () => ({ where: persistence.decisions.where, lines: await persistence.decisions.read() }),
    { where: persistence.dbPath },
  );
}

/**
 * Before each database had its own log, every database in a folder shared `decisions.log`; it is not read (it
 * mixes databases), but a user looking for old decisions should know where they are.
 */
function legacyNote(file: string): string {
  const shared = path.join(path.dirname(file), "decisions.log");
  return existsSync(shared)
    ? ` Decisions written before each database had its own log are in ${shared}, shared by every database in that folder.`
    : "";
}
