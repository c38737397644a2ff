/**
 * The execution bench (issue 10): Candor's scheduling and orchestration measured side by side with a bare
 * LangGraph graph of the same shape (the floor, execution/floor.ts) and with the designs people build instead
 * (anchors/), in one process, interleaved rounds, medians, every figure a ratio. Part of `npm run bench`
 * (run.ts calls executionBench and executionSection); on its own: `npx tsx bench/execution.ts` prints the
 * sections without touching RESULTS.md.
 *
 * Env: BENCH_EXEC_ROUNDS (rounds of the timed comparisons, default BENCH_ROUNDS or 5), BENCH_DAG_ROUNDS (rounds of
 * the irregular DAGs and the waves plan, default 9 or more), BENCH_EXEC_SIZES (plan sizes
 * for overhead and bytes, default 12,50,200), BENCH_PROGRESS_RUNS (default 5), BENCH_EXEC_THREADS (default 100),
 * BENCH_EXEC_BIG_STEPS (default 1000), BENCH_ANCHOR_ROUNDS (default 3), BENCH_ANCHOR_SETTINGS (M:T,… in ms).
 */
import { setMaxListeners } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { openPersistence } from "../src/memory/persistence.js";
import { sleep } from "../src/tools/sleep.js";
import { waveSteps, type DagStep } from "./fixtures.js";
import { LINEAR_SLACK, criticalPathMs, growth, waveScheduleMs, type Growth } from "./execution/analysis.js";
import { DESIGNS, anchorBench, type AnchorSetting, type Design } from "./execution/anchors.js";
import {
  candorApp,
  floorApp,
  invokeCandor,
  invokeFloor,
  progressLatency,
  runCandor,
  runEagerFloor,
  runFloor,
  type Run,
  type SpannedRun,
} from "./execution/drive.js";
import { threadBytes, withMemory, withStallMonitor, type Memory, type Stall } from "./execution/measure.js";
import { median, ms, spread, summarize } from "./stats.js";

const int = (name: string, fallback: number) => {
  const raw = process.env[name];
  const n = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return n;
};

const ROUNDS = int("BENCH_EXEC_ROUNDS", int("BENCH_ROUNDS", 5));
/**
 * The DAG and waves goals sit within a few ms of their line, and a run's time there is mostly timers that fire a
 * little late on a shared machine: more rounds, so a median is not one noisy round.
 */
const DAG_ROUNDS = int("BENCH_DAG_ROUNDS", Math.max(ROUNDS, 9));
const SIZES = (process.env.BENCH_EXEC_SIZES ?? "12,50,200").split(",").map(Number);
const PROGRESS_RUNS = int("BENCH_PROGRESS_RUNS", 5);
const THREADS = int("BENCH_EXEC_THREADS", 100);
const BIG_STEPS = int("BENCH_EXEC_BIG_STEPS", 1000);
const ANCHOR_ROUNDS = int("BENCH_ANCHOR_ROUNDS", 3);
const ANCHOR_SETTINGS = (process.env.BENCH_ANCHOR_SETTINGS ?? "100:100,0:100,100:0,0:0")
  .split(",")
  .map((p) => p.split(":").map(Number) as [number, number]);

const WIDTH = 4;
const WAVE_LATENCY_MS = 100;
/**
 * Threads arrive this far apart and each lives at least three waves of THREAD_TOOL_MS, so all of them are in flight
 * together once the last has started. Started in the same instant instead, every design (the floor included) runs
 * each thread's first supersteps back to back on promises, before any timer: a stall that says nothing about Candor.
 */
const THREAD_ARRIVAL_MS = 10;
const THREAD_TOOL_MS = 500;
const BIG_WIDTH = 10;

// Goals of issue 10.
const OVERHEAD_GOAL = 1.5;
const OVERHEAD_GOAL_SIZES = [12, 200];
const CRITICAL_PATH_GOAL = 1.1;
const SPEEDUP_GOAL = 3.85;
const BYTES_GOAL = 3 * 1024 * 1024;
const BYTES_GOAL_STEPS = 200;
const BYTES_SMALL_STEPS = 12;
const SCALE_GOAL_THREADS = 100;
const SCALE_GOAL_STEPS = 1000;
const PROGRESS_GOAL_MS = 200;
const STALL_GOAL_MS = 100;

const SAVERS = ["none", "memory", "sqlite"] as const;
type Saver = (typeof SAVERS)[number];

/** Irregular DAGs where a superstep per wave loses to an eager schedule. */
const SHAPES: { name: string; what: string; steps: DagStep[] }[] = [
  {
    name: "one slow branch",
    what: "a1→a2→a3 at 100 ms each beside b1 at 300 ms",
    steps: [
      { id: "a1", dependsOn: [], latencyMs: 100 },
      { id: "a2", dependsOn: ["a1"], latencyMs: 100 },
      { id: "a3", dependsOn: ["a2"], latencyMs: 100 },
      { id: "b1", dependsOn: [], latencyMs: 300 },
    ],
  },
  {
    name: "chains of different lengths",
    what: "c1→…→c5 at 40 ms each, d1→d2 at 100 ms, e1 at 200 ms",
    steps: [
      ...[1, 2, 3, 4, 5].map((i) => ({ id: `c${i}`, dependsOn: i > 1 ? [`c${i - 1}`] : [], latencyMs: 40 })),
      { id: "d1", dependsOn: [], latencyMs: 100 },
      { id: "d2", dependsOn: ["d1"], latencyMs: 100 },
      { id: "e1", dependsOn: [], latencyMs: 200 },
    ],
  },
  {
    name: "a join after both",
    what: "a1 (50 ms)→a2 (150 ms) and b1 (150 ms)→b2 (50 ms), then j (50 ms) after a2 and b2",
    steps: [
      { id: "a1", dependsOn: [], latencyMs: 50 },
      { id: "a2", dependsOn: ["a1"], latencyMs: 150 },
      { id: "b1", dependsOn: [], latencyMs: 150 },
      { id: "b2", dependsOn: ["b1"], latencyMs: 50 },
      { id: "j", dependsOn: ["a2", "b2"], latencyMs: 50 },
    ],
  },
];

/** Siblings of very different latencies, each followed by a dependent step: a wave waits for its slowest. */
const PROGRESS_LATENCIES = [20, 150, 300, 450];
const PROGRESS_STEPS: DagStep[] = PROGRESS_LATENCIES.flatMap((latencyMs, i) => [
  { id: `p${i + 1}`, dependsOn: [], latencyMs },
  { id: `q${i + 1}`, dependsOn: [`p${i + 1}`], latencyMs },
]);

interface OverheadCell {
  floor: number[];
  candor: number[];
}
interface BytesRow {
  steps: number;
  floor: number[];
  candor: number[];
  floorCheckpoints: number;
  candorCheckpoints: number;
}
interface ShapeRow {
  name: string;
  what: string;
  criticalMs: number;
  waveMs: number;
  candor: number[];
  floor: number[];
  /** The card's supersteps bare on LangGraph, executing eagerly (buildEagerFloor): the stack's own cost. */
  eagerFloor: number[];
  /** Candor on the same plan with every tool answering at once: its fixed cost (planning, synthesis, reflection). */
  instant: number[];
}
interface Batch {
  ms: number;
  /** The most threads in flight at one moment. */
  peak: number;
  errors: string[];
  stall: Stall;
  memory: Memory;
}
interface BigRun {
  ms: number;
  error: string | null;
  memory: Memory;
  bytes: number;
}

export interface ExecutionResults {
  rounds: number;
  dagRounds: number;
  loadBefore: number[];
  loadAfter: number[];
  overhead: Record<number, Record<Saver, OverheadCell>>;
  bytes: BytesRow[];
  shapes: ShapeRow[];
  uniform: {
    waves: number[];
    chain: number[];
    wavesInstant: number[];
    chainInstant: number[];
    /** The eager floor (buildEagerFloor) on the same two plans: the speed-up the stack itself allows. */
    eagerWaves: number[];
    eagerChain: number[];
    /** From the first tool's start to the last tool's return in the runs above: execution alone. */
    span: { waves: number[]; chain: number[]; eagerWaves: number[]; eagerChain: number[] };
  };
  progress: number[];
  threads: { candor: Batch; floor: Batch };
  big: { candor: BigRun; floor: BigRun };
  anchors: AnchorSetting[];
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/** The checkpointer of one run: a fresh MemorySaver each time, so no run pays for an earlier one's threads. */
const saverFor = (kind: Saver, sqlite: BaseCheckpointSaver): BaseCheckpointSaver | undefined =>
  kind === "none" ? undefined : kind === "memory" ? new MemorySaver() : sqlite;

/** `threads` runs, the i-th started i × THREAD_ARRIVAL_MS after the first, all awaited. */
async function batch(threads: number, run: () => Promise<unknown>): Promise<Batch> {
  let inFlight = 0;
  let peak = 0;
  const one = async (i: number) => {
    await sleep(i * THREAD_ARRIVAL_MS);
    peak = Math.max(peak, ++inFlight);
    try {
      await run();
    } finally {
      inFlight--;
    }
  };
  const t0 = performance.now();
  const { value, memory } = await withMemory(() =>
    withStallMonitor(() => Promise.allSettled(Array.from({ length: threads }, (_, i) => one(i)))),
  );
  const errors = value.value.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
  return { ms: performance.now() - t0, peak, errors, stall: value.stall, memory };
}

async function bigRun(run: () => Promise<Run>, reader: Database.Database): Promise<BigRun> {
  const { value, memory } = await withMemory(async () => {
    try {
      return { run: await run(), error: null };
    } catch (e) {
      return { run: null, error: e instanceof Error ? e.message : String(e) };
    }
  });
  return {
    ms: value.run?.ms ?? Number.NaN,
    error: value.error,
    memory,
    bytes: value.run ? threadBytes(reader, value.run.threadId).bytes : Number.NaN,
  };
}

export async function executionBench(): Promise<ExecutionResults> {
  const loadBefore = loadavg();
  const dir = mkdtempSync(join(tmpdir(), "candor-exec-bench-"));
  const file = join(dir, "bench.db");
  const sqlite = openPersistence(file);
  const reader = new Database(file, { readonly: true });
  try {
    const saver = sqlite.checkpointer;

    // 1 + 3. Orchestration per run with tools that return at once, and checkpoint bytes, Candor vs floor.
    const overhead: ExecutionResults["overhead"] = {};
    const bytes: BytesRow[] = SIZES.map((steps) => ({
      steps,
      floor: [],
      candor: [],
      floorCheckpoints: 0,
      candorCheckpoints: 0,
    }));
    for (const kind of SAVERS) {
      // Warm-up: module loading, JIT and SQLite's first writes are not what is measured.
      await runFloor(waveSteps(12, WIDTH, 0), saverFor(kind, saver), "warm");
      await runCandor(waveSteps(12, WIDTH, 0), saverFor(kind, saver), "warm");
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, steps] of SIZES.entries()) {
        const plan = waveSteps(steps, WIDTH, 0);
        for (const kind of SAVERS) {
          const cell = ((overhead[steps] ??= {} as Record<Saver, OverheadCell>)[kind] ??= { floor: [], candor: [] });
          // Alternate which goes first, so neither always runs on the other's garbage.
          const pair = [
            async () => {
              const run = await runFloor(plan, saverFor(kind, saver), `zero-${steps}`);
              cell.floor.push(run.ms);
              if (kind === "sqlite") {
                const b = threadBytes(reader, run.threadId);
                bytes[i]!.floor.push(b.bytes);
                bytes[i]!.floorCheckpoints = b.checkpoints;
                await saver.deleteThread(run.threadId); // keeps the file as small for every round
              }
            },
            async () => {
              const run = await runCandor(plan, saverFor(kind, saver), `zero-${steps}`);
              cell.candor.push(run.ms);
              if (kind === "sqlite") {
                const b = threadBytes(reader, run.threadId);
                bytes[i]!.candor.push(b.bytes);
                bytes[i]!.candorCheckpoints = b.checkpoints;
                await saver.deleteThread(run.threadId);
              }
            },
          ];
          if (round % 2) pair.reverse();
          for (const f of pair) await f();
        }
        const sq = overhead[steps]!.sqlite;
        log(
          `overhead round ${round + 1}/${ROUNDS}, ${steps} steps, SqliteSaver: floor ${sq.floor.at(-1)!.toFixed(1)} ms, Candor ${sq.candor.at(-1)!.toFixed(1)} ms`,
        );
      }
    }

    // 2. Irregular DAGs vs their eager critical path, and the uniform plan in waves vs one step at a time.
    const shapes: ShapeRow[] = SHAPES.map((s) => ({
      name: s.name,
      what: s.what,
      criticalMs: criticalPathMs(s.steps),
      waveMs: waveScheduleMs(s.steps),
      candor: [],
      floor: [],
      eagerFloor: [],
      instant: [],
    }));
    const uniform = {
      waves: [] as number[],
      chain: [] as number[],
      wavesInstant: [] as number[],
      chainInstant: [] as number[],
      eagerWaves: [] as number[],
      eagerChain: [] as number[],
      span: { waves: [] as number[], chain: [] as number[], eagerWaves: [] as number[], eagerChain: [] as number[] },
    };
    const record = (into: number[], span: number[], run: SpannedRun) => {
      into.push(run.ms);
      span.push(run.spanMs);
    };
    const instantly = (steps: readonly DagStep[]) => steps.map((s) => ({ ...s, latencyMs: 0 }));
    for (let round = 0; round < DAG_ROUNDS; round++) {
      for (const [i, shape] of SHAPES.entries()) {
        const pair = [
          async () => shapes[i]!.candor.push((await runCandor(shape.steps, saver, "shape")).ms),
          async () => shapes[i]!.floor.push((await runFloor(shape.steps, saver, "shape")).ms),
          async () => shapes[i]!.eagerFloor.push((await runEagerFloor(shape.steps, saver, "shape")).ms),
          async () => shapes[i]!.instant.push((await runCandor(instantly(shape.steps), saver, "instant")).ms),
        ];
        if (round % 2) pair.reverse();
        for (const f of pair) await f();
      }
      const { span } = uniform;
      record(uniform.waves, span.waves, await runCandor(waveSteps(12, WIDTH, WAVE_LATENCY_MS), saver, "waves"));
      record(uniform.chain, span.chain, await runCandor(waveSteps(12, 1, WAVE_LATENCY_MS), saver, "chain"));
      uniform.wavesInstant.push((await runCandor(waveSteps(12, WIDTH, 0), saver, "waves-instant")).ms);
      uniform.chainInstant.push((await runCandor(waveSteps(12, 1, 0), saver, "chain-instant")).ms);
      record(
        uniform.eagerWaves,
        span.eagerWaves,
        await runEagerFloor(waveSteps(12, WIDTH, WAVE_LATENCY_MS), saver, "waves"),
      );
      record(
        uniform.eagerChain,
        span.eagerChain,
        await runEagerFloor(waveSteps(12, 1, WAVE_LATENCY_MS), saver, "chain"),
      );
      log(
        `DAG round ${round + 1}/${DAG_ROUNDS}: ${shapes.map((s) => `${s.name} ${s.candor.at(-1)!.toFixed(0)} ms`).join(", ")}; waves ${uniform.waves.at(-1)!.toFixed(0)} ms, chain ${uniform.chain.at(-1)!.toFixed(0)} ms`,
      );
    }

    // 4. Progress: tool return → progress event, per step, on siblings of different latencies.
    await progressLatency(PROGRESS_STEPS, saver); // warm-up
    const progress: number[] = [];
    for (let r = 0; r < PROGRESS_RUNS; r++) progress.push(...(await progressLatency(PROGRESS_STEPS, saver)));
    log(`progress: ${progress.length} samples, p95 ${ms(summarize(progress).p95)}`);

    // 5. Scale: concurrent threads on one SQLite file, then one very long plan.
    const threadPlan = waveSteps(12, WIDTH, THREAD_TOOL_MS);
    const candorShared = candorApp(threadPlan, saver);
    const floorShared = floorApp(threadPlan, saver);
    const threads = {
      floor: await batch(THREADS, () => invokeFloor(floorShared, threadPlan.length, "threads")),
      candor: await batch(THREADS, () => invokeCandor(candorShared, "threads")),
    };
    log(
      `threads: ${THREADS} concurrent, Candor ${threads.candor.ms.toFixed(0)} ms, ${threads.candor.errors.length} errors`,
    );
    const bigPlan = waveSteps(BIG_STEPS, BIG_WIDTH, 0);
    const big = {
      floor: await bigRun(() => runFloor(bigPlan, saver, "big"), reader),
      candor: await bigRun(() => runCandor(bigPlan, saver, "big"), reader),
    };
    log(`${BIG_STEPS} steps: Candor ${big.candor.ms.toFixed(0)} ms${big.candor.error ? ` (${big.candor.error})` : ""}`);

    // 6. The anchors.
    const anchors = await anchorBench(ANCHOR_SETTINGS, ANCHOR_ROUNDS, 12, WIDTH, saver, log);

    return {
      rounds: ROUNDS,
      dagRounds: DAG_ROUNDS,
      loadBefore,
      loadAfter: loadavg(),
      overhead,
      bytes,
      shapes,
      uniform,
      progress,
      threads,
      big,
      anchors,
    };
  } finally {
    reader.close();
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What the floor's own stall says about the goal: the floor does nothing but LangGraph's own work (supersteps,
 * checkpoint writes) on the same SQLite file, so a stall it shows too is not Candor's extra work; what Candor adds
 * is its yield points (src/tools/cooperate.ts), which the floor, being bare LangGraph, does not have.
 */
function floorStallLine(floorP99Ms: number, candorP99Ms: number): string {
  const why =
    "the tools' timers that fall due during one long turn are all served in the next, back to back, so turns grow with the load";
  if (floorP99Ms <= STALL_GOAL_MS)
    return `The floor alone stalls ${ms(floorP99Ms)} at p99, within the ${STALL_GOAL_MS} ms goal, so any excess is Candor's own work.`;
  return candorP99Ms <= STALL_GOAL_MS
    ? `The floor alone stalls ${ms(floorP99Ms)} at p99, over the ${STALL_GOAL_MS} ms goal: ${why}. Candor does the same work and more per thread, but every node, step call and tool answer is a yield point: past a 10 ms slice, the rest waits for a later turn, so the loop serves its timers in between.`
    : `The floor alone stalls ${ms(floorP99Ms)} at p99, over the ${STALL_GOAL_MS} ms goal: ${why}. Candor's yield points (a 10 ms slice per turn) did not keep it within the goal on this run.`;
}

const rounds = (n: number) => `${n} round${n === 1 ? "" : "s"}`;
/** "met" or "NOT met", computed; null when the env knobs left out a size the goal names. */
const verdict = (ok: boolean | null) =>
  ok === null ? "not measured at the goal's size (env knobs)" : ok ? "met" : "NOT met";
const x = (ratio: number) => (Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : "n/a");
const kib = (b: number) => (b >= 1024 * 1024 ? `${(b / 1024 / 1024).toFixed(2)} MiB` : `${(b / 1024).toFixed(1)} KiB`);
const mib = (m: number) => `${m.toFixed(1)} MiB`;
const SAVER_LABEL: Record<Saver, string> = { none: "none", memory: "MemorySaver", sqlite: "SqliteSaver (file)" };
const DESIGN_LABEL: Record<Design, string> = {
  candor: "Candor",
  planExecute: "plan-and-execute",
  dagWaves: "DAG, waves (Send)",
  taskFetching: "task-fetching unit",
};

/** Every timed series of the run, for the quietness line. */
function series(r: ExecutionResults): number[][] {
  return [
    ...Object.values(r.overhead).flatMap((byKind) => Object.values(byKind).flatMap((c) => [c.floor, c.candor])),
    ...r.shapes.flatMap((s) => [s.candor, s.floor]),
    r.uniform.waves,
    r.uniform.chain,
    r.uniform.wavesInstant,
    r.uniform.chainInstant,
    ...r.anchors.flatMap((a) => DESIGNS.map((d) => a.ms[d])),
  ];
}

export function executionSection(r: ExecutionResults): string {
  const spreads = series(r).map(spread);
  const load = (l: number[]) => l.map((v) => v.toFixed(2)).join(" / ");
  const pct = (v: number) => `${(v * 100).toFixed(0)}%`;
  const quiet = `How quiet the machine was: load average (1 / 5 / 15 min) ${load(r.loadBefore)} before these sections and
${load(r.loadAfter)} after (${cpus().length} cores); ${
    r.rounds < 2
      ? "one round only, so no round-to-round spread"
      : `round-to-round spread ((max − min) / median) of the ${spreads.length} timed series: median ${pct(median(spreads))}, worst ${pct(Math.max(...spreads))}`
  }.`;

  // 1. Overhead
  const overheadRows = Object.entries(r.overhead).flatMap(([steps, byKind]) =>
    SAVERS.map((kind) => {
      const c = byKind[kind];
      const ratio = median(c.candor) / median(c.floor);
      const goal =
        kind === "sqlite" && OVERHEAD_GOAL_SIZES.includes(Number(steps)) ? ` ${verdict(ratio <= OVERHEAD_GOAL)}` : " —";
      return `| ${steps} | ${SAVER_LABEL[kind]} | ${ms(median(c.floor))} | ${ms(median(c.candor))} | ${x(ratio)} |${goal} |`;
    }),
  );
  const overheadMet = OVERHEAD_GOAL_SIZES.every((steps) => r.overhead[steps])
    ? OVERHEAD_GOAL_SIZES.every((steps) => {
        const c = r.overhead[steps]!.sqlite;
        return median(c.candor) / median(c.floor) <= OVERHEAD_GOAL;
      })
    : null;

  // 2. DAGs
  const shapeRows = r.shapes.map((s) => {
    const ratio = median(s.candor) / s.criticalMs;
    const net = median(s.candor) - median(s.instant);
    const eager = median(s.eagerFloor);
    return `| ${s.name}: ${s.what} | ${s.criticalMs} ms | ${s.waveMs} ms | ${ms(median(s.floor))} (${x(median(s.floor) / s.criticalMs)}) | ${ms(eager)} (${x(eager / s.criticalMs)}) | ${ms(median(s.candor))} | ${x(ratio)} | ${verdict(ratio <= CRITICAL_PATH_GOAL)} | ${x(median(s.candor) / eager)} | ${ms(median(s.instant))} | ${ms(net)} (${x(net / s.criticalMs)}) |`;
  });
  const dagMet = r.shapes.every((s) => median(s.candor) / s.criticalMs <= CRITICAL_PATH_GOAL);
  // Where the goal is missed, how much of the allowance the stack itself (the eager floor) leaves Candor.
  const dagShortfalls = r.shapes
    .filter((s) => median(s.candor) / s.criticalMs > CRITICAL_PATH_GOAL)
    .map((s) => {
      const eager = median(s.eagerFloor);
      const allowance = CRITICAL_PATH_GOAL * s.criticalMs - eager;
      return `${s.name}: the eager floor alone takes ${ms(eager)} (${x(eager / s.criticalMs)} the critical path), which leaves ${ms(Math.max(0, allowance))} under the goal for everything Candor does beyond the bare card; Candor takes ${ms(median(s.candor) - eager)} more than it (${x(median(s.candor) / eager)}).`;
    });
  const speedup = median(r.uniform.chain) / median(r.uniform.waves);
  const span = r.uniform.span;
  // What the whole-run goal asks of the waves run, given the chain's time; and how far that is above the eager
  // floor's waves run (the card's supersteps with nothing in them).
  const wavesAllowed = median(r.uniform.chain) / SPEEDUP_GOAL;
  const room = wavesAllowed - median(r.uniform.eagerWaves);
  const netSpeedup =
    (median(r.uniform.chain) - median(r.uniform.chainInstant)) /
    (median(r.uniform.waves) - median(r.uniform.wavesInstant));

  // 3. Bytes
  const bytesRows = r.bytes.map(
    (b) =>
      `| ${b.steps} | ${kib(median(b.floor))} | ${b.floorCheckpoints} | ${kib(median(b.candor))} | ${b.candorCheckpoints} | ${x(median(b.candor) / median(b.floor))} | ${kib(median(b.candor) / b.steps)} |`,
  );
  const small = r.bytes.find((b) => b.steps === BYTES_SMALL_STEPS) ?? r.bytes[0];
  const large = r.bytes.find((b) => b.steps === BYTES_GOAL_STEPS) ?? r.bytes.at(-1);
  const bytesAtGoal = small?.steps === BYTES_SMALL_STEPS && large?.steps === BYTES_GOAL_STEPS;
  const grow = (pick: (b: BytesRow) => number[]): Growth | null =>
    small && large && large.steps > small.steps
      ? growth(small.steps, median(pick(small)), large.steps, median(pick(large)))
      : null;
  const candorGrowth = grow((b) => b.candor);
  const floorGrowth = grow((b) => b.floor);
  const largeBytes = large ? median(large.candor) : Number.NaN;
  const bytesMet = bytesAtGoal ? candorGrowth !== null && candorGrowth.linear && largeBytes <= BYTES_GOAL : null;
  const growthLine = (label: string, g: Growth | null) =>
    g
      ? `${label}: bytes per step at ${large!.steps} steps ÷ at ${small!.steps} = ${x(g.perStepRatio)} (linear if ≤ ${LINEAR_SLACK}×), fitted exponent ${g.exponent.toFixed(2)} (1 linear, 2 quadratic)`
      : `${label}: needs two plan sizes`;

  // 4. Progress
  const p = summarize(r.progress);

  // 5. Scale
  const t = r.threads;
  const threadsMet = t.candor.errors.length === 0 && t.candor.peak === THREADS && t.candor.stall.p99Ms <= STALL_GOAL_MS;
  const batchRow = (label: string, b: Batch) =>
    `| ${label} | ${ms(b.ms)} | ${b.peak} | ${b.errors.length} | ${ms(b.stall.p99Ms)} | ${ms(b.stall.maxMs)} | ${mib(b.memory.peakHeapMiB / THREADS)} | ${mib(b.memory.rssMiB)} |`;
  const bigRow = (label: string, b: BigRun) =>
    `| ${label} | ${b.error ? `failed: ${b.error}` : ms(b.ms)} | ${kib(b.bytes)} | ${mib(b.memory.peakHeapMiB)} | ${mib(b.memory.retainedHeapMiB)} | ${mib(b.memory.rssMiB)} |`;

  // 6. Anchors
  const anchorRows = r.anchors.map((a) => {
    const med = (d: Design) => median(a.ms[d]);
    const best = Math.min(med("planExecute"), med("dagWaves"));
    return `| ${a.modelMs} / ${a.toolMs} | ${DESIGNS.map((d) => `${ms(med(d))} (${a.calls[d]})`).join(" | ")} | ${x(med("candor") / best)} | ${verdict(med("candor") <= best)} | ${x(med("candor") / med("taskFetching"))} |`;
  });
  const anchorsMet = r.anchors.every(
    (a) => median(a.ms.candor) <= Math.min(median(a.ms.planExecute), median(a.ms.dagWaves)),
  );

  return `
## Execution: Candor against the floor (issue 10)

The floor is a bare LangGraph StateGraph of the same shape as Candor's run of a plan (a plan node, a scheduling
node, one Send per ready step each wave to a plain worker node, an answer node; bench/execution/floor.ts), calling
the same tool functions, on the same checkpointer, measured in the same process, interleaved, ${rounds(r.rounds)}, medians.
Candor is driven only through its public API (compileAgent, a checkpointer, invoke or stream) with a fixed plan.

${quiet}

### Orchestration per run (goal: ≤ ${OVERHEAD_GOAL}× the floor at ${OVERHEAD_GOAL_SIZES.join(" and ")} steps with a SqliteSaver file): ${verdict(overheadMet)}

Plans of ${WIDTH} independent steps per wave, each depending on the whole previous wave; tools return at once
(a zero-delay timer), so the time is all orchestration.

| steps | checkpointer | floor | Candor | Candor ÷ floor | goal |
|---:|---|---:|---:|---:|---|
${overheadRows.join("\n")}

### Irregular DAGs (goal: ≤ ${CRITICAL_PATH_GOAL}× the eager critical path on every shape): ${verdict(dagMet)}

Whole-run wall time (from \`invoke\` to its return: planning, execution, synthesis, reflection and the report;
${rounds(r.dagRounds)}, medians;
SqliteSaver file) against the eager critical path (the longest chain of tool latencies: what a schedule that starts
each step the moment its last dependency ends takes with no overhead). "Wave schedule" is what one superstep per wave
takes with no overhead; the floor is bulk-synchronous, so it shows that cost. The goal is judged on the whole run.
The eager floor (bench/execution/floor.ts, \`buildEagerFloor\`) is the card's supersteps bare on LangGraph — understand,
execute (each step a \`task()\` started the moment its last dependency ends), synthesize, reflect — with nothing in
them, on the same checkpointer and tools: what any design with this card costs on this stack, so "Candor ÷ eager"
is what Candor adds.
"Instant tools" is Candor's run of the same plan with every tool answering at once, in the same rounds: the run's
fixed cost (its supersteps before and after execution, each a checkpoint); "net" is the whole run less that, the
time the schedule itself took, against the critical path.

| shape | critical path | wave schedule | floor (÷ critical) | eager floor (÷ critical) | Candor | Candor ÷ critical | goal | Candor ÷ eager floor | Candor, instant tools | net (÷ critical) |
|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|
${shapeRows.join("\n")}
${dagShortfalls.length > 0 ? `\nNot met on ${dagShortfalls.join(" On ")}\n` : ""}
**The 12-step plan in waves of ${WIDTH} at ${WAVE_LATENCY_MS} ms per step vs the same steps one at a time: ${ms(median(r.uniform.waves))} vs
${ms(median(r.uniform.chain))}, a speed-up of ${x(speedup)}** (ideal ${WIDTH}×; goal ≥ ${SPEEDUP_GOAL}×): ${verdict(speedup >= SPEEDUP_GOAL)}.
Net of the same plans with instant tools (${ms(median(r.uniform.wavesInstant))} in waves, ${ms(median(r.uniform.chainInstant))} one at a time), the speed-up is ${x(netSpeedup)}.
The eager floor on the same two plans: ${ms(median(r.uniform.eagerWaves))} vs ${ms(median(r.uniform.eagerChain))}, ${x(median(r.uniform.eagerChain) / median(r.uniform.eagerWaves))}
(a run's fixed cost is in both, and weighs four times as much against the shorter one).
${
  speedup >= SPEEDUP_GOAL
    ? ""
    : `For ${SPEEDUP_GOAL}× against this chain run the waves run may take ${ms(wavesAllowed)}: ${room >= 0 ? `${ms(room)} more than` : `${ms(-room)} less than`} the eager floor's, whose
chain run takes ${ms(median(r.uniform.eagerChain))} to Candor's ${ms(median(r.uniform.chain))}; a cost both runs pay, cut by 1 ms, brings the waves run only ${(1 - 1 / SPEEDUP_GOAL).toFixed(2)} ms closer to that limit.
`
}Execution alone (first tool start to last tool return in the same runs): ${ms(median(span.waves))} in waves vs
${ms(median(span.chain))} one at a time, ${x(median(span.chain) / median(span.waves))}; the eager floor ${ms(median(span.eagerWaves))} vs ${ms(median(span.eagerChain))}, ${x(median(span.eagerChain) / median(span.eagerWaves))}.

### Checkpoint bytes per run (goal: linear growth and ≤ ${kib(BYTES_GOAL)} at ${BYTES_GOAL_STEPS} steps): ${verdict(bytesMet)}

Read from the SqliteSaver file after each zero-latency run above: the checkpoint and metadata blobs plus the
pending-write blobs of the run's thread, every namespace (subgraphs included); medians.

| steps | floor bytes | floor checkpoints | Candor bytes | Candor checkpoints | Candor ÷ floor | Candor bytes per step |
|---:|---:|---:|---:|---:|---:|---:|
${bytesRows.join("\n")}

${growthLine("Candor", candorGrowth)}; ${growthLine("floor", floorGrowth)}.

### Progress per step (goal: p95 ≤ ${PROGRESS_GOAL_MS} ms from the step's end, never held back by a sibling): ${verdict(p.p95 <= PROGRESS_GOAL_MS)}

${PROGRESS_LATENCIES.length} independent steps at ${PROGRESS_LATENCIES.join(", ")} ms, each followed by a dependent step of the same
latency; streamed with \`streamMode: ["custom"], subgraphs: true\`. A sample is the time from the tool's return
(performance.now() noted in the tool) to the first SUCCESS \`progress\` event naming that step, as the consumer
receives it; ${PROGRESS_RUNS} runs after a warm-up.

| samples | p50 | p95 | max | p95 ÷ ${PROGRESS_GOAL_MS} ms |
|---:|---:|---:|---:|---:|
| ${p.n} | ${ms(p.p50)} | ${ms(p.p95)} | ${ms(p.max)} | ${x(p.p95 / PROGRESS_GOAL_MS)} |

### Scale (goal: ${THREADS} concurrent threads with 0 errors and event-loop stall p99 ≤ ${STALL_GOAL_MS} ms; a ${BIG_STEPS}-step plan completes): ${verdict(THREADS >= SCALE_GOAL_THREADS && BIG_STEPS >= SCALE_GOAL_STEPS ? threadsMet && r.big.candor.error === null : null)}

${THREADS} threads in one process on one SQLite file, one compiled graph, each the 12-step plan in waves of ${WIDTH} at
${THREAD_TOOL_MS} ms per step, started ${THREAD_ARRIVAL_MS} ms apart so that all are in flight together once the last has started
("peak in flight"; started in the same instant, every design, the floor too, runs all threads' first supersteps
back to back on promises before any timer fires). The stall is perf_hooks' monitorEventLoopDelay over the batch:
how late its 10 ms timer fired. A long stall is recorded once, when the timer finally fires, so when stalls
dominate the p99 equals the max. Memory: peak heap above the collected heap before the batch, per thread.

| design | batch wall | peak in flight | errors | stall p99 | stall max | peak heap per thread | RSS delta |
|---|---:|---:|---:|---:|---:|---:|---:|
${batchRow("floor", t.floor)}
${batchRow("Candor", t.candor)}

Candor ÷ floor, batch wall: ${x(t.candor.ms / t.floor.ms)}; stall p99: ${x(t.candor.stall.p99Ms / t.floor.stall.p99Ms)}.${t.candor.errors.length ? ` First error: ${t.candor.errors[0]}` : ""}
${floorStallLine(t.floor.stall.p99Ms, t.candor.stall.p99Ms)}

A ${BIG_STEPS}-step plan in waves of ${BIG_WIDTH}, tools returning at once, SqliteSaver file, one run each (memory
after a full garbage collection before and after).

| design | wall | bytes written | peak heap | heap retained | RSS delta |
|---|---:|---:|---:|---:|---:|
${bigRow("floor", r.big.floor)}
${bigRow("Candor", r.big.candor)}

Candor ÷ floor, wall: ${x(r.big.candor.ms / r.big.floor.ms)}.

### Against plan-and-execute and an LLMCompiler-style DAG (goal: Candor ≤ the best of the two at every setting): ${verdict(anchorsMet)}

The same 12-step plan (waves of ${WIDTH}) and the same tool functions, rebuilt on LangGraph with a scripted model
(bench/anchors/: no network; every model call waits M ms), one SqliteSaver file for all, ${rounds(r.anchors[0]?.ms.candor.length ?? 0)}, interleaved, after a
warm-up, median wall (model calls per run). **Candor's planning and synthesis wait M ms each, as one model call
would (ModelPacedReasoner); its workers call their tool directly, with no model call.** Plan-and-execute: planner,
then one ReAct worker per step and a replanner call after each. DAG, waves: planner, every ready step a ReAct worker
sent with Send, one superstep per wave, joiner. The task-fetching unit (LLMCompiler's own executor) calls each
planned tool the moment its dependencies return, inside one node with no model call per step: shown for reference,
not part of the goal (a crash inside its node re-runs every call).

| M / T ms | ${DESIGNS.map((d) => DESIGN_LABEL[d]).join(" | ")} | Candor ÷ best of P&E, DAG | goal | Candor ÷ task-fetching |
|---|---:|---:|---:|---:|---:|---|---:|
${anchorRows.join("\n")}
`;
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) {
  // Parallel steps add abort listeners to a run's signal; 100 concurrent threads add more.
  setMaxListeners(1024);
  process.stdout.write(executionSection(await executionBench()));
}
