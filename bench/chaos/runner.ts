/**
 * Runs chaos scenarios and checks them: one scenario at a time in this process (`runScenario`), or many through
 * worker processes (`runChaos`, at most two at once on a shared 2-core machine). Results are plain JSON, so a
 * worker can send them to its parent.
 */
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { driveScenario, type RunRecord } from "./driver.js";
import { sideEffectOf } from "./inspect.js";
import { checkKillResume, checkRun, outcomeOf, type Violation } from "./invariants.js";
import { createSandbox, type Sandbox } from "./sandbox.js";
import { generateScenario, reproduction, type Mode } from "./scenario.js";

export interface RunResult {
  seed: number;
  index: number;
  runSeed: number;
  mode: Mode;
  request: string;
  faults: string[];
  flags: string[];
  status: string | null;
  /** The Node installation was broken during the run (after retries): its violations are dropped. */
  environment: boolean;
  /** SIGKILLs that landed (a kill point the command did not reach is not counted). */
  kills: number;
  /** Each command, one line: exit code, where it ran, decision. */
  trace: string[];
  ms: number;
  violations: Violation[];
  reproduce: string;
}

const irreversible = (tool: string) => sideEffectOf(tool) === "irreversible";

function traceOf(run: RunRecord): string[] {
  return run.commands.map((c) => {
    const what = c.argv[0] === "run" ? "run" : `resume ${c.move?.label ?? "(continue)"}`;
    const end = c.killed ? "SIGKILL" : c.timedOut ? "timeout" : `exit ${c.code}`;
    return `${what} [${c.where}${c.argv.includes("--json") ? ", --json" : ""}] → ${end} in ${c.ms} ms${c.killMissed ? " (kill point not reached)" : ""}; thread ${c.after.exists ? (c.after.waitingKind ? `waits for ${c.after.waitingKind}` : c.after.finished ? c.after.status : `stopped part-way (${c.after.status})`) : "has no checkpoint"}`;
  });
}

/**
 * Runs scenario `index` of `seed` in this process. The working directory must be `box.workspace` (the file
 * tools work there). Mode kill runs the scenario twice: uninterrupted, then with its kills, and compares.
 */
export async function runScenario(seed: number, index: number, box: Sandbox, forcedMode?: Mode): Promise<RunResult> {
  for (let attempt = 1; ; attempt++) {
    const result = await runScenarioOnce(seed, index, box, forcedMode);
    if (!result.environment || attempt >= ENVIRONMENT_ATTEMPTS) return result;
    // The machine, not Candor: e.g. the shared node_modules being reinstalled under a child process.
    await new Promise((resolve) => setTimeout(resolve, ENVIRONMENT_PAUSE_MS));
  }
}

/** Output that says the Node installation is broken (a module or native binding missing), not Candor. */
const ENVIRONMENT_BROKEN =
  /Could not locate the bindings file|ERR_MODULE_NOT_FOUND|Cannot find (?:module|package)|node:internal\/modules\/(?:esm|cjs|run_main)/;
const ENVIRONMENT_ATTEMPTS = 3;
const ENVIRONMENT_PAUSE_MS = 30_000;

async function runScenarioOnce(seed: number, index: number, box: Sandbox, forcedMode?: Mode): Promise<RunResult> {
  const s = generateScenario(seed, index, forcedMode);
  const started = Date.now();
  const violations: Violation[] = [];
  let main: RunRecord;
  const records: RunRecord[] = [];
  if (s.mode === "kill") {
    const baseline = await driveScenario(s, box, { allChildren: false, kills: [], label: "baseline" });
    records.push(baseline);
    violations.push(...checkRun(baseline, irreversible).map((v) => ({ ...v, phase: "uninterrupted" as const })));
    main = await driveScenario(s, box, { allChildren: false, kills: s.kills, label: "killed" });
    violations.push(...checkRun(main, irreversible), ...checkKillResume(main, outcomeOf(baseline)));
  } else {
    main = await driveScenario(s, box, { allChildren: s.mode === "cli", kills: [], label: s.mode });
    violations.push(...checkRun(main, irreversible));
  }
  records.push(main);
  const environment = records.some((r) => r.commands.some((c) => ENVIRONMENT_BROKEN.test(`${c.stdout}\n${c.stderr}`)));
  return {
    seed,
    index,
    runSeed: s.runSeed,
    mode: s.mode,
    request: s.request.text,
    faults: s.faults,
    flags: s.flags,
    // A broken installation says nothing about Candor: such a run's violations are not counted.
    violations: environment ? [] : violations,
    environment,
    status: main.final.values?.status ?? null,
    kills: main.commands.filter((c) => c.killed).length,
    trace: traceOf(main),
    ms: Date.now() - started,
    reproduce: reproduction(s),
  };
}

export interface ChaosOptions {
  seed: number;
  /** The run indices to do. */
  indices: readonly number[];
  /** Worker processes (1 or 2); 0 runs everything in this process. */
  concurrency: number;
  mode?: Mode;
  /** Stop starting new runs after this many ms (the runs already going finish). */
  budgetMs?: number;
  onResult?(r: RunResult): void;
}

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), "worker.ts");

/** Runs the scenarios, in this process or in worker processes that each take the next index when free. */
export async function runChaos(opts: ChaosOptions): Promise<{ results: RunResult[]; stoppedEarly: boolean }> {
  const results: RunResult[] = [];
  const deadline = opts.budgetMs === undefined ? Infinity : Date.now() + opts.budgetMs;
  const queue = [...opts.indices];
  const take = (): number | undefined => (Date.now() < deadline ? queue.shift() : undefined);
  const done = (r: RunResult) => {
    results.push(r);
    opts.onResult?.(r);
  };
  if (opts.concurrency <= 0) {
    const box = createSandbox();
    const cwd = process.cwd();
    process.chdir(box.workspace);
    try {
      for (let i = take(); i !== undefined; i = take()) done(await runScenario(opts.seed, i, box, opts.mode));
    } finally {
      process.chdir(cwd);
      box.cleanup();
    }
  } else {
    await Promise.all(Array.from({ length: Math.min(2, opts.concurrency) }, () => workerLoop(opts, take, done)));
  }
  results.sort((a, b) => a.index - b.index);
  return { results, stoppedEarly: queue.length > 0 };
}

/** One worker process: sends it an index whenever it is free, until the queue is empty. */
function workerLoop(opts: ChaosOptions, take: () => number | undefined, done: (r: RunResult) => void): Promise<void> {
  const child: ChildProcess = fork(WORKER, [], {
    execArgv: ["--import", import.meta.resolve("tsx")],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    env: { ...process.env, OPENAI_API_KEY: "", CANDOR_DB: "" },
  });
  return new Promise((resolve, reject) => {
    let current: number | undefined;
    const next = () => {
      current = take();
      if (current === undefined) child.send({ type: "stop" });
      else child.send({ type: "run", seed: opts.seed, index: current, mode: opts.mode });
    };
    child.on("message", (m: { type: string; result?: RunResult; error?: string }) => {
      if (m.type === "ready") return next();
      if (m.type === "result" && m.result) done(m.result);
      if (m.type === "error" && current !== undefined) done(crashed(opts.seed, current, m.error ?? "unknown"));
      next();
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      // A worker that dies mid-run loses that run: record it rather than pretend it passed.
      if (code !== 0 && current !== undefined)
        done(crashed(opts.seed, current, `the worker process exited with code ${code}`));
      resolve();
    });
  });
}

function crashed(seed: number, index: number, error: string): RunResult {
  const s = generateScenario(seed, index);
  return {
    seed,
    index,
    runSeed: s.runSeed,
    mode: s.mode,
    request: s.request.text,
    faults: s.faults,
    flags: s.flags,
    status: null,
    environment: false,
    kills: 0,
    trace: [],
    ms: 0,
    violations: [{ invariant: "no-stack-trace", message: `the chaos driver itself failed: ${error.split("\n")[0]}` }],
    reproduce: reproduction(s),
  };
}
