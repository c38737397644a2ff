import { CandorError, ErrorCode } from "../errors.js";
import { newPlanId, Plan, TaskStep } from "../domain/plan.js";
import type { PlanningRequest } from "../domain/request.js";
import type { ToolRegistry } from "../tools/registry.js";
import { canStandIn, type RequestFacts, type ToolSpec } from "../tools/types.js";
import { assertValidRequest, assignOrder, criticalPathMs, validatePlan } from "./validate.js";

/** Confidence of a rules plan whose every tool matched the request and has no bad record. */
const BASE_CONFIDENCE = 0.85;
/** Lost per tool that failed in this user's recent episodes (memory makes the planner humbler, not blind). */
const UNRELIABLE_TOOL_PENALTY = 0.05;
/** Lost per step whose parameters the request leaves missing or invalid: enough to ask a human first. */
const INCOMPLETE_PARAMS_PENALTY = 0.4;
/** A plan found by what tools recognise in the request, not by its words, is a little less certain. */
const RECOGNISED_ONLY_PENALTY = 0.1;
/** Recent runs in which a tool must have misbehaved before the planner prefers an alternative. */
const SUBSTITUTE_AFTER = 2;

export interface RulesPlannerOptions {
  /** Tool name → number of recent episodes in which it failed. */
  unreliableTools?: Record<string, number>;
}

export function requestFacts(request: PlanningRequest): RequestFacts {
  return {
    text: request.userIntent,
    lower: request.userIntent.toLowerCase(),
    constraints: request.constraints,
    preferences: request.userContext.preferences,
  };
}

/** How many of a tool's keywords appear in the request as words (or word stems: "flight" matches "flights"). */
export function keywordScore(tool: Pick<ToolSpec, "keywords">, lower: string): number {
  const words = new Set(lower.split(/[^a-z0-9$€£]+/).filter(Boolean));
  let score = 0;
  for (const keyword of tool.keywords) {
    const k = keyword.toLowerCase();
    if (k.includes(" ") ? lower.includes(k) : [...words].some((w) => w === k || (w.startsWith(k) && w.length - k.length <= 2))) score++;
  }
  return score;
}

/**
 * Seed 002's planning algorithm on tool metadata, deterministic and offline: tools whose keywords appear in the
 * request are selected; what they consume pulls in the tools that produce it (the dependencies); one producer
 * per output; parameters come from each tool's extractor. The same request always gives the same plan.
 */
export function planWithRules(request: PlanningRequest, registry: ToolRegistry, options: RulesPlannerOptions = {}): Plan {
  assertValidRequest(request);
  const facts = requestFacts(request);
  const tools = [...registry.tools.values()];
  const scores = new Map(tools.map((t) => [t.name, keywordScore(t, facts.lower)]));
  let matched = tools.filter((t) => (scores.get(t.name) ?? 0) > 0 && registry.workerForTool(t.name));
  // No keyword matched: the tools that recognise the request by its content (a trip named by its cities).
  const recognised = matched.length === 0;
  if (recognised) matched = tools.filter((t) => t.appliesTo?.(facts) === true && registry.workerForTool(t.name));
  if (matched.length === 0) {
    // Tools with no keywords (parts of a decomposition) are never matched by words: naming them would mislead.
    const abilities = tools.filter((t) => t.keywords.length > 0).map((t) => `${t.name} (${t.keywords[0]})`).join(", ");
    throw new CandorError(
      `No tool matches "${request.userIntent}". Rephrase it with words the tools know — ${abilities} — register a tool that can do it, or plan with a model (--model).`,
      ErrorCode.NO_VALID_PLAN,
    );
  }

  // One producer per output: the best-scoring one, registration order breaking ties (primary before backup).
  const producerOf = new Map<string, ToolSpec>();
  const rank = (t: ToolSpec) => (scores.get(t.name) ?? 0) * 1000 - tools.indexOf(t);
  const choose = (output: string): ToolSpec | undefined => {
    const existing = producerOf.get(output);
    if (existing) return existing;
    const candidates = registry.producersOf([output]).filter((t) => registry.workerForTool(t.name));
    candidates.sort((a, b) => rank(b) - rank(a));
    const best = candidates[0];
    if (best) for (const p of best.produces) if (!producerOf.has(p)) producerOf.set(p, best);
    return best;
  };

  const selected: ToolSpec[] = [];
  const visit = (tool: ToolSpec) => {
    if (selected.includes(tool)) return;
    // A tool whose outputs another selected tool already produces is redundant.
    if (tool.produces.length > 0 && tool.produces.every((p) => producerOf.get(p) && producerOf.get(p) !== tool)) return;
    for (const p of tool.produces) if (!producerOf.has(p)) producerOf.set(p, tool);
    selected.push(tool);
    for (const input of tool.consumes) {
      const producer = choose(input);
      if (producer) visit(producer);
    }
  };
  [...matched].sort((a, b) => rank(b) - rank(a)).forEach(visit);

  const stepId = (tool: ToolSpec) => tool.produces[0] ?? tool.name;
  const unreliable = options.unreliableTools ?? {};
  const reasons: string[] = [];
  // Learning from memory: a tool that misbehaved in several recent runs gives way to one that produces the
  // same outputs and has a better record.
  for (const [i, tool] of selected.entries()) {
    const failures = unreliable[tool.name] ?? 0;
    if (failures < SUBSTITUTE_AFTER) continue;
    const alternative = registry
      .producersOf(tool.produces)
      .filter((t) => t !== tool && !selected.includes(t) && canStandIn(t, tool.produces, tool.consumes) && registry.workerForTool(t.name))
      .sort((a, b) => (unreliable[a.name] ?? 0) - (unreliable[b.name] ?? 0))[0];
    if (!alternative || (unreliable[alternative.name] ?? 0) >= failures) continue;
    selected[i] = alternative;
    for (const p of alternative.produces) producerOf.set(p, alternative);
    reasons.push(`${tool.name} failed in ${failures} recent runs, so ${alternative.name} is planned instead`);
  }
  let confidence = BASE_CONFIDENCE;
  if (recognised) {
    confidence -= RECOGNISED_ONLY_PENALTY;
    reasons.push(`no tool's keywords appear in the request; ${matched.map((t) => t.name).join(", ")} recognised what it asks`);
  }
  for (const tool of selected) {
    const failures = unreliable[tool.name] ?? 0;
    if (failures > 0) {
      confidence -= UNRELIABLE_TOOL_PENALTY * Math.min(failures, 3);
      reasons.push(`${tool.name} failed in ${failures} recent run(s)`);
    }
  }

  const steps = selected.map((tool): TaskStep => {
    const worker = registry.workerForTool(tool.name);
    const deps = tool.consumes
      .map((input) => producerOf.get(input))
      .filter((p): p is ToolSpec => p !== undefined && selected.includes(p) && p !== tool)
      .map(stepId);
    const params = tool.extractParams?.(facts) ?? {};
    return TaskStep.parse({
      id: stepId(tool),
      description: tool.describeStep?.(params) ?? firstSentence(tool.description),
      workerType: worker!.name,
      tools: [tool.name],
      params,
      dependsOn: [...new Set(deps)],
      expectedOutputs: tool.produces,
      estimates: tool.estimates,
      // Generous against the estimate (a slow call is not a failure) yet short enough to notice a hung agent.
      timeoutMs: Math.max(1000, tool.estimates.durationMs * 8),
      retry: { maxAttempts: 2, backoffMs: [200] },
    });
  });
  // Parameters the request did not supply (or supplied wrongly) would only fail at run time; say so now, and let
  // the lower confidence bring a human in before anything runs.
  for (const step of steps) {
    const check = registry.tool(step.tools[0] ?? "")?.schema.safeParse(step.params);
    if (!check || check.success) continue;
    const issue = check.error.issues[0];
    confidence -= INCOMPLETE_PARAMS_PENALTY;
    reasons.push(`${step.id}: ${issue?.path.join(".") || "parameters"} — ${issue?.message ?? "invalid"}`);
  }
  const ordered = assignOrder(steps);
  const plan = Plan.parse({
    planId: newPlanId(),
    objective: request.userIntent,
    contextSummary: `Rules plan from tool metadata: ${ordered.map((s) => s.tools[0]).join(", ")}.`,
    steps: ordered,
    confidence: Math.max(0, Math.min(1, Number(confidence.toFixed(2)))),
    confidenceReasons: reasons.length > 0 ? reasons : ["every step matched the request and its tools have no recent failures"],
    estimatedDurationMs: criticalPathMs(ordered),
    estimatedCost: ordered.reduce((sum, s) => sum + s.estimates.cost, 0),
    createdBy: "rules",
  });
  validatePlan(plan, request, registry);
  return plan;
}

/** A tool description's first sentence, as a fallback step description. */
function firstSentence(text: string): string {
  const match = /^(.+?[.!?])(\s|$)/.exec(text.trim());
  return (match?.[1] ?? text).replace(/[.!?]$/, "").slice(0, 120);
}

/** What the plan's tools assumed about the request (their `assumptions`), each once, in plan order. */
export function planAssumptions(request: PlanningRequest, registry: ToolRegistry, plan: Plan): string[] {
  const facts = requestFacts(request);
  const tools = [...new Set(plan.steps.flatMap((s) => s.tools))].map((name) => registry.tool(name));
  return [...new Set(tools.flatMap((t) => t?.assumptions?.(facts) ?? []))];
}
