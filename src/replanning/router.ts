import type { TaskStep } from "../domain/plan.js";
import type { ToolRegistry } from "../tools/registry.js";
import { canStandIn, inputsOf, type ToolSpec, type WorkerType } from "../tools/types.js";

export interface WorkerCandidate {
  worker: WorkerType;
  /** The tool this worker would use for the step. */
  tool: ToolSpec;
  score: number;
  reasons: string[];
}

const words = (text: string) =>
  new Set(
    text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w.length > 2),
  );

/**
 * Ranks the worker types able to do a step (seed 000's SemanticRouter, by metadata rather than embeddings): a
 * worker qualifies when its grant holds a tool that produces the step's outputs; specialists rank above
 * fallback workers, matching keywords and a tool other than the one that failed rank higher. Tools in
 * `excludeTools` (those that already failed the step) are never offered.
 */
export function rankWorkers(
  registry: ToolRegistry,
  step: TaskStep,
  exclude: readonly string[] = [],
  excludeTools: readonly string[] = [],
): WorkerCandidate[] {
  const needed =
    step.expectedOutputs.length > 0 ? step.expectedOutputs : (registry.tool(step.tools[0] ?? "")?.produces ?? []);
  const failedTool = step.tools[0];
  const failing = registry.tool(failedTool ?? "");
  const received = failing ? inputsOf(failing) : [];
  const stepWords = words(step.description);
  const candidates: WorkerCandidate[] = [];
  for (const worker of registry.workers.values()) {
    if (exclude.includes(worker.name)) continue;
    // A tool that already failed this step's lineage is not a different agent, whoever runs it.
    const tools = registry
      .grant(worker.name)
      .filter((t) => canStandIn(t, needed, received) && !excludeTools.includes(t.name));
    if (tools.length === 0) continue;
    // Prefer a different tool: the one that failed is the likeliest to fail again.
    tools.sort((a, b) => Number(a.name === failedTool) - Number(b.name === failedTool));
    const tool = tools[0]!;
    const reasons: string[] = [];
    let score = 0;
    if (!worker.fallback) {
      score += 3;
      reasons.push("specialist");
    } else reasons.push("fallback worker");
    if (tool.name !== failedTool) {
      score += 2;
      reasons.push(`uses ${tool.name}, not the failed ${failedTool ?? "tool"}`);
    }
    const overlap = (worker.keywords ?? []).filter((k) => stepWords.has(k.toLowerCase())).length;
    score += overlap;
    if (overlap > 0) reasons.push(`${overlap} keyword(s) match the step`);
    candidates.push({ worker, tool, score, reasons });
  }
  return candidates.sort((a, b) => b.score - a.score || a.worker.name.localeCompare(b.worker.name));
}
