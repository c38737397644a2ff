/**
 * `npm run bench:postgres`: regenerates bench/POSTGRES.md on a throwaway PostgreSQL server (the tests' helper):
 * throughput of submitted threads (a 12-step plan in waves of 4 at 100 ms per tool) with 1, 2 and 4 worker
 * processes on one database, as ratios to 1 worker; the per-superstep time on PostgreSQL against SQLite in the
 * same run; checkpoint bytes per run on PostgreSQL. Shared, noisy machines: read the ratios.
 */
import { spawn } from "node:child_process";
import { setMaxListeners } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { compileAgent } from "../graphs/agent.js";
import { RunSettings } from "../src/domain/request.js";
import { migrateDatabase, openPersistence } from "../src/memory/persistence.js";
import { connectPostgres } from "../src/memory/postgres.js";
import { createDatabaseFromTemplate, startThrowawayPostgres, TEMPLATE_DATABASE } from "../test/fakes/postgres.js";
import { FixedPlanReasoner, benchToolkit, wavePlan } from "./fixtures.js";

// LangGraph adds an abort listener per parallel task; four at once in a wave is not a leak.
setMaxListeners(64);
const THREADS = Number(process.env.BENCH_PG_THREADS ?? 16);
const WORKERS = [1, 2, 4];
const LATENCY_MS = 100;
const STEPS = 12;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROOT = join(import.meta.dirname, "..");

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function query<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Submits THREADS threads, then times `k` worker processes (loaded first) until the queue is empty. */
async function throughput(url: string, k: number): Promise<number> {
  const p = connectPostgres(url);
  try {
    for (let i = 0; i < THREADS; i++) {
      const threadId = `bench-${i}`;
      await p.store.put(["candor", "threads"], threadId, {
        threadId,
        request: "bench",
        userId: "bench",
        reasoner: "rules",
        model: null,
        faults: [],
        settings: RunSettings.parse({}),
        createdAt: new Date().toISOString(),
      });
      await p.queue.enqueue(threadId, { kind: "start" });
    }
  } finally {
    await p.close();
  }
  const children = Array.from({ length: k }, () =>
    spawn(process.execPath, ["--import", "tsx", "bench/pg-worker.ts", url, String(LATENCY_MS)], {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "inherit"],
    }),
  );
  const ready = children.map(
    (c) =>
      new Promise<void>((resolve) => {
        let out = "";
        c.stdout.on("data", (d: Buffer) => {
          out += d.toString();
          if (out.includes("READY")) resolve();
        });
      }),
  );
  const exited = children.map((c) => new Promise<void>((resolve) => c.on("exit", () => resolve())));
  await Promise.all(ready);
  const t0 = performance.now();
  for (const c of children) c.stdin.write("go\n");
  await Promise.all(exited);
  const seconds = (performance.now() - t0) / 1000;
  const done = await query<{ n: string }>(url, "SELECT count(*) AS n FROM candor_runs WHERE state = 'done'");
  if (Number(done[0]!.n) !== THREADS) throw new Error(`only ${done[0]!.n} of ${THREADS} threads finished`);
  return THREADS / seconds;
}

/** One run of the 12-step plan without tool latency: the orchestration and checkpointing cost alone. */
async function superstepMs(persistence: Parameters<typeof compileAgent>[1], threadId: string) {
  const plan = wavePlan(STEPS, 4, 0);
  const app = compileAgent({ toolkits: [benchToolkit(STEPS, 0)], reasoner: new FixedPlanReasoner(plan) }, persistence);
  const config = { configurable: { thread_id: threadId } };
  const t0 = performance.now();
  const final = await app.invoke({ request: { userIntent: "bench" } }, config);
  const ms = performance.now() - t0;
  if (final.status !== "completed") throw new Error(`bench run ended ${String(final.status)}`);
  let supersteps = 0;
  for await (const _ of app.getStateHistory(config)) supersteps++;
  return ms / supersteps;
}

async function main() {
  const server = await startThrowawayPostgres();
  const dir = mkdtempSync(join(tmpdir(), "candor-bench-pg-"));
  try {
    await migrateDatabase(await server.createDatabase(TEMPLATE_DATABASE));
    const rates: number[] = [];
    for (const k of WORKERS) rates.push(await throughput(createDatabaseFromTemplate(server.url, server.bin), k));

    const pgUrl = createDatabaseFromTemplate(server.url, server.bin);
    const postgres = connectPostgres(pgUrl);
    const sqlite = openPersistence(join(dir, "bench.db"));
    const perStep = { sqlite: [] as number[], postgres: [] as number[] };
    try {
      await superstepMs(sqlite, "warm");
      await superstepMs(postgres, "warm");
      for (let round = 0; round < ROUNDS; round++) {
        perStep.sqlite.push(await superstepMs(sqlite, `r${round}`));
        perStep.postgres.push(await superstepMs(postgres, `r${round}`));
      }
    } finally {
      sqlite.close();
      await postgres.close();
    }
    const [bytes] = await query<{ checkpoints: string; blobs: string; writes: string }>(
      pgUrl,
      `SELECT (SELECT coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0) FROM checkpoints WHERE thread_id = 'r0') AS checkpoints,
              (SELECT coalesce(sum(pg_column_size(blob)), 0) FROM checkpoint_blobs WHERE thread_id = 'r0') AS blobs,
              (SELECT coalesce(sum(pg_column_size(blob)), 0) FROM checkpoint_writes WHERE thread_id = 'r0') AS writes`,
    );
    const kib = (n: string) => `${(Number(n) / 1024).toFixed(1)} KiB`;
    const total = Number(bytes!.checkpoints) + Number(bytes!.blobs) + Number(bytes!.writes);
    const sqliteMs = median(perStep.sqlite);
    const postgresMs = median(perStep.postgres);
    const text = `# PostgreSQL benchmark

Generated by \`npm run bench:postgres\` (bench/postgres.ts) on ${cpus().length} cores, a throwaway PostgreSQL server
on this machine (fsync off). Shared, noisy machine: read the ratios.

## Throughput of submitted threads by worker processes

${THREADS} threads submitted at once, each a ${STEPS}-step plan in waves of 4 at ${LATENCY_MS} ms per tool; the
workers are loaded before the clock starts and exit when the queue is empty.

| workers | threads/s | ratio to 1 worker |
|---|---|---|
${WORKERS.map((k, i) => `| ${k} | ${rates[i]!.toFixed(2)} | ${(rates[i]! / rates[0]!).toFixed(2)}× |`).join("\n")}

## Orchestration and checkpointing per superstep (same plan, no tool latency, ${ROUNDS} rounds, medians)

| checkpointer | ms per superstep | ratio to SQLite |
|---|---|---|
| SQLite (file) | ${sqliteMs.toFixed(2)} | 1.00× |
| PostgreSQL | ${postgresMs.toFixed(2)} | ${(postgresMs / sqliteMs).toFixed(2)}× |

## Checkpoint bytes of one run on PostgreSQL

checkpoints ${kib(bytes!.checkpoints)} · channel blobs ${kib(bytes!.blobs)} · pending writes ${kib(bytes!.writes)} ·
total ${(total / 1024).toFixed(1)} KiB (as stored, \`pg_column_size\`).
`;
    writeFileSync(join(ROOT, "bench", "POSTGRES.md"), text);
    console.log(text);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    server.stop();
  }
}

await main();
