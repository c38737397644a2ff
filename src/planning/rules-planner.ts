import { CandorError, ErrorCode } from "../errors.js";
import { newPlanId, Plan, TaskStep } from "../domain/plan.js";
import type { PlanningRequest } from "../domain/request.js";
import type { ToolRegistry } from "../tools/registry.js";
import { canStandIn, type RequestFacts, type ToolSpec } from "../tools/types.js";
import { openQuestions } from "../domain/understanding.js";
import { analyzeRequest, contentWords, within, type Analysis } from "./lexicon.js";
import {
  accountFor,
  askHits,
  genericKeywords,
  incidentalClauses,
  keywordHits,
  negationExclusions,
  unsupportedVerbClauses,
  withoutReadSpans,
  type Exclusion,
} from "./understanding.js";
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

/** What the tools read a request from; with the registry, its tools' keywords inform the analysis (analyzeRequest). */
export function requestFacts(request: PlanningRequest, registry?: ToolRegistry): RequestFacts {
  // The text as read, without invisible characters, so every toolkit's spans point into the analysis's text.
  const analysis = analyzeRequest(request.userIntent, registry ? toolWords(registry) : []);
  return {
    text: analysis.text,
    lower: analysis.text.toLowerCase(),
    constraints: request.constraints,
    preferences: request.userContext.preferences,
    analysis,
  };
}

/** Every keyword of the registry's tools. */
export function toolWords(registry: ToolRegistry): string[] {
  return [...registry.tools.values()].flatMap((t) => t.keywords);
}

/** How many of a tool's keywords appear in the request as words (or word stems: "flight" matches "flights"). */
export function keywordScore(tool: Pick<ToolSpec, "keywords">, lower: string): number {
  const hits = keywordHits([{ name: "_", keywords: tool.keywords }], analyzeRequest(lower));
  return new Set(hits.filter((h) => !h.negated).map((h) => h.keyword)).size;
}

/**
 * What a tool that answers from the user's documents produces (the docs toolkit's search_docs): a question that no
 * other tool's words serve goes to it, so "what does our policy say about …" is answered with its sources rather
 * than refused.
 */
const DOCUMENT_ANSWER = "passages";

/** Words that open a question, or ask for an answer ("tell me …"), when the request has no question mark. */
const QUESTION_OPENERS =
  /^(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|may|can|could|should|must|shall|will|would|am|qu[eé]|cu[aá]l|c[oó]mo|d[oó]nde|cu[aá]ndo|por qu[eé]|quel|quelle|comment|o[uù]|pourquoi|est-ce|tell me|explain|describe|do you know|i (?:want|would like|'d like|need) to know)\b/i;

/** Pure. Whether a request asks a question (a question mark, an opening "¿", or a question word first). */
export function isQuestion(text: string): boolean {
  const t = text.trim();
  return /\?\s*$/.test(t) || t.startsWith("¿") || QUESTION_OPENERS.test(t);
}

/** Confidence of a plan whose understanding has open questions: below the default approval threshold. */
export const OPEN_QUESTION_CONFIDENCE = 0.45;

/**
 * Seed 002's planning algorithm on tool metadata, deterministic and offline: tools whose keywords appear in the
 * request are selected — not those named inside a negation ("no hotel"), and after "only" only the ones it names
 * (plus tools named by a specific word elsewhere and limit checks); what they consume pulls in the tools that
 * produce it (the dependencies); one producer per output; parameters come from each tool's extractor. With every
 * plan comes the understanding record (see planning/understanding.ts). The same request always gives the same plan.
 */
export function planWithRules(
  request: PlanningRequest,
  registry: ToolRegistry,
  options: RulesPlannerOptions = {},
): Plan {
  assertValidRequest(request);
  const facts = requestFacts(request, registry);
  const analysis = facts.analysis!;
  // A request in a language the reader does not read is named as such, never half-read by its stray words.
  if (!analysis.language.read)
    throw new CandorError(
      `The request is written in ${analysis.language.name}, which the offline reader does not read (it reads English, Spanish, French, German, Italian, Portuguese and Dutch): plan it with a model (--model), or write it in one of those.`,
      ErrorCode.NO_VALID_PLAN,
    );
  const tools = [...registry.tools.values()];
  const usable = tools.filter((t) => registry.workerForTool(t.name));
  const interpretations = registry.interpreters.map((i) => ({ ...i, reading: i.interpret(facts) }));
  // A toolkit's own reading may ask for its tools in words no keyword holds ("how many lines", "what to see").
  const hits = [
    ...withoutReadSpans(keywordHits(usable, analysis), interpretations),
    ...askHits(
      analysis,
      interpretations.flatMap((i) => i.reading.asks ?? []),
      new Set(usable.map((t) => t.name)),
    ),
  ].sort((a, b) => a.start - b.start);
  const generic = genericKeywords(usable);

  // What the request rules out: a tool's specific keyword inside a negation, or a toolkit's own reading.
  const exclusions: Exclusion[] = negationExclusions(
    analysis,
    hits,
    generic,
    (name) => registry.tool(name)?.produces ?? [],
  );
  for (const i of interpretations)
    for (const e of i.reading.exclusions.filter(
      (x) =>
        x.outputs.length > 0 ||
        i.tools.some((t) => hits.some((h) => h.tool === t)) ||
        usable.some((u) => i.tools.includes(u.name) && u.appliesTo?.(facts)),
    ))
      exclusions.push({
        span: e.span,
        outputs: e.outputs,
        why: e.why,
        ...(e.description ? { description: e.description } : {}),
      });
  // What the request does not ask for, in a toolkit's reading, is left out like what it rules out, but no part of
  // the record says the user excluded it.
  const unasked = interpretations.flatMap((i) => i.reading.unasked ?? []);
  const excludedOutputs = new Set([...exclusions.flatMap((e) => e.outputs), ...unasked]);
  const excluded = (t: ToolSpec) => t.produces.length > 0 && t.produces.every((p) => excludedOutputs.has(p));

  const governed = unsupportedVerbClauses(
    analysis,
    hits,
    (name) => `${name.replace(/_/g, " ")} ${registry.tool(name)?.description ?? ""}`,
  );
  // A clause whose tool words only say the domain ("get travel insurance") asks for something no tool does: its
  // words add no step, and the record names it unsupported.
  const incidental = incidentalClauses(
    analysis,
    hits.filter((h) => !within(h, governed)),
    interpretations.map((i) => i.reading),
    genericKeywords(usable, 2),
  );
  const positive = hits.filter(
    (h) =>
      !h.negated &&
      !within(h, governed) &&
      !within(
        h,
        incidental.map((c) => c.clause),
      ),
  );
  const scores = new Map(
    tools.map((t) => [t.name, new Set(positive.filter((h) => h.tool === t.name).map((h) => h.keyword)).size]),
  );
  let matched = usable.filter((t) => (scores.get(t.name) ?? 0) > 0 && !excluded(t));
  // Limit checks ("under $2000") say how the request is bounded, not what it wants: they never stop recognition.
  // A request that is all incidental clauses asks for what no tool does: nothing recognises it as something else.
  const recognised =
    matched.every((t) => t.constraintCheck === true) &&
    !(incidental.length > 0 && incidental.length === contentClauses(analysis).length);
  const recognisedTools = recognised
    ? usable.filter((t) => !matched.includes(t) && !excluded(t) && t.appliesTo?.(facts) === true)
    : [];
  matched = [...matched, ...recognisedTools];
  // "flight only", "just a hotel": the tools named in the scope of "only", plus those named by a specific word
  // elsewhere ("book") and limit checks; the rest (named by generic words or recognised) are left out.
  const onlyTools = new Set(positive.filter((h) => h.only && !generic.has(h.keyword.toLowerCase())).map((h) => h.tool));
  const onlyCues = analysis.onlys
    .filter((o) =>
      positive.some((h) => h.only && onlyTools.has(h.tool) && h.start >= o.scope.start && h.end <= o.scope.end),
    )
    .map((o) => o.cue);
  if (onlyTools.size > 0) {
    const specificElsewhere = (t: ToolSpec) =>
      positive.some((h) => h.tool === t.name && !h.only && !generic.has(h.keyword.toLowerCase()));
    matched = matched.filter((t) => onlyTools.has(t.name) || t.constraintCheck === true || specificElsewhere(t));
  }
  // A question no tool's words serve is asked of the user's documents, when a tool that answers from them is here.
  const documents = isQuestion(request.userIntent)
    ? usable.find((t) => t.produces.includes(DOCUMENT_ANSWER))
    : undefined;
  if (matched.length === 0 && documents && !excluded(documents)) matched = [documents];
  if (matched.length === 0) {
    // Tools with no keywords (parts of a decomposition) are never matched by words: naming them would mislead.
    const abilities = tools
      .filter((t) => t.keywords.length > 0)
      .map((t) => `${t.name} (${t.keywords[0]})`)
      .join(", ");
    const unserved =
      incidental.length > 0
        ? ` No tool does what it asks: ${incidental.map((c) => JSON.stringify(c.asks.text)).join(", ")}.`
        : "";
    const ruledOut =
      exclusions.length > 0
        ? ` The request rules out ${unique(exclusions.flatMap((e) => e.outputs)).join(", ")}, which leaves nothing to do.`
        : "";
    const docsHint = isQuestion(request.userIntent)
      ? " If the answer is in your own documents, give Candor their folder (--docs <dir>, or CANDOR_DOCS) and ask again."
      : "";
    throw new CandorError(
      // Quoted as JSON: the request's own line breaks and controls stay inside the quote wherever it is shown.
      `No tool matches ${JSON.stringify(request.userIntent)}.${unserved}${ruledOut} Rephrase it with words the tools know — ${abilities} — register a tool that can do it, or plan with a model (--model).${docsHint}`,
      ErrorCode.NO_VALID_PLAN,
    );
  }

  // One producer per output: the best-scoring one, registration order breaking ties (primary before backup).
  const producerOf = new Map<string, ToolSpec>();
  const rank = (t: ToolSpec) => (scores.get(t.name) ?? 0) * 1000 - tools.indexOf(t);
  const choose = (output: string): ToolSpec | undefined => {
    const existing = producerOf.get(output);
    if (existing) return existing;
    if (excludedOutputs.has(output)) return undefined;
    const candidates = registry.producersOf([output]).filter((t) => registry.workerForTool(t.name) && !excluded(t));
    candidates.sort((a, b) => rank(b) - rank(a));
    const best = candidates[0];
    if (best) for (const p of best.produces) if (!producerOf.has(p)) producerOf.set(p, best);
    return best;
  };

  const selected: ToolSpec[] = [];
  /** Tools the request named that cannot run: an input they need is ruled out. */
  const dropped = new Map<string, string>();
  const visit = (tool: ToolSpec) => {
    if (selected.includes(tool) || dropped.has(tool.name)) return;
    // A tool whose outputs another selected tool already produces is redundant.
    if (tool.produces.length > 0 && tool.produces.every((p) => producerOf.get(p) && producerOf.get(p) !== tool)) return;
    const blocked = tool.consumes.filter((input) => excludedOutputs.has(input));
    if (blocked.length > 0) {
      dropped.set(tool.name, `${tool.name} needs a ${blocked.join(" and a ")}, which the request rules out`);
      return;
    }
    for (const p of tool.produces) if (!producerOf.has(p)) producerOf.set(p, tool);
    selected.push(tool);
    for (const input of tool.consumes) {
      const producer = choose(input);
      if (producer) visit(producer);
    }
  };
  [...matched].sort((a, b) => rank(b) - rank(a)).forEach(visit);
  // A tool that can do without some inputs still needs one of them: the first, when the plan has none.
  for (const tool of [...selected]) {
    const optional = (tool.optionalConsumes ?? []).filter((o) => !excludedOutputs.has(o));
    if (
      tool.consumes.length > 0 ||
      optional.length === 0 ||
      optional.some((o) => producerOf.has(o) && selected.includes(producerOf.get(o)!))
    )
      continue;
    const producer = choose(optional[0]!);
    if (producer) visit(producer);
  }

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
      .filter(
        (t) =>
          t !== tool &&
          !selected.includes(t) &&
          canStandIn(t, tool.produces, tool.consumes) &&
          registry.workerForTool(t.name),
      )
      .sort((a, b) => (unreliable[a.name] ?? 0) - (unreliable[b.name] ?? 0))[0];
    if (!alternative || (unreliable[alternative.name] ?? 0) >= failures) continue;
    selected[i] = alternative;
    for (const p of alternative.produces) producerOf.set(p, alternative);
    reasons.push(`${tool.name} failed in ${failures} recent runs, so ${alternative.name} is planned instead`);
  }
  let confidence = BASE_CONFIDENCE;
  if (recognisedTools.length > 0) {
    confidence -= RECOGNISED_ONLY_PENALTY;
    reasons.push(
      `no tool's keywords appear in the request; ${recognisedTools.map((t) => t.name).join(", ")} recognised what it asks`,
    );
  }
  for (const tool of selected) {
    const failures = unreliable[tool.name] ?? 0;
    if (failures > 0) {
      confidence -= UNRELIABLE_TOOL_PENALTY * Math.min(failures, 3);
      reasons.push(`${tool.name} failed in ${failures} recent run(s)`);
    }
  }

  const producersFor = (tool: ToolSpec, inputs: readonly string[]) =>
    inputs
      .map((input) => producerOf.get(input))
      .filter((p): p is ToolSpec => p !== undefined && selected.includes(p) && p !== tool);
  /** Every tool upstream of `tool` in the plan (through required and optional inputs). */
  const upstream = (tool: ToolSpec, seen = new Set<ToolSpec>()): Set<ToolSpec> => {
    for (const p of producersFor(tool, [...tool.consumes, ...(tool.optionalConsumes ?? [])])) {
      if (seen.has(p)) continue;
      seen.add(p);
      upstream(p, seen);
    }
    return seen;
  };
  // Several steps for one output when a toolkit read several (a flight per leg of a multi-city trip).
  const instances = new Map<string, { key: string; params: Record<string, unknown> }[]>();
  for (const i of interpretations)
    for (const [output, list] of Object.entries(i.reading.instances ?? {}))
      if (list.length > 1) instances.set(output, list);
  const instancesOf = (tool: ToolSpec) => instances.get(tool.produces[0] ?? "") ?? null;
  const stepIdsOf = (tool: ToolSpec) => instancesOf(tool)?.map((x) => `${stepId(tool)}_${x.key}`) ?? [stepId(tool)];
  const steps = selected.flatMap((tool): TaskStep[] => {
    const worker = registry.workerForTool(tool.name);
    let optional = producersFor(tool, tool.optionalConsumes ?? []);
    // A constraint check (a budget) passes judgement on what it reads and carries none of it: it orders the step
    // after the check, and never stands in for the inputs upstream of it (book_trip still gets the hotel it books).
    if (tool.prefersCombinedInput)
      optional = optional.filter((p) => !optional.some((q) => q !== p && !q.constraintCheck && upstream(q).has(p)));
    // The parts a step may do without come first: the inputs that combine them (a budget check) come after.
    const deps = [...optional, ...producersFor(tool, tool.consumes)].flatMap(stepIdsOf);
    const each = instancesOf(tool)?.map((x) => ({ id: `${stepId(tool)}_${x.key}`, params: x.params })) ?? [
      { id: stepId(tool), params: tool.extractParams?.(facts) ?? {} },
    ];
    return each.map(({ id, params }) =>
      TaskStep.parse({
        id,
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
      }),
    );
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
  const inPlan = new Set(selected.map((t) => t.name));
  const understanding = accountFor({
    analysis,
    steps,
    tools: registry.tools,
    hits: positive,
    exclusions,
    interpretations: interpretations.filter((i) => i.tools.some((t) => inPlan.has(t))).map((i) => i.reading),
    dropped,
    onlyCues,
    abilities: abilitiesOf(tools),
    generic,
  });
  const questions = openQuestions(understanding);
  if (questions.length > 0) {
    confidence = Math.min(confidence, OPEN_QUESTION_CONFIDENCE);
    reasons.push(...questions);
  }
  // (OPEN_QUESTION_CONFIDENCE is shared with plans checked after a model made them: see withUnderstanding.)
  const ordered = assignOrder(steps);
  const plan = Plan.parse({
    planId: newPlanId(),
    objective: request.userIntent,
    contextSummary: `Rules plan from tool metadata: ${ordered.map((s) => s.tools[0]).join(", ")}.`,
    steps: ordered,
    confidence: Math.max(0, Math.min(1, Number(confidence.toFixed(2)))),
    confidenceReasons:
      reasons.length > 0 ? reasons : ["every step matched the request and its tools have no recent failures"],
    estimatedDurationMs: criticalPathMs(ordered),
    estimatedCost: ordered.reduce((sum, s) => sum + s.estimates.cost, 0),
    createdBy: "rules",
    understanding,
  });
  validatePlan(plan, request, registry);
  return plan;
}

const unique = (xs: readonly string[]) => [...new Set(xs)];

/** The clauses that say something: at least one word that is not a stop word. */
function contentClauses(a: Analysis) {
  const words = contentWords(a);
  return a.clauses.filter((c) => words.some((w) => w.start >= c.start && w.end <= c.end));
}

/** What the tools can do, in a few words, for a part no tool serves. */
export function abilitiesOf(tools: readonly ToolSpec[]): string {
  return tools
    .filter((t) => t.keywords.length > 0)
    .map((t) => t.keywords[0])
    .filter((k, i, all) => all.indexOf(k) === i)
    .join(", ");
}

/** A tool description's first sentence, as a fallback step description. */
function firstSentence(text: string): string {
  const match = /^(.+?[.!?])(\s|$)/.exec(text.trim());
  return (match?.[1] ?? text).replace(/[.!?]$/, "").slice(0, 120);
}

/** What the plan's tools assumed about the request (their `assumptions`), each once, in plan order. */
export function planAssumptions(request: PlanningRequest, registry: ToolRegistry, plan: Plan): string[] {
  const facts = requestFacts(request, registry);
  const tools = [...new Set(plan.steps.flatMap((s) => s.tools))].map((name) => registry.tool(name));
  return [...new Set(tools.flatMap((t) => t?.assumptions?.(facts) ?? []))];
}
