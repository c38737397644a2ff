import { spawn } from "node:child_process";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { CANDOR_SCHEMA_VERSION } from "../../src/memory/postgres.js";
import { ROOT, runCli } from "../e2e/helpers.js";
import { postgresDatabase } from "./helpers.js";

const TRIP = "Plan a 3-day trip from Madrid to Paris for 2 people";

async function tables(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
    );
    return rows.map((r) => r.tablename);
  } finally {
    await client.end();
  }
}

/** Starts `n` migrating processes, waits until each has loaded, then lets them all go at once. */
async function migrateAtOnce(
  url: string,
  n: number,
): Promise<{ code: number | null; report: Record<string, unknown> }[]> {
  const children = Array.from({ length: n }, () =>
    spawn(process.execPath, ["--import", "tsx", "test/pg/child-migrate.ts", url], {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "inherit"],
    }),
  );
  const outputs = children.map((child) => {
    let out = "";
    const ready = new Promise<void>((resolve) =>
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("READY")) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    return { ready, exited, output: () => out };
  });
  await Promise.all(outputs.map((o) => o.ready));
  for (const child of children) child.stdin.write("go\n");
  return Promise.all(
    outputs.map(async (o) => {
      const code = await o.exited;
      const last = o.output().trim().split("\n").pop() ?? "";
      return { code, report: JSON.parse(last) as Record<string, unknown> };
    }),
  );
}

describe("candor db migrate on PostgreSQL", () => {
  it("a command on a database that was never migrated refuses, names the command that fixes it, and creates nothing", async () => {
    const url = postgresDatabase({ migrated: false });
    const out = await runCli(["run", TRIP, "--db", url, "--no-input"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`has no Candor tables yet`);
    expect(out.stderr).toContain(`run \`candor db migrate --db ${url}\``);
    expect(await tables(url)).toEqual([]);
  });

  it("4 processes released at the same moment migrate one empty database: one creates the tables, the others wait for it and find them", async () => {
    // Without the advisory lock two of them set up the same tables at once and one fails on a duplicate key.
    const url = postgresDatabase({ migrated: false });
    const results = await migrateAtOnce(url, 4);
    for (const r of results) expect(r, JSON.stringify(r.report)).toMatchObject({ code: 0 });
    expect(results.filter((r) => r.report.before === null)).toHaveLength(1);
    expect(results.filter((r) => r.report.before === CANDOR_SCHEMA_VERSION)).toHaveLength(3);
    expect(results.filter((r) => r.report.waited === true).length).toBeGreaterThan(0);
  });

  it("candor db migrate from 4 CLI processes at once: all succeed, one creates the tables, the others find them", async () => {
    const url = postgresDatabase({ migrated: false });
    const runs = await Promise.all(Array.from({ length: 4 }, () => runCli(["db", "migrate", "--db", url, "--json"])));
    for (const r of runs) expect(r, r.stderr).toMatchObject({ code: 0 });
    const reports = runs.map((r) => JSON.parse(r.stdout) as { before: number | null; after: number });
    expect(reports.filter((r) => r.before === null)).toHaveLength(1);
    expect(reports.filter((r) => r.before === CANDOR_SCHEMA_VERSION)).toHaveLength(3);
    expect(reports.every((r) => r.after === CANDOR_SCHEMA_VERSION)).toBe(true);
    expect(await tables(url)).toEqual(
      expect.arrayContaining([
        "checkpoints",
        "checkpoint_blobs",
        "checkpoint_writes",
        "store",
        "candor_effects",
        "candor_leases",
        "candor_decisions",
        "candor_schema_migrations",
      ]),
    );

    // Idempotent: once more says there is nothing to do; and the database now runs a thread.
    const again = await runCli(["db", "migrate", "--db", url]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`is up to date (Candor schema version ${CANDOR_SCHEMA_VERSION}); nothing to do.`);
    const run = await runCli(["run", TRIP, "--db", url, "--no-input", "--thread", "after-migrate"]);
    expect(run.code, run.stderr).toBe(0);
  });
});
