import { setMaxListeners } from "node:events";
import { Send, task, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { ExecutionFeedback } from "../src/domain/feedback.js";
import type { Notification, Progress } from "../src/domain/notification.js";
import type { TaskStep } from "../src/domain/plan.js";
import { feedbackToStore, planOf, planWrites } from "../src/domain/plan-state.js";
import { CandorError, ErrorCode } from "../src/errors.js";
import { runEagerly } from "../src/execution/run-eagerly.js";
import { stepContext } from "../src/execution/values.js";
import type { StepContext } from "../src/domain/step-context.js";
import { applyFeedback } from "../src/execution/evidence.js";
import { callOrder, dependencyInputs, lookahead } from "../src/planning/schedule.js";
import { callNeedingApproval } from "../src/tools/pending-call.js";
import { isModelDriven } from "../src/tools/model-driven.js";
import { runWorkerStep, type WorkerStepOutcome } from "../src/execution/worker-step.js";
import { progressMeter, withTokens } from "../src/transparency/progress.js";
import { notification, progressNotification } from "../src/transparency/notify.js";
import { emitNotifications, emitProgress, threadIdOf, type NodeDeps } from "./deps.js";
import { Node } from "./names.js";
import type { AgentStateUpdate, AgentStateValue, WorkerInput } from "./state.js";
import { tokenBudgetOf } from "../src/domain/usage.js";

/** What a step's task was told to do: run the dispatched step with these inputs, or nothing (null). */
type Go = {
  step: TaskStep;
  inputs: Record<string, unknown>;
  context: StepContext;
} | null;
/** A step task's saved result: replayed from the checkpoint's writes after a crash instead of running again. */
type StepTaskResult = ({ ran: true } & WorkerStepOutcome) | { ran: false };

/**
 * EXECUTE: runs the plan eagerly — every step starts the moment its last dependency settles, never waiting for a
 * sibling — and returns to the graph when nothing more can start. Each step that needs no approval runs as a
 * LangGraph task (`task()`), so a finished step's result is saved the moment it ends and replayed, not re-run,
 * when the thread resumes after a crash. A step whose call needs a person's approval is left `running` and the
 * router sends it to the worker subgraph, whose gate asks (several may wait at once, each answered on its own);
 * its feedback is folded in when EXECUTE runs again. Progress and each outcome are announced as they happen.
 */
export function executeNode(deps: NodeDeps) {
  return async (state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> => {
    const before = planOf(state);
    if (!before) throw new Error("execute reached without a plan");
    const notifications: Notification[] = [];
    // Everything is announced in the order it happened, the moment this node knows it.
    const tell = (n: Notification) => {
      notifications.push(n);
      emitNotifications(config, [n]);
    };
    const startedAt = Date.parse(state.startedAt ?? new Date().toISOString());
    const computeProgress = progressMeter();
    let progress = state.progress;
    const report = (p: Progress) => {
      p = withTokens(p, state.tokens);
      progress = p;
      emitProgress(config, p);
      tell(progressNotification(p));
    };
    const threadId = threadIdOf(config);
    // Every running step's task listens to the run's abort signal; a wide plan passes Node's default of 10 and
    // would print a "possible leak" warning into the embedding app's output for what is not a leak.
    if (config.signal) setMaxListeners(0, config.signal);
    const inputsOf = (step: TaskStep) => deps.registry.inputsOf(step);

    // Steps the worker subgraph ran since the last pass (after their approval gate) are folded in first.
    let plan = applyFeedback(before, state.feedback);
    let partial = before;
    for (const step of plan.steps) {
      const was = before.steps.find((s) => s.id === step.id);
      if (was?.status !== "running" || step.status === "running") continue;
      partial = {
        ...partial,
        steps: partial.steps.map((s) => (s.id === step.id ? step : s)),
      };
      report(
        computeProgress(partial, Date.now() - startedAt, {
          taskId: step.id,
          status: step.status === "done" ? "SUCCESS" : "FAILURE",
        }),
      );
    }

    // One task per step that runs in this pass. A task's identity is its call order, so tasks are called in an
    // order fixed by the plan (`callOrder`: by depth, then plan order), never in the order steps become ready
    // (which depends on which finished first), or a resumed pass would match saved results to the wrong steps:
    // when a step is ready, every pending step before it in that order gets its task too. Each task waits at its
    // gate: opened with the step when it is ready, or with null at the end of the pass for the steps that did not
    // run. Calling them as needed, not all at once, keeps LangGraph's set of running tasks (which it scans
    // whenever one ends) as small as the plan's frontier.
    const pendingIds = callOrder(plan);
    // A gate also hands the step's outcome back the moment its task has it (`done`), before LangGraph has finished
    // with the task (its writes saved, its promise settled: ~0.3–0.7 ms per step), so a dependent starts without
    // waiting for that; the node still awaits every task before it returns. A task replayed from its saved writes
    // never runs its function: its promise brings the outcome instead.
    const gates = new Map<
      string,
      {
        opened: Promise<Go>;
        open: (go: Go) => void;
        done: Promise<StepTaskResult>;
        finish: (result: StepTaskResult) => void;
      }
    >();
    const tasks = new Map<string, Promise<StepTaskResult>>();
    // Named "step", not "worker" (the approval subgraph's node): a task's id includes its name, so a pass saved
    // when tasks were called in plan order (named "worker") never has its saved results matched by this order; its
    // steps run again, and the effect ledger keeps their side effects from repeating.
    const stepTask = task("step", async (stepId: string): Promise<StepTaskResult> => {
      const go = await gates.get(stepId)!.opened;
      if (!go) return { ran: false };
      const outcome = await runWorkerStep(deps, {
        ...go,
        planId: plan.planId,
        threadId,
        toolDecision: null,
        ...(config.signal ? { signal: config.signal } : {}),
        emit: (n) => emitNotifications(config, [n]),
      });
      const result: StepTaskResult = { ran: true, ...outcome };
      gates.get(stepId)!.finish(result);
      return result;
    });
    const callThrough = (stepId: string) => {
      while (!tasks.has(stepId) && tasks.size < pendingIds.length) {
        const id = pendingIds[tasks.size]!;
        let open: (go: Go) => void = () => {};
        let finish: (result: StepTaskResult) => void = () => {};
        const opened = new Promise<Go>((resolve) => (open = resolve));
        const done = new Promise<StepTaskResult>((resolve) => (finish = resolve));
        gates.set(id, { opened, open, done, finish });
        // task() types the result of an async function as a promise of a promise; at run time it is one promise.
        tasks.set(id, stepTask(id) as unknown as Promise<StepTaskResult>);
      }
      return tasks.get(stepId);
    };
    // A promise resolves once: opening a gate again (at the end, for every step) changes nothing.
    const open = (stepId: string, go: Go) => gates.get(stepId)?.open(go);

    // The tasks of the steps that can start next are made while the tools run, in a later turn (`lookahead`):
    // when a step ends, its dependents' tasks already wait at their gates, and starting one is opening its gate,
    // not scheduling a LangGraph task on the critical path (measured: ~0.3 ms per handoff). Only as far as the
    // next steps, so the set of running tasks stays the size of the frontier.
    const ahead = lookahead(plan, pendingIds);
    let prefetchTo = -1;
    let prefetchQueued = false;
    let closed = false;
    const advance = (id: string, status: TaskStep["status"]) => {
      prefetchTo = ahead(id, status);
      if (prefetchTo < tasks.size || prefetchQueued || closed) return;
      prefetchQueued = true;
      setImmediate(() => {
        prefetchQueued = false;
        // Awaited by its launch when the step starts, or at the end of the pass.
        if (!closed) void callThrough(pendingIds[prefetchTo]!);
      });
    };

    let feedback: ExecutionFeedback[];
    try {
      const outcome = await runEagerly(plan, {
        inputsOf,
        // Deferred to the worker subgraph: a call that needs approval (its gate interrupts there), and a step whose
        // call the plan does not determine (its model-driven loop is a subgraph there, and may ask for approval).
        deferred: (step) =>
          callNeedingApproval(step, deps.registry) !== null ||
          isModelDriven(step, deps.registry, deps.reasoner.workerModel),
        launch: async (step, inputs) => {
          const pending = callThrough(step.id);
          if (!pending) throw new Error(`Step ${step.id} became ready in EXECUTE but was not pending when it began`);
          open(step.id, {
            step,
            inputs,
            context: stepContext(plan, step, state.request),
          });
          advance(step.id, "running");
          const result = await Promise.race([gates.get(step.id)!.done, pending]);
          if (!result.ran) {
            throw new CandorError(
              `Step ${step.id}'s saved result says it did not run in this pass, but it is ready now: the thread's history does not match its plan.`,
              ErrorCode.STORAGE,
            );
          }
          // Already announced by the task as it happened (not again when replayed from a saved result).
          notifications.push(...result.notifications);
          return result.feedback;
        },
        onDispatched: (step) => logDispatch(deps, step, plan.planId, threadId, tell),
        onSettled: (step, f, current) => {
          advance(step.id, step.status);
          report(
            computeProgress(current, Date.now() - startedAt, {
              taskId: step.id,
              status: f.feedbackType === "SUCCESS" || f.feedbackType === "PARTIAL_SUCCESS" ? "SUCCESS" : "FAILURE",
            }),
          );
        },
        onSkipped: (skipped, current) => {
          for (const { step } of skipped) advance(step.id, "skipped");
          for (const { step, reason, dependencyFailure } of skipped) {
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
              planId: current.planId,
              taskId: step.id,
              threadId,
              input: step.description,
              decision: "skip",
              reasoning: reason,
            });
          }
          report(
            computeProgress(current, Date.now() - startedAt, {
              taskId: skipped.at(-1)!.step.id,
              status: "SKIPPED",
            }),
          );
        },
      });
      plan = outcome.plan;
      feedback = outcome.feedback;
    } finally {
      // Every task must end before the node does; the ones whose step did not run end with nothing to do.
      closed = true;
      for (const stepId of tasks.keys()) open(stepId, null);
      await Promise.allSettled(tasks.values());
    }
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

/** Logs why a step is dispatched now, and warns before it runs when it will lack optional inputs. */
function logDispatch(
  deps: NodeDeps,
  step: TaskStep,
  planId: string,
  threadId: string | null,
  tell: (n: Notification) => void,
): void {
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
    planId,
    taskId: step.id,
    threadId,
    input: step.description,
    decision: `run on ${step.workerType} with ${step.tools.join(", ")}`,
    reasoning,
  });
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
