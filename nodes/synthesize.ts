import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Plan } from "../src/domain/plan.js";
import type { ExecutionFeedback } from "../src/domain/feedback.js";
import type { Notification } from "../src/domain/notification.js";
import { judgeReview, unansweredByUnderstanding } from "../src/planning/coverage.js";
import { missingSteps, resultsById } from "../src/planning/schedule.js";
import { failureNotification, notification } from "../src/transparency/notify.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import { Node } from "./names.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";

/**
 * SYNTHESIZE: with failures pending, hand over to replanning; otherwise judge the results against the request's
 * understanding record (a part no step served is missing; with a model, a part whose results do not answer it
 * goes back to replanning as `incomplete_result`) and compose the answer.
 */
export function synthesizeNode(deps: NodeDeps) {
  return async (state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> => {
    const plan = state.plan!;
    const failed = plan.steps.filter((s) => s.status === "failed");
    if (failed.length > 0) {
      deps.decisionLog.record({
        operation: "route",
        planId: plan.planId,
        threadId: threadIdOf(config),
        input: `${failed.length} failed step(s)`,
        decision: "replan",
        reasoning: `failed: ${failed.map((s) => s.id).join(", ")}`,
        confidenceBefore: plan.confidence,
        confidenceAfter: plan.confidence,
      });
      return { status: "replanning" };
    }
    const gaps = unansweredByUnderstanding(plan);
    const missing = [
      ...missingSteps(plan).map((s) => ({
        id: s.id,
        description: s.description,
        reason: withRanWithout(plan, s.id, s.skipReason ?? "skipped"),
      })),
      ...gaps.map((m) => ({ id: m.id, description: `"${m.text}"`, reason: m.why })),
    ];
    const input = { request: state.request, plan, results: resultsById(plan), missing };
    const told: Notification[] = [];
    const review = deps.reasoner.reviewAnswer ? await deps.reasoner.reviewAnswer(input) : null;
    if (review) {
      const verdict = judgeReview(plan, review);
      for (const o of verdict.overruled) {
        told.push(
          notification({
            severity: "WARNING",
            kind: "outcome",
            title: `Part "${o.text}" is missing from the answer: ${o.why}; the model's review is overruled`,
          }),
        );
        deps.decisionLog.record({
          operation: "synthesize",
          planId: plan.planId,
          threadId: threadIdOf(config),
          input: `review of ${o.partId}`,
          decision: "overrule the model",
          reasoning: o.why,
        });
      }
      if (verdict.incomplete.length > 0) {
        const feedback: ExecutionFeedback[] = [];
        let revised = plan;
        for (const gap of verdict.incomplete) {
          const step = revised.steps.find((s) => s.id === gap.stepId)!;
          const f: ExecutionFeedback = {
            taskId: step.id,
            feedbackType: "FAILURE",
            outputs: {},
            errors: [`its result does not answer "${gap.text}": ${gap.why}`],
            failureClass: "incomplete_result",
            durationMs: 0,
            cost: 0,
            at: new Date().toISOString(),
            attempt: step.attempts,
            dispatch: step.dispatches,
            workerType: step.workerType,
            tool: step.tools[0] ?? null,
            params: step.params,
            attempts: [],
            errorType: "INCOMPLETE_RESULT",
            trace: null,
          };
          feedback.push(f);
          revised = {
            ...revised,
            steps: revised.steps.map((s) => (s.id === step.id ? { ...s, status: "failed" as const, result: null } : s)),
          };
          told.push(failureNotification(step, f, deps.logFile));
          deps.decisionLog.record({
            operation: "synthesize",
            planId: plan.planId,
            taskId: step.id,
            threadId: threadIdOf(config),
            input: `review of ${gap.partId}`,
            decision: "incomplete_result: replan",
            reasoning: gap.why,
          });
        }
        emitNotifications(config, told);
        return { plan: revised, feedback, notifications: told, status: "replanning" };
      }
    }
    emitNotifications(config, told);
    const answer = withMissingListed(await deps.reasoner.synthesize(input), missing);
    deps.decisionLog.record({
      operation: "synthesize",
      planId: plan.planId,
      threadId: threadIdOf(config),
      input: `${plan.steps.length} steps`,
      decision: missing.length ? `answer without ${missing.map((m) => m.id).join(", ")}` : "answer",
      reasoning: `${deps.reasoner.kind} synthesis`,
    });
    return { answer, status: "reflecting", ...(told.length > 0 ? { notifications: told } : {}) };
  };
}

/**
 * A missing step's reason, plus the steps that ran without its result (it was an optional input of theirs): their
 * results are real but partial, and the answer must not let them pass for complete.
 */
function withRanWithout(plan: Plan, id: string, reason: string): string {
  // `?? []`: a thread checkpointed before steps recorded missingInputs has none.
  const without = (s: Plan["steps"][number]) => (s.missingInputs ?? []).filter((m) => m.from === id);
  const ran = plan.steps.filter((s) => s.status === "done" && without(s).length > 0);
  if (ran.length === 0) return reason;
  const inputs = [...new Set(ran.flatMap((s) => without(s).map((m) => m.input)))];
  return `${reason}; ${ran.map((s) => s.id).join(", ")} ran without its ${inputs.join(", ")}`;
}

/**
 * The answer with every missing item named: a model's answer that leaves one out (or claims it) gets the list the
 * record makes, so nothing missing passes for done.
 */
export function withMissingListed(
  answer: string,
  missing: readonly { id: string; description: string; reason: string }[],
): string {
  const unnamed = missing.filter((m) => !answer.includes(m.description));
  if (unnamed.length === 0) return answer;
  return [
    answer.trimEnd(),
    "Missing from this answer:",
    ...unnamed.map((m) => `- ${m.description} (${m.id}): ${m.reason}`),
  ].join("\n");
}

export type AfterSynthesize = typeof Node.SELECT_STRATEGY | typeof Node.REFLECT;

/** Failed steps (a tool's failure, or a result a review found does not answer its part) → select_strategy; else reflect. */
export function routeAfterSynthesize(state: AgentStateValue): AfterSynthesize {
  return state.plan?.steps.some((s) => s.status === "failed") ? Node.SELECT_STRATEGY : Node.REFLECT;
}
