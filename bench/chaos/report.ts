/**
 * What a chaos run found, as text for the terminal and as markdown for bench/CHAOS.md: how many runs of each
 * kind, how they ended, and every violation grouped by invariant and by class (the same message with its
 * numbers and values left out), each with a seed, a run index and the command that reproduces it.
 */
import { INVARIANTS, type InvariantId, type Violation } from "./invariants.js";
import type { RunResult } from "./runner.js";

/** The violation's message with its specifics. */
export function describe(v: Violation): string {
  return v.detail ? `${v.message} — ${v.detail}` : v.message;
}

export interface Finding {
  invariant: InvariantId;
  /** The message with values left out: violations of one class are one finding. */
  klass: string;
  count: number;
  /** Every run it happened in (index), first ones first. */
  runs: number[];
  example: { result: RunResult; violation: Violation };
}

/** Reduces a command to its verb and flags, so violations that differ only in values fall in one class. */
function commandShape(cmd: string): string {
  const words = cmd.replace(/^candor /, "").split(" ");
  const verb = words[0] ?? "";
  const flags = words.filter(
    (w) => /^--[a-z-]+$/.test(w) && !["--db", "--thread", "--json", "--fault", "--user", "--comment"].includes(w),
  );
  return `\`${[verb, ...flags].join(" ")}\``;
}

export function classOf(v: Violation): string {
  return v.message
    .replace(/`candor [^`]*`/g, (m) => commandShape(m.slice(1, -1)))
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\$[\d,]+/g, "$N")
    .replace(/\b(?:chaos|run|plan)-[\w-]+/g, "<id>")
    .replace(/\b\d+(?:\.\d+)?\b/g, "N")
    .slice(0, 160);
}

export function findings(results: readonly RunResult[]): Finding[] {
  const byClass = new Map<string, Finding>();
  for (const result of results) {
    for (const violation of result.violations) {
      const klass = classOf(violation);
      const key = `${violation.invariant}\u0000${klass}`;
      const f = byClass.get(key) ?? {
        invariant: violation.invariant,
        klass,
        count: 0,
        runs: [],
        example: { result, violation },
      };
      f.count++;
      if (!f.runs.includes(result.index)) f.runs.push(result.index);
      byClass.set(key, f);
    }
  }
  return [...byClass.values()].sort((a, b) => a.invariant.localeCompare(b.invariant) || b.count - a.count);
}

function tally(values: readonly (string | null)[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v ?? "none", (counts.get(v ?? "none") ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
}

export interface Summary {
  seed: number;
  runs: number;
  planned: number;
  ms: number;
  violations: number;
  runsWithViolations: number;
  findings: Finding[];
}

export function summarize(seed: number, planned: number, results: readonly RunResult[], ms: number): Summary {
  return {
    seed,
    runs: results.length,
    planned,
    ms,
    violations: results.reduce((n, r) => n + r.violations.length, 0),
    runsWithViolations: results.filter((r) => r.violations.length > 0).length,
    findings: findings(results),
  };
}

/** The terminal summary: counts, then each class of violation with one reproduction. */
export function renderText(s: Summary, results: readonly RunResult[]): string {
  const out = [
    `Chaos: seed ${s.seed}, ${s.runs} run(s)${s.runs < s.planned ? ` of ${s.planned} planned (stopped at the time budget)` : ""} in ${(s.ms / 1000).toFixed(0)} s`,
    `  modes:    ${tally(results.map((r) => r.mode))}`,
    `  statuses: ${tally(results.map((r) => r.status))}`,
    `  kills:    ${results.reduce((n, r) => n + r.kills, 0)} SIGKILL(s) landed in ${results.filter((r) => r.kills > 0).length} of ${results.filter((r) => r.mode === "kill").length} kill run(s)`,
    `  violations: ${s.violations} in ${s.runsWithViolations} run(s)`,
    ...(results.some((r) => r.environment)
      ? [
          `  not counted: ${results.filter((r) => r.environment).length} run(s) during which the Node installation was broken (runs ${results
            .filter((r) => r.environment)
            .map((r) => r.index)
            .join(", ")})`,
        ]
      : []),
  ];
  const byInvariant = new Map<string, Finding[]>();
  for (const f of s.findings) byInvariant.set(f.invariant, [...(byInvariant.get(f.invariant) ?? []), f]);
  for (const [inv, fs] of byInvariant) {
    out.push("", `${inv} (${fs.reduce((n, f) => n + f.count, 0)}): ${INVARIANTS[inv as InvariantId]}`);
    for (const f of fs) {
      const e = f.example;
      out.push(`  × ${f.count}  ${f.klass}`);
      out.push(
        `      e.g. seed ${e.result.seed} run ${e.result.index} (${e.result.mode}${e.violation.phase ? `, ${e.violation.phase} twin` : ""}): ${describe(e.violation).slice(0, 400)}`,
      );
      out.push(`      reproduce: ${e.result.reproduce}`);
    }
  }
  return out.join("\n");
}

const cell = (t: string) => t.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** bench/CHAOS.md's generated part. */
export function renderMarkdown(s: Summary, results: readonly RunResult[], command: string): string {
  const out = [
    "## Generated by the chaos suite",
    "",
    `\`${command}\` — ${new Date().toISOString().slice(0, 10)}, seed ${s.seed}: **${s.runs} runs**${s.runs < s.planned ? ` (of ${s.planned} planned; the time budget ran out)` : ""} in ${(s.ms / 60000).toFixed(1)} min.`,
    "",
    `- modes: ${tally(results.map((r) => r.mode))}`,
    `- final statuses: ${tally(results.map((r) => r.status))}`,
    `- SIGKILLs landed: ${results.reduce((n, r) => n + r.kills, 0)} in ${results.filter((r) => r.kills > 0).length} of ${results.filter((r) => r.mode === "kill").length} kill runs (the others ended before their kill point)`,
    `- violations: **${s.violations}** in ${s.runsWithViolations} run(s), ${s.findings.length} class(es)`,
    ...(results.some((r) => r.environment)
      ? [
          `- not counted: ${results.filter((r) => r.environment).length} run(s) during which the shared Node installation was being reinstalled (module or native binding missing, after 3 tries)`,
        ]
      : []),
    "",
    "| invariant | count | runs | class | example (seed, run) | reproduce |",
    "|---|---|---|---|---|---|",
  ];
  for (const f of s.findings) {
    const e = f.example;
    out.push(
      `| ${f.invariant} | ${f.count} | ${f.runs.length} | ${cell(f.klass)} | ${e.result.seed}, ${e.result.index}: ${cell(describe(e.violation).slice(0, 300))} | \`${e.result.reproduce}\` |`,
    );
  }
  if (s.findings.length === 0) out.push("| — | 0 | 0 | no violation | | |");
  out.push("", "### Invariants checked on every run", "");
  for (const [id, text] of Object.entries(INVARIANTS)) out.push(`- \`${id}\`: ${text}`);
  return out.join("\n");
}
