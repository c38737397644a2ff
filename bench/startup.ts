/**
 * The start-up bench (issue 25 item 2): what a command costs before it does anything, side by side with bare node
 * (`node -e 0`), in interleaved rounds, medians. The CLI as a package runs it: compiled JavaScript (`npm run build`
 * first, then bin/candor.mjs, which runs dist/); the TypeScript source through tsx, as bin/candor.mjs ran it
 * before, is measured beside it for reference. Wall time is taken around the child process; peak RSS is the
 * child's maximum resident set size as /usr/bin/time reports it. Part of `npm run bench` (run.ts calls
 * startupBench and startupSection); on its own, `npx tsx bench/startup.ts` prints the section, and with
 * `--into-results` also puts it into bench/RESULTS.md in place of the last one.
 *
 * Env: BENCH_STARTUP_RUNS (rounds, default 9), BENCH_STARTUP_NO_BUILD=1 (measure the dist/ that is there).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { median } from "./stats.js";

const ROOT = new URL("..", import.meta.url).pathname;
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 9);
const TIME = "/usr/bin/time";
/** A plan of five offline steps on the travel toolkit: the CLI's own example request. */
const SIMPLE_RUN = "Plan a 2-day trip from Paris to Rome for 1 person";
const GOALS = { helpRatio: 3, threadsMs: 600, threadsRatio: 5, runRssMiB: 160 };

type Case = "bare" | "help" | "threads" | "run";
type Flavour = "compiled" | "tsx";

interface Sample {
  ms: number;
  /** User + system CPU time in ms, which a loaded machine inflates less than wall time; NaN without /usr/bin/time. */
  cpuMs: number;
  /** Peak resident set size in MiB; NaN when /usr/bin/time is not installed. */
  rssMiB: number;
}

export interface StartupResult {
  runs: number;
  samples: Record<`${Case}:${Flavour}`, Sample[]>;
  load: { before: number; after: number };
}

/** The child's environment: no model, no other database, no tracing, so every command runs offline with rules. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "CANDOR_DB",
    "CANDOR_MODEL",
    "LANGSMITH_TRACING",
    "LANGCHAIN_TRACING_V2",
    "NODE_OPTIONS",
  ])
    delete env[key];
  return env;
}

/** Runs node with `args` once; throws when it fails, so a broken command is never timed as a fast one. */
function measure(args: readonly string[], dir: string): Sample {
  const rssFile = join(dir, "rss");
  const timed = existsSync(TIME);
  const command = timed ? TIME : process.execPath;
  const argv = timed ? ["-f", "%M %U %S", "-o", rssFile, process.execPath, ...args] : [...args];
  const start = performance.now();
  const child = spawnSync(command, argv, { cwd: ROOT, env: offlineEnv(), encoding: "utf8" });
  const ms = performance.now() - start;
  if (child.status !== 0) {
    throw new Error(`node ${args.join(" ")} exited ${String(child.status)}: ${child.stderr.slice(0, 2000)}`);
  }
  const [kib, user, system] = timed
    ? (readFileSync(rssFile, "utf8").trim().split("\n").pop() ?? "").split(" ").map(Number)
    : [];
  return {
    ms,
    cpuMs: ((user ?? Number.NaN) + (system ?? Number.NaN)) * 1000,
    rssMiB: (kib ?? Number.NaN) / 1024,
  };
}

export function startupBench(runs = RUNS): StartupResult {
  const before = loadavg()[0]!;
  if (process.env.BENCH_STARTUP_NO_BUILD !== "1") {
    const build = spawnSync("npm", ["run", "build"], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
    if (build.status !== 0) throw new Error("npm run build failed: the start-up bench measures the compiled CLI");
  }
  const dir = mkdtempSync(join(tmpdir(), "candor-startup-"));
  try {
    const emptyDb = join(dir, "empty.db");
    measure(["bin/candor.mjs", "db", "migrate", "--db", emptyDb], dir);
    const entry: Record<Flavour, string[]> = {
      compiled: ["bin/candor.mjs"],
      tsx: ["--import", "tsx", "src/cli/main.ts"],
    };
    const commands: Record<Exclude<Case, "bare">, (round: number, flavour: Flavour) => string[]> = {
      help: () => ["--help"],
      threads: () => ["threads", "--db", emptyDb],
      // A fresh database per run: the run, not a growing file, is what is measured.
      run: (round, flavour) => ["run", SIMPLE_RUN, "--json", "--db", join(dir, `run-${flavour}-${round}.db`)],
    };
    const samples = {} as StartupResult["samples"];
    const push = (key: keyof StartupResult["samples"], s: Sample) => (samples[key] ??= []).push(s);
    // One warm-up round (file system cache), then interleaved rounds: a burst of load hits every case alike.
    for (let round = -1; round < runs; round++) {
      const keep = round >= 0;
      const bare = measure(["-e", "0"], dir);
      if (keep) push("bare:compiled", bare);
      for (const flavour of ["compiled", "tsx"] as const) {
        for (const [name, args] of Object.entries(commands) as [Exclude<Case, "bare">, typeof commands.help][]) {
          const s = measure([...entry[flavour], ...args(round, flavour)], dir);
          if (keep) push(`${name}:${flavour}`, s);
        }
      }
      process.stderr.write(`startup: round ${round + 1}/${runs}\n`);
    }
    return { runs, samples, load: { before, after: loadavg()[0]! } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mib = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} MiB` : "n/a");
const met = (ok: boolean) => (ok ? "met" : "NOT met");

export function startupSection(r: StartupResult): string {
  const wall = (key: keyof StartupResult["samples"]) => median(r.samples[key].map((s) => s.ms));
  const rss = (key: keyof StartupResult["samples"]) => median(r.samples[key].map((s) => s.rssMiB));
  const cpu = (key: keyof StartupResult["samples"]) => median(r.samples[key].map((s) => s.cpuMs));
  const bare = wall("bare:compiled");
  const bareCpu = cpu("bare:compiled");
  const row = (label: string, key: keyof StartupResult["samples"]) =>
    `| ${label} | ${sec(wall(key))} | ${(wall(key) / bare).toFixed(1)}× | ${sec(cpu(key))} | ${(cpu(key) / bareCpu).toFixed(1)}× | ${mib(rss(key))} |`;
  const help = wall("help:compiled") / bare;
  const threads = wall("threads:compiled");
  const runRss = rss("run:compiled");
  return `
## Start-up: a command's cost before it does anything (issue 25)

Each command is a new process, measured ${r.runs} times after a warm-up in interleaved rounds beside bare node
(\`node -e 0\`); medians of wall time (around the child), of CPU time (user + system) and of peak RSS
(\`/usr/bin/time\`'s maximum resident set). The goals are on wall time; CPU time is shown because a loaded machine
inflates it less.
"Compiled" is what an installed package runs: \`npm run build\`, then \`bin/candor.mjs\`, which runs dist/. "Source
through tsx" is what bin/candor.mjs ran before the package was built (\`npm start\` still does). \`threads\` lists an
empty database (made by \`db migrate\`); the run is \`run "${SIMPLE_RUN}" --json\` on a fresh SQLite file: five
offline steps with the rules reasoner. Load average ${r.load.before.toFixed(2)} before, ${r.load.after.toFixed(2)} after (${cpus().length} cores).

| command | wall | ÷ bare node | CPU | ÷ bare node | peak RSS |
|---|---:|---:|---:|---:|---:|
${row("`node -e 0` (bare node)", "bare:compiled")}
${row("`candor --help`, compiled", "help:compiled")}
${row("`candor --help`, source through tsx", "help:tsx")}
${row("`candor threads` (empty database), compiled", "threads:compiled")}
${row("`candor threads` (empty database), source through tsx", "threads:tsx")}
${row("`candor run` (5 offline steps), compiled", "run:compiled")}
${row("`candor run` (5 offline steps), source through tsx", "run:tsx")}

| goal | measured | |
|---|---:|---|
| \`--help\` ≤ ${GOALS.helpRatio}× bare node | ${help.toFixed(1)}× | ${met(help <= GOALS.helpRatio)} |
| \`threads\` ≤ ${sec(GOALS.threadsMs)} | ${sec(threads)} | ${met(threads <= GOALS.threadsMs)} |
| \`threads\` ≤ ${GOALS.threadsRatio}× bare node | ${(threads / bare).toFixed(1)}× | ${met(threads / bare <= GOALS.threadsRatio)} |
| simple offline run, peak RSS ≤ ${GOALS.runRssMiB} MiB | ${mib(runRss)} | ${met(runRss <= GOALS.runRssMiB)} |
`;
}

/** Puts the section into RESULTS.md in place of the last start-up section, or at the end when there is none. */
function intoResults(section: string): void {
  const file = new URL("./RESULTS.md", import.meta.url);
  const md = readFileSync(file, "utf8");
  const at = md.indexOf("\n## Start-up:");
  const next = at < 0 ? -1 : md.indexOf("\n## ", at + 1);
  const note = `\n_This section measured alone (\`npx tsx bench/startup.ts --into-results\`) on ${new Date().toISOString()}._\n`;
  const body = `${section.trimEnd()}\n${note}`;
  const out = at < 0 ? `${md.trimEnd()}\n${body}` : `${md.slice(0, at)}${body}${next < 0 ? "" : md.slice(next)}`;
  writeFileSync(file, out);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const section = startupSection(startupBench());
  process.stdout.write(section);
  if (process.argv.includes("--into-results")) intoResults(section);
}
