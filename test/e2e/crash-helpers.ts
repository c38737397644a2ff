/**
 * Helpers for test/e2e/crash.test.ts: run the CLI in a child process, stop it with SIGKILL at an exact point,
 * and read what the SQLite file says about the thread afterwards.
 *
 * How a kill point is made exact ("freezes"): before the child starts, the test installs SQLite triggers in the
 * thread's database. A *hold* trigger makes one kind of write spin inside SQLite (an endless cross join) instead
 * of committing; a spinning write blocks the child's only thread, so nothing after it can happen. A *mark*
 * trigger records, in the same transaction as one chosen write, that the kill point has been reached. The test
 * polls for the mark (or a line of output) and sends SIGKILL; whatever the hold covers can never have committed,
 * whatever the mark covers has. No timing is guessed: slow branches only make the order of events certain.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import Database from "better-sqlite3";
import { decisionLogPath, openPersistence } from "../../src/memory/persistence.js";
import { leaseHolder } from "../../src/memory/lease.js";
import { openEffectLedger } from "../../src/tools/effects.js";
import { runCli as runProgram } from "../../src/cli/program.js";
import { spawnCli } from "./helpers.js";

/** A CLI child whose output is collected as it comes, so the test can wait for a line or for its exit. */
export class CliChild {
  readonly child: ChildProcess;
  stdout = "";
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private done = false;

  constructor(readonly args: readonly string[]) {
    this.child = spawnCli(args);
    this.child.stdout?.on("data", (d: Buffer) => (this.stdout += d.toString()));
    this.child.stderr?.on("data", (d: Buffer) => (this.stderr += d.toString()));
    // "close", not "exit": by then every byte the child wrote before it died has been read.
    this.exited = new Promise((resolve, reject) => {
      this.child.on("error", reject);
      this.child.on("close", (code, signal) => {
        this.done = true;
        resolve({ code, signal });
      });
    });
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error(`the CLI did not start: ${this.args.join(" ")}`);
    return this.child.pid;
  }

  get running(): boolean {
    return !this.done;
  }

  /** What the child printed, for failure messages. */
  output(): string {
    return `$ candor ${this.args.join(" ")}\n--- stdout ---\n${this.stdout}\n--- stderr ---\n${this.stderr}`;
  }

  /**
   * Resolves once `ready()` holds, checked every few milliseconds. Rejects, with the child's output, when the
   * child exits first or nothing happens for `timeoutMs`.
   */
  async waitUntil(what: string, ready: () => boolean, timeoutMs = 45_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (ready()) return;
      if (!this.running) throw new Error(`The CLI exited before ${what}.\n${this.output()}`);
      if (Date.now() > deadline)
        throw new Error(`Gave up after ${timeoutMs} ms waiting for ${what}.\n${this.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** SIGKILL, then waits for the process to be gone; fails if it had already exited by itself. */
  async kill(): Promise<void> {
    if (!this.running) throw new Error(`The CLI exited before it could be killed.\n${this.output()}`);
    this.child.kill("SIGKILL");
    const { signal } = await this.exited;
    if (signal !== "SIGKILL")
      throw new Error(`The CLI ended with ${signal ?? "an exit code"} instead of SIGKILL.\n${this.output()}`);
  }

  /** For cleanup after a failed test: a child left running (perhaps spinning in a hold) is killed. */
  stop(): void {
    if (this.running) this.child.kill("SIGKILL");
  }
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed, when the command was given --json. */
  json: Record<string, unknown> | null;
  /** The command and what it printed, for failure messages. */
  output: string;
}

/**
 * Runs one `candor` command through the CLI's own program in this process: the same code a user runs, without
 * paying for another Node start-up. Only the processes a test kills need to be children; a command run here
 * after a kill is still a different process from the one that died.
 */
export async function cli(args: readonly string[]): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const code = await runProgram(
    args,
    { out: (t) => void (stdout += `${t}\n`), err: (t) => void (stderr += `${t}\n`), invokedAs: "candor" },
    () => ({}),
  );
  const output = `$ candor ${args.join(" ")} (exit ${code})\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`;
  let json: Record<string, unknown> | null = null;
  if (args.includes("--json") && stdout.trim()) {
    try {
      json = JSON.parse(stdout) as Record<string, unknown>;
    } catch (e) {
      throw new Error(`--json printed something that is not JSON:\n${output}`, { cause: e });
    }
  }
  return { code, stdout, stderr, json, output };
}

/** `report <thread> --json`, parsed; the thread must have finished. */
export async function reportJson(threadId: string, db: string): Promise<Record<string, unknown>> {
  const r = await cli(["report", threadId, "--json", "--db", db]);
  if (r.code !== 0 || !r.json) throw new Error(`the report of ${threadId} is not ready:\n${r.output}`);
  return r.json;
}

/** Creates every table the CLI writes to, with the CLI's own code, so triggers can be installed before a run. */
export async function prepareDb(db: string): Promise<void> {
  const persistence = openPersistence(db);
  try {
    openEffectLedger(persistence.store.db);
    leaseHolder(persistence.store.db, "(none)");
    // The saver creates its tables on first use.
    await persistence.checkpointer.getTuple({ configurable: { thread_id: "(none)" } });
  } finally {
    persistence.close();
  }
}

/** One trigger: a write (table and event) and an SQL condition over its NEW or OLD row. */
export interface WriteMatch {
  table: "writes" | "checkpoints" | "candor_effects" | "candor_leases";
  event: "INSERT" | "UPDATE" | "DELETE";
  when: string;
}

export interface Freeze {
  /** Writes that must never commit: the child spins inside the first one until it is killed. */
  hold: WriteMatch[];
  /** The write that says the kill point is reached; it commits, and the test polls for it. */
  mark?: WriteMatch;
}

const SPIN = "crash_spin";
const MARK = "crash_mark";
/** True inside a trigger once the mark has been written (use in a hold's `when`). */
export const MARKED = `EXISTS (SELECT 1 FROM ${MARK})`;

/** Installs a freeze in the database, before the process it is meant for starts. */
export function installFreeze(db: string, freeze: Freeze): void {
  withDb(db, (conn) => {
    conn.exec(`CREATE TABLE IF NOT EXISTS ${SPIN} (n INTEGER); CREATE TABLE IF NOT EXISTS ${MARK} (at TEXT)`);
    if ((conn.prepare(`SELECT count(*) AS n FROM ${SPIN}`).get() as { n: number }).n === 0) {
      const insert = conn.prepare(`INSERT INTO ${SPIN} VALUES (?)`);
      conn.transaction(() => {
        for (let i = 0; i < 1000; i++) insert.run(i);
      })();
    }
    // 10^12 rows: the statement never finishes on its own, so the write it guards never commits.
    const spin = `SELECT count(*) FROM ${SPIN} a, ${SPIN} b, ${SPIN} c, ${SPIN} d;`;
    freeze.hold.forEach((h, i) =>
      conn.exec(`CREATE TRIGGER crash_hold_${i} BEFORE ${h.event} ON ${h.table} WHEN ${h.when} BEGIN ${spin} END`),
    );
    if (freeze.mark) {
      const m = freeze.mark;
      conn.exec(
        `CREATE TRIGGER crash_mark_0 AFTER ${m.event} ON ${m.table} WHEN ${m.when} BEGIN INSERT INTO ${MARK} VALUES (strftime('%Y-%m-%dT%H:%M:%f', 'now')); END`,
      );
    }
  });
}

/** Removes every trigger and table installFreeze made (after the frozen child is dead). */
export function removeFreeze(db: string): void {
  withDb(db, (conn) => {
    const triggers = conn
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'crash_%'`)
      .all() as { name: string }[];
    for (const t of triggers) conn.exec(`DROP TRIGGER ${t.name}`);
    conn.exec(`DROP TABLE IF EXISTS ${MARK}; DROP TABLE IF EXISTS ${SPIN}`);
  });
}

/** Whether the freeze's mark has been written. */
export function marked(db: string): boolean {
  return withDb(db, (conn) => conn.prepare(`SELECT 1 FROM ${MARK} LIMIT 1`).get() !== undefined);
}

function withDb<T>(db: string, fn: (conn: Database.Database) => T): T {
  const conn = new Database(db, { timeout: 5000 });
  try {
    return fn(conn);
  } finally {
    conn.close();
  }
}

/** `json_extract` of a LangGraph write's value (stored as a JSON blob). */
export const writeValue = (pathExpr: string, row = "NEW") => `json_extract(CAST(${row}.value AS TEXT), '${pathExpr}')`;

export interface ThreadFacts {
  /** Steps sent to a worker: the decision log's `dispatch` entries that ran a step (not skips). */
  workersStarted: number;
  /**
   * Step ids whose worker result is committed, with the feedback type: a step task's saved return inside
   * execute (steps that need no approval) or a worker subgraph's feedback in the main graph (after the gate).
   */
  results: Record<string, string>;
  /** Rows of the effect ledger for this thread. */
  effects: {
    stepId: string;
    dispatch: number;
    attempt: number;
    tool: string;
    status: string;
    at: string;
    result: string | null;
  }[];
  /** The pid in the thread's lease row, whether or not that process is alive; null when there is no row. */
  leasePid: number | null;
}

/** What the database says about a thread: the ground truth a resume starts from. */
export function threadFacts(db: string, threadId: string): ThreadFacts {
  return withDb(db, (conn) => {
    const feedback = conn
      .prepare(
        `SELECT ${writeValue("$[0].taskId", "writes")} AS taskId, ${writeValue("$[0].feedbackType", "writes")} AS type FROM writes WHERE thread_id = ? AND checkpoint_ns = '' AND channel = 'feedback'
         UNION ALL
         SELECT ${writeValue("$.feedback.taskId", "writes")}, ${writeValue("$.feedback.feedbackType", "writes")} FROM writes WHERE thread_id = ? AND channel = '__return__' AND ${writeValue("$.ran", "writes")} = 1`,
      )
      .all(threadId, threadId) as { taskId: string | null; type: string | null }[];
    const results: Record<string, string> = {};
    for (const f of feedback) if (f.taskId && f.type) results[f.taskId] = f.type;
    const effects = conn
      .prepare(
        `SELECT step_id AS stepId, dispatch, attempt, tool, status, at, result FROM candor_effects WHERE thread_id = ? ORDER BY step_id, dispatch, attempt`,
      )
      .all(threadId) as ThreadFacts["effects"];
    const lease = conn.prepare(`SELECT pid FROM candor_leases WHERE thread_id = ?`).get(threadId) as
      { pid: number } | undefined;
    const dispatched = decisions(db).filter(
      (l) => l.operation === "dispatch" && l.threadId === threadId && l.decision !== "skip",
    ).length;
    return { workersStarted: dispatched, results, effects, leasePid: lease?.pid ?? null };
  });
}

/** The `step_result` entries the decision log (beside the database) holds for one step of a thread. */
export function stepResults(db: string, threadId: string, stepId: string): { decision: string; reasoning: string }[] {
  return decisions(db)
    .filter((l) => l.operation === "step_result" && l.threadId === threadId && l.taskId === stepId)
    .map(({ decision, reasoning }) => ({ decision, reasoning }));
}

interface LoggedDecision {
  operation: string;
  threadId?: string;
  taskId?: string;
  decision: string;
  reasoning: string;
}

/** Every entry of the decision log beside the database (written synchronously, so it is there after a kill). */
export function decisions(db: string): LoggedDecision[] {
  if (!existsSync(decisionLogPath(db))) return [];
  return readFileSync(decisionLogPath(db), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as LoggedDecision);
}

/** Keys whose values differ between two runs of the same thread by nature: clocks, durations, where it ran, plan ids. */
const VOLATILE = new Set([
  "at",
  "createdAt",
  "generatedAt",
  "startedAt",
  "durationMs",
  "totalDurationMs",
  "threadId",
  "db",
  "planId",
]);

/**
 * A copy with every volatile value replaced by a placeholder, so two runs' outputs compare with toEqual. A
 * tool's `estimates` are plan data, not measurements, and are kept.
 */
export function normalise(value: unknown, parentKey = ""): unknown {
  if (Array.isArray(value)) return value.map((v) => normalise(v, parentKey));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [
        k,
        VOLATILE.has(k) && parentKey !== "estimates" && v !== null ? `<${k}>` : normalise(v, k),
      ]),
    );
  }
  return value;
}
