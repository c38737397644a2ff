/**
 * `npm run bench`: regenerates bench/RESULTS.md. Everything compared is measured side by side in one run
 * (interleaved, several rounds, medians), because these machines are shared and noisy: read the ratios.
 * Sections: failure → notification latency and the demo's
 * failure → strategy time (transparency.ts); rules-path selection time and model calls per recovered failure
 * (replanning.ts, on the scenarios of scenarios.ts, with the counting fake server of fake-openai.ts); execution
 * against a bare LangGraph floor and the anchors (execution.ts: overhead, irregular DAGs, checkpoint bytes,
 * progress latency, scale, plan-and-execute and LLMCompiler-style designs); learning from feedback (learning.ts:
 * simulated users with hidden preferences, success after reflection); model calls of determined vs model-driven
 * steps against an ideal ReAct loop (models.ts); honesty under an imperfect model: right, honestly not done and
 * WRONG runs per mode and mistake rate (honesty.ts); start-up of the compiled CLI beside bare node (startup.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { setMaxListeners } from "node:events";
import { tmpdir, cpus, loadavg } from "node:os";
import { join } from "node:path";
import { openPersistence } from "../src/memory/persistence.js";
import { executionBench, executionSection } from "./execution.js";
import { modelCallBench, selectionBench } from "./replanning.js";
import { ms, summarize, type Summary } from "./stats.js";
import { notificationLatency, strategyLatency } from "./transparency.js";
import { understandingBench, understandingSection } from "./understanding.js";
import { learningBench, learningSection } from "./learning.js";
import { modelsBench, modelsSection } from "./models.js";
import { honestyBench, honestySection } from "./honesty.js";
import { startupBench, startupSection } from "./startup.js";

// LangGraph adds abort listeners to a run's signal for every parallel subgraph task; past ten parallel steps
// Node would warn about a leak that is not one, and the execution bench runs 100 threads at once. An app-level
// setting, so it lives here and not in the library.
setMaxListeners(1024);

/** Transparency and replanning benches: bounded sample counts, so the whole bench stays well under 3 minutes. */
const LATENCY_RUNS = Number(process.env.BENCH_LATENCY_RUNS ?? 30);
const LATENCY_PAIRS = 4;
const DEMO_RUNS = Number(process.env.BENCH_DEMO_RUNS ?? 7);
const DEMO_LATENCY_MS = 5;
const SELECT_ITERATIONS = Number(process.env.BENCH_SELECT_ITERATIONS ?? 500);
const MODEL_RUNS = Number(process.env.BENCH_MODEL_RUNS ?? 3);
/** Seeds per mistake rate above 0 in the honesty bench: 12 requests × 3 modes each, about 30 s a seed. */
const HONESTY_SEEDS = Number(process.env.BENCH_HONESTY_SEEDS ?? 3);
const NOTIFY_TARGET_MS = 100;
const SELECT_TARGET_MS = 2000;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const row = (label: string, x: Summary, target?: number) =>
  `| ${label} | ${x.n} | ${ms(x.p50)} | ${ms(x.p95)} | ${ms(x.max)} |${target === undefined ? "" : ` ${(x.p95 / target).toFixed(4)}× |`}`;

async function main() {
  // How quiet the machine was: the 1-minute load average before and after, printed in the results' heading.
  const loadBefore = loadavg()[0]!;
  const dir = mkdtempSync(join(tmpdir(), "candor-bench-"));
  const sqlite = openPersistence(join(dir, "bench.db"));
  // Transparency: failure/success → event, on the same SqliteSaver file the CLI would use.
  await notificationLatency(2, LATENCY_PAIRS, sqlite.checkpointer); // warm-up
  const latency = await notificationLatency(LATENCY_RUNS, LATENCY_PAIRS, sqlite.checkpointer);
  process.stderr.write(`notification latency: ${latency.failureToNotification.length} failure samples\n`);
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });

  await strategyLatency(1, DEMO_LATENCY_MS); // warm-up
  const demo = await strategyLatency(DEMO_RUNS, DEMO_LATENCY_MS);
  process.stderr.write(`demo: ${DEMO_RUNS} runs, statuses ${[...new Set(demo.statuses)].join(", ")}\n`);
  const selection = await selectionBench(SELECT_ITERATIONS);
  process.stderr.write(`selection: ${selection.length} classes × ${SELECT_ITERATIONS}\n`);
  const llmCalls = await modelCallBench(MODEL_RUNS, "llm-plan");
  const fixedCalls = await modelCallBench(MODEL_RUNS, "fixed-plan");
  const models = await modelsBench(MODEL_RUNS);
  process.stderr.write(`models: 3 runs × ${MODEL_RUNS} rounds\n`);
  const understanding = await understandingBench();
  process.stderr.write(`model calls: ${llmCalls.length} + ${fixedCalls.length} scenarios × ${MODEL_RUNS} runs\n`);
  const execution = await executionBench();
  const learning = await learningBench();
  const honesty = await honestyBench({ seeds: HONESTY_SEEDS });
  process.stderr.write(`honesty: ${honesty.outcomes.length} runs in ${(honesty.ms / 1000).toFixed(0)} s\n`);
  const startup = startupBench();

  const md = `# Benchmarks

Generated by \`npm run bench\` on ${new Date().toISOString()} (Node ${process.version}, ${cpus().length} cores; load
average ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after). Interleaved rounds; medians. The machines are shared: compare the ratios, not the absolute times.

${transparencySection(latency, demo)}
${selectionSection(selection)}
${modelCallSection(llmCalls, fixedCalls)}
${modelsSection(models)}
${understandingSection(understanding, ms)}
${executionSection(execution)}
${learningSection(learning)}
${honestySection(honesty)}
${startupSection(startup)}`;
  writeFileSync(new URL("./RESULTS.md", import.meta.url), md);
  process.stdout.write(md);
}

function transparencySection(
  latency: Awaited<ReturnType<typeof notificationLatency>>,
  demo: Awaited<ReturnType<typeof strategyLatency>>,
): string {
  const fail = summarize(latency.failureToNotification);
  const ok = summarize(latency.successToNotification);
  const progress = summarize(latency.successToProgress);
  const demoRows = demo.byStep
    .map(
      (d) =>
        `| ${d.taskId} | ${d.strategy} | ${d.samples.length} | ${ms(d.median)} | ${ms(Math.min(...d.samples))}–${ms(Math.max(...d.samples))} |`,
    )
    .join("\n");
  return `
## Failure → notification latency (seed asks < ${NOTIFY_TARGET_MS} ms)

The real graph with a SqliteSaver file, streamed with \`streamMode: ["custom"]\` and \`subgraphs: true\`. Each run
has ${LATENCY_PAIRS} steps that fail and ${LATENCY_PAIRS} that succeed, all independent, one attempt each, ending a few ms
apart; the tool notes \`performance.now()\` right before it throws (or returns) and the consumer notes it again when the
matching event arrives, in the same process. ${LATENCY_RUNS} runs (after a warm-up); every run is cancelled once all its
events have arrived, so replanning is not in the sample.

| tool moment → event | samples | p50 | p95 | max | p95 / ${NOTIFY_TARGET_MS} ms |
|---|---:|---:|---:|---:|---:|
${row("throw → `step_failed` notification", fail, NOTIFY_TARGET_MS)}
${row("return → `step_succeeded` notification", ok, NOTIFY_TARGET_MS)}
${row("return → `progress` event", progress, NOTIFY_TARGET_MS)}

The failure is announced by the worker the moment \`runStep\` returns, so its latency is the stream's own
(failure/success ratio at p50: ${(fail.p50 / Math.max(1e-9, ok.p50)).toFixed(2)}×). The progress event is emitted by \`execute\`
the moment it takes the step's result, never after a sibling (execution is eager: see "Progress per step" below).

## Failure notification → strategy notification, in the demo

The demo (${DEMO_RUNS} runs after a warm-up, tools at ${DEMO_LATENCY_MS} ms, one attempt per step, flight limit 50 ms, MemorySaver):
time between a step's \`step_failed\` event and its \`strategy\` event, both as received by the consumer. Median run
${ms(median(demo.runMs))}; final statuses: ${[...new Set(demo.statuses)].join(", ")}.

| failed step | strategy | runs | median | range |
|---|---|---:|---:|---:|
${demoRows}

Strategies are chosen when execute's pass ends (nothing more can start), one failed step at a time in plan order:
the hotel fails at once but waits for the independent flight search to hit its 50 ms limit and for the flight's
revision, so its figure is mostly waiting for independent steps, not selection (see the next table for selection itself).
`;
}

function selectionSection(rows: Awaited<ReturnType<typeof selectionBench>>): string {
  const worst = Math.max(...rows.map((r) => r.summary.p95));
  return `
## Strategy selection + revision on the rules path (seed asks < ${SELECT_TARGET_MS} ms at p95)

\`selectStrategy\` + \`applyStrategy\` (pure functions) timed on real failures: each scenario runs through the real graph
paused before \`select_strategy\`, and the paused state (plan, feedback history, settings, registry) is the input.
${SELECT_ITERATIONS} iterations per class after 20 warm-up calls. "chosen → applied" is what selection picked and what the
revision really is (applyStrategy falls back to SKIP, and says why, when the chosen strategy no longer applies).

| class | failure | chosen → applied | p50 | p95 | max | p95 / ${SELECT_TARGET_MS} ms |
|---|---|---|---:|---:|---:|---:|
${rows.map((r) => `| ${r.cls} | ${r.scenario} | ${r.chosen} → ${r.applied} | ${ms(r.summary.p50)} | ${ms(r.summary.p95)} | ${ms(r.summary.max)} | ${(r.summary.p95 / SELECT_TARGET_MS).toFixed(6)}× |`).join("\n")}

Worst p95: ${ms(worst)}. Occasional max values of several ms are garbage collection, not the rules.
`;
}

function callTable(rows: Awaited<ReturnType<typeof modelCallBench>>): string {
  const lines = rows.map((r) => {
    const mine = r.handled.filter((h) => h.cls === r.cls);
    const handled = [...new Set(r.handled.map((h) => `${h.cls}: ${h.strategy}`))].join("; ") || "no failure occurred";
    const recovered =
      mine.length === 0
        ? "—"
        : mine.every((h) => h.recovered)
          ? "yes"
          : r.cls === "policy_blocked"
            ? "no: skipped (SKIP is this class's rule)"
            : "no: skipped";
    const failures = r.handled.length * r.runs;
    const per = failures === 0 ? "—" : (r.other / failures).toFixed(2);
    return `| ${r.cls} | ${r.what} | ${r.planBy} | ${handled} | ${recovered} | ${r.plan} | ${r.synthesis} | ${r.other} | ${per} |`;
  });
  return `| class | failure | plan by | handled as | recovered | plan | synthesis | other | other per handled failure |
|---|---|---|---|---|---:|---:|---:|---:|
${lines.join("\n")}`;
}

function modelCallSection(
  llm: Awaited<ReturnType<typeof modelCallBench>>,
  fixed: Awaited<ReturnType<typeof modelCallBench>>,
): string {
  const total = [...llm, ...fixed].reduce((n, r) => n + r.other, 0);
  const recovered = (rows: typeof llm) =>
    rows.reduce((n, r) => n + r.handled.filter((h) => h.recovered).length * r.runs, 0);
  return `
## Model calls per recovered failure (the aim is zero)

Every scenario runs ${MODEL_RUNS} times through the real graph with an \`LlmReasoner\` whose chat model is \`createChatModel\`
(ChatOpenAI) pointed at a counting OpenAI-compatible fake on 127.0.0.1 (bench/fake-openai.ts). The fake counts every
request by kind: "plan" (structured output named \`plan\`), "synthesis" (the final-answer prompt, one per run) and
"other" — anything else, which during a run can only be a model call made to recover. "Recovered" means the
revision was not SKIP and every step it added or changed finished done. The counts are totals over the ${MODEL_RUNS} runs.

**1. The model plans.** The plain \`LlmReasoner\`; the fake answers the planning request with the scenario's plan as
a \`ModelPlan\` (so "plan by: llm" means the model's plan was accepted, with no rules fallback). Such a plan carries the
model path's default step limits (30 s, two attempts), so the hanging-call timeout scenario is measured only in table 2.

${callTable(llm)}

**2. Fixed plan, model for everything else.** \`plan()\` returns the scenario's plan with one attempt per step and a
50 ms limit on the flight search (so every class, timeout included, fails on cue); recovery and the final answer go
through the \`LlmReasoner\` as in production. The "plan" column is 0 by construction here.

${callTable(fixed)}

**Model calls made to recover, all classes, both tables: ${total}** (over ${recovered(llm) + recovered(fixed)} recovered
failures). Known classes are classified and revised by rules; the synthesis count shows the fake really was on the
path. In table 1, wrong_tool does not occur: the model path's plan parser already moves a step to a worker granted
its tool. policy_blocked is skipped by design (its rule is SKIP), still without a model call.
`;
}

await main();
