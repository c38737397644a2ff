import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { definitionOf } from "../src/domain/plan-state.js";
import { needsPlanApproval, planApprovalRequest, type HumanApprovalRequest } from "../src/domain/approval.js";
import { understandingNotes } from "../src/domain/understanding.js";
import { resolveRunSettings, settingsNote } from "../src/domain/config.js";
import { CandorError } from "../src/errors.js";
import { checkAbortBelow, plannedChange, withAbortReason } from "../src/confidence/abort-below.js";
import type { Plan } from "../src/domain/plan.js";
import type { Notification } from "../src/domain/notification.js";
import type { PlanningRequest } from "../src/domain/request.js";
import { confidencePoint } from "../src/confidence/update.js";
import { planWithMemory, type PlannedWithMemory } from "../src/reflection/plan-with-memory.js";
import { notification, planNotification } from "../src/transparency/notify.js";
import { approvalNotification } from "../src/transparency/explain.js";
import {
  reactiveFallback,
  reactiveNeedsModel,
  reactiveNotification,
  reactivePlan,
  reactiveReading,
  type ReactiveTrigger,
} from "../src/execution/reactive.js";
import { REACTIVE_WORKER } from "../src/domain/plan.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import { Node } from "./names.js";
import { nextOf } from "../src/domain/next.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";
import { assertPlanFitsTokenBudget } from "../src/planning/token-budget.js";
import { scopeCalls } from "../src/reasoning/usage.js";

/**
 * UNDERSTAND: plan (with lessons from this user's episodes), calibrate confidence on past outcomes, decide on
 * approval. Reactive mode replaces the plan with one model-driven `general` step: when settings.planner is false,
 * or when planning fails and a worker model can take over (src/execution/reactive.ts).
 */
export function understandNode(deps: NodeDeps) {
  return async (state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> => {
    const startedAt = state.startedAt ?? new Date().toISOString();
    // The settings are fixed here, before anything reads them: the input's over the assistant's over the defaults.
    // A bad assistant setting throws CandorError CONFIGURATION, so the run stops before any plan or tool.
    const resolved = resolveRunSettings({
      state: state.settings,
      context: config.context,
      configurable: config.configurable,
    });
    const settings = resolved.settings;
    const fromSettings = settingsNote(resolved);
    const chosen = await planOrReact(deps, state, config, settings.planner);
    if (chosen.kind === "none") return noPlan(deps, state, config, chosen.error, startedAt, settings);
    const { result, reactive } = chosen;
    const { raw, plan, calibration } = result;
    const notes = fromSettings ? [...result.notes, fromSettings] : result.notes;
    // --abort-below holds from the first confidence on: a plan made (and calibrated) below it waits for a person.
    const abort = checkAbortBelow(plannedChange(raw, plan, calibration), settings.abortBelow);
    const needsApproval = needsPlanApproval(plan, settings.approvalThreshold) || !abort.ok;
    const out = [announced(deps, plan, reactive, notes, abort.ok ? [] : [abort.reason])];
    let pendingInterrupt: HumanApprovalRequest | null = null;
    if (needsApproval) {
      const request = planApprovalRequest(plan, settings.approvalThreshold);
      pendingInterrupt = abort.ok ? request : withAbortReason(request, abort.reason);
      out.push(approvalNotification(pendingInterrupt));
    }
    emitNotifications(config, out);
    deps.decisionLog.record({
      operation: "plan",
      planId: plan.planId,
      threadId: threadIdOf(config),
      input: state.request.userIntent,
      decision: `${reactive ? "reactive mode, no plan: one general worker loop" : `${plan.steps.length} steps: ${plan.steps.map((s) => `${s.id}[${s.workerType}]`).join(", ")}`}${needsApproval ? "; needs approval" : ""}`,
      reasoning: [plan.contextSummary, ...plan.confidenceReasons, ...notes].filter(Boolean).join(" "),
      confidenceBefore: calibration?.reason ? raw.confidence : null, // the planner's own score when calibration changed it
      confidenceAfter: plan.confidence,
      understanding: plan.understanding,
    });
    return {
      startedAt,
      settings,
      // Its steps have not run: no run-state is written (a `runs` left from an earlier plan of the thread is for
      // another plan id, and never read as this one's).
      plan: definitionOf(plan),
      planNotes: notes,
      pendingInterrupt,
      next: { kind: needsApproval ? "ask" : "execute" },
      plannedConfidence: raw.confidence,
      status: needsApproval ? "awaiting_approval" : "executing",
      notifications: out,
      // The raw score is kept apart (and comes first in the history): REFLECT records it as the outcome's
      // confidence, so calibration learns from the planner, not from itself.
      confidenceHistory: [
        confidencePoint(raw.confidence, `initial plan (${plan.createdBy})`),
        ...(calibration?.reason ? [confidencePoint(plan.confidence, calibration.reason)] : []),
      ],
    };
  };
}

/** The plan as it is announced: a reactive run's notice, or the plan with its understanding record's notes. */
function announced(
  deps: NodeDeps,
  plan: Plan,
  reactive: ReactiveTrigger | null,
  notes: readonly string[],
  abort: readonly string[],
): Notification {
  const grant = deps.registry.grant(REACTIVE_WORKER).length;
  if (reactive) return reactiveNotification(plan, reactive, grant, [...notes, ...abort]);
  const record = understandingNotes(plan.understanding);
  return planNotification(plan, [...notes, ...record.warnings, ...abort], record.info);
}

/**
 * The plan, or a reactive run in its place (settings.planner false, or planning failed and a worker model can take
 * over), or the planning error when neither can run. Asked for reactive mode without a model: refused before
 * anything runs, rather than planned against the ask.
 */
async function planOrReact(
  deps: NodeDeps,
  state: AgentStateValue,
  config: LangGraphRunnableConfig,
  planner: boolean,
): Promise<
  { kind: "chosen"; result: PlannedWithMemory; reactive: ReactiveTrigger | null } | { kind: "none"; error: CandorError }
> {
  const canReact = deps.reasoner.workerModel !== undefined;
  const react = (trigger: ReactiveTrigger) =>
    ({ kind: "chosen", result: asReactive(deps, state.request, trigger), reactive: trigger }) as const;
  if (!planner) {
    if (!canReact) throw reactiveNeedsModel();
    return react({ kind: "asked" });
  }
  try {
    const result = await planWithMemory(deps, state.request, { store: config.store, signal: config.signal });
    // PRE-PLAN-003: a plan expected to need more model tokens than the budget is refused before anything runs
    // (a refusal, so it never falls back to reactive mode).
    assertPlanFitsTokenBudget(result.plan, state.request, deps.reasoner, deps.registry, [
      ...state.tokens,
      ...scopeCalls(),
    ]);
    const fallback = reactiveFallback({ kind: "plan", plan: result.raw }, canReact);
    return fallback.ok ? react(fallback.value) : { kind: "chosen", result, reactive: null };
  } catch (e) {
    if (!CandorError.isInstance(e)) throw e;
    const fallback = reactiveFallback({ kind: "error", error: e }, canReact);
    return fallback.ok ? react(fallback.value) : { kind: "none", error: e };
  }
}

/**
 * A reactive run in the shape planning returns: its one-step plan, nothing calibrated (no planner rated it). The
 * planner's own notes are left out: after a failed planning they describe the plan that was not made, and the
 * reason the run is reactive already says what failed.
 */
function asReactive(deps: NodeDeps, request: PlanningRequest, trigger: ReactiveTrigger): PlannedWithMemory {
  const plan = reactivePlan(request, trigger, reactiveReading(request, deps.registry));
  return { raw: plan, plan, notes: [], calibration: null };
}

/** No plan and no reactive fallback: the run fails here, and the notification and the log say why. */
function noPlan(
  deps: NodeDeps,
  state: AgentStateValue,
  config: LangGraphRunnableConfig,
  e: CandorError,
  startedAt: string,
  settings: AgentStateValue["settings"],
): AgentStateUpdate {
  const failed = notification({
    severity: "ERROR",
    kind: "outcome",
    title: `No plan could be made: ${e.message}`,
    message: `Error code ${e.code}.`,
  });
  emitNotifications(config, [failed]);
  deps.decisionLog.record({
    operation: "plan",
    planId: null,
    threadId: threadIdOf(config),
    input: state.request.userIntent,
    decision: "no plan",
    reasoning: e.message,
  });
  return {
    startedAt,
    settings,
    next: { kind: "end" },
    status: "failed",
    failureReason: e.message,
    notifications: [failed],
  };
}

export type AfterUnderstand = typeof Node.FINALIZE | typeof Node.HUMAN_INTERRUPT | typeof Node.EXECUTE;

/**
 * No plan → finalize (the report says why; there is nothing to reflect on); a plan that needs approval →
 * human_interrupt; else execute. UNDERSTAND sets only those three; another kind here comes from an edited state
 * (a fork written as understand), whose plan then runs from execute, which hands failures to recovery.
 */
export function routeAfterUnderstand(state: AgentStateValue): AfterUnderstand {
  const next = nextOf(state);
  if (!state.plan) return Node.FINALIZE;
  switch (next.kind) {
    case "end":
      return Node.FINALIZE;
    case "ask":
      return Node.HUMAN_INTERRUPT;
    case "execute":
    case "choose_recovery":
    case "recover":
    case "replan":
      return Node.EXECUTE;
  }
}
