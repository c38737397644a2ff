/**
 * The understanding benchmark: every request of the labelled corpus (understanding-corpus.ts) is planned by the
 * rules reasoner with the CLI's toolkits, and each of its labels is checked against the plan and the
 * understanding record: honoured (the plan does it) or named (the record says it cannot, or asks). Requests that
 * must not complete silently and were not asked about are then run through the real graph to see how they end.
 */
import { MemorySaver } from "@langchain/langgraph";
import { compileAgent } from "../graphs/agent.js";
import { defaultToolkits } from "../src/app/toolkits.js";
import { openQuestions, type Understanding } from "../src/domain/understanding.js";
import type { Plan } from "../src/domain/plan.js";
import { PlanningRequest } from "../src/domain/request.js";
import { errorMessage } from "../src/errors.js";
import { planWithRules } from "../src/planning/rules-planner.js";
import { ToolRegistry } from "../src/tools/registry.js";
import { findCity } from "../examples/travel/catalog.js";
import { CORPUS, type Expectation, type Labelled } from "./understanding-corpus.js";
import { summarize, type Summary } from "./stats.js";

/** The approval threshold a run uses by default: a plan below it is put to a person before anything runs. */
const APPROVAL_THRESHOLD = 0.5;

export interface Scored {
  entry: Labelled;
  /** Labels neither honoured by the plan nor named by the record. */
  missed: Expectation[];
  /** A person is asked before anything runs (or planning refused the request with a message). */
  asked: boolean;
  /** Filled for requests that must not complete silently and were not asked about: how the real run ended. */
  finalStatus: string | null;
  planMs: number;
}

export interface UnderstandingBench {
  scored: Scored[];
  planning: Summary;
}

const fold = (s: string) =>
  s
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase();

/** The same place, whatever the spelling ("Lisboa", "Lisbon"), or the same text when it is no known city. */
function samePlace(a: unknown, b: string): boolean {
  if (typeof a !== "string") return false;
  const x = findCity(a)?.name ?? a;
  const y = findCity(b)?.name ?? b;
  return fold(x) === fold(y);
}

/** Everything the record says was not done as asked, and everything the plan announces about itself. */
function namedText(plan: Plan | null, error: string | null): string {
  if (!plan) return fold(error ?? "");
  const u: Understanding = plan.understanding;
  const said = [
    ...openQuestions(u),
    ...u.parts.filter((p) => p.status !== "served").map((p) => `${p.text} ${p.why ?? ""}`),
    ...u.changes.map((c) => `${c.source} ${c.why}`),
    ...u.assumptions.map((a) => a.why),
    ...u.refused.map((r) => `${r.text} ${r.why}`),
    ...plan.confidenceReasons,
  ];
  return fold(said.join("\n"));
}

const usesTool = (plan: Plan, tool: string) =>
  plan.steps.some((s) => s.tools.some((t) => t === tool || t.startsWith(`${tool}_`)));

function honoured(plan: Plan, e: Expectation): boolean {
  const params = plan.steps.map((s) => ({ tools: s.tools, p: s.params }));
  switch (e.kind) {
    case "route":
      return params.some(
        (s) =>
          s.tools.some((t) => t.startsWith("search_flights")) &&
          samePlace(s.p.origin, e.from) &&
          samePlace(s.p.destination, e.to),
      );
    case "city":
      return params.some((s) => samePlace(s.p.city, e.name) || samePlace(s.p.destination, e.name));
    case "no_tool":
      return !usesTool(plan, e.tool);
    case "tool":
      return usesTool(plan, e.tool);
    case "value":
      if (e.param === "days")
        return params.some(
          (s) => s.p.days === e.value || (typeof s.p.nights === "number" && s.p.nights === e.value - 1),
        );
      return params.some((s) => s.p[e.param] === e.value);
    case "param":
      return params.some((s) => s.p[e.param] === e.value);
    case "budget_usd":
      return params.some((s) => typeof s.p.budget === "number" && s.p.budget >= e.min && s.p.budget <= e.max);
    case "named":
      return false;
  }
}

function wordOf(e: Expectation): string {
  switch (e.kind) {
    case "route":
      return `${e.from}|${e.to}`;
    case "city":
      return e.name;
    case "tool":
      // A step that must be there cannot be "named" instead: only the plan can meet it.
      return e.tool;
    default:
      return e.word;
  }
}

function named(text: string, e: Expectation): boolean {
  if (e.kind === "tool") return false;
  return wordOf(e)
    .split("|")
    .some((w) => text.includes(fold(w)));
}

export async function understandingBench(): Promise<UnderstandingBench> {
  const registry = ToolRegistry.create(defaultToolkits());
  const scored: Scored[] = [];
  for (const entry of CORPUS) {
    const request = PlanningRequest.parse({ userIntent: entry.request });
    let plan: Plan | null = null;
    let error: string | null = null;
    const t0 = performance.now();
    try {
      plan = planWithRules(request, registry);
    } catch (e) {
      error = errorMessage(e);
    }
    const planMs = performance.now() - t0;
    const text = namedText(plan, error);
    const missed = entry.expect.filter((e) => !((plan !== null && honoured(plan, e)) || named(text, e)));
    const asked = plan === null || plan.confidence < APPROVAL_THRESHOLD || openQuestions(plan.understanding).length > 0;
    scored.push({ entry, missed, asked, finalStatus: null, planMs });
  }
  // Only a request that must not complete silently, and was not asked about, can be wrongly `completed`: run those.
  for (const s of scored.filter((x) => x.entry.outcome !== "run" && !x.asked)) {
    const app = compileAgent({ toolkits: defaultToolkits() }, { checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: `understanding-${s.entry.id}` } };
    try {
      const final = await app.invoke(
        { request: { userIntent: s.entry.request, userContext: { userId: "bench" } } },
        config,
      );
      s.finalStatus = String(final.status);
    } catch (e) {
      s.finalStatus = `error: ${errorMessage(e)}`;
    }
  }
  return { scored, planning: summarize(scored.map((s) => s.planMs)) };
}

const pct = (n: number, d: number) => (d === 0 ? "—" : `${((100 * n) / d).toFixed(1)}%`);

export function understandingSection(b: UnderstandingBench, ms: (x: number) => string): string {
  const total = b.scored.length;
  const honest = b.scored.filter((s) => s.missed.length === 0);
  const wronglyCompleted = b.scored.filter((s) => s.entry.outcome !== "run" && s.finalStatus === "completed");
  const tags = [...new Set(b.scored.map((s) => s.entry.tag))];
  const rows = tags.map((tag) => {
    const xs = b.scored.filter((s) => s.entry.tag === tag);
    const ok = xs.filter((s) => s.missed.length === 0).length;
    const wrong = xs.filter((s) => s.entry.outcome !== "run" && s.finalStatus === "completed").length;
    const asked = xs.filter((s) => s.asked).length;
    return `| ${tag} | ${xs.length} | ${pct(ok, xs.length)} | ${asked} | ${wrong} |`;
  });
  const misses = b.scored
    .filter((s) => s.missed.length > 0 || (s.entry.outcome !== "run" && s.finalStatus === "completed"))
    .slice(0, 40)
    .map((s) => {
      const what = s.missed.map((e) => `${e.kind} ${wordOf(e).replace("|", " → ")}`).join("; ");
      const wrong = s.entry.outcome !== "run" && s.finalStatus === "completed" ? " — completed without asking" : "";
      return `- ${s.entry.id} \`${s.entry.request}\`: ${what || "all labels met"}${wrong}`;
    });
  return `
## Understanding: every part honoured or named (goal 100%), none wrongly completed (goal 0)

${total} labelled requests (bench/understanding-corpus.ts: travel and workspace, English, Spanish and French,
negations, several cities, currencies, parties, bad numbers, places that are not cities, dates, requests partly or
wholly outside the tools) planned by the rules reasoner with the CLI's toolkits. A label is met when the plan honours
it (the route, city, value, budget in dollars, a step present or absent) or the understanding record names it (an
unsupported or excluded part, a change, an assumption, a refusal, text that served nothing). "Asked" means a
person is asked before anything runs (or planning refused with a message). Requests that must not complete silently
and were not asked about are run through the real graph; "wrongly completed" counts those that ended \`completed\`.

| class | requests | every label met | asked first | wrongly completed |
|---|---:|---:|---:|---:|
${rows.join("\n")}
| **all** | **${total}** | **${pct(honest.length, total)}** | **${b.scored.filter((s) => s.asked).length}** | **${wronglyCompleted.length}** |

Planning time (rules, per request): p50 ${ms(b.planning.p50)}, p95 ${ms(b.planning.p95)}, max ${ms(b.planning.max)}
(the first request that names a city outside the curated twelve pays for loading the gazetteer).

${misses.length === 0 ? "Every label was met." : `Labels not met (first ${misses.length}):\n\n${misses.join("\n")}`}
`;
}
