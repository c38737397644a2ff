import { Send, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { ExecutionFeedback } from "../src/domain/feedback.js";
import { applyFeedback, dependencyInputs, markDispatched, readySteps, settleBlockedSteps } from "../src/planning/schedule.js";
import { computeProgress } from "../src/transparency/progress.js";
import { notification, progressNotification } from "../src/transparency/notify.js";
import { emitNotifications, emitProgress, threadIdOf, type NodeDeps } from "./deps.js";
import { Node } from "./names.js";
import type { AgentStateUpdate, AgentStateValue, WorkerInput } from "./state.js";

/**
 * EXECUTE: folds the workers' feedback into the plan, reports progress, skips steps that can no longer run
 * (DEPENDENCY_FAILURE, false conditions), and marks every ready step as running; the router then sends them
 * all to workers at once.
 */
export function executeNode(deps: NodeDeps) {
  return async (state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> => {
    if (!state.plan) throw new Error("execute reached without a plan");
    const before = state.plan;
    let plan = applyFeedback(before, state.feedback);
    const notifications = [];
    const elapsed = Date.now() - Date.parse(state.startedAt ?? new Date().toISOString());
    let progress = state.progress;
    // One progress update per finished step, counted as if they had finished one after another.
    let partial = before;
    for (const step of plan.steps) {
      const was = before.steps.find((s) => s.id === step.id);
      if (was?.status !== "running" || step.status === "running") continue;
      partial = { ...partial, steps: partial.steps.map((s) => (s.id === step.id ? step : s)) };
      progress = computeProgress(partial, elapsed, { taskId: step.id, status: step.status === "done" ? "SUCCESS" : "FAILURE" });
      emitProgress(config, progress);
      notifications.push(progressNotification(progress));
    }

    const settled = settleBlockedSteps(plan);
    plan = settled.plan;
    const feedback: ExecutionFeedback[] = [];
    for (const { step, reason, dependencyFailure } of settled.skipped) {
      if (dependencyFailure) {
        feedback.push({
          taskId: step.id,
          feedbackType: "DEPENDENCY_FAILURE",
          outputs: {},
          errors: [reason],
          failureClass: "dependency_failed",
          durationMs: 0,
          cost: 0,
          at: new Date().toISOString(),
          attempt: 0,
          dispatch: step.dispatches,
          workerType: step.workerType,
          tool: step.tools[0] ?? null,
          params: step.params,
          attempts: [],
          errorType: null,
          trace: null,
        });
      }
      notifications.push(notification({ severity: dependencyFailure ? "WARNING" : "INFO", kind: "step_failed", taskId: step.id, title: `${step.description} (${step.id}) skipped: ${reason}` }));
      deps.decisionLog.record({ operation: "dispatch", planId: plan.planId, taskId: step.id, threadId: threadIdOf(config), input: step.description, decision: "skip", reasoning: reason });
    }
    if (settled.skipped.length > 0) {
      progress = computeProgress(plan, elapsed, { taskId: settled.skipped[settled.skipped.length - 1]!.step.id, status: "SKIPPED" });
      emitProgress(config, progress);
    }

    const ready = readySteps(plan);
    plan = markDispatched(plan, ready.map((s) => s.id));
    for (const step of ready) {
      deps.decisionLog.record({ operation: "dispatch", planId: plan.planId, taskId: step.id, threadId: threadIdOf(config), input: step.description, decision: `run on ${step.workerType} with ${step.tools.join(", ")}`, reasoning: step.dependsOn.length ? `dependencies ${step.dependsOn.join(", ")} are done` : "no dependencies" });
    }
    emitNotifications(config, notifications);
    return { plan, feedback, notifications, progress, status: "executing" };
  };
}

export type AfterExecute = Send[] | typeof Node.SYNTHESIZE;

/** Every step marked running goes to a worker in this superstep (in parallel); with none, synthesize. */
export function routeAfterExecute(state: AgentStateValue): AfterExecute {
  const plan = state.plan;
  const running = plan?.steps.filter((s) => s.status === "running") ?? [];
  if (!plan || running.length === 0) return Node.SYNTHESIZE;
  return running.map((step) => new Send(Node.WORKER, { step, inputs: dependencyInputs(plan, step), planId: plan.planId } satisfies WorkerInput));
}
