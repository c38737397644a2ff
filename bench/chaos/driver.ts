/**
 * Drives one scenario through the real CLI: `run`, then a `resume` for every question the thread asks (with a
 * random decision, sometimes a malformed one first), and after a SIGKILL a `resume` that continues it. Commands
 * run through the CLI's own program in this process (runCli, the code `candor` runs) or in a child process
 * (`node bin/candor.mjs`), which is the only way to SIGKILL one. After every command the database is read, so
 * the invariants judge what happened, not what was printed.
 */
import { spawn } from "node:child_process";
import { planOf } from "../../src/domain/plan-state.js";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "../../src/cli/program.js";
import { malformedMove, validMove, type Move, type PlanView, type Waiting } from "./decisions.js";
import { inspectThread, ledgerRows, schemaRefuses, type Inspection, type LedgerRow } from "./inspect.js";
import { createRng } from "./prng.js";
import type { Sandbox } from "./sandbox.js";
import type { KillPoint, Scenario } from "./scenario.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** The installed `candor` entry point; it registers tsx itself, so it runs from any working directory. */
export const CLI_ENTRY = path.join(ROOT, "bin", "candor.mjs");

/** A command taking longer than this is stopped and counted against `bounded-time`. */
export const COMMAND_TIMEOUT_MS = 90_000;
/** Questions answered before the driver starts ending the run (abort, reject, deny, skip). */
const ROUNDS_BEFORE_ENDING = 10;
/** Questions after which a run that still waits breaks `bounded-interaction`. */
const MAX_ROUNDS = 24;

const TERMINAL = new Set(["completed", "partial", "failed", "rejected", "aborted"]);

/** What the database said around a command, small enough to keep for every command. */
export interface Snapshot {
  exists: boolean;
  checkpointId: string | null;
  finished: boolean;
  status: string | null;
  waitingKind: string | null;
  /** Human decisions recorded in the thread (approval notifications). */
  decisions: number;
}

/** One command the driver ran: how it ended (Exec), what it was, and the thread before and after. */
export interface CommandRecord extends Exec {
  argv: string[];
  where: "in-process" | "child";
  move: Move | null;
  before: Snapshot;
  after: Snapshot;
}

export interface RunRecord {
  scenario: Scenario;
  threadId: string;
  db: string;
  commands: CommandRecord[];
  final: Inspection;
  ledger: LedgerRow[];
  /** The run hit MAX_ROUNDS still waiting. */
  unbounded: boolean;
  ms: number;
  marker: string;
}

function snapshot(i: Inspection): Snapshot {
  return {
    exists: i.exists,
    checkpointId: i.checkpointId,
    finished: i.finished,
    status: i.status,
    waitingKind: i.waitingFor?.kind ?? null,
    decisions: humanDecisions(i),
  };
}

/**
 * Human decisions the thread has recorded, leaving out "did not take effect" checks: a killed run asks those
 * where the uninterrupted one does not, and the count keys the random decisions, which must stay aligned.
 */
function humanDecisions(i: Inspection): number {
  return (i.values?.notifications ?? []).filter((n) => n.kind === "approval" && !/did not take effect/.test(n.title))
    .length;
}

interface Exec {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** SIGKILLed by the driver on purpose. */
  killed: boolean;
  /** Stopped because it ran past COMMAND_TIMEOUT_MS. */
  timedOut: boolean;
  /** The kill point was set for this command but it exited first. */
  killMissed: boolean;
}

/** Runs one command with the CLI's program in this process. The working directory must be the sandbox's workspace. */
async function execInProcess(argv: readonly string[], timeoutMs = COMMAND_TIMEOUT_MS): Promise<Exec> {
  let stdout = "";
  let stderr = "";
  const abort = new AbortController();
  const started = Date.now();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, timeoutMs);
  try {
    const code = await runCli(
      argv,
      {
        out: (t) => void (stdout += `${t}\n`),
        err: (t) => void (stderr += `${t}\n`),
        invokedAs: "candor",
        signal: abort.signal,
      },
      () => ({}),
    );
    return { code, signal: null, stdout, stderr, ms: Date.now() - started, killed: false, timedOut, killMissed: false };
  } catch (e) {
    // runCli turns every error into an exit code; reaching here is itself a finding (no-stack-trace catches it).
    return {
      code: 1,
      signal: null,
      stdout,
      stderr: `${stderr}UNCAUGHT: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
      ms: Date.now() - started,
      killed: false,
      timedOut,
      killMissed: false,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** The child's environment: no model, no default database, nothing from a .env. */
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "CANDOR_DB",
    "CANDOR_MODEL",
    "CANDOR_LOG_LEVEL",
    "NODE_OPTIONS",
  ])
    delete env[key];
  return env;
}

/** Runs one command in a child process, SIGKILLing it at `kill` (after that many stderr lines, then a delay). */
function execChild(
  argv: readonly string[],
  cwd: string,
  kill: KillPoint | null,
  timeoutMs = COMMAND_TIMEOUT_MS,
): Promise<Exec> {
  const started = Date.now();
  const child = spawn(process.execPath, [CLI_ENTRY, ...argv], {
    cwd,
    env: childEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let lines = 0;
  let killed = false;
  let timedOut = false;
  let killTimer: NodeJS.Timeout | undefined;
  const killNow = () => {
    if (child.exitCode === null && child.signalCode === null) {
      killed = true;
      child.kill("SIGKILL");
    }
  };
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => {
    const text = d.toString();
    stderr += text;
    if (!kill || killTimer || killed) return;
    lines += text.split("\n").length - 1;
    if (lines >= kill.afterLines) killTimer = setTimeout(killNow, kill.delayMs);
  });
  const timeout = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, timeoutMs);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timeout);
      clearTimeout(killTimer);
      resolve({
        code,
        signal,
        stdout,
        stderr,
        ms: Date.now() - started,
        killed: killed && !timedOut,
        timedOut,
        killMissed: kill !== null && !killed,
      });
    });
  });
}

export interface DriveOptions {
  /** Run every command in a child (mode cli). */
  allChildren: boolean;
  /** Kill points (mode kill); none for the uninterrupted baseline. */
  kills: readonly KillPoint[];
  label: string;
}

/** Drives a scenario to its end (or MAX_ROUNDS) and collects everything the invariants need. */
export async function driveScenario(s: Scenario, box: Sandbox, opts: DriveOptions): Promise<RunRecord> {
  const started = Date.now();
  const threadId = `chaos-${s.index}`;
  const db = path.join(box.runDir(`${s.index}-${opts.label}`), "candor.db");
  const commands: CommandRecord[] = [];
  const rng = createRng(s.runSeed);
  const jsonRng = rng.fork("json");
  let unbounded = false;

  let current = await inspectThread(db, threadId);
  const exec = async (argv: string[], move: Move | null): Promise<Inspection> => {
    const n = commands.length;
    const kill = opts.kills.find((k) => k.command === n) ?? null;
    const withJson = jsonRng.chance(0.5) ? [...argv, "--json"] : argv;
    const e = opts.allChildren || kill ? await execChild(withJson, box.workspace, kill) : await execInProcess(withJson);
    const after = await inspectThread(db, threadId);
    commands.push({
      argv: withJson,
      where: opts.allChildren || kill ? "child" : "in-process",
      ...e,
      move,
      before: snapshot(current),
      after: snapshot(after),
    });
    current = after;
    return after;
  };

  await exec(
    ["run", s.request.text, "--thread", threadId, "--db", db, ...s.flags, ...s.faults.flatMap((f) => ["--fault", f])],
    null,
  );

  const attempts = new Map<string, number>();
  for (let round = 0; ; round++) {
    const last = commands[commands.length - 1]!;
    if (!current.exists) {
      // A kill before the first checkpoint: the run said it can be resumed, so try (issue 8 item 4).
      if (!last.killed) break;
      await exec(["resume", threadId, "--db", db], null);
      continue;
    }
    if (current.finished) {
      // Finished without a final status or a report: what a person would do next is resume it, so do that once.
      if ((!TERMINAL.has(current.status ?? "") || !current.values?.report) && last.argv[0] !== "resume") {
        await exec(["resume", threadId, "--db", db], null);
        continue;
      }
      break;
    }
    if (round >= MAX_ROUNDS) {
      unbounded = current.waitingFor !== null;
      break;
    }
    if (!current.waitingFor) {
      // Stopped part-way (a kill, or a command that ended early: the `stuck` invariant): continue it.
      await exec(["resume", threadId, "--db", db], null);
      continue;
    }
    const w = current.waitingFor as Waiting & { plan?: PlanView };
    const plan: PlanView | null = current.values ? planOf(current.values) : null;
    // Keyed by what the thread has recorded, so a killed run that is asked again gets the same answer.
    const key = `${w.kind}:${"taskId" in w ? (w.taskId ?? "") : ""}:${snapshot(current).decisions}`;
    const attempt = attempts.get(key) ?? 0;
    attempts.set(key, attempt + 1);
    const terminating = round >= ROUNDS_BEFORE_ENDING;
    const mr = rng.fork(`malformed:${key}:${attempt}`);
    let move: Move;
    if (w.kind === "unknown_outcome" && opts.kills.length > 0) {
      // Only a kill run meets this where the baseline did not: "it did not take effect" is the truth here.
      move = { args: ["--retry"], label: "retry (after a kill)", malformed: false };
    } else if (!terminating && attempt === 0 && mr.chance(0.3)) {
      move = malformedMove(mr, w, plan, schemaRefuses);
    } else {
      move = validMove(rng.fork(`decision:${key}`), w, plan, terminating);
    }
    await exec(["resume", move.thread ?? threadId, ...move.args, "--db", db], move);
  }
  return {
    scenario: s,
    threadId,
    db,
    commands,
    final: current,
    ledger: ledgerRows(db, threadId),
    unbounded,
    ms: Date.now() - started,
    marker: box.marker,
  };
}
