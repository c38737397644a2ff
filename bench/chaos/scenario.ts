/**
 * One chaos run, drawn from its seed: the request, the faults, the flags, how it is driven (in this process,
 * through a child CLI, or through a child that is SIGKILLed and resumed) and where the kill falls. Pure: the
 * same seed gives the same scenario.
 */
import { FAULT_KINDS } from "../../src/tools/faults.js";
import { generateRequest, type GeneratedRequest } from "./grammar.js";
import { createRng, deriveSeed, type Rng } from "./prng.js";

const TRAVEL_TOOLS = [
  "search_flights",
  "search_flights_backup",
  "search_hotels",
  "search_activities",
  "check_budget",
  "build_itinerary",
  "book_trip",
  "find_attractions",
  "plan_days",
] as const;
const WORKSPACE_TOOLS = ["read_file", "list_files", "text_stats", "write_report"] as const;

/**
 * in-process: the CLI's own program (runCli) in this process, the cheap default. cli: every command in a child
 * process. kill: like in-process, but some commands run in a child that is SIGKILLed part-way, then resumed; the
 * final status and answer are compared with the same scenario run without kills.
 */
export type Mode = "in-process" | "cli" | "kill";
export const MODES: readonly Mode[] = ["in-process", "cli", "kill"];

export interface KillPoint {
  /** Which command of the run (0: `run`, 1: the first `resume`, …) is killed. */
  command: number;
  /** Kill once the child has written this many lines on stderr (it streams one line per event). */
  afterLines: number;
  /** Then wait this long before the SIGKILL, so kills also land between events. */
  delayMs: number;
}

export interface Scenario {
  /** The chaos run's seed and this run's index in it: `--seed seed --only index` reproduces it. */
  seed: number;
  index: number;
  /** The run's own seed, derived from both. */
  runSeed: number;
  request: GeneratedRequest;
  /** `--fault` values. */
  faults: string[];
  /** Other `run` flags (--max-revisions, --approval-threshold, --abort-below, --user). */
  flags: string[];
  mode: Mode;
  /** Kill points, for mode kill (one or two commands). */
  kills: KillPoint[];
  /** The --max-revisions the run starts with (3 when not given), for the cap invariant. */
  maxRevisions: number;
}

/**
 * A fault spec for one tool. Kill runs avoid `*N` counts and `slow`: a count restarts in every new process
 * (documented in faults.ts) and `slow` races the step's time limit, so either would make the killed run differ
 * from the uninterrupted one for reasons that are the harness's, not Candor's.
 */
function fault(rng: Rng, tool: string, stable: boolean): string {
  const kinds = stable ? FAULT_KINDS.filter((k) => k !== "slow") : FAULT_KINDS;
  const kind = rng.pick(kinds);
  if (stable || rng.chance(0.4)) return `${tool}=${kind}`;
  return `${tool}=${kind}*${rng.int(1, 3)}`;
}

export function generateScenario(seed: number, index: number, forcedMode?: Mode): Scenario {
  const runSeed = deriveSeed(seed, index);
  const rng = createRng(runSeed);
  const request = generateRequest(rng.fork("request"));
  const mode: Mode =
    forcedMode ??
    rng.weighted<Mode>([
      ["in-process", 7],
      ["cli", 1],
      ["kill", 2],
    ]);
  const stable = mode === "kill";

  const fr = rng.fork("faults");
  const pool: readonly string[] =
    request.kind === "workspace"
      ? [...WORKSPACE_TOOLS, ...fr.sample(TRAVEL_TOOLS, 1)]
      : request.kind === "travel"
        ? [...TRAVEL_TOOLS, ...fr.sample(WORKSPACE_TOOLS, 1)]
        : [...TRAVEL_TOOLS, ...WORKSPACE_TOOLS];
  const count = fr.weighted<number>([
    [0, 3],
    [1, 4],
    [2, 3],
    [3, 1],
  ]);
  const faults = fr.sample(pool, count).map((tool) => fault(fr, tool, stable));
  // The same tool twice, in sequence (t=timeout*1 then t=error*1), now and then.
  if (!stable && faults.length > 0 && fr.chance(0.1)) faults.push(fault(fr, faults[0]!.split("=")[0]!, false));

  const gr = rng.fork("flags");
  const flags: string[] = [];
  let maxRevisions = 3;
  if (gr.chance(0.3)) {
    maxRevisions = gr.pick([0, 1, 2, 3, 5]);
    flags.push("--max-revisions", String(maxRevisions));
  }
  if (gr.chance(0.2)) flags.push("--approval-threshold", String(gr.pick([0.3, 0.6, 0.9, 0.99])));
  if (gr.chance(0.1)) flags.push("--abort-below", String(gr.pick([0.1, 0.5, 0.7])));
  if (gr.chance(0.2)) flags.push("--user", gr.pick(["chaos", "alice", "bob@example"]));

  const kr = rng.fork("kills");
  const kills: KillPoint[] = [];
  if (mode === "kill") {
    // Most runs have one or two commands: later kill points are rarely reached.
    const first = kr.weighted<number>([
      [0, 7],
      [1, 3],
    ]);
    kills.push({ command: first, afterLines: kr.int(1, 30), delayMs: kr.pick([0, 0, 5, 20, 80, 250]) });
    if (kr.chance(0.2)) kills.push({ command: first + 1, afterLines: kr.int(1, 20), delayMs: kr.pick([0, 20, 120]) });
  }
  return { seed, index, runSeed, request, faults, flags, mode, kills, maxRevisions };
}

/** The shell command that runs this scenario again, alone. */
export function reproduction(s: Pick<Scenario, "seed" | "index">): string {
  return `npm run chaos -- --seed ${s.seed} --only ${s.index}`;
}
