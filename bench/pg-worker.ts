/**
 * One worker of the PostgreSQL benchmark (bench/postgres.ts): `node --import tsx bench/pg-worker.ts <url> <ms>`
 * loads everything, prints READY, waits for a line on stdin, then runs queued threads with the bench toolkit (a
 * 12-step plan in waves of 4, each tool waiting <ms>) until none is queued or running, and exits.
 */
import { createInterface } from "node:readline";
import { setMaxListeners } from "node:events";
import { compileAgent } from "../graphs/agent.js";
import { workLoop } from "../src/cli/commands/worker.js";
import { connectPostgres } from "../src/memory/postgres.js";
import { FixedPlanReasoner, benchToolkit, wavePlan } from "./fixtures.js";

const [url, latency] = process.argv.slice(2);
if (!url || !latency) {
  console.error("usage: pg-worker.ts <postgres url> <tool latency ms>");
  process.exit(2);
}
// LangGraph adds an abort listener per parallel task; four at once in a wave is not a leak.
setMaxListeners(64);
const STEPS = 12;
const persistence = connectPostgres(url);
const plan = wavePlan(STEPS, 4, Number(latency));
const graph = compileAgent(
  { toolkits: [benchToolkit(STEPS, Number(latency))], reasoner: new FixedPlanReasoner(plan) },
  persistence,
);
const lines = createInterface({ input: process.stdin });
console.log("READY");
await new Promise<void>((resolve) => lines.once("line", () => resolve()));
lines.close();
try {
  const runs = await workLoop(persistence, {
    io: { out: () => undefined, err: () => undefined, env: {}, invokedAs: "candor" },
    signal: new AbortController().signal,
    exitWhenIdle: true,
    sessionFor: async (p) => ({ graph, persistence: p, logFile: "", close: async () => undefined }),
  });
  console.log(JSON.stringify({ runs }));
} finally {
  await persistence.close();
}
