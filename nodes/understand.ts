import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { planApprovalRequest, type HumanApprovalRequest } from "../src/domain/approval.js";
import { CandorError } from "../src/errors.js";
import { applyCalibration, ConfidenceCalibrator } from "../src/confidence/calibrator.js";
import { confidencePoint } from "../src/confidence/update.js";
import { recentEpisodes, summarizeLessons } from "../src/memory/episodes.js";
import { notification, planNotification } from "../src/transparency/notify.js";
import { approvalNotification } from "../src/transparency/explain.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import { Node } from "./names.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";

/** How many of the user's most recent episodes the planner learns from. */
const EPISODES_CONSIDERED = 20;

/** UNDERSTAND: plan (with lessons from this user's episodes), calibrate confidence on past outcomes, decide on approval. */
export function understandNode(deps: NodeDeps) {
  return async (state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> => {
    const startedAt = state.startedAt ?? new Date().toISOString();
    const userId = state.request.userContext.userId;
    // A practice run (faults injected) learns from every episode; a real run never from a practice run's, so a
    // tool that only failed on purpose is not avoided for real.
    const simulated = deps.registry.injectedFaults().length > 0;
    const episodes = config.store ? await recentEpisodes(config.store, userId, 4 * EPISODES_CONSIDERED) : [];
    const usable = (simulated ? episodes : episodes.filter((e) => !e.simulated)).slice(0, EPISODES_CONSIDERED);
    const leftOut = episodes.slice(0, EPISODES_CONSIDERED).filter((e) => e.simulated && !simulated).length;
    const memory = summarizeLessons(usable);
    let result;
    try {
      result = await deps.reasoner.plan(state.request, { registry: deps.registry, lessons: memory.lessons, unreliableTools: memory.unreliableTools, signal: config.signal });
    } catch (e) {
      if (!CandorError.isInstance(e)) throw e;
      const failed = notification({ severity: "ERROR", kind: "outcome", title: `No plan could be made: ${e.message}`, message: `Error code ${e.code}.` });
      emitNotifications(config, [failed]);
      deps.decisionLog.record({ operation: "plan", planId: null, threadId: threadIdOf(config), input: state.request.userIntent, decision: "no plan", reasoning: e.message });
      return { startedAt, status: "failed", failureReason: e.message, notifications: [failed] };
    }
    // Before the approval check, so a history of failed high-confidence plans brings this one to a human sooner.
    const calibration = config.store ? await new ConfidenceCalibrator(config.store, userId).calibrate(result.plan.confidence) : null;
    const { plan: raw, notes } = result;
    const plan = applyCalibration(raw, calibration);
    const needsApproval = plan.confidence < state.settings.approvalThreshold;
    const notes2 = [
      ...notes,
      ...memory.lessons.map((l) => `Memory: ${l}`),
      ...(leftOut > 0 ? [`Memory: ${leftOut} recent run(s) with injected faults left out; practice runs do not teach real ones.`] : []),
    ];
    const out = [planNotification(plan, notes2)];
    let pendingInterrupt: HumanApprovalRequest | null = null;
    if (needsApproval) {
      pendingInterrupt = planApprovalRequest(plan, state.settings.approvalThreshold);
      out.push(approvalNotification(pendingInterrupt));
    }
    emitNotifications(config, out);
    deps.decisionLog.record({
      operation: "plan",
      planId: plan.planId, threadId: threadIdOf(config), input: state.request.userIntent,
      decision: `${plan.steps.length} steps: ${plan.steps.map((s) => `${s.id}[${s.workerType}]`).join(", ")}${needsApproval ? "; needs approval" : ""}`,
      reasoning: [plan.contextSummary, ...plan.confidenceReasons, ...notes].filter(Boolean).join(" "),
      confidenceBefore: calibration?.reason ? raw.confidence : null, // the planner's own score when calibration changed it
      confidenceAfter: plan.confidence,
    });
    return {
      startedAt, plan, planNotes: notes2, pendingInterrupt,
      status: needsApproval ? "awaiting_approval" : "executing",
      notifications: out,
      // The raw score comes first: REFLECT records it as the outcome's confidence, so calibration learns from the planner, not from itself.
      confidenceHistory: [confidencePoint(raw.confidence, `initial plan (${plan.createdBy})`), ...(calibration?.reason ? [confidencePoint(plan.confidence, calibration.reason)] : [])],
    };
  };
}

export type AfterUnderstand = typeof Node.FINALIZE | typeof Node.HUMAN_INTERRUPT | typeof Node.EXECUTE;

/** No plan → finalize (the report says why); a plan that needs approval → human_interrupt; else execute. */
export function routeAfterUnderstand(state: AgentStateValue): AfterUnderstand {
  if (!state.plan || state.status === "failed") return Node.FINALIZE;
  if (state.pendingInterrupt) return Node.HUMAN_INTERRUPT;
  return Node.EXECUTE;
}
