import { readFileSync } from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { acquireLease, leaseHolder, releaseLease } from "../../src/memory/lease.js";
import { decisionLogPath } from "../../src/memory/persistence.js";
import { runCli, spawnCli, STACK_LINE, perTest } from "./helpers.js";

const TRIP = "Plan a 2-day trip from Paris to Rome for 1 person";
const BOOK = "Plan and book a 2-day trip from Paris to Rome for 1 person";
const LONG = 120_000;

const { freshDb, later } = perTest();

/** The human decisions the graph applied to a thread, from the decision log beside the database. */
function decisionsApplied(db: string, threadId: string): string[] {
  const log = readFileSync(decisionLogPath(db), "utf8");
  return log
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { operation: string; threadId?: string; decision?: string })
    .filter((l) => l.operation === "human_decision" && l.threadId === threadId)
    .map((l) => l.decision ?? "?");
}

/** Holds a thread's lease from this process, as another `candor` would. */
function holdLease(db: string, threadId: string, pid: number, ttlMs = 60_000, now = Date.now()) {
  const conn = new Database(db, { timeout: 5000 });
  const got = acquireLease(conn, threadId, ttlMs, { pid, now });
  if (!got.acquired) throw new Error("the lease was not free");
  later(() => conn.open && conn.close());
  return { release: () => releaseLease(conn, got.lease), close: () => conn.close() };
}

describe("one writer per thread", () => {
  it(
    "a resume finds the thread busy while another process holds it (exit 2, pid named), and proceeds once it is released",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      expect((await runCli(["run", TRIP, "--db", db, "--thread", "held", "--approval-threshold", "0.99"])).code).toBe(
        3,
      );
      // This test process stands in for the other `candor`: its pid is alive, so the lease binds.
      const other = holdLease(db, "held", process.pid);
      const busy = await runCli(["resume", "held", "--approve", "--db", db]);
      expect(busy.code).toBe(2);
      expect(busy.stderr).toMatch(
        new RegExp(
          `Thread held is busy: another process \\(pid ${process.pid}\\).*until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d.*try again`,
        ),
      );
      expect(busy.stderr.trim().split("\n")).toHaveLength(1);
      expect(busy.stderr).not.toMatch(STACK_LINE);
      const listed = JSON.parse((await runCli(["threads", "--json", "--db", db])).stdout);
      expect(listed.threads[0]).toMatchObject({ threadId: "held", runningIn: process.pid });
      expect(decisionsApplied(db, "held")).toEqual([]);

      other.release();
      const approved = await runCli(["resume", "held", "--approve", "--db", db]);
      expect(approved.code, approved.stderr).toBe(0);
      expect(decisionsApplied(db, "held")).toEqual(["approve"]);
    },
  );

  it("a crashed holder's lease expires: resume proceeds without waiting for it", { timeout: LONG }, async () => {
    const db = freshDb();
    expect((await runCli(["run", TRIP, "--db", db, "--thread", "stale", "--approval-threshold", "0.99"])).code).toBe(3);
    holdLease(db, "stale", 99999, 30_000, Date.now() - 60_000).close();
    const r = await runCli(["resume", "stale", "--approve", "--db", db]);
    expect(r.code, r.stderr).toBe(0);
  });

  it("Ctrl-C gives the lease back: the thread is free the moment the run exits", { timeout: LONG }, async () => {
    const db = freshDb();
    const child = spawnCli([
      "run",
      "Plan a 3-day trip from Madrid to Paris for 2 people",
      "--db",
      db,
      "--thread",
      "sigint",
      "--fault",
      "search_flights=timeout",
    ]);
    let seen = "";
    await new Promise<void>((resolve, reject) => {
      child.stderr?.on("data", (d: Buffer) => {
        seen += d.toString();
        if (/✓ hotel/.test(seen)) resolve();
      });
      child.on("close", () => reject(new Error(`the run ended before Ctrl-C:\n${seen}`)));
    });
    const conn = new Database(db, { timeout: 5000 });
    later(() => conn.open && conn.close());
    expect(leaseHolder(conn, "sigint")?.pid).toBe(child.pid);
    child.kill("SIGINT");
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code, seen).toBe(130);
    // Even a holder believed alive would bind: the row itself is gone.
    expect(leaseHolder(conn, "sigint", { isAlive: () => true })).toBeNull();
  });

  it(
    "two resumes race on one waiting thread: one proceeds, the other is refused, exactly one decision is applied",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      expect((await runCli(["run", TRIP, "--db", db, "--thread", "race", "--approval-threshold", "0.99"])).code).toBe(
        3,
      );
      const [a, b] = await Promise.all([
        runCli(["resume", "race", "--approve", "--db", db]),
        runCli(["resume", "race", "--reject", "--db", db]),
      ]);
      const winner = a.code === 2 ? b : a;
      const loser = a.code === 2 ? a : b;
      expect(
        [a.code, b.code].filter((c) => c === 2),
        `${a.stderr}\n---\n${b.stderr}`,
      ).toHaveLength(1);
      // The loser either found the lease held or, arriving after the winner, found nothing left to decide.
      expect(loser.stderr).toMatch(/is busy: another process|not waiting for a decision/);
      const applied = decisionsApplied(db, "race");
      expect(applied).toHaveLength(1);
      const report = JSON.parse((await runCli(["report", "race", "--json", "--db", db])).stdout);
      expect(report.status).toBe(applied[0] === "approve" ? "completed" : "rejected");
      expect(winner.code).toBe(applied[0] === "approve" ? 0 : 4);
    },
  );
});

describe("candor threads", () => {
  it("lists threads newest first with their status and what each waits for", { timeout: LONG }, async () => {
    const db = freshDb();
    expect((await runCli(["run", TRIP, "--db", db, "--thread", "first"])).code).toBe(0);
    expect((await runCli(["run", TRIP, "--db", db, "--thread", "second", "--approval-threshold", "0.99"])).code).toBe(
      3,
    );
    const text = await runCli(["threads", "--db", db]);
    expect(text.code, text.stderr).toBe(0);
    const rows = text.stdout.split("\n").filter((l) => /^\s+\d{4}-/.test(l));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/second\s+awaiting_approval\s+plan_approval: --approve \| --reject \| --adjust/);
    expect(rows[1]).toMatch(/first\s+completed\s+Plan a 2-day trip/);
    const json = JSON.parse((await runCli(["threads", "--json", "--db", db])).stdout);
    expect(json.threads.map((t: { threadId: string }) => t.threadId)).toEqual(["second", "first"]);
    expect(json.threads[0].waitingFor).toEqual({
      kind: "plan_approval",
      decisions: ["approve", "reject", "adjust", "replan"],
    });
    expect(json.threads[1]).toMatchObject({ status: "completed", finished: true, waitingFor: null });
  });

  it("with no database says there are no threads yet (exit 0)", { timeout: LONG }, async () => {
    const r = await runCli(["threads", "--db", freshDb()]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("No threads yet");
  });

  // The empty listing no longer opens a session (the graph is loaded only to read a thread's state): it must still
  // say so, as text and as JSON, and close the database.
  it("on a database with no threads says so, as text and as JSON (exit 0)", { timeout: LONG }, async () => {
    const db = freshDb();
    expect((await runCli(["db", "migrate", "--db", db])).code).toBe(0);
    const text = await runCli(["threads", "--db", db]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`No threads in ${db} yet. Start one with: npm start -- run "<request>"`);
    const json = await runCli(["threads", "--json", "--db", db]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ db, threads: [] });
  });
});

describe("resume decisions", () => {
  it(
    "a tool call waiting for approval shows up in threads and is answered with --deny (policy blocked, replanned)",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      const waiting = await runCli(["run", BOOK, "--db", db, "--thread", "book"]);
      expect(waiting.code, waiting.stderr).toBe(3);
      expect(waiting.stdout).toContain("Waiting for a human: approve a tool call before it runs.");
      expect(waiting.stdout).toContain(`npm start -- resume book --deny --db ${db}`);
      const json = JSON.parse((await runCli(["threads", "--json", "--db", db])).stdout);
      expect(json.threads[0].waitingFor).toEqual({
        kind: "tool_approval",
        decisions: ["approve", "deny"],
        taskId: "booking",
        tool: "book_trip",
      });

      const wrong = await runCli(["resume", "book", "--reject", "--db", db]);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain("Give one of: --approve, --deny");

      const denied = await runCli(["resume", "book", "--deny", "--comment", "not now", "--db", db]);
      expect(denied.code, denied.stderr).toBe(4);
      expect(denied.stdout).toMatch(/A human denied book_trip/);
      expect(decisionsApplied(db, "book")).toEqual(["deny"]);
    },
  );

  const refusals: [string, string[], RegExp][] = [
    ["--set that is not key=value", ["--retry", "--set", "maxPrice"], /--set "maxPrice" is not key=value/],
    ["--set without --retry", ["--skip", "--set", "a=1"], /--set goes with --retry/],
    ["--replan without guidance", ["--replan", " "], /--replan needs guidance text/],
  ];
  // The demo trip is over its $2000 budget; a revision cap of 0 escalates at once instead of adjusting prices.
  const OVER_BUDGET = "Plan a 3-day trip from Madrid to Paris for 2 people under $2000";

  it(
    "--retry --set gives the failed step new parameters: refused values keep it waiting, good ones finish it",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      const run = await runCli(["run", OVER_BUDGET, "--db", db, "--thread", "esc", "--max-revisions", "0"]);
      expect(run.code, run.stderr).toBe(3);
      expect(run.stdout).toContain(`npm start -- resume esc --replan "<guidance>" --db ${db}`);
      const bad = await runCli(["resume", "esc", "--retry", "--set", "budget=-5", "--db", db]);
      expect(bad.code, bad.stderr).toBe(3);
      expect(bad.stderr).toMatch(/The decision was not applied: check_budget would refuse these parameters \(budget: /);
      const good = await runCli(["resume", "esc", "--retry", "--set", "budget=5000", "--db", db]);
      expect(good.code, good.stderr).toBe(0);
      expect(good.stdout).toMatch(/RETRY_WITH_PARAMS for budget_status/);
      expect(decisionsApplied(db, "esc")).toEqual(["retry"]);
    },
  );

  it(
    "--replan plans the unfinished work again with the guidance and keeps the finished searches",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      expect((await runCli(["run", OVER_BUDGET, "--db", db, "--thread", "guided", "--max-revisions", "0"])).code).toBe(
        3,
      );
      const r = await runCli(["resume", "guided", "--replan", "a budget of 5000 dollars is fine", "--db", db]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/Planning the unfinished work again with a person's guidance/);
      expect(r.stdout).toMatch(/REPLAN_WITH_GUIDANCE for budget_status/);
      const report = JSON.parse((await runCli(["report", "guided", "--json", "--db", db])).stdout);
      expect(report.report.revisions[0].changes.join(" ")).toMatch(
        /Keep 3 finished step\(s\) and their results \(flight, hotel, activities\)/,
      );
    },
  );

  for (const [name, flags, message] of refusals) {
    it(`refuses ${name} before touching the thread (exit 2, one paragraph)`, { timeout: LONG }, async () => {
      const r = await runCli(["resume", "any", ...flags, "--db", freshDb()]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).not.toMatch(STACK_LINE);
    });
  }

  it("--deny on a plan approval is refused with the decisions that fit", { timeout: LONG }, async () => {
    const db = freshDb();
    expect((await runCli(["run", TRIP, "--db", db, "--thread", "plan", "--approval-threshold", "0.99"])).code).toBe(3);
    const r = await runCli(["resume", "plan", "--deny", "--db", db]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--deny does not answer what thread plan waits for");
    expect(r.stderr).toContain("--approve, --reject, --adjust <json>");
  });
});

describe("replay and fork from the CLI", () => {
  it(
    "replays from a checkpoint, forks with --set, and refuses an invalid update or checkpoint (exit 2)",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      expect((await runCli(["run", TRIP, "--db", db, "--thread", "tt"])).code).toBe(0);
      const history = JSON.parse((await runCli(["history", "tt", "--json", "--db", db])).stdout) as {
        checkpoints: { checkpointId: string; step: number; next: string[] }[];
      };
      const planned = history.checkpoints.find((c) => c.step === 1 && c.next.includes("execute"))!;
      expect(planned).toBeDefined();

      const replay = await runCli(["replay", "tt", "--from", planned.checkpointId, "--db", db]);
      expect(replay.code, replay.stderr).toBe(0);
      expect(replay.stderr).toContain(`replay:    from checkpoint ${planned.checkpointId}`);
      expect(replay.stderr).toMatch(/✓ flight/);
      expect(replay.stdout).toContain("Status: completed");

      const fork = await runCli([
        "fork",
        "tt",
        "--from",
        planned.checkpointId,
        "--set",
        "settings.maxRevisions=0",
        "--set",
        "settings.maxStepFailures=2",
        "--json",
        "--db",
        db,
      ]);
      expect(fork.code, fork.stderr).toBe(0);
      expect(fork.stderr).toMatch(
        /fork: +checkpoint \S+ → new checkpoint \S+ with settings\.maxRevisions=0, settings\.maxStepFailures=2/,
      );
      expect(JSON.parse(fork.stdout)).toMatchObject({ status: "completed", finished: true });
      const after = JSON.parse((await runCli(["history", "tt", "--json", "--db", db])).stdout);
      expect(after.checkpoints.length).toBeGreaterThan(history.checkpoints.length);

      const invalid = await runCli([
        "fork",
        "tt",
        "--from",
        planned.checkpointId,
        "--set",
        "settings.maxRevisions=lots",
        "--db",
        db,
      ]);
      expect(invalid.code).toBe(2);
      expect(invalid.stderr).toMatch(/--set refused, nothing was changed: settings\.maxRevisions: /);
      expect(invalid.stderr).not.toMatch(STACK_LINE);

      const unknown = await runCli(["replay", "tt", "--from", "nope", "--db", db]);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain(`Thread tt has no checkpoint "nope"`);

      const noSet = await runCli(["fork", "tt", "--from", planned.checkpointId, "--db", db]);
      expect(noSet.code).toBe(2);
      expect(noSet.stderr).toContain("fork needs at least one --set");
    },
  );
});
