import { OUTCOME_UNKNOWN, type ExecutionFeedback, type FailureClass } from "../domain/feedback.js";
import type { FailureEscalationRequest } from "../domain/approval.js";
import { ESCALATION_DECISIONS, UNKNOWN_OUTCOME_DECISIONS } from "../domain/decisions.js";
import type { Plan, TaskStep } from "../domain/plan.js";
import type { PlanningRequest, RunSettings } from "../domain/request.js";
import type { PlanRevision, StrategyType } from "../domain/revision.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { FailureContext } from "../domain/feedback.js";
import { buildFailureContext } from "./context.js";
import { callNeedingApproval } from "../tools/pending-call.js";
import type { ProposalVerdict } from "./proposal.js";
import { infeasibility } from "./strategies/adjust-parameters.js";
import { reasonHint, recover } from "./recover.js";
import type { StrategyInput, StrategyOutcome } from "./strategies/index.js";

/**
 * Strategies to try for each failure class, best first (seed 000 scenario 3, seed 003). SKIP always ends the
 * list. An unknown failure is asked of the reasoner first (nodes/select-strategy); these are the rules' fallback,
 * where FIX_DEPENDENCIES applies only when the error blames an input.
 *
 * DECOMPOSE comes last but SKIP where smaller calls of other tools can genuinely do what one call could not: a
 * step that timed out (each smaller call has the whole time limit) or whose tool is down or misbehaving (the chain
 * avoids it, as SWAP_TOOL does with one tool). Not where the cause goes with the work: a resource that is not
 * available, wrong parameters or input, a limit or a policy fails the same way in smaller pieces, and a tool not
 * granted is a planning slip that one granted tool (SWAP_TOOL, RETRY_DIFFERENT_AGENT) fixes without reshaping it.
 */
export const STRATEGY_PREFERENCES: Record<FailureClass, readonly StrategyType[]> = {
  timeout: ["RETRY_DIFFERENT_AGENT", "SWAP_TOOL", "DECOMPOSE", "SKIP"],
  agent_unavailable: ["RETRY_DIFFERENT_AGENT", "SWAP_TOOL", "DECOMPOSE", "SKIP"],
  too_complex: ["DECOMPOSE", "SKIP"],
  constraint_violated: ["ADJUST_PARAMETERS", "SKIP"],
  dependency_failed: ["FIX_DEPENDENCIES", "SKIP"],
  resource_unavailable: ["FIND_WORKAROUND", "RETRY_DIFFERENT_AGENT", "SKIP"],
  invalid_parameters: ["RETRY_WITH_PARAMS", "SWAP_TOOL", "SKIP"],
  wrong_tool: ["SWAP_TOOL", "RETRY_DIFFERENT_AGENT", "SKIP"],
  policy_blocked: ["SKIP"],
  // The call worked but its result does not answer the part: another agent or tool may; else the part is missing.
  incomplete_result: ["RETRY_DIFFERENT_AGENT", "SWAP_TOOL", "SKIP"],
  // A model-driven worker's loop ended without the step's output: smaller steps each fit in a loop's calls, or a
  // worker with other tools may get there; the same worker with the same tools would loop the same way again.
  no_result: ["DECOMPOSE", "RETRY_DIFFERENT_AGENT", "SKIP"],
  // A model that answered without acting, or claimed what its calls do not show: another worker may act; smaller
  // steps leave a model less to skip over.
  no_tool_call: ["RETRY_DIFFERENT_AGENT", "DECOMPOSE", "SKIP"],
  claimed_without_evidence: ["RETRY_DIFFERENT_AGENT", "DECOMPOSE", "SKIP"],
  unknown: ["FIX_DEPENDENCIES", "RETRY_DIFFERENT_AGENT", "SKIP"],
};

/**
 * How often each strategy may be used (issue 3 item 4): per step lineage (a step and the steps that replaced it)
 * and per run. A strategy that keeps failing the same step is not recovering it, and one that fires all over a
 * run means the plan itself is wrong; either way the next strategy is tried, and once the step has failed
 * `maxStepFailures` times a human decides. SKIP is unlimited: it is the last resort and always ends the list.
 */
export const STRATEGY_BUDGETS: Record<StrategyType, { perStep: number; perRun: number }> = {
  RETRY_DIFFERENT_AGENT: { perStep: 2, perRun: 5 },
  RETRY_WITH_PARAMS: { perStep: 2, perRun: 5 },
  SWAP_TOOL: { perStep: 2, perRun: 5 },
  // A decomposed step that is still too complex will not be saved by decomposing its parts again.
  DECOMPOSE: { perStep: 1, perRun: 3 },
  ADJUST_PARAMETERS: { perStep: 2, perRun: 4 },
  FIX_DEPENDENCIES: { perStep: 2, perRun: 4 },
  FIND_WORKAROUND: { perStep: 2, perRun: 4 },
  SKIP: { perStep: Number.POSITIVE_INFINITY, perRun: Number.POSITIVE_INFINITY },
};

/** Why a strategy's budget is spent for this step, or null while it has some left. */
function budgetSpent(strategy: StrategyType, step: TaskStep, revisions: readonly PlanRevision[]): string | null {
  const budget = STRATEGY_BUDGETS[strategy];
  const lineage = new Set([...step.lineage, step.id]);
  const used = revisions.filter((r) => r.strategy === strategy);
  const forStep = used.filter((r) => lineage.has(r.failedTaskId)).length;
  if (forStep >= budget.perStep) return `its budget of ${budget.perStep} per step is spent on ${step.id}`;
  if (used.length >= budget.perRun) return `its budget of ${budget.perRun} per run is spent`;
  return null;
}

/**
 * Whether `text` mentions `value` as a whole token ("2" in "for 2 people", not in "2000"). A plain search, not a
 * regular expression built from the value: a model can make a value a megabyte long.
 */
function mentions(text: string, value: string): boolean {
  if (value.length === 0 || value.length > text.length) return false;
  const hay = text.toLowerCase();
  const needle = value.toLowerCase();
  const inWord = (ch: string | undefined) => ch !== undefined && /[\w.-]/.test(ch);
  for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + 1)) {
    const after = hay[i + needle.length];
    if (!inWord(hay[i - 1]) && !(after !== undefined && /[\w.]/.test(after))) return true;
  }
  return false;
}

/**
 * The values a revision would change that the user asked for: a parameter of the failed step whose value came from
 * the request (the understanding record has it as a value of that step, or its words contain it) and that a new
 * step sets differently. Corrections of defaults and caps Candor set itself (a price cap, a search radius) are not.
 */
function requestedValueChanges(
  plan: Plan,
  step: TaskStep,
  outcome: Extract<StrategyOutcome, { applies: true }>,
): { key: string; from: unknown; to: unknown; source: string }[] {
  const ids = new Set([step.id, ...step.lineage]);
  // Values read for this step, and values the planner refused (they reach the step as written, to be asked about).
  const values = [
    ...plan.understanding.values.filter((v) => v.stepIds.some((id) => ids.has(id))),
    ...plan.understanding.refused.map((r) => ({ value: undefined, source: r.text })),
  ];
  const asked = (value: unknown): string | null => {
    if (typeof value !== "number" && typeof value !== "string") return null;
    const found = values.find((v) => v.value === value || mentions(v.source, String(value)));
    return found ? found.source : null;
  };
  const out: { key: string; from: unknown; to: unknown; source: string }[] = [];
  const next = outcome.revision.newStepIds
    .map((id) => outcome.plan.steps.find((s) => s.id === id))
    .filter((s): s is TaskStep => s !== undefined);
  if (next.length === 0) return out;
  for (const [key, from] of Object.entries(step.params)) {
    const source = asked(from);
    if (source === null) continue;
    // Kept when a new step still carries the value (DECOMPOSE splits a step: one part may not need it); a single
    // replacement without it falls back to the tool's default, which is a change too.
    if (next.some((n) => JSON.stringify(n.params[key]) === JSON.stringify(from))) continue;
    const set = next.map((n) => n.params[key]).find((v) => v !== undefined);
    if (set === undefined && next.length > 1) continue;
    out.push({ key, from, to: set ?? "the tool's default", source });
  }
  return out;
}

/**
 * Nothing silent later in the run: a revision that would change what the user asked for is put to a person as a
 * change to the request (a retry accepts it), and one that would take confidence below the abort threshold
 * escalates the moment it is proposed, not at the next failure.
 */
function guardChoice(
  args: SelectArgs,
  step: TaskStep,
  failure: FailureContext,
  outcome: Extract<StrategyOutcome, { applies: true }>,
): Escalation | null {
  const { plan, settings, revisionCount } = args;
  const changes = requestedValueChanges(plan, step, outcome);
  if (changes.length > 0) {
    const listed = changes
      .map((c) => `${c.key} ${JSON.stringify(c.from)} → ${JSON.stringify(c.to)} (you asked for "${c.source}")`)
      .join("; ");
    const retryWith = Object.fromEntries(changes.map((c) => [c.key, c.to]));
    const reason = `${outcome.revision.strategy} would change what you asked for: ${listed}.`;
    return escalate(
      "request_change",
      plan,
      failure,
      revisionCount,
      reason,
      [
        `Accept the change: retry ${step.id} with ${changes.map((c) => `${c.key}=${JSON.stringify(c.to)}`).join(", ")}`,
        "Replan with what you want instead",
        `Skip ${step.id}: the answer is then missing its result`,
      ],
      {
        question: `${reason} Accept it (retry ${step.id} with the new values), replan the unfinished work with your guidance, skip ${step.id}, or abort the run?`,
        retryWith,
      },
    );
  }
  const after = outcome.revision.confidenceAfter;
  // A plan a person approved below the threshold is not stopped by its first recovery: they chose to run it.
  const approvedLow = revisionCount === 0 && plan.confidence < settings.abortBelow;
  if (after < settings.abortBelow && !approvedLow) {
    const esc = escalate(
      "low_confidence",
      plan,
      failure,
      revisionCount,
      `${outcome.revision.strategy} for ${step.id} would lower the plan's confidence to ${after.toFixed(2)}, below the abort threshold ${settings.abortBelow.toFixed(2)}. Aborting unless you decide otherwise.`,
      ["Relax constraints or change goal", "Skip the failing step if its result is optional"],
    );
    return { ...esc, request: { ...esc.request, confidence: after } };
  }
  return null;
}

interface StrategyChoice {
  kind: "strategy";
  strategy: StrategyType;
  taskId: string;
  failureClass: FailureClass;
  /** Why this strategy, including the ones passed over and why. */
  reasoning: string;
  /** Who chose it: Candor's rules, or the reasoner's proposal for an unknown failure (validated). */
  source: "rules" | "model";
  /** The revision the strategy built while it was tested: its node applies this one rather than build it again. */
  outcome: Extract<StrategyOutcome, { applies: true }>;
}

interface Escalation {
  kind: "escalate";
  request: FailureEscalationRequest;
}

export type Selection = StrategyChoice | Escalation;

/** The failed step replanning handles next: the earliest in plan order. */
export function nextFailedStep(plan: Plan) {
  return plan.steps.filter((s) => s.status === "failed").sort((a, b) => a.order - b.order)[0];
}

function escalate(
  kind: FailureEscalationRequest["kind"],
  plan: Plan,
  failure: FailureContext,
  revisionCount: number,
  reason: string,
  suggestions: string[],
  overrides: { question?: string; decisions?: string[]; retryWith?: Record<string, unknown> } = {},
): Escalation {
  return {
    kind: "escalate",
    request: {
      kind,
      planId: plan.planId,
      taskId: failure.step.id,
      failureCount: failure.failureCount,
      revisionCount,
      confidence: plan.confidence,
      errors: failure.history.map((f) => f.errors[f.errors.length - 1] ?? "unknown error"),
      reason,
      params: failure.step.params,
      ...(overrides.retryWith ? { retryWith: overrides.retryWith } : {}),
      suggestedActions: suggestions,
      decisions: overrides.decisions ?? [...ESCALATION_DECISIONS],
      question:
        overrides.question ??
        `${reason} Skip ${failure.step.id} and finish the rest, retry once more (with new parameters if you like), replan the unfinished work with your guidance, or abort the run?`,
    },
  };
}

export interface SelectArgs {
  plan: Plan;
  feedback: readonly ExecutionFeedback[];
  settings: RunSettings;
  revisionCount: number;
  registry: ToolRegistry;
  /** The user's request: RETRY_WITH_PARAMS and SWAP_TOOL re-read parameters from it. */
  request?: PlanningRequest;
  /** Revisions so far, for the strategy budgets. */
  revisions?: readonly PlanRevision[];
  /**
   * For an unknown failure: the reasoner's proposal as validated by `validateProposal`, or why there is none
   * (late, invalid, unsure). Asked by the node, so selection stays pure.
   */
  advice?: ProposalVerdict;
}

/**
 * A constraint no recovery can meet, put to a human at once (issue 3, seed 000 scenario 6): the violation's
 * floors (each part's cheapest option) already exceed the limit, so ADJUST_PARAMETERS has no cap to set and the
 * only strategy left, SKIP, would drop the check and let the rest go on as if the limit held. No revision is
 * spent on it. Raising the limit is a replan with it as guidance, or a retry of the check with a new limit (the
 * check's parameter that holds the limit, e.g. `retry --set budget=…`); a plain retry is refused, since the same
 * check would fail the same way.
 */
function infeasibleConstraint(plan: Plan, failure: FailureContext, revisionCount: number): Escalation | null {
  if (failure.failureClass !== "constraint_violated") return null;
  const hopeless = infeasibility(failure.outputs);
  if (!hopeless) return null;
  const id = failure.step.id;
  const least = `$${Math.ceil(hopeless.least).toLocaleString("en-US")}`;
  const reason = `The limit checked by ${id} cannot be met. ${hopeless.reason}.`;
  const decisions: string[] = [...ESCALATION_DECISIONS];
  const replan = decisions.includes("replan");
  // The check's parameter that holds the limit, so the retry can be spelled out (`budget` for check_budget).
  const param = Object.entries(failure.step.params).find(([, v]) => v === hopeless.limit)?.[0];
  const retry = param ? `retry --set ${param}=${Math.ceil(hopeless.least)}` : `retry with a new limit`;
  const choices = [
    ...(replan ? [`replan the unfinished work with a budget of at least ${least} as your guidance`] : []),
    `retry ${id} with a new limit${param ? ` (e.g. ${retry})` : ""}`,
    `skip ${id} and finish without it`,
    "abort the run",
  ];
  return escalate(
    "infeasible_constraint",
    plan,
    failure,
    revisionCount,
    reason,
    [
      `Raise the budget to at least ${least}: ${param ? `${retry}, ` : ""}${replan ? `replan with it as guidance (e.g. "a budget of ${least} is fine"), ` : ""}or abort and ask again`,
      "Change the request so that its cheapest options cost less",
      `Skip ${id}: the rest finishes without it, and nothing that depends on it runs`,
    ],
    {
      decisions,
      question: `${reason} ${choices
        .slice(0, -1)
        .join(", ")
        .replace(/^./, (c) => c.toUpperCase())}, or ${choices[choices.length - 1]}?`,
      ...(param ? { retryWith: { [param]: Math.ceil(hopeless.least) } } : {}),
    },
  );
}

/**
 * A call with a side effect that may have taken effect (stopped before it answered, or started before a crash).
 * No rule may guess: calling it again could book twice, skipping it could leave a booking nobody knows about. A
 * person checks, then retries (it did not happen: the step runs again, asking its approval again), skips (it did,
 * or it is not wanted) or aborts. No revision is spent.
 */
function unknownOutcome(
  plan: Plan,
  failure: FailureContext,
  revisionCount: number,
  settings: RunSettings,
  registry: ToolRegistry,
): Escalation {
  const id = failure.step.id;
  const tool = failure.tool ?? "its tool";
  const times = failure.failureCount === 1 ? "" : ` (it has failed ${failure.failureCount} times)`;
  const reason = `${tool} for ${id} may already have taken effect: it was stopped before it answered, so nobody knows${times}.`;
  // The step-failure cap holds here too: past it, running the call yet again is no longer offered.
  const spent = failure.failureCount >= settings.maxStepFailures;
  const asksFirst = callNeedingApproval(failure.step, registry) !== null;
  const again = `it runs again${asksFirst ? ", and asks its approval again" : ""}`;
  return escalate(
    "unknown_outcome",
    plan,
    failure,
    revisionCount,
    reason,
    [
      `Check with the provider whether ${tool} took effect (see the call in the step's details)`,
      ...(spent
        ? [`It has failed ${failure.failureCount} times: skip ${id} if it did not happen either, and try again later`]
        : [`If it did not: retry ${id} (${again})`]),
      `If it did, or you no longer want it: skip ${id}`,
    ],
    {
      decisions: UNKNOWN_OUTCOME_DECISIONS.filter((d) => !spent || d !== "retry"),
      question: spent
        ? `${reason} Check, then skip ${id} or abort the run?`
        : `${reason} Check, then retry ${id} if it did not happen (${again}), skip it if it did, or abort the run?`,
    },
  );
}

/**
 * What only a person can decide, before any strategy: a call that may have taken effect, a limit no revision can
 * meet, or a cap reached (revisions, failures of the step, confidence after revisions). Null when strategies may
 * be tried.
 */
function capEscalation(args: SelectArgs, failure: FailureContext): Escalation | null {
  const { plan, settings, revisionCount, registry } = args;
  const step = failure.step;
  const errors = failure.history
    .map((f) => f.errors[f.errors.length - 1])
    .filter(Boolean)
    .slice(-3)
    .join("; ");

  // Before the caps: that only a person can decide (a call that may have taken effect, a limit no revision can
  // meet) is the more useful thing to tell, whatever the count.
  if (failure.errorType === OUTCOME_UNKNOWN) return unknownOutcome(plan, failure, revisionCount, settings, registry);
  const infeasible = infeasibleConstraint(plan, failure, revisionCount);
  if (infeasible) return infeasible;
  if (revisionCount >= settings.maxRevisions) {
    return escalate(
      "max_revisions",
      plan,
      failure,
      revisionCount,
      `Plan ${plan.planId} exceeded ${settings.maxRevisions} revisions; latest errors: ${errors}.`,
      [
        "Manual intervention: fix the cause (service, parameters) and retry",
        "Change approach: skip this step or rephrase the request",
      ],
    );
  }
  if (failure.failureCount >= settings.maxStepFailures) {
    return escalate(
      "step_failures",
      plan,
      failure,
      revisionCount,
      `${step.id} has failed ${failure.failureCount} times (${errors}).`,
      [
        "Manual intervention: check the service behind " + (failure.tool ?? "the tool"),
        "Change approach: skip the step or give it new parameters",
      ],
    );
  }
  if (revisionCount > 0 && plan.confidence < settings.abortBelow) {
    return escalate(
      "low_confidence",
      plan,
      failure,
      revisionCount,
      `Plan confidence ${plan.confidence.toFixed(2)} too low after ${revisionCount} revisions. Aborting unless you decide otherwise.`,
      ["Relax constraints or change goal", "Skip the failing step if its result is optional"],
    );
  }
  return null;
}

/**
 * The failure of the next failed step when it is one no rule recognises and no cap decides it first: the one the
 * reasoner is asked about (nodes/select-strategy) before `selectStrategy` runs with its advice. Null otherwise, so a
 * run at its caps, or with a failure the rules know, never waits for a model.
 */
export function failureToAskAbout(args: SelectArgs): FailureContext | null {
  const step = nextFailedStep(args.plan);
  if (!step) return null;
  const failure = buildFailureContext(step, args.feedback);
  if (failure.failureClass !== "unknown" || capEscalation(args, failure) !== null) return null;
  return failure;
}

/**
 * Decides what happens to the next failed step: escalate to a human when a constraint cannot be met at all or a
 * cap is hit (revisions, failures of the step, confidence); else, for an unknown failure, the reasoner's
 * validated proposal; else the first strategy in the class's preference list that applies, has budget left and
 * does not repeat a failed call.
 */
export function selectStrategy(args: SelectArgs): Selection | null {
  const { plan, feedback, registry, revisionCount } = args;
  const revisions = args.revisions ?? [];
  const step = nextFailedStep(plan);
  if (!step) return null;
  const failure = buildFailureContext(step, feedback);
  const capped = capEscalation(args, failure);
  if (capped) return capped;

  const base = { kind: "strategy" as const, taskId: step.id, failureClass: failure.failureClass };
  let prefix = "";
  if (failure.failureClass === "unknown" && args.advice) {
    const advice = args.advice;
    // The proposal's revision was built by `recover`, guards included; what is left is this run's budget.
    const refused = advice.ok ? budgetSpent(advice.outcome.revision.strategy, step, revisions) : advice.reason;
    if (advice.ok && refused === null) {
      const guard = guardChoice(args, step, failure, advice.outcome);
      if (guard) return guard;
      const strategy = advice.outcome.revision.strategy;
      return {
        ...base,
        strategy,
        source: "model",
        outcome: advice.outcome,
        reasoning: `No rule recognises ${step.id}'s failure ("${failure.error}"); the reasoner proposed ${strategy}, and its proposal passed validation. ${advice.outcome.revision.rationale}`,
      };
    }
    prefix = `No rule recognises ${step.id}'s failure and the reasoner's proposal was not used (${advice.ok ? `${advice.outcome.revision.strategy}: ${refused}` : refused}); falling back to the rules. `;
  }

  const input: StrategyInput = {
    plan,
    failure,
    registry,
    feedback,
    revisionNumber: revisionCount + 1,
    ...(args.request ? { request: args.request } : {}),
  };
  const passed: string[] = [];
  const reasoningFor = (strategy: StrategyType) => {
    const why = `${prefix}${step.id} failed with ${failure.failureClass} ("${failure.error}"), which ${strategy} addresses.`;
    return passed.length > 0 ? `${why} Passed over: ${passed.join("; ")}.` : why;
  };
  // Each candidate is built once: the outcome that passes is the one the strategy node applies.
  for (const strategy of STRATEGY_PREFERENCES[failure.failureClass]) {
    const spent = budgetSpent(strategy, step, revisions);
    if (spent) {
      passed.push(`${strategy} (${spent})`);
      continue;
    }
    // A SKIP after other strategies were passed over says why they were, not a generic "nothing fits".
    if (strategy === "SKIP") {
      const reasoning = reasoningFor(strategy);
      return { ...base, strategy, source: "rules", reasoning, outcome: skipOutcome(input, reasoning) };
    }
    const outcome = recover(strategy, input);
    if (outcome.applies) {
      const guard = guardChoice(args, step, failure, outcome);
      if (guard) return guard;
      return { ...base, strategy, source: "rules", reasoning: reasoningFor(strategy), outcome };
    }
    passed.push(`${strategy} (${outcome.reason})`);
  }
  // SKIP always applies, so this is unreachable unless the preferences lose it.
  const reasoning = `${prefix}No strategy applied: ${passed.join("; ")}`;
  return { ...base, strategy: "SKIP", source: "rules", reasoning, outcome: skipOutcome(input, reasoning) };
}

function skipOutcome(input: StrategyInput, why: string): Extract<StrategyOutcome, { applies: true }> {
  const skipped = recover("SKIP", input, reasonHint("rules", why));
  if (!skipped.applies) throw new Error("SKIP must always apply");
  return skipped;
}
