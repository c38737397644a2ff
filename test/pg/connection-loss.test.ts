import type { ChildProcess } from "node:child_process";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateDatabase } from "../../src/memory/persistence.js";
import { hearConnectionErrors } from "../../src/memory/postgres-url.js";
import { runCli, spawnCli, STACK_LINE } from "../e2e/helpers.js";
import { startThrowawayPostgres, type ThrowawayPostgres } from "../fakes/postgres.js";

/**
 * PostgreSQL going away under Candor: the suite's shared server cannot be restarted under other test files, so
 * these tests start their own.
 */
let server: ThrowawayPostgres;
beforeAll(async () => {
  server = await startThrowawayPostgres();
});
afterAll(() => server?.stop());

async function migrated(): Promise<string> {
  const url = await server.createDatabase();
  await migrateDatabase(url);
  return url;
}

async function rows<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves when `child`'s stderr so far matches `pattern`. */
function stderrMatches(child: ChildProcess, pattern: RegExp, seen: { text: string }): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (pattern.test(seen.text)) {
        child.stderr?.off("data", check);
        resolve();
      }
    };
    child.stderr?.on("data", check);
    check();
  });
}

function collect(child: ChildProcess): { text: string } {
  const seen = { text: "" };
  child.stderr?.on("data", (d: Buffer) => (seen.text += d.toString()));
  return seen;
}

/** The child's exit code once it has exited and its output is read to the end. */
const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null && child.stderr?.readableEnded !== false) resolve(child.exitCode);
    else child.once("close", (code) => resolve(code));
  });

// A flight search that times out once keeps the run busy for over a second, in which the server goes away.
const TRIP = "Plan a 3-day trip from Madrid to Paris for 2 people";

describe("PostgreSQL lost mid-run", () => {
  it("a connection checked out of a Candor pool and terminated by the server does not kill the process", async () => {
    // Regression: pg's pool removes its own "error" listener from a client it hands out, so a connection dropped
    // during a transaction (the saver's writes, a lease) was an unheard "error" event: "Unhandled 'error' event".
    const url = await migrated();
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    hearConnectionErrors(pool);
    try {
      const client = await pool.connect();
      const { pid } = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!;
      const ended = new Promise((resolve) => client.once("end", resolve));
      await rows(url, "SELECT pg_terminate_backend($1)", [pid]);
      await ended;
      client.release(new Error("terminated by the server"));
      // The process lives on, and the pool opens a new connection for the next query.
      expect((await pool.query<{ one: number }>("SELECT 1 AS one")).rows[0]!.one).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it("a server stopped mid-run ends `run` with exit 5 and one sentence (no stack, no unhandled 'error' event); resume finishes the thread once it is back", async () => {
    // Regression: "Unhandled 'error' event … Connection terminated unexpectedly", a raw stack trace and exit 1.
    const url = await migrated();
    const child = spawnCli([
      "run",
      TRIP,
      "--db",
      url,
      "--thread",
      "lost-1",
      "--no-input",
      "--fault",
      "search_flights=timeout*1",
    ]);
    const seen = collect(child);
    await stderrMatches(child, /✓ (hotel|activities) /, seen);
    server.down();
    try {
      const code = await exited(child);
      expect(code, seen.text).toBe(5);
    } finally {
      server.up();
    }
    expect(seen.text).toMatch(
      /The connection to the PostgreSQL database postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+ was lost \(/,
    );
    expect(seen.text).toContain("continue with `candor resume <thread>`");
    expect(seen.text).not.toMatch(STACK_LINE);
    expect(seen.text).not.toMatch(/Unhandled|Internal error/);

    const resumed = await runCli(["resume", "lost-1", "--db", url, "--no-input"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("Run completed: every step succeeded.");
  }, 120_000);

  it("connections terminated with pg_terminate_backend while a run is idle between steps are replaced, and the run completes", async () => {
    const url = await migrated();
    const child = spawnCli([
      "run",
      TRIP,
      "--db",
      url,
      "--thread",
      "kill-1",
      "--no-input",
      "--fault",
      "search_flights=timeout*1",
    ]);
    const seen = collect(child);
    await stderrMatches(child, /✓ (hotel|activities) /, seen);
    const killed = await rows<{ pid: number }>(
      url,
      "SELECT pg_terminate_backend(pid) AS pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
    );
    expect(killed.length).toBeGreaterThan(0);
    const code = await exited(child);
    // Either the run never noticed (its idle connections were replaced) or a query was cut: then exit 5, never a crash.
    expect([0, 5], seen.text).toContain(code);
    expect(seen.text).not.toMatch(/Unhandled|Internal error/);
    expect(seen.text).not.toMatch(STACK_LINE);
    if (code === 5) {
      const resumed = await runCli(["resume", "kill-1", "--db", url, "--no-input"]);
      expect(resumed.code, resumed.stderr).toBe(0);
    }
  }, 120_000);

  it("two workers survive a server restart: they reconnect with backoff, put back the thread they lost, and empty the queue", async () => {
    // Regression: both workers exited when PostgreSQL restarted, and the queue stalled.
    const url = await migrated();
    const threads = ["q-1", "q-2", "q-3"];
    for (const t of threads) {
      const s = await runCli(["submit", TRIP, "--db", url, "--thread", t, "--fault", "search_flights=timeout*1"]);
      expect(s.code, s.stderr).toBe(0);
    }
    const workers = [spawnCli(["worker", "--db", url]), spawnCli(["worker", "--db", url])];
    const logs = workers.map(collect);
    try {
      await Promise.all(workers.map((w, i) => stderrMatches(w, /running thread q-/, logs[i]!)));
      server.down();
      await sleep(1500);
      server.up();
      for (let i = 0; i < 400; i++) {
        const states = await rows<{ state: string }>(url, "SELECT state FROM candor_runs").catch(() => []);
        if (states.length === threads.length && states.every((r) => r.state === "done")) break;
        await sleep(250);
      }
      const final = await rows<{ thread_id: string; state: string; note: string | null }>(
        url,
        "SELECT thread_id, state, note FROM candor_runs ORDER BY thread_id",
      );
      expect(final, logs.map((l) => l.text).join("\n---\n")).toEqual(
        threads.map((t) => ({ thread_id: t, state: "done", note: "completed" })),
      );
      for (const [i, w] of workers.entries()) {
        expect(w.exitCode, logs[i]!.text).toBeNull();
        expect(logs[i]!.text).not.toMatch(/Unhandled|Internal error/);
        expect(logs[i]!.text).not.toMatch(STACK_LINE);
      }
      const all = logs.map((l) => l.text).join("\n");
      expect(all).toMatch(/lost the connection to postgres:\/\/\S+ \(.+\).*; trying again in 0\.5 s \(attempt 1\)\./);
      expect(all).toContain("again; taking threads");
      // The threads they were running (each held for over a second by its flight search's timeout) went back at once,
      // their leases given back, rather than waiting for the leases to expire: put back by the worker that lost it,
      // or, when the lost run had already ended and given its lease back (the connection went while it planned),
      // taken again by a worker once the server answered. Either way it ran again before the queue emptied.
      const lost = [...all.matchAll(/running thread (q-\d); trying again/g)].map((m) => m[1]!);
      expect(lost.length, all).toBeGreaterThan(0);
      for (const t of lost) {
        const putBack = all.includes(`thread ${t} put back on the queue: it continues from its checkpoint`);
        const again = all.slice(all.indexOf("again; taking threads")).includes(`running thread ${t}`);
        expect(putBack || again, `${t} was neither put back nor run again:\n${all}`).toBe(true);
      }
    } finally {
      for (const w of workers) w.kill("SIGTERM");
      await Promise.all(workers.map(exited));
    }
  }, 150_000);
});
