/**
 * `npm run chaos -- --runs N --seed S`: random requests, faults, human decisions and SIGKILLs through the real
 * CLI, with the invariants checked on every run. Exits 1 when any invariant was broken, 2 on bad usage.
 *
 *   --runs N           how many runs (default 50)
 *   --seed S           the seed (default: from the clock, printed); a seed reproduces its runs exactly
 *   --only I[,J...]    only these run indices of the seed (what a reproduction command uses)
 *   --from K           start at run index K (default 0)
 *   --concurrency C    worker processes, 0..2 (default 2; 0 runs in this process)
 *   --mode M           force every run's mode: in-process, cli or kill
 *   --minutes M        stop starting runs after M minutes (the long run: as many as fit)
 *   --out FILE         write the markdown summary into FILE (between chaos markers; the rest is kept)
 *   --json             print the results as JSON instead of text
 *   --quiet            no line per run
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { describe, renderMarkdown, renderText, summarize } from "./report.js";
import { runChaos } from "./runner.js";
import { MODES, type Mode } from "./scenario.js";

const START = "<!-- chaos:generated:start -->";
const END = "<!-- chaos:generated:end -->";

function usage(message: string): never {
  process.stderr.write(
    `${message}\nUsage: npm run chaos -- [--runs N] [--seed S] [--only I,J] [--from K] [--concurrency 0..2] [--mode in-process|cli|kill] [--minutes M] [--out FILE] [--json] [--quiet]\n`,
  );
  process.exit(2);
}

function whole(name: string, text: string | undefined, fallback: number, min = 0): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text.trim()) || Number(text) < min)
    usage(`--${name} must be a whole number ≥ ${min}, not "${text}".`);
  return Number(text);
}

let args: ReturnType<typeof parseOptions>;
function parseOptions() {
  return parseArgs({
    options: {
      runs: { type: "string" },
      seed: { type: "string" },
      only: { type: "string" },
      from: { type: "string" },
      concurrency: { type: "string" },
      mode: { type: "string" },
      minutes: { type: "string" },
      out: { type: "string" },
      json: { type: "boolean", default: false },
      quiet: { type: "boolean", default: false },
    },
    strict: true,
  }).values;
}
try {
  args = parseOptions();
} catch (e) {
  usage((e as Error).message);
}

const seed = whole("seed", args.seed, Date.now() % 2 ** 31);
const runs = whole("runs", args.runs, 50, 1);
const from = whole("from", args.from, 0);
const concurrency = whole("concurrency", args.concurrency, 2);
if (concurrency > 2) usage("--concurrency is at most 2: the machine has 2 shared cores.");
if (args.mode !== undefined && !(MODES as readonly string[]).includes(args.mode))
  usage(`--mode must be one of ${MODES.join(", ")}.`);
const minutes = args.minutes === undefined ? undefined : Number(args.minutes);
if (minutes !== undefined && !(minutes > 0)) usage(`--minutes must be a positive number, not "${args.minutes}".`);
const only = args.only?.split(",").map((s) => whole("only", s, 0));
const indices = only ?? Array.from({ length: runs }, (_, i) => from + i);

const started = Date.now();
if (!args.json)
  process.stderr.write(
    `Chaos: seed ${seed}, ${indices.length} run(s), concurrency ${concurrency}${args.mode ? `, mode ${args.mode}` : ""}\n`,
  );
let done = 0;
const { results } = await runChaos({
  seed,
  indices,
  concurrency,
  ...(args.mode ? { mode: args.mode as Mode } : {}),
  ...(minutes !== undefined ? { budgetMs: minutes * 60_000 } : {}),
  onResult: (r) => {
    done++;
    if (args.quiet || args.json) return;
    const mark =
      r.violations.length > 0
        ? `✗ ${r.violations.length} violation(s): ${r.violations.map((v) => v.invariant).join(", ")}`
        : "✓";
    process.stderr.write(
      `[${done}/${indices.length}] run ${r.index} ${r.mode} ${r.status ?? "-"} ${(r.ms / 1000).toFixed(1)} s ${mark} · ${JSON.stringify(r.request.slice(0, 70))}\n`,
    );
    if (only) {
      process.stderr.write(
        `      request ${JSON.stringify(r.request)} · faults ${r.faults.join(" ") || "none"} · flags ${r.flags.join(" ") || "none"}\n`,
      );
      for (const line of r.trace) process.stderr.write(`      ${line}\n`);
      for (const v of r.violations)
        process.stderr.write(`      ✗ ${v.invariant}${v.phase ? ` (${v.phase} twin)` : ""}: ${describe(v)}\n`);
    }
  },
});
const summary = summarize(seed, indices.length, results, Date.now() - started);

if (args.json) process.stdout.write(`${JSON.stringify({ summary, results }, null, 2)}\n`);
else process.stdout.write(`${renderText(summary, results)}\n`);

if (args.out) {
  const command = `npm run chaos -- ${process.argv.slice(2).join(" ")}`;
  const generated = `${START}\n${renderMarkdown(summary, results, command)}\n${END}`;
  const before = existsSync(args.out) ? readFileSync(args.out, "utf8") : "";
  const text =
    before.includes(START) && before.includes(END)
      ? `${before.slice(0, before.indexOf(START))}${generated}${before.slice(before.indexOf(END) + END.length)}`
      : `# Chaos runs\n\n${generated}\n`;
  writeFileSync(args.out, text);
  if (!args.json) process.stderr.write(`Wrote ${args.out}\n`);
}
process.exit(summary.violations > 0 ? 1 : 0);
