import { spawn } from "node:child_process";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { childEnv, ROOT, runCli } from "../e2e/helpers.js";
import { postgresDatabase } from "./helpers.js";

const TRIP = "Plan a 2-day trip from Paris to Rome for 1 person";

interface ChildResult {
  pid: number;
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the same command in `n` processes released at the same moment (test/pg/child-cli.ts). */
async function atOnce(args: string[], n: number): Promise<ChildResult[]> {
  const children = Array.from({ length: n }, () =>
    spawn(process.execPath, ["--import", "tsx", "test/pg/child-cli.ts", ...args], {
      cwd: ROOT,
      env: childEnv(),
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
    const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
    return { ready, exited, output: () => out };
  });
  await Promise.all(outputs.map((o) => o.ready));
  for (const child of children) child.stdin.write("go\n");
  return Promise.all(
    outputs.map(async (o) => {
      await o.exited;
      return JSON.parse(o.output().trim().split("\n").pop() ?? "") as ChildResult;
    }),
  );
}

/** The decision lines recorded for a thread, from the decision table. */
async function decisions(url: string, threadId: string): Promise<{ operation: string; decision: string }[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ line: string }>(
      "SELECT line FROM candor_decisions WHERE thread_id = $1 ORDER BY id",
      [threadId],
    );
    return rows.map((r) => JSON.parse(r.line) as { operation: string; decision: string });
  } finally {
    await client.end();
  }
}

describe("one writer per thread on PostgreSQL", () => {
  it("two processes released at once to approve one waiting thread: one proceeds, the other is told busy, one decision applied", async () => {
    const url = postgresDatabase();
    // A timeout fault makes the approved run take seconds, so the second process arrives while the first holds it.
    const started = await runCli([
      "run",
      TRIP,
      "--db",
      url,
      "--thread",
      "race",
      "--approval-threshold",
      "0.99",
      "--fault",
      "search_flights=timeout*1",
      "--no-input",
    ]);
    expect(started.code, started.stderr).toBe(3);

    const [a, b] = await atOnce(["resume", "race", "--approve", "--db", url, "--no-input"], 2);
    const winner = a!.code === 2 ? b! : a!;
    const loser = a!.code === 2 ? a! : b!;
    expect([a!.code, b!.code].sort(), `${a!.stderr}\n---\n${b!.stderr}`).toEqual([0, 2]);
    expect(loser.stderr).toMatch(
      new RegExp(`^Thread race is busy: another process \\(pid ${winner.pid}\\) is running it and holds its lease`),
    );
    expect(loser.stdout).toBe("");

    // No update lost or doubled: the approval was applied once and the run finished once.
    const log = await decisions(url, "race");
    expect(log.filter((d) => d.operation === "human_decision")).toHaveLength(1);
    expect(log.filter((d) => d.operation === "report")).toHaveLength(1);
    const report = await runCli(["report", "race", "--json", "--db", url]);
    expect(JSON.parse(report.stdout)).toMatchObject({ status: "completed" });
    // And the lease was given back.
    const threads = JSON.parse((await runCli(["threads", "--json", "--db", url])).stdout);
    expect(threads.threads).toEqual([
      expect.objectContaining({ threadId: "race", runningIn: null, status: "completed" }),
    ]);
  });
});
