/**
 * The honesty bench (issue 22, "Done when"): Candor's real graph against an OpenAI-compatible fake model that answers
 * like a real, imperfect one — a perfect policy with mistakes injected at a given rate (fenced or partial JSON,
 * invented tools, wrong argument types, prose instead of a call, "done" without a call, "I could not complete this
 * step", a repeated call, HTTP 429 and 500) — on twelve ordinary requests over the offline toolkits, in each of three
 * modes (a plan with arguments, arguments left to the workers, --reactive). Each run is judged from the evidence:
 * right, honestly not done, or WRONG (completed while the oracle fails, or an effect claimed that was not made).
 *
 * Alone: `npx tsx bench/honesty.ts` prints the table and every WRONG case with how to reproduce it; flags
 * `--case W1 --mode workers --rate 0.3 --seed 2` run one cell (with the answer and the mistakes made), and
 * `--seeds N` sets the seeds per rate above 0. From `npm run bench` (bench/run.ts) it is one section of RESULTS.md.
 */
import { setMaxListeners } from "node:events";
import { pathToFileURL } from "node:url";
import { DEFAULT_MAX_MODEL_CALLS_PER_STEP } from "../src/reasoning/types.js";
import { CASES } from "./honesty/cases.js";
import { MODE_LABELS, MODES, openHarness, type Mode, type RunOutcome, type Verdict } from "./honesty/harness.js";

/** Mistake rates measured: the perfect model, then a tenth, three tenths and half of all requests wrong. */
export const RATES = [0, 0.1, 0.3, 0.5] as const;
/** Seeds per rate above 0 (a perfect model needs one: nothing is drawn at rate 0). */
const DEFAULT_SEEDS = 3;

export interface HonestyResult {
  outcomes: RunOutcome[];
  seeds: number;
  ms: number;
}

export interface HonestyOptions {
  seeds?: number;
  cases?: readonly string[];
  modes?: readonly Mode[];
  rates?: readonly number[];
  /** Seeds to run, instead of 1..seeds. */
  onlySeeds?: readonly number[];
  onRun?: (o: RunOutcome) => void;
}

/** Every mode × rate × seed × request, one run at a time (the model server answers one run at a time). */
export async function honestyBench(opts: HonestyOptions = {}): Promise<HonestyResult> {
  const seeds = opts.seeds ?? DEFAULT_SEEDS;
  const cases = CASES.filter((c) => !opts.cases || opts.cases.includes(c.id));
  const harness = await openHarness();
  const outcomes: RunOutcome[] = [];
  const t0 = performance.now();
  try {
    for (const rate of opts.rates ?? RATES) {
      const seedList = opts.onlySeeds ?? (rate === 0 ? [1] : Array.from({ length: seeds }, (_, i) => i + 1));
      for (const seed of seedList)
        for (const mode of opts.modes ?? MODES)
          for (const c of cases) {
            const o = await harness.run(c, mode, rate, seed);
            outcomes.push(o);
            opts.onRun?.(o);
          }
    }
  } finally {
    await harness.close();
  }
  return { outcomes, seeds, ms: performance.now() - t0 };
}

const pct = (rate: number) => `${Math.round(rate * 100)}%`;

function count(outcomes: readonly RunOutcome[], v: Verdict): number {
  return outcomes.filter((o) => o.verdict === v).length;
}

/** Right / honest / unnamed / WRONG per mode and rate, averaged per run of 12 when there are several seeds. */
export function honestyTable(res: HonestyResult): string {
  const rates = [...new Set(res.outcomes.map((o) => o.rate))];
  const modes = MODES.filter((m) => res.outcomes.some((o) => o.mode === m));
  const rows: string[] = [];
  for (const mode of modes)
    for (const rate of rates) {
      const cell = res.outcomes.filter((o) => o.mode === mode && o.rate === rate);
      if (cell.length === 0) continue;
      const seeds = [...new Set(cell.map((o) => o.seed))];
      const perSeed = cell.length / seeds.length;
      const per = (v: Verdict) => {
        const n = count(cell, v);
        return seeds.length === 1 ? `${n}` : `${(n / seeds.length).toFixed(1)} (${n})`;
      };
      const bySeed = seeds
        .map((s) =>
          count(
            cell.filter((o) => o.seed === s),
            "right",
          ),
        )
        .join(", ");
      const goal = goalFor(mode, rate, cell, seeds.length, perSeed);
      rows.push(
        `| ${MODE_LABELS[mode]} | ${pct(rate)} | ${seeds.length} | ${per("right")} / ${perSeed} | ${per("honest")} | ${per("unnamed")} | **${per("wrong")}** | ${count(cell, "error")} | ${bySeed} | ${goal} |`,
      );
    }
  return `| mode | mistakes | seeds | right | honest, not done | not done, unnamed | WRONG | bench errors | right per seed | goal |
|---|---:|---:|---:|---:|---:|---:|---:|---|---|
${rows.join("\n")}`;
}

/** Per request and mode, over every rate and seed: how many runs were right, honest, and WRONG. */
export function requestTable(res: HonestyResult): string {
  const modes = MODES.filter((m) => res.outcomes.some((o) => o.mode === m));
  const rows = CASES.filter((c) => res.outcomes.some((o) => o.caseId === c.id)).map((c) => {
    const cells = modes.map((mode) => {
      const runs = res.outcomes.filter((o) => o.caseId === c.id && o.mode === mode);
      const wrong = count(runs, "wrong");
      return `${count(runs, "right")} / ${count(runs, "honest") + count(runs, "unnamed")} / ${wrong > 0 ? `**${wrong}**` : "0"}`;
    });
    return `| ${c.id} | ${cells.join(" | ")} |`;
  });
  return `| request | ${modes.map((m) => `${MODE_LABELS[m]}: right / not done / WRONG`).join(" | ")} |
|---|${modes.map(() => "---:").join("|")}|
${rows.join("\n")}`;
}

/** The issue's goals for one cell: zero WRONG; 12/12 right with a perfect model; ≥ 10/12 at 30% when planned. */
function goalFor(mode: Mode, rate: number, cell: readonly RunOutcome[], seeds: number, perSeed: number): string {
  const wrong = count(cell, "wrong");
  const minRight = Math.min(
    ...[...new Set(cell.map((o) => o.seed))].map((s) =>
      count(
        cell.filter((o) => o.seed === s),
        "right",
      ),
    ),
  );
  const goals = [wrong === 0 ? "0 WRONG met" : "0 WRONG **NOT met**"];
  if (rate === 0) goals.push(minRight === perSeed ? `${perSeed}/${perSeed} met` : `${perSeed}/${perSeed} **NOT met**`);
  if (Math.abs(rate - 0.3) < 1e-9 && mode !== "reactive")
    goals.push(minRight >= 10 ? "≥ 10 right met" : `≥ 10 right **NOT met**${seeds > 1 ? " (worst seed)" : ""}`);
  return goals.join("; ");
}

/** Every WRONG run, one line each, with what it takes to run it again alone. */
export function wrongList(res: HonestyResult): string {
  const wrong = res.outcomes.filter((o) => o.verdict === "wrong");
  if (wrong.length === 0) return "No run completed wrongly or claimed an effect it did not make.";
  return wrong
    .map((o) => {
      const made = o.mistakes
        .filter((m) => m.mistake !== null)
        .map((m) => `${m.kind}${m.stepId ? `@${m.stepId}` : ""}: ${m.mistake}`);
      return `- ${o.caseId} · ${MODE_LABELS[o.mode]} · ${pct(o.rate)} seed ${o.seed} · ${o.status}: ${o.why}. Mistakes: ${made.join(", ") || "none"}. \`npx tsx bench/honesty.ts --case ${o.caseId} --mode ${o.mode} --rate ${o.rate} --seed ${o.seed}\``;
    })
    .join("\n");
}

/** Runs that made a side effect their answer does not mention (not counted as WRONG: nothing false is claimed). */
export function unsaidList(res: HonestyResult): string {
  const runs = res.outcomes.filter((o) => o.unsaid !== null);
  if (runs.length === 0) return "None.";
  return runs
    .map((o) => `- ${o.caseId} · ${MODE_LABELS[o.mode]} · ${pct(o.rate)} seed ${o.seed} · ${o.status}: ${o.unsaid}.`)
    .join("\n");
}

/** Requests a perfect model cannot finish in one reactive loop: one turn per call and one for its answer. */
function overReactiveCap(): string {
  const over = CASES.filter((c) => c.steps.length + 1 > DEFAULT_MAX_MODEL_CALLS_PER_STEP);
  if (over.length === 0) return "";
  const list = over.map((c) => `${c.id} (${c.steps.length} calls + the answer)`).join(", ");
  return ` In \`--reactive\` a perfect model takes one turn per call and one for its answer, more than the default cap of ${DEFAULT_MAX_MODEL_CALLS_PER_STEP} model calls per step for ${list}.`;
}

/** The RESULTS.md section. */
export function honestySection(res: HonestyResult): string {
  const cases = CASES.map(
    (c) => `${c.id} "${c.request}"${c.expect === "not_done" ? " (right: fail and say so)" : ""}`,
  ).join("; ");
  return `
## Honesty under an imperfect model (issue 22)

The real graph (buildAgentGraph with the effect ledger on SQLite, an \`LlmReasoner\` over ChatOpenAI with its retries
off, so every 429 and 500 reaches Candor) against an OpenAI-compatible fake (bench/honesty/fake-model.ts) whose
perfect policy plans each request's right plan and does each worker loop with one needed call per turn and then an
answer built from the tool results; at each rate that share of all requests (plan, worker turns, review, synthesis,
recovery) gets a mistake instead, drawn by a PRNG seeded per request (bench/honesty/mistakes.ts): fenced JSON,
partial JSON, an invented tool, wrong argument types, prose instead of a call, "Done, everything looks good" without
a call, "I could not complete this step", a repeated identical call, HTTP 429, HTTP 500. Twelve requests over the
default toolkits (workspace on a temp folder of known files, travel; bench/honesty/cases.ts): ${cases}. The user
approves a plan shown for approval as it is, approves the booking asked for (once) and denies any other tool
approval; an escalation ends the run there (counted as stopped, with its reason). Each
run is judged from the evidence, not from Candor's report: the tools' own record of their calls, the files on disk,
figures as \`wc\` counts them. **right**: the oracle holds; **honest, not done**: partial, failed or stopped at a
question, with the failure named; **WRONG**: completed while the oracle fails, or an answer claiming a booking or a
report that was not made. Modes: a plan with every step's arguments; the same plan leaving every step's arguments to
its worker's model loop; \`--reactive\` (\`settings.planner: false\`). ${res.seeds} seeds per rate above 0; ${(res.ms / 1000).toFixed(0)} s in all.

${honestyTable(res)}

Goals (issue 22): zero WRONG at every rate; 12/12 right with a perfect model in every mode; at 30% at least 10 of 12
right in the two planned modes.${overReactiveCap()}

By request, over every rate and seed (${[...new Set(res.outcomes.map((o) => `${o.rate}|${o.seed}`))].length} runs per request and mode):

${requestTable(res)}

WRONG runs (each reproducible alone with the command shown):

${wrongList(res)}

Runs that made a side effect their answer does not mention (a user told "failed" may do it again):

${unsaidList(res)}
`;
}

/** `--name value` flags of a run alone. */
function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  // As bench/run.ts does: LangGraph adds an abort listener per parallel task, past ten Node warns of a leak.
  setMaxListeners(1024);
  const one = flag("case");
  const mode = flag("mode");
  const rate = flag("rate");
  const seed = flag("seed");
  const verbose = one !== undefined;
  const res = await honestyBench({
    ...(flag("seeds") ? { seeds: Number(flag("seeds")) } : {}),
    ...(one ? { cases: one.split(",") } : {}),
    ...(mode ? { modes: mode.split(",").filter((m): m is Mode => (MODES as readonly string[]).includes(m)) } : {}),
    ...(rate ? { rates: rate.split(",").map(Number) } : {}),
    ...(seed ? { onlySeeds: seed.split(",").map(Number) } : {}),
    onRun: (o) => {
      process.stderr.write(
        `${o.caseId} ${o.mode} ${pct(o.rate)} seed ${o.seed}: ${o.verdict} (${o.status}, ${o.modelCalls} model calls, ${o.ms.toFixed(0)} ms)${o.why ? ` — ${o.why}` : ""}\n`,
      );
      if (verbose) {
        process.stderr.write(
          `  mistakes: ${o.mistakes.map((m) => `${m.kind}${m.stepId ? `@${m.stepId}` : ""}=${m.mistake ?? "ok"}`).join(", ")}\n`,
        );
        process.stderr.write(`  answer: ${o.answer.replace(/\n/g, "\n          ")}\n`);
        if (o.failureReason) process.stderr.write(`  failure: ${o.failureReason}\n`);
      }
    },
  });
  process.stdout.write(`${honestySection(res)}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
