import { setMaxListeners } from "node:events";
import { Send, task, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Notification } from "../src/domain/notification.js";
import { feedbackToStore, planOf, planWrites } from "../src/domain/plan-state.js";
import { tokenBudgetOf } from "../src/domain/usage.js";
import { runEagerPass, type EagerPassHooks, type StepTaskResult } from "../src/execution/eager-pass.js";
import { stepContext } from "../src/execution/values.js";
import { runWorkerStep } from "../src/execution/worker-step.js";
import { dependencyInputs } from "../src/planning/schedule.js";
import { isModelDriven } from "../src/tools/model-driven.js";
import { callNeedingApproval } from "../src/tools/pending-call.js";
import { emitNotifications, emitProgress, threadIdOf, type NodeDeps } from "./deps.js";
import { Node } from "./names.js";
import type { AgentStateUpdate, AgentStateValue, WorkerInput } from "./state.js";

/**
 * EXECUTE: runs the plan eagerly — every step starts the moment its last dependency settles, never waiting for a
 * sibling — and returns to the graph when nothing more can start (src/execution/eager-pass.ts). Each step that
 * needs no approval runs as a LangGraph task (`task()`), so a finished step's result is saved the moment it ends and
 * replayed, not re-run, when the thread resumes after a crash. A step whose call needs a person's approval, or whose
 * call the plan leaves to a model, is left `running` and the router sends it to the worker subgraph (several may
 * wait at once, each answered on its own); its feedback is folded in when EXECUTE runs again.
 */
export function executeNode(deps: NodeDeps) {
  return async (state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> => {
    const before = planOf(state);
    if (!before) throw new Error("execute reached without a plan");
    // Every running step's task listens to the run's abort signal; a wide plan passes Node's default of 10 and
    // would print a "possible leak" warning into the embedding app's output for what is not a leak.
    if (config.signal) setMaxListeners(0, config.signal);
    const input = {
      plan: before,
      workerFeedback: state.feedback,
      startedAt: Date.parse(state.startedAt ?? new Date().toISOString()),
      progress: state.progress,
      tokens: state.tokens,
      threadId: threadIdOf(config),
    };
    const { plan, feedback, notifications, progress } = await runEagerPass(input, passHooks(deps, state, config));
    return {
      ...planWrites(state, plan),
      feedback: feedbackToStore(feedback, plan),
      notifications,
      progress,
      status: "executing",
      ...latestToolApproval(state),
    };
  };
}

/**
 * Named "step", not "worker" (the approval subgraph's node): a task's id includes its name, so a pass saved when
 * tasks were called in plan order (named "worker") never has its saved results matched by this order; its steps run
 * again, and the effect ledger keeps their side effects from repeating.
 */
const STEP_TASK = "step";

/** The pass's seams bound to this graph: LangGraph's task(), the worker, the stream and the decision log. */
function passHooks(deps: NodeDeps, state: AgentStateValue, config: LangGraphRunnableConfig): EagerPassHooks {
  const emit = (n: Notification) => emitNotifications(config, [n]);
  const threadId = threadIdOf(config);
  return {
    // task() types the result of an async function as a promise of a promise; at run time it is one promise.
    runTask: (stepId, body) => task(STEP_TASK, body)(stepId) as unknown as Promise<StepTaskResult>,
    runStep: (step, inputs, plan) =>
      runWorkerStep(deps, {
        step,
        inputs,
        context: stepContext(plan, step, state.request),
        planId: plan.planId,
        threadId,
        toolDecision: null,
        ...(config.signal ? { signal: config.signal } : {}),
        emit,
      }),
    // Deferred to the worker subgraph: a call that needs approval (its gate interrupts there), and a step whose
    // call the plan does not determine (its model-driven loop is a subgraph there, and may ask for approval).
    deferred: (step) =>
      callNeedingApproval(step, deps.registry) !== null ||
      isModelDriven(step, deps.registry, deps.reasoner.workerModel),
    inputsOf: (step) => deps.registry.inputsOf(step),
    emitNotification: emit,
    emitProgress: (p) => emitProgress(config, p),
    decisionLog: deps.decisionLog,
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

/**
 * Steps left running after EXECUTE's pass are the ones waiting for an approval gate: each goes to the worker
 * subgraph in this superstep (in parallel, so several can wait at once); with none, synthesize.
 */
export function routeAfterExecute(state: AgentStateValue): AfterExecute {
  const plan = planOf(state);
  const running = plan?.steps.filter((s) => s.status === "running") ?? [];
  if (!plan || running.length === 0) return Node.SYNTHESIZE;
  return running.map(
    (step) =>
      new Send(Node.WORKER, {
        step,
        inputs: dependencyInputs(plan, step),
        planId: plan.planId,
        context: stepContext(plan, step, state.request),
        tokenBudget: tokenBudgetOf(state.request.constraints.tokenBudget, state.tokens),
      } satisfies WorkerInput),
  );
}
