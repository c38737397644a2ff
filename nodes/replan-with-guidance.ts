import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { planOf, planWrites } from "../src/domain/plan-state.js";
import { abortBelowApproval, checkAbortBelow, plannedChange, withAbortReason } from "../src/confidence/abort-below.js";
import { confidencePoint } from "../src/confidence/update.js";
import { CandorError } from "../src/errors.js";
import type { Plan, TaskStep } from "../src/domain/plan.js";
import type { PlanningRequest } from "../src/domain/request.js";
import type { PlanRevision } from "../src/domain/revision.js";
import { assertPlanFitsTokenBudget } from "../src/planning/token-budget.js";
import { scopeCalls } from "../src/reasoning/usage.js";
import { buildFailureContext } from "../src/replanning/context.js";
import { guidedRequest, guidedRevision, mergeGuidedPlan } from "../src/replanning/human-guidance.js";
import { needsPlanApproval, planApprovalRequest } from "../src/domain/approval.js";
import { openQuestions, understandingNotes } from "../src/domain/understanding.js";
import { approvalNotification, explainRevision } from "../src/transparency/explain.js";
import { notification, planNotification } from "../src/transparency/notify.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import { planWithMemory, type PlannedWithMemory } from "../src/reflection/plan-with-memory.js";
import { Node } from "./names.js";
import { nextOf, type Next } from "../src/domain/next.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";

/** Joins why a replan failed to what the person was asked before it. */
const BEFORE = " Before that: ";

/**
 * REPLAN_WITH_GUIDANCE: a person answered a plan approval or an escalation with guidance. The reasoner plans the
 * request again with the guidance put first, and the guided request replaces the old one in state. For a plan not
 * yet approved, the new plan replaces it (and is asked about again if still below the threshold); after an
 * escalation, finished steps the new plan repeats are kept with their results and the rest runs. When no usable
 * plan comes out, the person is asked again, told why — the thread never fails silently here.
 */
export function replanWithGuidanceNode(deps: NodeDeps) {
  return async (state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> => {
    const next = nextOf(state);
    const current = planOf(state);
    // Only an edited state reaches this node without guidance to plan with: the plan runs on as it is.
    if (next.kind !== "replan" || !current) return { next: { kind: "execute" } };
    const g: Guided = {
      deps,
      config,
      state,
      current,
      guidance: next,
      request: guidedRequest(state.request, next.text),
    };
    // The same planning as UNDERSTAND: the user's memory, then calibration on their past outcomes.
    let fresh: PlannedWithMemory;
    try {
      fresh = await planWithMemory(deps, g.request, { store: config.store, signal: config.signal });
      if (next.request.kind === "plan_approval") fitsTokenBudget(g, fresh.plan);
    } catch (e) {
      if (!CandorError.isInstance(e)) throw e;
      return askedAgain(g, e.message);
    }
    return next.request.kind === "plan_approval" ? beforeRun(g, fresh) : afterEscalation(g, fresh);
  };
}

/** What replanning with a person's guidance works from. */
interface Guided {
  deps: NodeDeps;
  config: LangGraphRunnableConfig;
  state: AgentStateValue;
  /** The plan the guidance is about. */
  current: Plan;
  guidance: Extract<Next, { kind: "replan" }>;
  /** The request with the guidance put first: it replaces the old one in state. */
  request: PlanningRequest;
}

/** PRE-PLAN-003 holds for a plan made again: one expected to need more model tokens than the budget is not run. */
function fitsTokenBudget(g: Guided, plan: Plan): void {
  const { deps, state } = g;
  assertPlanFitsTokenBudget(plan, g.request, deps.reasoner, deps.registry, [...state.tokens, ...scopeCalls()]);
}

/** No usable plan came out: the person is asked again, told why (the latest failure only, not stacked). */
function askedAgain(g: Guided, why: string): AgentStateUpdate {
  const { deps, config, current, guidance } = g;
  const told = notification({
    severity: "WARNING",
    kind: "approval",
    taskId: guidance.taskId,
    title: `Replanning with your guidance did not work: ${why}`,
    message: "The run is waiting for your decision again.",
  });
  emitNotifications(config, [told]);
  deps.decisionLog.record({
    operation: "revision",
    planId: current.planId,
    taskId: guidance.taskId,
    threadId: threadIdOf(config),
    input: guidance.text,
    decision: "ask again",
    reasoning: why,
    confidenceBefore: current.confidence,
  });
  const again = guidance.request;
  const reason = `Replanning with "${guidance.text}" did not work: ${why}`;
  const original = (text: string) =>
    text.includes(BEFORE) ? text.slice(text.lastIndexOf(BEFORE) + BEFORE.length) : text;
  return {
    next: { kind: "ask" },
    status: "awaiting_approval",
    pendingInterrupt:
      "reason" in again
        ? { ...again, reason: `${reason}${BEFORE}${original(again.reason)}` }
        : { ...again, question: `${reason}${BEFORE}${original(again.question)}` },
    notifications: [told],
  };
}

/**
 * Guidance at a plan approval: nothing has run yet, so the new plan replaces the old one whole, and is asked about
 * again if it is still below the approval threshold (guidance is not an approval).
 */
function beforeRun(g: Guided, fresh: PlannedWithMemory): AgentStateUpdate {
  const { deps, config, state, current, guidance } = g;
  const plan = fresh.plan;
  const threshold = state.settings.approvalThreshold;
  const abort = checkAbortBelow(plannedChange(fresh.raw, plan, fresh.calibration), state.settings.abortBelow);
  const approval = needsPlanApproval(plan, threshold) || !abort.ok ? planApprovalRequest(plan, threshold) : null;
  const ask = approval && !abort.ok ? withAbortReason(approval, abort.reason) : approval;
  const record = understandingNotes(plan.understanding);
  const told = [
    planNotification(plan, [...fresh.notes, ...record.warnings, ...(abort.ok ? [] : [abort.reason])], record.info),
    ...(ask ? [approvalNotification(ask)] : []),
  ];
  emitNotifications(config, told);
  deps.decisionLog.record({
    operation: "plan",
    planId: plan.planId,
    threadId: threadIdOf(config),
    input: guidance.text,
    decision: `made again with a person's guidance: ${plan.steps.map((s) => `${s.id}[${s.workerType}]`).join(", ")}${ask ? "; needs approval" : ""}`,
    reasoning: [plan.contextSummary, ...plan.confidenceReasons, ...fresh.notes].filter(Boolean).join(" "),
    confidenceBefore: current.confidence,
    confidenceAfter: plan.confidence,
    understanding: plan.understanding,
  });
  return {
    ...planWrites(state, plan),
    request: g.request,
    // The plan that runs is this one: calibration learns from its planner's score, not the rejected plan's.
    plannedConfidence: fresh.raw.confidence,
    planNotes: fresh.notes,
    next: { kind: ask ? "ask" : "execute" },
    pendingInterrupt: ask,
    status: ask ? "awaiting_approval" : "executing",
    confidenceHistory: [confidencePoint(plan.confidence, `plan made again with a person's guidance`)],
    notifications: told,
  };
}

/**
 * Guidance after an escalation: finished steps the new plan repeats are kept with their results and the rest runs.
 * A guided plan that leaves part of the request unread or unserved would run something other than what was asked:
 * the person hears what is open and decides again, as at a plan approval.
 */
function afterEscalation(g: Guided, fresh: PlannedWithMemory): AgentStateUpdate {
  const { deps, state, current, guidance } = g;
  const open = openQuestions(fresh.plan.understanding);
  if (open.length > 0) {
    return askedAgain(
      g,
      `The plan made with your guidance leaves ${open.length} thing(s) open: ${open.join("; ")}. Say more in the guidance, or decide otherwise`,
    );
  }
  const failed = current.steps.find((s) => s.id === guidance.taskId);
  const used = [
    ...state.feedback.map((f) => f.taskId),
    ...state.revisions.flatMap((r) => [...r.removedStepIds, ...r.newStepIds]),
  ];
  const outcome = guidedRevision({
    current,
    merge: mergeGuidedPlan(current, fresh.plan, used),
    guidance: guidance.text,
    request: g.request,
    registry: deps.registry,
    feedback: state.feedback,
    revisionCount: state.revisionCount,
    failed,
    failureClass: failed ? buildFailureContext(failed, state.feedback).failureClass : "unknown",
  });
  if (!outcome.ok) return askedAgain(g, outcome.error);
  try {
    // Only what is left to run counts: the finished steps the guided plan keeps are not run again.
    fitsTokenBudget(g, outcome.plan);
  } catch (e) {
    if (!CandorError.isInstance(e)) throw e;
    return askedAgain(g, e.message);
  }
  return guidedRevisionApplied(g, fresh, outcome, failed);
}

/** The guided revision applied, explained and logged; below --abort-below it waits for the person. */
function guidedRevisionApplied(
  g: Guided,
  fresh: PlannedWithMemory,
  outcome: { plan: Plan; revision: PlanRevision },
  failed: TaskStep | undefined,
): AgentStateUpdate {
  const { deps, config, state, guidance } = g;
  const { plan, revision } = outcome;
  const told = explainRevision(
    revision,
    failed ?? plan.steps[0]!,
    failed ? buildFailureContext(failed, state.feedback).error : "the run was escalated",
    deps.logFile,
  );
  // The guided plan's confidence is the planner's, not one the person chose: below --abort-below, it waits.
  const abort = checkAbortBelow(
    {
      from: revision.confidenceBefore,
      to: revision.confidenceAfter,
      why: `${revision.revisionId} planned again with your guidance`,
    },
    state.settings.abortBelow,
  );
  const stop = abort.ok ? null : abortBelowApproval(plan, abort.reason, state.settings.abortBelow);
  const stopped = stop ? [told, approvalNotification(stop)] : [told];
  emitNotifications(config, stopped);
  deps.decisionLog.record({
    operation: "revision",
    planId: plan.planId,
    taskId: guidance.taskId,
    threadId: threadIdOf(config),
    input: guidance.text,
    decision: revision.changes.join("; "),
    reasoning: [revision.rationale, ...fresh.notes].join(" "),
    confidenceBefore: revision.confidenceBefore,
    confidenceAfter: revision.confidenceAfter,
  });
  return {
    ...planWrites(state, plan),
    // Kept, so a later recovery that re-reads the request (RETRY_WITH_PARAMS) or another replan starts from it.
    request: g.request,
    next: { kind: stop ? "ask" : "execute" },
    status: stop ? "awaiting_approval" : "executing",
    pendingInterrupt: stop,
    revisions: [revision],
    revisionCount: state.revisionCount + 1,
    confidenceHistory: [
      confidencePoint(revision.confidenceAfter, `${revision.revisionId} planned again with a person's guidance`),
    ],
    notifications: stopped,
  };
}

export type AfterReplanWithGuidance = typeof Node.EXECUTE | typeof Node.HUMAN_INTERRUPT;

/**
 * A guided plan runs; a guidance that gave no usable plan, or a plan that needs approval, goes back to the person.
 * REPLAN_WITH_GUIDANCE sets only `ask` or `execute`; another kind comes from an edited state and runs the plan.
 */
export function routeAfterReplanWithGuidance(state: AgentStateValue): AfterReplanWithGuidance {
  const next = nextOf(state);
  switch (next.kind) {
    case "ask":
      return Node.HUMAN_INTERRUPT;
    case "execute":
    case "choose_recovery":
    case "recover":
    case "replan":
    case "end":
      return Node.EXECUTE;
  }
}
