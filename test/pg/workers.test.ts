import { type ChildProcess } from "node:child_process";
import { hostname } from "node:os";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { runCli as runCliInProcess } from "../../src/cli/program.js";
import { RunSettings } from "../../src/domain/request.js";
import { openDatabase } from "../../src/memory/persistence.js";
import { readEnv } from "../../src/env.js";
import { runCli, spawnCli } from "../e2e/helpers.js";
import { postgresDatabase } from "./helpers.js";

const TRIP = "Plan a 3-day trip from Madrid to Paris for 2 people";
const BOOK = `${TRIP} and book it`;

async function rows<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** `candor …` in this process (no Node start-up per command); stdout and stderr collected. */
async function candor(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCliInProcess(
    args,
    { out: (t) => void out.push(t), err: (t) => void err.push(t), invokedAs: "candor" },
    () => readEnv({}),
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The kind of each submitted thread: plain, with a fault to recover from, waiting for plan or tool approval. */
function submission(i: number): { request: string; faults: string[]; approvalThreshold?: number } {
  switch (i % 6) {
    case 1:
      return { request: TRIP, faults: ["search_flights=timeout*1"] };
    case 2:
      return { request: TRIP, faults: [], approvalThreshold: 0.99 };
    case 4:
      return { request: TRIP, faults: ["search_hotels=unavailable*1"] };
    case 5:
      return { request: BOOK, faults: [] };
    default:
      return { request: TRIP, faults: [] };
  }
}

describe("many workers on one PostgreSQL run queue", () => {
  it("candor submit prints the thread id and returns; on a SQLite file it refuses and says to use run", async () => {
    const url = postgresDatabase();
    const out = await runCli(["submit", TRIP, "--db", url, "--thread", "queued-1"]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe("queued-1\n");
    const threads = JSON.parse((await runCli(["threads", "--db", url, "--json"])).stdout);
    expect(threads.threads).toEqual([
      expect.objectContaining({
        threadId: "queued-1",
        status: null,
        queue: expect.objectContaining({ state: "queued" }),
      }),
    ]);
    const sqlite = await runCli(["submit", TRIP, "--db", "/tmp/candor-submit-refused.db"]);
    expect(sqlite.code).toBe(2);
    expect(sqlite.stderr).toContain("submit puts the thread on a run queue in PostgreSQL");
  });

  it(
    "3 workers, 30 threads with faults and approvals, one worker SIGKILLed mid-run: all 30 finish, no side effect twice, one decision each",
    { timeout: 300_000 },
    async () => {
      const url = postgresDatabase();
      const n = 30;
      const ids = Array.from({ length: n }, (_, i) => `q-${String(i).padStart(2, "0")}`);
      // Submitted through the library, as `submit` does (one CLI start-up per thread would dominate the test).
      const db = await openDatabase(url);
      if (db.backend !== "postgres") throw new Error("expected PostgreSQL");
      try {
        for (const [i, threadId] of ids.entries()) {
          const s = submission(i);
          await db.store.put(["candor", "threads"], threadId, {
            threadId,
            request: s.request,
            userId: `user_${i}`,
            reasoner: "rules",
            model: null,
            faults: s.faults,
            settings: RunSettings.parse(s.approvalThreshold ? { approvalThreshold: s.approvalThreshold } : {}),
            createdAt: new Date(Date.now() + i).toISOString(),
          });
          await db.queue.enqueue(threadId, { kind: "start" });
        }
      } finally {
        await db.close();
      }

      const workers: ChildProcess[] = Array.from({ length: 3 }, () => spawnCli(["worker", "--db", url]));
      const logs = workers.map(() => ({ text: "" }));
      workers.forEach((w, i) => w.stderr?.on("data", (d: Buffer) => (logs[i]!.text += d.toString())));
      const exited = workers.map((w) => new Promise<void>((resolve) => w.on("exit", () => resolve())));
      try {
        // Kill the first worker while it holds a thread (its lease names its pid on this host).
        const victim = workers[0]!;
        let killedThread: string | null = null;
        for (let i = 0; i < 1200 && !killedThread; i++) {
          const held = await rows<{ thread_id: string }>(
            url,
            "SELECT thread_id FROM candor_leases WHERE pid = $1 AND host = $2",
            [victim.pid, hostname()],
          );
          if (held[0]) {
            victim.kill("SIGKILL");
            killedThread = held[0].thread_id;
          } else await sleep(50);
        }
        expect(killedThread, logs[0]!.text).not.toBeNull();
        await exited[0];

        // Answer every question as a person would, from the CLI, until every thread is done.
        const answered = new Map<string, number>();
        for (let i = 0; i < 600; i++) {
          const states = await rows<{ thread_id: string; state: string; note: string | null }>(
            url,
            "SELECT thread_id, state, note FROM candor_runs",
          );
          if (states.length === n && states.every((r) => r.state === "done" || r.state === "failed")) break;
          for (const r of states.filter((s) => s.state === "waiting")) {
            const resumed = await candor(["resume", r.thread_id, "--approve", "--db", url, "--no-input"]);
            expect(resumed.code, resumed.err).toBe(0);
            answered.set(r.thread_id, (answered.get(r.thread_id) ?? 0) + 1);
          }
          await sleep(500);
        }

        const final = await rows<{ thread_id: string; state: string; note: string | null; attempts: number }>(
          url,
          "SELECT thread_id, state, note, attempts FROM candor_runs ORDER BY thread_id",
        );
        expect(final.map((r) => [r.thread_id, r.state, r.note])).toEqual(ids.map((id) => [id, "done", "completed"]));
        // The killed worker's thread was taken again and finished by another.
        expect(final.find((r) => r.thread_id === killedThread)!.attempts).toBeGreaterThanOrEqual(2);

        // Every approval was asked and answered once: plan approvals (i % 6 == 2) and bookings (i % 6 == 5).
        const asked = ids.filter((_, i) => i % 6 === 2 || i % 6 === 5);
        expect([...answered.keys()].sort()).toEqual(asked);
        expect([...answered.values()].every((count) => count === 1)).toBe(true);
        const decisions = await rows<{ thread_id: string; n: string }>(
          url,
          "SELECT thread_id, count(*) AS n FROM candor_decisions WHERE operation = 'human_decision' GROUP BY thread_id ORDER BY thread_id",
        );
        expect(decisions.map((d) => [d.thread_id, Number(d.n)])).toEqual(asked.map((id) => [id, 1]));

        // No side effect twice: each booking made exactly once, none left in doubt.
        const effects = await rows<{ thread_id: string; done: string; started: string }>(
          url,
          `SELECT thread_id, count(*) FILTER (WHERE status = 'done') AS done, count(*) FILTER (WHERE status = 'started') AS started
           FROM candor_effects WHERE tool = 'book_trip' GROUP BY thread_id ORDER BY thread_id`,
        );
        const bookings = ids.filter((_, i) => i % 6 === 5);
        expect(effects.map((e) => [e.thread_id, Number(e.done), Number(e.started)])).toEqual(
          bookings.map((id) => [id, 1, 0]),
        );
      } finally {
        for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill("SIGTERM");
        await Promise.all(exited);
      }
      // A worker stopped with SIGTERM says so and exits cleanly.
      expect(logs[1]!.text).toMatch(/stopped after \d+ run\(s\)\./);
    },
  );
});
