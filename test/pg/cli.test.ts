import { describe, expect, it } from "vitest";
import { runCli } from "../e2e/helpers.js";
import { postgresDatabase } from "./helpers.js";

const TRIP = "Plan a 2-day trip from Paris to Rome for 1 person";

describe("the CLI on PostgreSQL (--db postgres://… or CANDOR_DB)", () => {
  it("run, threads, history, report and logs work on the database named by CANDOR_DB, as on a SQLite file", async () => {
    const url = postgresDatabase();
    const env = { CANDOR_DB: url };
    const none = await runCli(["logs"], env);
    expect(none.code).toBe(0);
    expect(none.stderr).toContain(`No decision log at table candor_decisions in ${url} yet`);

    const run = await runCli(["run", TRIP, "--thread", "pg-run", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out).toMatchObject({ threadId: "pg-run", status: "completed", db: url });
    expect(run.stderr).toContain(`(decisions: table candor_decisions in ${url})`);

    const threads = JSON.parse((await runCli(["threads", "--json"], env)).stdout);
    expect(threads).toMatchObject({ db: url, threads: [{ threadId: "pg-run", status: "completed", runningIn: null }] });

    const history = await runCli(["history", "pg-run", "--json"], env);
    expect(history.code, history.stderr).toBe(0);
    expect(JSON.parse(history.stdout).checkpoints.length).toBeGreaterThan(3);

    const report = JSON.parse((await runCli(["report", "pg-run", "--json"], env)).stdout);
    expect(report).toMatchObject({ status: "completed" });

    const logs = await runCli(["logs", "--thread", "pg-run", "--operation", "plan", "--json"], env);
    expect(logs.code, logs.stderr).toBe(0);
    const lines = logs.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([expect.objectContaining({ operation: "plan", threadId: "pg-run" })]);
  });

  it("a thread waiting for approval is resumed from another process, and printed commands repeat --db", async () => {
    const url = postgresDatabase();
    const waiting = await runCli(["run", TRIP, "--db", url, "--thread", "pg-wait", "--approval-threshold", "0.99"]);
    expect(waiting.code).toBe(3);
    expect(waiting.stdout).toContain(`resume pg-wait --approve --db ${url}`);
    const resumed = await runCli(["resume", "pg-wait", "--approve", "--db", url]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const missing = await runCli(["report", "nope", "--db", url]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`There is no thread "nope" in ${url}. Recent threads in this database: pg-wait.`);
  });
});
