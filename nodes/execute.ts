import { Send, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Notification, Progress } from "../src/domain/notification.js";
import type { TaskStep } from "../src/domain/plan.js";
import {
  applyFeedback,
  dependencyFailureFeedback,
  dependencyInputs,
  markDispatched,
  readySteps,
  settleBlockedSteps,
} from "../src/planning/schedule.js";
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
    const notifications: Notification[] = [];
    // Everything is announced in the order it happened, the moment this node knows it.
    const tell = (n: Notification) => {
      notifications.push(n);
      emitNotifications(config, [n]);
    };
    const elapsed = Date.now() - Date.parse(state.startedAt ?? new Date().toISOString());
    let progress = state.progress;
    const report = (p: Progress) => {
      progress = p;
      emitProgress(config, p);
      tell(progressNotification(p));
    };
    // One progress update per finished step, counted as if they had finished one after another.
    let partial = before;
    for (const step of plan.steps) {
      const was = before.steps.find((s) => s.id === step.id);
      if (was?.status !== "running" || step.status === "running") continue;
      partial = { ...partial, steps: partial.steps.map((s) => (s.id === step.id ? step : s)) };
      report(
        computeProgress(partial, elapsed, { taskId: step.id, status: step.status === "done" ? "SUCCESS" : "FAILURE" }),
      );
    }

    const inputsOf = (step: TaskStep) => deps.registry.inputsOf(step);
    const settled = settleBlockedSteps(plan, inputsOf);
    plan = settled.plan;
    const feedback = settled.skipped
      .filter((s) => s.dependencyFailure)
      .map(({ step, reason }) => dependencyFailureFeedback(step, reason));
    for (const { step, reason, dependencyFailure } of settled.skipped) {
      tell(
        notification({
          severity: dependencyFailure ? "WARNING" : "INFO",
          kind: "step_failed",
          taskId: step.id,
          title: `${step.description} (${step.id}) skipped: ${reason}`,
        }),
      );
      deps.decisionLog.record({
        operation: "dispatch",
        planId: plan.planId,
        taskId: step.id,
        threadId: threadIdOf(config),
        input: step.description,
        decision: "skip",
        reasoning: reason,
      });
    }
    if (settled.skipped.length > 0)
      report(computeProgress(plan, elapsed, { taskId: settled.skipped.at(-1)!.step.id, status: "SKIPPED" }));

    const ready = readySteps(plan, inputsOf);
    plan = markDispatched(
      plan,
      ready.map((s) => s.id),
      inputsOf,
    );
    for (const { id } of ready) {
      const step = plan.steps.find((s) => s.id === id)!;
      const without = step.missingInputs.map((m) => `${m.input} (${m.from ? `${m.from}: ` : ""}${m.reason})`);
      if (without.length > 0) {
        // Announced before it runs: its result will lack these, and nobody should find out only from the total.
        tell(
          notification({
            severity: "WARNING",
            kind: "step_started",
            taskId: step.id,
            title: `${step.description} (${step.id}) runs without ${step.missingInputs.map((m) => m.input).join(", ")}`,
            message: `Missing optional input(s): ${without.join("; ")}. Its result will say what it left out.`,
          }),
        );
      }
      const reasoning =
        without.length > 0
          ? `dependencies ${step.dependsOn.join(", ")} are settled; it runs without optional input(s) ${without.join("; ")}`
          : step.dependsOn.length
            ? `dependencies ${step.dependsOn.join(", ")} are done`
            : "no dependencies";
      deps.decisionLog.record({
        operation: "dispatch",
        planId: plan.planId,
        taskId: step.id,
        threadId: threadIdOf(config),
        input: step.description,
        decision: `run on ${step.workerType} with ${step.tools.join(", ")}`,
        reasoning,
      });
    }
    return { plan, feedback, notifications, progress, status: "executing", ...latestToolApproval(state) };
  };
}

/**
 * A tool approval answered inside a worker since the thread's last recorded decision becomes its `approval`, so
 * `approval` always holds the latest human decision whatever it answered (a plan, an escalation or a tool call).
 */
function latestToolApproval(state: AgentStateValue): Pick<AgentStateUpdate, "approval"> {
  const since = state.approval?.at ?? "";
  const answered = state.feedback
    .filter((f) => f.approval && f.approval.at > since)
    .sort((a, b) => a.approval!.at.localeCompare(b.approval!.at))
    .at(-1);
  if (!answered?.approval) return {};
  const { decision, comment, by, at } = answered.approval;
  return {
    approval: {
      kind: "tool_approval",
      decision,
      comment,
      by,
      at,
      confidence: state.plan?.confidence ?? 0,
      adjustments: null,
      params: null,
      guidance: null,
    },
  };
}

export type AfterExecute = Send[] | typeof Node.SYNTHESIZE;

/** Every step marked running goes to a worker in this superstep (in parallel); with none, synthesize. */
export function routeAfterExecute(state: AgentStateValue): AfterExecute {
  const plan = state.plan;
  const running = plan?.steps.filter((s) => s.status === "running") ?? [];
  if (!plan || running.length === 0) return Node.SYNTHESIZE;
  return running.map(
    (step) =>
      new Send(Node.WORKER, { step, inputs: dependencyInputs(plan, step), planId: plan.planId } satisfies WorkerInput),
  );
}
