import { setMaxListeners } from "node:events";
import { OUTCOME_UNKNOWN, type AttemptRecord, type ExecutionFeedback, type FailureClass } from "../domain/feedback.js";
import type { TaskStep } from "../domain/plan.js";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import { classifyFailure, feedbackTypeFor, isTransient } from "../replanning/classify.js";
import { decideStep, feedbackOf, succeededCall } from "./evidence.js";
import { argsHash, type EffectKey, type EffectLedger } from "../tools/effects.js";
import type { StepContext } from "../domain/step-context.js";
import { applyRecordedValues, defaultedText } from "../tools/args.js";
import { effectIdentity, staleRecordWhy } from "./values.js";
import type { ToolRegistry } from "../tools/registry.js";
import { cooperate } from "../tools/cooperate.js";
import { isCutResult, keptResult, oversizedArguments } from "../memory/bounds.js";
import { abortReason, sleep } from "../tools/sleep.js";
import { clockMs, reportToolCall } from "../observability/tool-calls.js";
import { inputsOf, type ToolContext, type ToolSpec } from "../tools/types.js";

export interface RunStepInput {
  step: TaskStep;
  /** Outputs of the step's dependencies, by output name. */
  inputs: Record<string, unknown>;
  registry: ToolRegistry;
  /** Which dispatch of the step this is (feedback is matched to it). */
  dispatch: number;
  /** Cancels the whole step (the run was cancelled). */
  signal?: AbortSignal;
  /** Called when an attempt fails and another will follow, so the user hears about it at once. */
  onAttemptFailed?: (info: { attempt: number; error: string; failureClass: FailureClass; nextInMs: number }) => void;
  now?: () => number;
  /**
   * The effect ledger: when given with a thread id, calls of tools with a side effect are recorded, a recorded
   * result is reused instead of calling again, and a call that may have happened is never repeated blindly.
   */
  ledger?: EffectLedger;
  threadId?: string | null;
  /** Called when the ledger's recorded result is used instead of calling the tool, so the log can say so. */
  onRecordedResult?: (info: { tool: string; attempt: number; at: string }) => void;
  /**
   * The values the understanding record says the step uses, and the request's lineage: the values are applied to
   * the call's arguments (`applyRecordedValues`), and the lineage is part of a side effect's identity in the ledger.
   */
  context?: StepContext;
  /** Called when recorded values replaced what the plan or a model gave, one sentence each, before the call. */
  onValuesApplied?: (applied: readonly string[]) => void;
  /** A person approved this very call (after being told why an earlier recorded call does not stand). */
  approved?: boolean;
  /** Called when the ledger holds a call of this dispatch for other arguments or another request: not reused. */
  onStaleRecord?: (why: string) => void;
}

/**
 * Runs one step the way a worker must: only with tools its worker type and the step grant (a call outside the
 * grant is refused and recorded, never executed), arguments validated, each attempt under the step's time
 * limit, transient failures retried with the step's own backoff. With a ledger, a call with a side effect runs
 * at most once per (thread, step, dispatch): a recorded result is reused, and a call that may have happened (a
 * crash mid-call, or a call cut off by its time limit or a cancelled run) is failed as policy_blocked rather than
 * repeated (errorType OUTCOME_UNKNOWN). Never throws for a step failure: the outcome is ExecutionFeedback.
 * The run's trace hears of the call here, where its failure class is known (src/observability/tool-calls.ts).
 */
export async function runStep(input: RunStepInput): Promise<ExecutionFeedback> {
  const startedAt = clockMs();
  const feedback = await settleCall(input);
  reportToolCall(feedback, startedAt);
  return feedback;
}

async function settleCall(input: RunStepInput): Promise<ExecutionFeedback> {
  const wait = cooperate();
  if (wait) await wait;
  const { step, registry, dispatch } = input;
  const now = input.now ?? Date.now;
  const started = now();
  const base = { taskId: step.id, dispatch, workerType: step.workerType, params: step.params };
  const fail = (
    message: string,
    failureClass: FailureClass,
    attempts: AttemptRecord[],
    tool: string | null,
    outputs: Record<string, unknown> = {},
    error?: unknown,
  ): ExecutionFeedback => ({
    ...base,
    ...errorFacts(error),
    feedbackType: feedbackTypeFor(failureClass),
    outputs,
    errors: attempts.length > 0 ? attempts.map((a) => a.error ?? message) : [message],
    failureClass,
    durationMs: Math.max(1, now() - started),
    cost: 0,
    at: new Date().toISOString(),
    attempt: attempts.length,
    tool,
    attempts,
    evidence: null,
    limits: [],
  });

  const requested = step.tools[0];
  if (requested === undefined) {
    return fail(
      `Step "${step.id}" names no tool, and the ${step.workerType} worker cannot act without one. Give the step a tool, or plan with a model.`,
      "wrong_tool",
      [],
      null,
    );
  }
  const refused = step.tools.filter((t) => !registry.isGranted(step.workerType, t));
  if (refused.length > 0) {
    const allowed = registry.grant(step.workerType).map((t) => t.name);
    return fail(
      `Tool ${refused.join(", ")} is not granted to the ${step.workerType} worker, so the call was refused and nothing ran (it may use: ${allowed.join(", ") || "nothing"}).`,
      "wrong_tool",
      [],
      refused[0] ?? null,
    );
  }
  const tool = registry.tool(requested) as ToolSpec;
  const context = input.context ?? { values: [], lineage: "" };
  const reconciled = applyRecordedValues(step.params, context.values, tool);
  const defaults = defaultedText(tool, reconciled.args);
  const named = [
    ...reconciled.applied,
    ...(defaults.length > 0 ? [`${tool.name}'s defaults fill what the plan left out: ${defaults.join(", ")}`] : []),
  ];
  if (named.length > 0) input.onValuesApplied?.(named);
  const parsed = tool.schema.safeParse(reconciled.args);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join(".") || "(arguments)"}: ${i.message}`).join("; ");
    return fail(`Invalid parameters for ${tool.name}: ${detail}`, "invalid_parameters", [], tool.name);
  }
  const oversized = oversizedArguments(tool.name, parsed.data, registry.bounds.maxToolArgumentBytes);
  if (oversized) return fail(oversized, "invalid_parameters", [], tool.name);
  // An input kept cut at the bound on a stored result is not the result the tool consumes: calling it would fail on
  // its shape ("needs the text of an earlier step") or work from part of it unsaid. Said here, naming the bound.
  const cutInput = inputsOf(tool).find((name) => isCutResult(input.inputs[name]));
  if (cutInput) {
    const from = step.dependsOn.find((d) => isCutResult(input.inputs[d])) ?? "an earlier step";
    return fail(
      `${tool.name} was not called: its input "${cutInput}" from ${from} is not whole, so there is nothing it can use (${boundOf(input.inputs[cutInput])}). Raise the bound to keep such results whole.`,
      // A limit Candor keeps, not a failure of the step before (re-running it cuts the same result again).
      "policy_blocked",
      [],
      tool.name,
    );
  }

  /** The call's success as the evidence rule judges it: the tool's result, with any limits it names. */
  function success(result: unknown, attempt: number, attempts: AttemptRecord[], reused: "ledger" | null) {
    const call = succeededCall(tool, parsed.data, result, reused);
    const verdict = decideStep({ step, calls: [call], ending: { kind: "direct" }, producers: () => [] });
    return feedbackOf(verdict, {
      step: { ...step, dispatches: dispatch },
      durationMs: now() - started,
      cost: tool.estimates.cost,
      attempt,
      attempts,
    });
  }

  const ledger = input.ledger && input.threadId && tool.sideEffect !== "none" ? input.ledger : null;
  const dispatchKey = { threadId: input.threadId ?? "", stepId: step.id, dispatch };
  // What the call is, for the ledger: its arguments, the inputs its tool consumes, and the request it serves.
  const identity = effectIdentity(tool, parsed.data, input.inputs, context.lineage);
  if (ledger) {
    const verdict = await ledger.verdict(dispatchKey);
    if (verdict.kind === "done" && verdict.record.argsHash !== argsHash(identity)) {
      // A fork or replay changed the request, the arguments or the inputs after the call was made: the recorded
      // result belongs to another call. A call that needs a person is made again only once they approved it anew.
      const why = staleRecordWhy(tool.name, step.id, verdict.record.at);
      const needsPerson = tool.sideEffect === "irreversible" || tool.needsApproval;
      if (needsPerson && !input.approved) {
        return fail(
          `${why} It was not called again: a person must approve the new call first.`,
          "policy_blocked",
          [],
          tool.name,
        );
      }
      input.onStaleRecord?.(why);
    }
    if (verdict.kind === "done" && verdict.record.argsHash === argsHash(identity)) {
      const { record } = verdict;
      input.onRecordedResult?.({ tool: tool.name, attempt: record.attempt, at: record.at });
      return success(
        record.result,
        record.attempt,
        [{ attempt: record.attempt, error: null, durationMs: 0 }],
        "ledger",
      );
    }
    if (verdict.kind === "unknown") {
      const { record } = verdict;
      return {
        ...fail(
          `${tool.name} may already have run: attempt ${record.attempt} of step "${step.id}" (dispatch ${dispatch}) was started at ${record.at} but its outcome was never recorded (the call was stopped before it answered: a crash, Ctrl-C or its time limit). It was not called again: a human must check whether it took effect before retrying.`,
          "policy_blocked",
          [],
          tool.name,
        ),
        errorType: OUTCOME_UNKNOWN,
      };
    }
  }

  const attempts: AttemptRecord[] = [];
  const maxAttempts = step.retry.maxAttempts;
  let lastClass: FailureClass = "unknown";
  for (let attempt = 1; ; attempt++) {
    // A cancelled run must not call the tool again (the abort may have landed during the backoff wait).
    if (input.signal?.aborted) {
      return fail(
        `${tool.name} was not called: the run was cancelled (${errorMessage(input.signal.reason)})`,
        lastClass,
        attempts,
        tool.name,
      );
    }
    const attemptStart = now();
    const key: EffectKey = { ...dispatchKey, attempt };
    await ledger?.recordStarted(key, tool.name, identity);
    let result: unknown;
    try {
      result = await callWithTimeout(
        tool,
        parsed.data,
        { inputs: input.inputs, ...missingOf(step), stepId: step.id, attempt },
        step.timeoutMs,
        input.signal,
      );
      checkOutput(tool, result);
      // Held to the bound on a kept tool result before it reaches the checkpoints: cut, and saying so.
      result = keptResult(result, registry.bounds.maxToolResultBytes);
    } catch (e) {
      const message = errorMessage(e);
      const outputs = CandorError.isInstance(e) ? e.details : {};
      const cancelled = input.signal?.aborted === true;
      if (tool.sideEffect !== "none" && (cancelled || isTimeout(e))) {
        // Cut off by the time limit or a cancelled run, the call never said whether it took effect (a tool may
        // ignore its signal, or the provider may have acted before the abort). Recording it as failed would let
        // this retry, or a resume, call it again: its ledger row stays "started" and a human must check.
        const unknown = `${message}: ${tool.name} may already have run (it was stopped before it answered). It was not called again: a human must check whether it took effect before retrying.`;
        attempts.push({ attempt, error: unknown, durationMs: now() - attemptStart });
        return { ...fail(unknown, "policy_blocked", attempts, tool.name, outputs, e), errorType: OUTCOME_UNKNOWN };
      }
      await ledger?.recordFailed(key, tool.name, identity, message);
      const failureClass = classifyFailure(message, e, tool.classifyFailure);
      lastClass = failureClass;
      attempts.push({ attempt, error: message, durationMs: now() - attemptStart });
      if (cancelled || attempt >= maxAttempts || !isTransient(failureClass)) {
        return fail(message, failureClass, attempts, tool.name, outputs, e);
      }
      const wait = step.retry.backoffMs[Math.min(attempt - 1, step.retry.backoffMs.length - 1)] ?? 0;
      input.onAttemptFailed?.({ attempt, error: message, failureClass, nextInMs: wait });
      await sleep(wait, input.signal).catch(() => undefined);
      continue;
    }
    // Outside the try: a database that cannot record the call's success is a storage failure, not the tool's, and
    // must never be retried as one (the call took effect; its row stays "started", so a resume asks a person).
    await ledger?.recordDone(key, tool.name, identity, result);
    attempts.push({ attempt, error: null, durationMs: now() - attemptStart });
    // A yield point (src/tools/cooperate.ts): what follows a tool's answer (recording the step, starting the next
    // ones) waits for a later turn of the event loop when this one has already done its share of work.
    const wait = cooperate();
    if (wait) await wait;
    return success(result, attempt, attempts, null);
  }
}

/** The limit a cut input names (the bound it was cut at), for the message that refuses it. */
function boundOf(value: unknown): string {
  const cut = [value].flat().find(isCutResult);
  return cut?.limits.map((l) => l.message).join("; ") ?? "it was cut at a bound";
}

/** The optional inputs the step runs without, by name with why, as a tool's context carries them (absent: none). */
function missingOf(step: TaskStep): Pick<ToolContext, "missing"> {
  // `?? []`: a step checkpointed before missingInputs existed, resumed mid-dispatch, has none.
  const missing = step.missingInputs ?? [];
  if (missing.length === 0) return {};
  return { missing: Object.fromEntries(missing.map((m) => [m.input, lowerFirst(m.reason)])) };
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

/** The step's time limit cut the call off (or the tool's own client gave up waiting): its outcome is unknown. */
function isTimeout(e: unknown): boolean {
  return CandorError.isInstance(e) && e.code === ErrorCode.TIMEOUT;
}

/**
 * Calls a tool under a time limit. The race matters: a tool that ignores its AbortSignal is still cut off at
 * the limit, so a hung service cannot hang the run.
 */
async function callWithTimeout(
  tool: ToolSpec,
  args: unknown,
  ctx: Omit<ToolContext, "signal">,
  timeoutMs: number,
  outer?: AbortSignal,
): Promise<unknown> {
  const controller = new AbortController();
  const { signal } = controller;
  // The run's signal reaches the tool through the attempt's own, by one listener removed when the attempt ends:
  // cheaper than AbortSignal.any, whose combined signal costs more to make and to abort on every attempt (a run's
  // steps pay it on the critical path). Parallel steps each listen to the run's signal while they run, so its
  // listener limit is lifted, as EXECUTE does, or a wide fan-out would print a MaxListeners warning.
  const forward = () => controller.abort(outer!.reason);
  if (outer?.aborted) controller.abort(outer.reason);
  else if (outer) {
    setMaxListeners(0, outer);
    outer.addEventListener("abort", forward, { once: true });
  }
  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => {};
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Built only when the limit passes: an error's stack trace on every attempt was a measurable cost.
      const timeoutError = new CandorError(`${tool.name} timed out after ${timeoutMs} ms`, ErrorCode.TIMEOUT, {
        details: { timeoutMs },
      });
      controller.abort(timeoutError);
      reject(timeoutError);
    }, timeoutMs);
    onAbort = () => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  // The race settles once; the limit's later rejection (when the attempt is cleaned up) must not go unhandled.
  limit.catch(() => undefined);
  try {
    return await Promise.race([tool.run(args, { ...ctx, signal }), limit]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", forward);
    signal.removeEventListener("abort", onAbort);
    // Tells work the tool left running that the attempt is over; one shared reason, no stack trace per call.
    if (!signal.aborted) controller.abort(ATTEMPT_FINISHED);
  }
}

/** Why an attempt's signal aborts once the attempt has settled (read by tools that kept work running). */
const ATTEMPT_FINISHED = new Error("step attempt finished");

function checkOutput(tool: ToolSpec, result: unknown): void {
  if (result === null || result === undefined) {
    throw new Error(`${tool.name} returned empty output`);
  }
  if (tool.outputSchema) {
    const check = tool.outputSchema.safeParse(result);
    if (!check.success) {
      throw new Error(
        `${tool.name} returned garbled output that does not match its schema (${check.error.issues[0]?.message ?? "invalid"})`,
      );
    }
  }
}

/** Seed 003's error_type and traceback: the error's code or name, and the first lines of its stack. */
function errorFacts(error: unknown): { errorType: string | null; trace: string | null } {
  if (error === undefined) return { errorType: null, trace: null };
  const errorType = CandorError.isInstance(error) ? error.code : error instanceof Error ? error.name : typeof error;
  const trace = error instanceof Error && error.stack ? error.stack.split("\n").slice(0, 6).join("\n") : null;
  return { errorType, trace };
}

/** The outcome of a call a person denied: a policy_blocked failure, the tool never called. */
export function deniedFeedback(
  step: TaskStep,
  dispatch: number,
  call: { tool: string; args: Record<string, unknown> },
  comment: string | null,
): ExecutionFeedback {
  const reason = comment ? ` (${comment})` : "";
  return {
    taskId: step.id,
    dispatch,
    workerType: step.workerType,
    params: step.params,
    feedbackType: "FAILURE",
    outputs: {},
    errors: [`A human denied ${call.tool}(${JSON.stringify(call.args)})${reason}; the tool was not called.`],
    failureClass: "policy_blocked",
    durationMs: 1,
    cost: 0,
    at: new Date().toISOString(),
    attempt: 0,
    tool: call.tool,
    attempts: [],
    errorType: "HUMAN_DENIED",
    trace: null,
    evidence: null,
    limits: [],
  };
}
