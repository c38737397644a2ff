import type { ExecutionFeedback } from "../domain/feedback.js";
import type { Notification, Progress } from "../domain/notification.js";
import type { Plan, TaskStep } from "../domain/plan.js";
import type { TokenEvent } from "../domain/usage.js";
import { CandorError, ErrorCode } from "../errors.js";
import { callOrder, lookahead, type InputsOf, type Settlement } from "../planning/schedule.js";
import type { DecisionLog } from "../transparency/decision-log.js";
import { notification, progressNotification } from "../transparency/notify.js";
import { progressMeter, withTokens } from "../transparency/progress.js";
import { applyFeedback } from "./evidence.js";
import { runEagerly } from "./run-eagerly.js";
import type { WorkerStepOutcome } from "./worker-step.js";

/** A step task's result, saved and replayed after a crash: what the step's run produced, or that it did not run. */
export type StepTaskResult = ({ ran: true } & WorkerStepOutcome) | { ran: false };

/**
 * Runs `body(stepId)` as a durable task and answers its result: LangGraph's `task()` in EXECUTE. A task's identity
 * is its place in the order of calls within the pass, so a resumed pass gets the k-th call's saved result back for
 * its k-th call, without running `body`. A test's stand-in may just call `body`.
 */
export type RunTask = (stepId: string, body: (stepId: string) => Promise<StepTaskResult>) => Promise<StepTaskResult>;

export interface EagerPassInput {
  /** The plan as the checkpoint has it: steps the worker subgraph ran since the last pass are still `running`. */
  plan: Plan;
  /** The run's feedback so far; the worker subgraph's outcomes for those running steps are folded in first. */
  workerFeedback: readonly ExecutionFeedback[];
  /** When the run started (ms since the epoch): progress's pace. */
  startedAt: number;
  /** The latest progress before this pass, returned as is when nothing is reported. */
  progress: Progress | null;
  /** The run's model calls so far: progress carries their tokens. */
  tokens: readonly TokenEvent[];
  threadId: string | null;
}

export interface EagerPassHooks {
  runTask: RunTask;
  /**
   * Runs one dispatched step on its worker with its dependencies' outputs (`plan` is the pass's plan, for what the
   * step is run with beyond its definition), announcing as it goes; a step failure is an outcome, not a rejection.
   */
  runStep: (step: TaskStep, inputs: Record<string, unknown>, plan: Plan) => Promise<WorkerStepOutcome>;
  /** Steps left `running` for the router to send to the worker subgraph (an approval gate, a model-driven loop). */
  deferred: (step: TaskStep) => boolean;
  inputsOf: InputsOf;
  /** Tells the user at once (a stream event); every notification of the pass, in order. */
  emitNotification: (n: Notification) => void;
  emitProgress: (p: Progress) => void;
  decisionLog: DecisionLog;
}

export interface EagerPassOutcome {
  /** The plan when nothing more can start; deferred steps are left `running`. */
  plan: Plan;
  /** This pass's outcomes, in the order they were known. */
  feedback: ExecutionFeedback[];
  /** Everything the user was told in this pass, in order (the steps' own notifications included). */
  notifications: Notification[];
  progress: Progress | null;
}

/**
 * EXECUTE's pass, without a graph: folds in what the worker subgraph ran, then runs the plan eagerly (`runEagerly`:
 * every step starts the moment its last dependency settles, never waiting for a sibling) with each step that runs
 * here inside a durable task (`hooks.runTask`), so a finished step's result is saved the moment it ends and
 * replayed, not re-run, when a cut-off pass resumes. Every task has ended when this returns.
 */
export async function runEagerPass(input: EagerPassInput, hooks: EagerPassHooks): Promise<EagerPassOutcome> {
  const told = new Announcer(input, hooks);
  const plan = foldWorkerFeedback(input, told);
  const tasks = new StepTasks(plan, hooks.runTask, (go) => hooks.runStep(go.step, go.inputs, plan));
  const { threadId } = input;
  try {
    const outcome = await runEagerly(plan, {
      inputsOf: hooks.inputsOf,
      deferred: hooks.deferred,
      launch: async (step, inputs) => {
        const result = await tasks.start(step, inputs);
        // Already announced by the task as it happened (not again when replayed from a saved result).
        told.notifications.push(...result.notifications);
        return result.feedback;
      },
      onDispatched: (step) => logDispatch(hooks.decisionLog, step, plan.planId, threadId, (n) => told.tell(n)),
      onSettled: (step, f, current) => {
        tasks.advance(step.id, step.status);
        const succeeded = f.feedbackType === "SUCCESS" || f.feedbackType === "PARTIAL_SUCCESS";
        told.progress(current, { taskId: step.id, status: succeeded ? "SUCCESS" : "FAILURE" });
      },
      onSkipped: (skipped, current) => {
        for (const { step } of skipped) tasks.advance(step.id, "skipped");
        announceSkipped(skipped, current, threadId, hooks.decisionLog, told);
      },
    });
    return { ...outcome, notifications: told.notifications, progress: told.latest };
  } finally {
    await tasks.close();
  }
}

/** What the pass tells the user, in the order it happened, the moment it knows it; and the latest progress. */
class Announcer {
  readonly notifications: Notification[] = [];
  latest: Progress | null;
  private readonly meter = progressMeter();

  constructor(
    private readonly input: EagerPassInput,
    private readonly hooks: EagerPassHooks,
  ) {
    this.latest = input.progress;
  }

  tell(n: Notification): void {
    this.notifications.push(n);
    this.hooks.emitNotification(n);
  }

  progress(plan: Plan, last: { taskId: string | null; status: Progress["status"] }): void {
    const p = withTokens(this.meter(plan, Date.now() - this.input.startedAt, last), this.input.tokens);
    this.latest = p;
    this.hooks.emitProgress(p);
    this.tell(progressNotification(p));
  }
}

/** Steps the worker subgraph ran since the last pass (after their approval gate) are folded in, each reported. */
function foldWorkerFeedback(input: EagerPassInput, told: Announcer): Plan {
  const before = input.plan;
  const plan = applyFeedback(before, input.workerFeedback);
  let partial = before;
  for (const step of plan.steps) {
    const was = before.steps.find((s) => s.id === step.id);
    if (was?.status !== "running" || step.status === "running") continue;
    partial = { ...partial, steps: partial.steps.map((s) => (s.id === step.id ? step : s)) };
    told.progress(partial, { taskId: step.id, status: step.status === "done" ? "SUCCESS" : "FAILURE" });
  }
  return plan;
}

/** What a step's task was told to do: run the dispatched step with these inputs, or nothing (null). */
type Go = { step: TaskStep; inputs: Record<string, unknown> } | null;

/** Where a step's task waits to be told what to do, and hands its outcome back the moment it has it. */
interface Gate {
  opened: Promise<Go>;
  open: (go: Go) => void;
  done: Promise<StepTaskResult>;
  finish: (result: StepTaskResult) => void;
}

/**
 * One task per step that runs in the pass. A task's identity is its call order, so tasks are called in an order
 * fixed by the plan (`callOrder`: by depth, then plan order), never in the order steps become ready (which depends
 * on which finished first), or a resumed pass would match saved results to the wrong steps: when a step is ready,
 * every pending step before it in that order gets its task too. Each task waits at its gate: opened with the step
 * when it is ready, or with null when the pass closes for the steps that did not run. Calling them as needed, not
 * all at once, keeps LangGraph's set of running tasks (which it scans whenever one ends) as small as the plan's
 * frontier.
 */
class StepTasks {
  private readonly order: string[];
  private readonly gates = new Map<string, Gate>();
  private readonly tasks = new Map<string, Promise<StepTaskResult>>();
  private readonly ahead: (id: string, status: TaskStep["status"]) => number;
  private readonly body: (stepId: string) => Promise<StepTaskResult>;
  private prefetchTo = -1;
  private prefetchQueued = false;
  private closed = false;

  constructor(
    plan: Plan,
    private readonly runTask: RunTask,
    run: (go: NonNullable<Go>) => Promise<WorkerStepOutcome>,
  ) {
    this.order = callOrder(plan);
    this.ahead = lookahead(plan, this.order);
    // A task replayed from its saved result never runs this: its promise brings the outcome instead.
    this.body = async (stepId) => {
      const go = await this.gates.get(stepId)!.opened;
      if (!go) return { ran: false };
      const result: StepTaskResult = { ran: true, ...(await run(go)) };
      this.gates.get(stepId)!.finish(result);
      return result;
    };
  }

  /**
   * Runs a dispatched step in its task and answers its outcome. The gate hands the outcome back the moment the
   * task has it (`done`), before the task has ended (its result saved, its promise settled: ~0.3–0.7 ms per step
   * with LangGraph), so a dependent starts without waiting for that; `close` still awaits every task.
   */
  async start(step: TaskStep, inputs: Record<string, unknown>): Promise<WorkerStepOutcome> {
    const pending = this.callThrough(step.id);
    if (!pending) throw new Error(`Step ${step.id} became ready in EXECUTE but was not pending when it began`);
    this.gates.get(step.id)!.open({ step, inputs });
    this.advance(step.id, "running");
    const result = await Promise.race([this.gates.get(step.id)!.done, pending]);
    if (!result.ran) {
      const why = "the thread's history does not match its plan";
      throw new CandorError(
        `Step ${step.id}'s saved result says it did not run in this pass, but it is ready now: ${why}.`,
        ErrorCode.STORAGE,
      );
    }
    return result;
  }

  /**
   * Fed each step that starts or ends. The tasks of the steps that can start next are made while the tools run, in
   * a later turn (`lookahead`): when a step ends, its dependents' tasks already wait at their gates, and starting
   * one is opening its gate, not scheduling a task on the critical path (measured: ~0.3 ms per handoff with
   * LangGraph). Only as far as the next steps, so the set of running tasks stays the size of the frontier.
   */
  advance(id: string, status: TaskStep["status"]): void {
    this.prefetchTo = this.ahead(id, status);
    if (this.prefetchTo < this.tasks.size || this.prefetchQueued || this.closed) return;
    this.prefetchQueued = true;
    setImmediate(() => {
      this.prefetchQueued = false;
      // Awaited by its step's start when the step starts, or by close.
      if (!this.closed) void this.callThrough(this.order[this.prefetchTo]!);
    });
  }

  /** Every task must end before the pass does; the ones whose step did not run end with nothing to do. */
  async close(): Promise<void> {
    this.closed = true;
    // A promise resolves once: opening a gate again changes nothing for a step that ran.
    for (const stepId of this.tasks.keys()) this.gates.get(stepId)!.open(null);
    await Promise.allSettled(this.tasks.values());
  }

  /** Calls the tasks of every pending step up to `stepId` in call order; undefined when it is not pending. */
  private callThrough(stepId: string): Promise<StepTaskResult> | undefined {
    while (!this.tasks.has(stepId) && this.tasks.size < this.order.length) {
      const id = this.order[this.tasks.size]!;
      let open: (go: Go) => void = () => {};
      let finish: (result: StepTaskResult) => void = () => {};
      const opened = new Promise<Go>((resolve) => (open = resolve));
      const done = new Promise<StepTaskResult>((resolve) => (finish = resolve));
      this.gates.set(id, { opened, open, done, finish });
      this.tasks.set(id, this.runTask(id, this.body));
    }
    return this.tasks.get(stepId);
  }
}

/** Announces and logs the steps a pass skips (a dependency failed for good, a condition is false). */
function announceSkipped(
  skipped: Settlement["skipped"],
  plan: Plan,
  threadId: string | null,
  decisionLog: DecisionLog,
  told: Announcer,
): void {
  for (const { step, reason, dependencyFailure } of skipped) {
    told.tell(
      notification({
        severity: dependencyFailure ? "WARNING" : "INFO",
        kind: "step_failed",
        taskId: step.id,
        title: `${step.description} (${step.id}) skipped: ${reason}`,
      }),
    );
    decisionLog.record({
      operation: "dispatch",
      planId: plan.planId,
      taskId: step.id,
      threadId,
      input: step.description,
      decision: "skip",
      reasoning: reason,
    });
  }
  told.progress(plan, { taskId: skipped.at(-1)!.step.id, status: "SKIPPED" });
}

/** Logs why a step is dispatched now, and warns before it runs when it will lack optional inputs. */
function logDispatch(
  decisionLog: DecisionLog,
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
  decisionLog.record({
    operation: "dispatch",
    planId,
    taskId: step.id,
    threadId,
    input: step.description,
    decision: `run on ${step.workerType} with ${step.tools.join(", ")}`,
    reasoning,
  });
}
