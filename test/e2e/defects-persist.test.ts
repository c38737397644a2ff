/**
 * Issue 8 items 2, 3, 4, 5 and 9 through the CLI: where a database may live, a zombie holder's lease, Ctrl-C
 * (or a crash) before the first checkpoint, one decision log per database with plan ids that do not repeat, and
 * the messages and exit codes a user met. Processes that are signalled are children; the other commands run
 * through the CLI's program in this process (`cli`), as crash.test.ts does.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { runCli as runProgram } from "../../src/cli/program.js";
import { recentEpisodes } from "../../src/memory/episodes.js";
import { readProcessStat } from "../../src/memory/lease.js";
import { decisionLogPath, openPersistence } from "../../src/memory/persistence.js";
import { cli, CliChild, installFreeze, prepareDb, removeFreeze } from "./crash-helpers.js";
import { childEnv, perTest, ROOT, runCli, STACK_LINE } from "./helpers.js";

const TRIP = "Plan a 2-day trip from Paris to Rome for 1 person";
const BOOK = "Plan and book a 2-day trip from Paris to Rome for 1 person";
const OVER_BUDGET = "Plan a 3-day trip from Madrid to Paris for 2 people under $2000";
const LONG = 180_000;

const { freshDb, later } = perTest("candor-defects-");
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Checkpoints the database holds for a thread (0 when it never reached its first). */
function checkpointCount(db: string, threadId: string): number {
  if (!existsSync(db)) return 0;
  const conn = new Database(db, { readonly: true });
  try {
    // The saver creates its table on first use: no table, no checkpoint.
    if (!conn.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'`).get()) return 0;
    return (conn.prepare(`SELECT count(*) AS n FROM checkpoints WHERE thread_id = ?`).get(threadId) as { n: number }).n;
  } finally {
    conn.close();
  }
}

/** The decision-log lines of a database, parsed. */
function logLines(db: string): { operation: string; threadId?: string; planId?: string | null }[] {
  return readFileSync(decisionLogPath(db), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

describe("a --db path no database can live at (issue 8 item 2: `--db /proc/...` hung forever)", () => {
  for (const dbPath of ["/proc/self/nonexist/x.db", "/proc/foo/x.db"]) {
    it.skipIf(process.platform !== "linux")(
      `run --db ${dbPath}: exit 2 with one paragraph, no hang`,
      { timeout: LONG },
      async () => {
        // Killed if it hangs; the exit code is then null and the test fails.
        const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "run", TRIP, "--db", dbPath], {
          cwd: ROOT,
          env: childEnv(),
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stderr = "";
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
        const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
        clearTimeout(killer);
        expect(code, stderr).toBe(2);
        expect(stderr).toMatch(
          /^Cannot use ".*" as the Candor database: "\/proc[^"]*" is on proc, a kernel filesystem that cannot hold files\. Pass --db/,
        );
        expect(stderr.trim().split("\n")).toHaveLength(1);
      },
    );
  }
});

describe("a SIGKILLed candor left a zombie (issue 8 item 3: its lease held the thread while signal 0 called it alive)", () => {
  it.skipIf(!existsSync("/proc/self/stat"))(
    "resume is not refused as busy: the zombie's lease is free, and the thread, killed before its first checkpoint, starts again",
    { timeout: LONG },
    async (ctx) => {
      const db = freshDb();
      await prepareDb(db);
      // The first checkpoint never commits: the child spins in that write until it is killed.
      installFreeze(db, { hold: [{ table: "checkpoints", event: "INSERT", when: "NEW.thread_id = 'z'" }] });
      // The CLI runs under a shell that waits in `read` and reaps it only when its input ends: killed, it stays a zombie.
      const parent = spawn(
        "sh",
        [
          "-c",
          `"$0" --import tsx src/cli/main.ts "$@" & echo $!; read x; wait`,
          process.execPath,
          "run",
          TRIP,
          "--thread",
          "z",
          "--db",
          db,
        ],
        {
          cwd: ROOT,
          env: childEnv(),
          stdio: ["pipe", "pipe", "pipe"],
        },
      );
      const closed = new Promise((resolve) => parent.on("close", resolve));
      later(() => parent.stdin.end());
      let stdout = "";
      let stderr = "";
      parent.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      parent.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      while (!/Candor · reasoner/.test(stderr) || !/^\d+\n/.test(stdout)) {
        if (parent.exitCode !== null) throw new Error(`the run ended early:\n${stderr}`);
        await pause(20);
      }
      const pid = Number(stdout.split("\n")[0]);
      process.kill(pid, "SIGKILL");
      let state = readProcessStat(pid);
      while (state.kind === "found" && state.state !== "Z") {
        await pause(10);
        state = readProcessStat(pid);
      }
      if (state.kind !== "found") ctx.skip("this shell reaped the killed CLI itself: there is no zombie to test");
      expect(() => process.kill(pid, 0), "a zombie answers signal 0").not.toThrow();
      removeFreeze(db);
      expect(checkpointCount(db, "z")).toBe(0);

      const resumed = await cli(["resume", "z", "--db", db]);
      expect(resumed.code, resumed.output).toBe(0);
      expect(resumed.stderr).not.toContain("is busy");
      expect(resumed.stderr).toContain("starting thread z again");
      parent.stdin.end();
      await closed;
    },
  );
});

/**
 * Sends Ctrl-C to a starting `run` while it loads (after its handler is installed, before its first checkpoint).
 * There is nothing to wait for in that window, so later and later moments are tried: a signal that comes before
 * the handler ends Node at once (killed by SIGINT), and one in the window leaves the record without checkpoints.
 */
async function ctrlCBeforeFirstCheckpoint(args: string[], threadId: string): Promise<{ db: string; child: CliChild }> {
  for (let delay = 250; delay <= 20_000; delay += 250) {
    const db = freshDb();
    const child = new CliChild([...args, "--thread", threadId, "--db", db]);
    later(() => child.stop());
    await pause(delay);
    if (!child.running) throw new Error(`the run ended before Ctrl-C:\n${child.output()}`);
    child.child.kill("SIGINT");
    const { code, signal } = await child.exited;
    if (signal === "SIGINT") continue;
    if (code === 130 && checkpointCount(db, threadId) === 0) return { db, child };
    throw new Error(
      `Ctrl-C after ${delay} ms came after the first checkpoint (exit ${code}); no earlier moment stopped the run.\n${child.output()}`,
    );
  }
  throw new Error("Ctrl-C never landed between the CLI's handler and its first checkpoint");
}

describe("Ctrl-C before the first checkpoint (issue 8 item 4: the printed resume said there was no such thread)", () => {
  it(
    "resume starts the thread from its recorded request with its faults, user and settings",
    { timeout: LONG },
    async () => {
      const args = [
        "run",
        TRIP,
        "--fault",
        "search_flights=timeout",
        "--user",
        "alice",
        "--approval-threshold",
        "0.99",
      ];
      const { db, child } = await ctrlCBeforeFirstCheckpoint(args, "early");
      expect(child.stderr).toContain(
        `Stopped by Ctrl-C. Thread early is saved; continue it with: npm start -- resume early --db ${db}`,
      );

      const threads = await cli(["threads", "--db", db]);
      expect(threads.stdout).toMatch(/early\s+not started\s+stopped before its first checkpoint: resume to start it/);
      const report = await cli(["report", "early", "--db", db]);
      expect(report.code).toBe(4);
      expect(report.stdout).toContain("stopped before its first checkpoint: nothing ran, so there is no report");

      // The approval threshold was recorded: the plan waits for approval (exit 3) instead of running.
      const resumed = await cli(["resume", "early", "--db", db]);
      expect(resumed.code, resumed.output).toBe(3);
      expect(resumed.stderr).toContain("starting thread early again");
      expect(resumed.stderr).toMatch(/faults: +search_flights=timeout/);
      expect(resumed.stdout).toContain("candor resume early --approve");

      const approved = await cli(["resume", "early", "--approve", "--json", "--db", db]);
      expect(approved.code, approved.output).toBe(0);
      // The fault was recorded: the primary flight search timed out and another agent took over.
      expect((approved.json?.revisions as { failedTaskId: string }[]).map((r) => r.failedTaskId)).toContain("flight");
      // And the user: the episode is alice's, marked as a practice run (it had faults).
      const persistence = openPersistence(db);
      try {
        const episodes = await recentEpisodes(persistence.store, "alice");
        expect(episodes.map((e) => [e.threadId, e.simulated])).toEqual([["early", true]]);
      } finally {
        persistence.close();
      }
    },
  );

  it(
    "in process: a run whose Ctrl-C came before it streamed is started again by resume; a decision for it is refused",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      let stderr = "";
      const aborted = AbortSignal.abort();
      const code = await runProgram(
        ["run", TRIP, "--thread", "pre", "--db", db],
        { out: () => undefined, err: (t) => void (stderr += `${t}\n`), invokedAs: "candor", signal: aborted },
        () => ({}),
      );
      expect(code).toBe(130);
      expect(stderr).toContain("Thread pre is saved; continue it with: candor resume pre --db");
      expect(checkpointCount(db, "pre")).toBe(0);

      const wrong = await cli(["resume", "pre", "--approve", "--db", db]);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain(
        "Thread pre stopped before its first checkpoint: nothing ran, so it waits for no decision",
      );
      const history = await cli(["history", "pre", "--db", db]);
      expect(history.stdout).toContain("Thread pre has no checkpoints");
      const resumed = await cli(["resume", "pre", "--db", db]);
      expect(resumed.code, resumed.output).toBe(0);
      expect(resumed.stdout).toContain("Status: completed");
    },
  );
});

describe("one decision log per database, plan ids that do not repeat (issue 8 item 5)", () => {
  it(
    "two databases in one folder keep their decisions apart, and the same request planned twice gets two plan ids",
    { timeout: LONG },
    async () => {
      const a = freshDb();
      const b = path.join(path.dirname(a), "other.db");
      expect((await cli(["run", TRIP, "--thread", "a1", "--db", a])).code).toBe(0);
      expect((await cli(["run", TRIP, "--thread", "a2", "--db", a])).code).toBe(0);
      expect((await cli(["run", TRIP, "--thread", "b1", "--db", b])).code).toBe(0);
      expect(existsSync(path.join(path.dirname(a), "decisions.log"))).toBe(false);
      expect(new Set(logLines(a).map((l) => l.threadId))).toEqual(new Set(["a1", "a2"]));
      expect(new Set(logLines(b).map((l) => l.threadId))).toEqual(new Set(["b1"]));

      const planOf = (db: string, thread: string) =>
        logLines(db).find((l) => l.threadId === thread && l.operation === "plan")!.planId!;
      const [p1, p2, p3] = [planOf(a, "a1"), planOf(a, "a2"), planOf(b, "b1")];
      expect(new Set([p1, p2, p3]).size).toBe(3);
      // `logs --json` prints JSON lines, which `cli` would read as one object: run the program directly.
      let lines = "";
      const code = await runProgram(
        ["logs", "--plan", p1, "--json", "--db", a],
        { out: (t) => void (lines += `${t}\n`), err: () => undefined, invokedAs: "candor" },
        () => ({}),
      );
      expect(code).toBe(0);
      const threads = lines
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { threadId: string }).threadId);
      expect(new Set(threads)).toEqual(new Set(["a1"]));
    },
  );
});

describe("messages and exit codes (issue 8 item 9)", () => {
  it("a file that is not a SQLite database is named as such, with what to do (exit 2)", { timeout: LONG }, async () => {
    const db = freshDb();
    mkdirSync(path.dirname(db), { recursive: true });
    writeFileSync(db, "my shopping list, not a database\n".repeat(20));
    for (const args of [["threads"], ["run", TRIP]]) {
      const r = await cli([...args, "--db", db]);
      expect(r.code, r.output).toBe(2);
      expect(r.stderr).toContain(
        `"${db}" is not a usable Candor database: SQLite says "file is not a database", so it is not a SQLite file or it is corrupt.`,
      );
      expect(r.stderr).not.toContain("directory you can write to");
    }
  });

  it(
    "a decision log path that is a directory: exit 2 with what to do, not 'Internal error: EISDIR' (exit 1)",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      mkdirSync(decisionLogPath(db), { recursive: true });
      const r = await runCli(["run", TRIP, "--db", db]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(
        `Cannot write the decision log "${decisionLogPath(db)}": it is a directory (EISDIR), not a file.`,
      );
      expect(r.stderr).not.toMatch(/Internal error|STACK/);
      expect(r.stderr).not.toMatch(STACK_LINE);
    },
  );

  it(
    "logs --thread <unknown> exits 2 naming the database's threads, as report and history do",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      expect((await cli(["run", TRIP, "--thread", "known", "--db", db])).code).toBe(0);
      for (const command of [
        ["logs", "--thread", "nosuch"],
        ["report", "nosuch"],
        ["history", "nosuch"],
      ]) {
        const r = await cli([...command, "--db", db]);
        expect(r.code, r.output).toBe(2);
        expect(r.stderr).toContain(`There is no thread "nosuch" in ${db}. Recent threads in this database: known.`);
      }
      expect((await cli(["logs", "--thread", "known", "--db", db])).code).toBe(0);
    },
  );

  it(
    "resume with no decision, away from a terminal, on a waiting thread exits 3 with the commands, as run does",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      const run = await cli(["run", TRIP, "--thread", "w", "--approval-threshold", "0.99", "--db", db]);
      expect(run.code).toBe(3);
      const r = await cli(["resume", "w", "--db", db]);
      expect(r.code, r.output).toBe(3);
      expect(r.stderr).toContain("Thread w is waiting for a decision; nothing was sent.");
      expect(r.stdout).toContain(`candor resume w --approve --db ${db}`);
      const json = await cli(["resume", "w", "--json", "--db", db]);
      expect(json.code).toBe(3);
      expect(json.json).toMatchObject({ threadId: "w", waitingFor: { kind: "plan_approval" } });
    },
  );

  it("run --thread <existing> suggests resume with its --db", { timeout: LONG }, async () => {
    const db = freshDb();
    expect((await cli(["run", TRIP, "--thread", "dup", "--db", db])).code).toBe(0);
    const r = await cli(["run", TRIP, "--thread", "dup", "--db", db]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`Continue it with: candor resume dup --db ${db}, or leave out --thread`);
  });

  it(
    "threads shows a thread waiting for a tool approval as waiting, with its step and tool, not as executing",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      expect((await cli(["run", BOOK, "--thread", "book", "--db", db])).code).toBe(3);
      const r = await cli(["threads", "--db", db]);
      expect(r.stdout).toMatch(/book\s+waiting\s+tool_approval \(booking: book_trip\): --approve \| --deny/);
      expect(r.stdout).not.toMatch(/book\s+executing/);
    },
  );

  it(
    "a replan that keeps the confidence says it stays, never 'reduced from 0.85 to 0.85'",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      expect((await cli(["run", OVER_BUDGET, "--thread", "g", "--max-revisions", "0", "--db", db])).code).toBe(3);
      // Guidance that drops a part (not one that contradicts the request's own budget, which is now an open question).
      const r = await cli(["resume", "g", "--replan", "no activities please", "--db", db]);
      expect(r.code, r.output).toBe(0);
      expect(r.stderr).toContain("Plan confidence stays at 0.85.");
      for (const m of r.stderr.matchAll(/reduced from (\d\.\d\d) to (\d\.\d\d)/g)) expect(m[1]).not.toBe(m[2]);
    },
  );

  it(
    "a replayed booking says the effect ledger answered and book_trip was not called again",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      expect((await cli(["run", BOOK, "--thread", "rb", "--db", db])).code).toBe(3);
      expect((await cli(["resume", "rb", "--approve", "--db", db])).code).toBe(0);
      const history = (await cli(["history", "rb", "--json", "--db", db])).json as {
        checkpoints: { checkpointId: string; next: string[] }[];
      };
      // Newest first: the last checkpoint with a worker to run is the booking's, waiting at its approval.
      const beforeBooking = history.checkpoints.find((c) => c.next.includes("worker"))!;
      const replay = await cli(["replay", "rb", "--from", beforeBooking.checkpointId, "--db", db]);
      expect(replay.code, replay.output).toBe(0);
      expect(replay.stderr).toMatch(
        /✓ booking +Book the trip answered from the effect ledger: book_trip was not called again \(its result was recorded at /,
      );
      expect(replay.stderr).not.toMatch(/✓ booking +Book the trip done in/);
    },
  );

  it(
    "a plain --retry of a limit that cannot be met prints the --retry --set command, not the library's JSON",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      expect(
        (await cli(["run", "3 days in Paris from Madrid for 2 under $500", "--thread", "inf", "--db", db])).code,
      ).toBe(3);
      const r = await cli(["resume", "inf", "--retry", "--db", db]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`Retry with a new limit: candor resume inf --retry --set budget=874 --db ${db}`);
      expect(r.stderr).not.toContain(`{"decision"`);
    },
  );
});
