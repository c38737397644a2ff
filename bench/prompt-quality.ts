/**
 * `npm run prompt-check`: seed 003 item 13, the replan prompt tested against a real model. Every bench scenario
 * (bench/scenarios.ts) is run through the real graph up to select_strategy; each captured failure is put to the
 * configured model through LlmReasoner.proposeRecovery under the graph's 5 s limit, and the answer is validated by
 * validateProposal exactly as select_strategy does (both through askReasonerForRecovery), then by select_strategy's
 * loop and input guards. The result, per failure class, goes to the terminal and to bench/PROMPT-QUALITY.md.
 *
 * It calls a paid model, so it is not part of `npm test` or `npm run bench`; test/e2e/prompt-quality.test.ts runs
 * it against a local fake OpenAI-compatible server instead.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { z } from "zod";
import type { FailureClass } from "../src/domain/feedback.js";
import type { StrategyType } from "../src/domain/revision.js";
import { DEFAULT_MODEL, loadDotEnv, readEnv } from "../src/env.js";
import { CandorError, ErrorCode, errorMessage } from "../src/errors.js";
import type { LlmReasoner } from "../src/reasoning/llm.js";
import type {
  PlanningContext,
  PlanResult,
  Reasoner,
  RecoveryProposal,
  RecoveryQuestion,
  SynthesisInput,
} from "../src/reasoning/types.js";
import type { PlanningRequest } from "../src/domain/request.js";
import { askReasonerForRecovery, RECOVERY_TIMEOUT_MS } from "../src/replanning/ask-reasoner.js";
import { buildFailureContext } from "../src/replanning/context.js";
import type { ProposalVerdict } from "../src/replanning/proposal.js";
import { lacksInputs, repeatsFailedCall } from "../src/replanning/recover.js";
import { STRATEGY_PREFERENCES } from "../src/replanning/select.js";
import type { Snapshot } from "./replanning.js";
import { SCENARIOS } from "./scenarios.js";
import { median } from "./stats.js";

/** Where the report goes unless `--out` or the caller says otherwise. */
export const DEFAULT_REPORT_PATH = join(import.meta.dirname, "PROMPT-QUALITY.md");

/** The flags `prompt-check` accepts, parsed at the boundary. */
export const PromptCheckFlags = z.object({
  model: z.string().trim().min(1, "--model needs a model name, e.g. --model gpt-4o").optional(),
  baseUrl: z
    .string()
    .trim()
    .refine((u) => URL.canParse(u), "--base-url needs a URL, e.g. --base-url http://127.0.0.1:11434/v1")
    .optional(),
  out: z.string().trim().min(1, "--out needs a file path").optional(),
  help: z.boolean().default(false),
});
export type PromptCheckFlags = z.infer<typeof PromptCheckFlags>;

/**
 * What became of one question. `valid` and `refused` are answers in time with a usable proposal (refused by
 * validateProposal); `unusable` is an answer in time that is not a proposal at all; `late` missed the limit;
 * `unreachable` means the server could not be asked (connection, authentication, unknown model).
 */
export const Outcome = z.enum(["valid", "refused", "unusable", "late", "unreachable"]);
export type Outcome = z.infer<typeof Outcome>;

/** One failure put to the model. */
export interface PromptCheckRow {
  cls: FailureClass;
  /** The scenario's failure in words (bench/scenarios.ts). */
  scenario: string;
  taskId: string;
  outcome: Outcome;
  /** The model answered within the limit (valid, refused or unusable). */
  inTime: boolean;
  /** The strategy proposed; null when there was no usable proposal. */
  strategy: StrategyType | null;
  /** What the rules would try for this class, best first (STRATEGY_PREFERENCES). */
  rulesWouldUse: readonly StrategyType[];
  /** The proposed strategy is among `rulesWouldUse`; null without a proposal. */
  agrees: boolean | null;
  confidence: number | null;
  latencyMs: number;
  /** Why it was refused, unusable, late or unreachable; null when valid. */
  reason: string | null;
}

export interface PromptCheckTotals {
  asked: number;
  inTime: number;
  valid: number;
  refused: number;
  unusable: number;
  late: number;
  unreachable: number;
  /** valid / asked. */
  validRate: number;
  /** Answers with a usable proposal (valid + refused): the denominator of the agreement rate. */
  proposed: number;
  agreeing: number;
  /** Agreements that are SKIP, which every class's list ends with. */
  agreeingBySkip: number;
  /** agreeing / proposed; NaN when nothing was proposed. */
  agreementRate: number;
  /** Median time the graph would have waited per question, late ones included (capped by the limit). */
  medianLatencyMs: number;
}

export interface PromptCheckReport {
  model: string;
  /** The OpenAI-compatible server, or null for the OpenAI API's default endpoint. */
  baseUrl: string | null;
  /** ISO time the check started. */
  date: string;
  timeoutMs: number;
  rows: PromptCheckRow[];
  totals: PromptCheckTotals;
}

/**
 * Exit 0: the report was written. 1: the model could not be reached on the first question (nothing written).
 * 2: configuration or usage (no API key, a bad flag or variable).
 */
export interface PromptCheckResult {
  exitCode: 0 | 1 | 2;
  report: PromptCheckReport | null;
  /** Where the markdown report was written; null when it was not. */
  outPath: string | null;
}

/** Where the check reads settings and writes text; the defaults are the process's. */
export interface PromptCheckIo {
  env?: NodeJS.ProcessEnv;
  /** The table and the summary. */
  stdout?: (text: string) => void;
  /** Progress and errors. */
  stderr?: (text: string) => void;
  /** The report's path when no --out is given (tests pass a temp file). */
  outPath?: string;
  signal?: AbortSignal;
}

const USAGE = `Usage: npm run prompt-check -- [--model <name>] [--base-url <url>] [--out <file>]

Puts each bench failure to a chat model through Candor's replan prompt, validates every proposal as the graph
does, and writes bench/PROMPT-QUALITY.md. Reads OPENAI_API_KEY, OPENAI_BASE_URL and CANDOR_MODEL (or .env);
--model and --base-url override the last two.`;

/**
 * Runs the check and returns its exit code and report. Never throws for configuration or usage problems: they
 * are one paragraph on stderr and exit code 2. Anything else is a bug and propagates.
 */
export async function main(argv: readonly string[], io: PromptCheckIo = {}): Promise<PromptCheckResult> {
  const out = io.stdout ?? ((t: string) => process.stdout.write(t));
  const err = io.stderr ?? ((t: string) => process.stderr.write(t));
  const fail = (code: 1 | 2, message: string): PromptCheckResult => {
    err(`${message}\n`);
    return { exitCode: code, report: null, outPath: null };
  };

  let flags: PromptCheckFlags;
  let settings: { apiKey: string | undefined; baseUrl: string | undefined; model: string };
  try {
    flags = parseFlags(argv);
    const env = readEnv(io.env ?? process.env);
    settings = {
      apiKey: env.OPENAI_API_KEY,
      baseUrl: flags.baseUrl ?? env.OPENAI_BASE_URL,
      model: flags.model ?? env.CANDOR_MODEL ?? DEFAULT_MODEL,
    };
  } catch (e) {
    if (!CandorError.isInstance(e)) throw e;
    return fail(2, `${e.message}\n\n${USAGE}`);
  }
  if (flags.help) {
    out(`${USAGE}\n`);
    return { exitCode: 0, report: null, outPath: null };
  }
  if (!settings.apiKey) return fail(2, noKeyMessage(settings.model));

  // LangChain and the graph load only past this point, as in the CLI: usage and the missing-key paragraph stay instant.
  const [{ createChatModel }, { LlmReasoner }, { RulesReasoner }, { captureSnapshots }] = await Promise.all([
    import("../src/reasoning/model.js"),
    import("../src/reasoning/llm.js"),
    import("../src/reasoning/rules.js"),
    import("./replanning.js"),
  ]);
  let model;
  try {
    model = createChatModel({ apiKey: settings.apiKey, baseUrl: settings.baseUrl, model: settings.model });
  } catch (e) {
    if (!CandorError.hasCode(e, ErrorCode.CONFIGURATION)) throw e;
    return fail(2, e.message);
  }

  const date = new Date().toISOString();
  const outPath = resolve(flags.out ?? io.outPath ?? DEFAULT_REPORT_PATH);
  err(
    `Asking ${settings.model} for a recovery of each failure of ${SCENARIOS.length} bench scenarios (${RECOVERY_TIMEOUT_MS / 1000} s limit each)…\n`,
  );
  const rows: PromptCheckRow[] = [];
  for (const [i, scenario] of SCENARIOS.entries()) {
    for (const snapshot of await captureSnapshots(scenario)) {
      io.signal?.throwIfAborted();
      const reasoner = new RecordingReasoner(
        (note) => new LlmReasoner({ model, fallback: new RulesReasoner(), onFallback: note }),
      );
      const row = await askOnce(snapshot, reasoner, io.signal);
      if (rows.length === 0 && row.outcome === "unreachable") {
        return fail(
          1,
          `The model could not be reached, so nothing was measured and ${displayPath(outPath)} was not written. ${row.reason ?? ""} Check OPENAI_API_KEY, the model name (${settings.model}) and, for another server, OPENAI_BASE_URL or --base-url.`,
        );
      }
      rows.push(row);
      err(`  [scenario ${i + 1}/${SCENARIOS.length}] ${row.cls} (${row.taskId}): ${describeOutcome(row)}\n`);
    }
  }

  const report: PromptCheckReport = {
    model: settings.model,
    baseUrl: settings.baseUrl ?? null,
    date,
    timeoutMs: RECOVERY_TIMEOUT_MS,
    rows,
    totals: totalsOf(rows),
  };
  mkdirSync(dirname(outPath), { recursive: true });
  writeFileSync(outPath, renderMarkdown(report));
  out(`${renderConsole(report)}\nWrote ${displayPath(outPath)}.\n`);
  return { exitCode: 0, report, outPath };
}

function parseFlags(argv: readonly string[]): PromptCheckFlags {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        model: { type: "string" },
        "base-url": { type: "string" },
        out: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    const text = errorMessage(e).trim();
    throw new CandorError(/[.!?]$/.test(text) ? text : `${text}.`, ErrorCode.INVALID_REQUEST, { cause: e });
  }
  const parsed = PromptCheckFlags.safeParse({
    model: values.model,
    baseUrl: values["base-url"],
    out: values.out,
    help: values.help ?? false,
  });
  if (!parsed.success)
    throw new CandorError(`${parsed.error.issues[0]?.message ?? "invalid flag"}.`, ErrorCode.INVALID_REQUEST);
  return parsed.data;
}

/** The one paragraph shown without a key: what to set, that it costs money, and roughly how much it asks. */
export function noKeyMessage(model: string): string {
  const n = SCENARIOS.length;
  return [
    `prompt-check needs a chat model, but OPENAI_API_KEY is not set. It sends Candor's replan prompt (about 2,000`,
    `tokens) to a real model, which is a paid API call: about ${n} requests, one per bench failure scenario, and up to`,
    `${n * 3} if answers are malformed (the client retries once, then Candor asks once more without a schema). Set`,
    `OPENAI_API_KEY (in the shell or in .env) and run npm run prompt-check again; it uses ${model} unless you set`,
    `CANDOR_MODEL or pass --model. For an OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp) set`,
    `OPENAI_BASE_URL or pass --base-url, with any non-empty key if the server needs none.`,
  ].join(" ");
}

/**
 * The LlmReasoner as the graph would call it, plus a record of what it answered: askReasonerForRecovery returns
 * only a verdict, but the report needs the refused proposal's strategy and confidence, and the model's note.
 */
class RecordingReasoner implements Reasoner {
  readonly kind = "llm" as const;
  private readonly inner: LlmReasoner;
  proposal: RecoveryProposal | null = null;
  settled = false;
  note: string | null = null;

  constructor(build: (onFallback: (note: string) => void) => LlmReasoner) {
    this.inner = build((note) => {
      this.note = note;
    });
  }

  async proposeRecovery(question: RecoveryQuestion): Promise<RecoveryProposal | null> {
    try {
      this.proposal = await this.inner.proposeRecovery(question);
      return this.proposal;
    } finally {
      this.settled = true;
    }
  }

  plan(request: PlanningRequest, ctx: PlanningContext): Promise<PlanResult> {
    return this.inner.plan(request, ctx);
  }

  synthesize(input: SynthesisInput): Promise<string> {
    return this.inner.synthesize(input);
  }
}

/** Asks about one snapshot the way select_strategy does, and turns the verdict into a row. */
async function askOnce(
  s: Snapshot,
  reasoner: RecordingReasoner,
  signal: AbortSignal | undefined,
): Promise<PromptCheckRow> {
  const step = s.plan.steps.find((x) => x.id === s.taskId);
  if (!step) throw new Error(`snapshot of ${s.cls} has no step ${s.taskId}`);
  const failure = buildFailureContext(step, s.feedback);
  const t0 = performance.now();
  const verdict = await askReasonerForRecovery({
    reasoner,
    failure,
    plan: s.plan,
    registry: s.registry,
    feedback: s.feedback,
    revisionNumber: s.revisionCount + 1,
    ...(signal ? { signal } : {}),
  });
  const latencyMs = performance.now() - t0;
  // Read now: a late answer may still arrive after the verdict and must not count.
  const seen = { settled: reasoner.settled, proposal: reasoner.proposal, note: reasoner.note };
  const { outcome, reason } = classify(verdict, seen, s);
  const proposal = outcome === "valid" || outcome === "refused" ? seen.proposal : null;
  const rulesWouldUse = STRATEGY_PREFERENCES[s.cls];
  return {
    cls: s.cls,
    scenario: s.scenario.what,
    taskId: s.taskId,
    outcome,
    inTime: outcome === "valid" || outcome === "refused" || outcome === "unusable",
    strategy: proposal?.strategy ?? null,
    rulesWouldUse,
    agrees: proposal ? rulesWouldUse.includes(proposal.strategy) : null,
    confidence: proposal?.confidence ?? null,
    latencyMs,
    reason,
  };
}

/** LlmReasoner's note for a transport failure ("…for step x: the model could not be asked: 401 …"). */
const UNREACHABLE_NOTE = /no usable recovery for step \S+: the model could not be asked/;
/** Its note when its own copy of the limit fired first. */
const LATE_NOTE = /did not answer within/;

/**
 * What became of the question. A proposal that passes validateProposal must also pass the two guards
 * select_strategy applies to a model's proposal before using it; their budget check needs the run's revisions,
 * which a snapshot does not keep, and no budget is spent before a step's first recovery anyway.
 */
function classify(
  verdict: ProposalVerdict,
  seen: { settled: boolean; proposal: RecoveryProposal | null; note: string | null },
  s: Snapshot,
): { outcome: Outcome; reason: string | null } {
  if (verdict.ok) {
    const guard = repeatsFailedCall(verdict.outcome, s.feedback) ?? lacksInputs(verdict.outcome, s.registry);
    if (guard === null) return { outcome: "valid", reason: null };
    return {
      outcome: "refused",
      reason: `The model's proposal passed validation, but select_strategy would not use it: ${guard}.`,
    };
  }
  if (!seen.settled || (seen.note !== null && LATE_NOTE.test(seen.note)))
    return { outcome: "late", reason: verdict.reason };
  if (seen.proposal) return { outcome: "refused", reason: verdict.reason };
  if (seen.note !== null && UNREACHABLE_NOTE.test(seen.note)) return { outcome: "unreachable", reason: seen.note };
  return { outcome: "unusable", reason: seen.note ?? verdict.reason };
}

export function totalsOf(rows: readonly PromptCheckRow[]): PromptCheckTotals {
  const count = (o: Outcome) => rows.filter((r) => r.outcome === o).length;
  const proposed = rows.filter((r) => r.agrees !== null);
  const agreeing = proposed.filter((r) => r.agrees === true);
  const valid = count("valid");
  return {
    asked: rows.length,
    inTime: rows.filter((r) => r.inTime).length,
    valid,
    refused: count("refused"),
    unusable: count("unusable"),
    late: count("late"),
    unreachable: count("unreachable"),
    validRate: rows.length > 0 ? valid / rows.length : Number.NaN,
    proposed: proposed.length,
    agreeing: agreeing.length,
    agreeingBySkip: agreeing.filter((r) => r.strategy === "SKIP").length,
    agreementRate: proposed.length > 0 ? agreeing.length / proposed.length : Number.NaN,
    medianLatencyMs: median(rows.map((r) => r.latencyMs)),
  };
}

const pct = (x: number) => (Number.isFinite(x) ? `${Math.round(x * 100)}%` : "n/a");
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const yesNo = (b: boolean | null) => (b === null ? "–" : b ? "yes" : "no");

function describeOutcome(r: PromptCheckRow): string {
  const what = r.strategy ? ` ${r.strategy} (confidence ${r.confidence})` : "";
  return `${r.outcome}${what} in ${secs(r.latencyMs)}`;
}

const HEADERS = [
  "class",
  "step",
  "in time",
  "verdict",
  "strategy",
  "rules would use",
  "agrees",
  "confidence",
  "latency",
];

function cells(r: PromptCheckRow): string[] {
  return [
    r.cls,
    r.taskId,
    r.outcome === "unreachable" ? "unreachable" : r.inTime ? "yes" : "no (late)",
    r.outcome === "late" || r.outcome === "unreachable" ? "–" : r.outcome,
    r.strategy ?? "–",
    r.rulesWouldUse.join(", "),
    yesNo(r.agrees),
    r.confidence === null ? "–" : r.confidence.toFixed(2),
    secs(r.latencyMs),
  ];
}

function totalsLines(t: PromptCheckTotals): string[] {
  const skip = t.agreeingBySkip > 0 ? ` (${t.agreeingBySkip} of them SKIP, which every class's list ends with)` : "";
  return [
    `Answered in time: ${t.inTime} of ${t.asked} (late: ${t.late}${t.unreachable > 0 ? `, unreachable: ${t.unreachable}` : ""})`,
    `Valid: ${t.valid} of ${t.asked} (${pct(t.validRate)}); refused: ${t.refused}; not a usable proposal: ${t.unusable}`,
    `Agreement with the rules' strategies: ${t.agreeing} of ${t.proposed} proposals (${pct(t.agreementRate)})${skip}`,
    `Median latency: ${Number.isFinite(t.medianLatencyMs) ? secs(t.medianLatencyMs) : "n/a"} (late questions count as the ${RECOVERY_TIMEOUT_MS / 1000} s the graph waits)`,
  ];
}

/** Reasons, one per row that has one, for below the table (they are too long for a cell). */
function reasonLines(rows: readonly PromptCheckRow[]): string[] {
  return rows.filter((r) => r.reason !== null).map((r) => `${r.cls} (${r.taskId}, ${r.outcome}): ${r.reason}`);
}

export function renderConsole(report: PromptCheckReport): string {
  const body = report.rows.map(cells);
  const widths = HEADERS.map((h, i) => Math.max(h.length, ...body.map((c) => c[i]!.length)));
  const line = (cs: readonly string[]) =>
    cs
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  const reasons = reasonLines(report.rows);
  return [
    `Prompt quality: ${report.model}${report.baseUrl ? ` at ${report.baseUrl}` : ""}, ${report.date}`,
    "",
    line(HEADERS),
    line(widths.map((w) => "-".repeat(w))),
    ...body.map(line),
    "",
    ...totalsLines(report.totals),
    ...(reasons.length > 0 ? ["", "Reasons:", ...reasons.map((r) => `- ${r}`)] : []),
    "",
  ].join("\n");
}

const mdCell = (text: string) => text.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");

export function renderMarkdown(report: PromptCheckReport): string {
  const row = (cs: readonly string[]) => `| ${cs.map(mdCell).join(" | ")} |`;
  const reasons = reasonLines(report.rows);
  const server = report.baseUrl ? `an OpenAI-compatible server at \`${report.baseUrl}\`` : "the OpenAI API";
  return `# Prompt quality: recovery proposals

Generated by \`npm run prompt-check\` on ${report.date} with model **${report.model}** (${server}).

Seed 003 item 13: the replan prompt (prompts/replan.ts) tested with a real model. Each bench scenario
(bench/scenarios.ts) runs through the real graph until select_strategy; its failure is put to the model through
\`LlmReasoner.proposeRecovery\` with the graph's ${report.timeoutMs / 1000} s limit, and the answer is validated by
\`validateProposal\` exactly as select_strategy does, then by select_strategy's loop and input guards (a valid
proposal is one the graph would apply). "Rules would use" is the class's list in \`STRATEGY_PREFERENCES\`
(src/replanning/select.ts), best first.

${row(HEADERS)}
${row(HEADERS.map((_, i) => (i >= HEADERS.length - 2 ? "---:" : "---")))}
${report.rows.map((r) => row(cells(r))).join("\n")}

## Totals

${totalsLines(report.totals)
  .map((l) => `- ${l}`)
  .join("\n")}
${reasons.length > 0 ? `\n## Refusals and other reasons\n\n${reasons.map((r) => `- ${mdCell(r)}`).join("\n")}\n` : ""}
## Reading this

- In a run the graph asks the model only about failures no rule classifies (\`unknown\`); here every class is asked,
  so the prompt meets varied, realistic failures and the rules' choice is a reference answer.
- ADJUST_PARAMETERS, FIX_DEPENDENCIES and FIND_WORKAROUND are refused from a model by design (the rules have facts
  the model lacks), so for constraint_violated and dependency_failed only SKIP can agree.
- A model answers differently from run to run; compare several reports before drawing conclusions.
`;
}

function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel.startsWith("..") ? path : rel;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  loadDotEnv();
  const result = await main(process.argv.slice(2));
  process.exitCode = result.exitCode;
}
