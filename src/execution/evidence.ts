import { z } from "zod";
import { FailureClass, type ExecutionFeedback } from "../domain/feedback.js";
import { isReactiveStep, type Plan, type TaskStep } from "../domain/plan.js";
import { feedbackTypeFor } from "../replanning/classify.js";
import { SideEffect } from "../tools/types.js";
import { limitsOf, type ResultLimitKind } from "../tools/limits.js";

/*
 * The evidence rule: a step is done only when a tool call succeeded and produced what the step must produce, and
 * its result is that call's output. Every way a step runs — a direct call, a model worker loop, the reactive loop,
 * an MCP tool, a call replayed from the effect ledger — hands its calls to `decideStep`, and only `settleStep`
 * turns an outcome into a step's status. A model's words are kept for the answer, never taken as evidence: they
 * can deny success (a model saying it could not finish), never grant it.
 */

/** How one call of a step ended. */
const CallOutcome = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("succeeded"),
    result: z.unknown(),
    /** Where the result came from when the tool did not run now: the effect ledger, or an identical earlier call. */
    reused: z.enum(["ledger", "repeat"]).nullable(),
  }),
  z.object({
    kind: z.literal("failed"),
    error: z.string(),
    failureClass: FailureClass,
    errorType: z.string().nullable(),
    /** What the failure carried (a constraint violation's facts), for recovery. */
    outputs: z.record(z.string(), z.unknown()),
  }),
]);
type CallOutcome = z.infer<typeof CallOutcome>;

/** One call a step made (or asked for and was refused), as the evidence rule reads it; kept in a loop's state. */
export const CallRecord = z.object({
  tool: z.string(),
  /** The arguments the tool received (validated), or the model asked for when refused. */
  args: z.unknown(),
  /** The output names the tool's metadata says it produces. */
  produces: z.array(z.string()),
  sideEffect: SideEffect,
  outcome: CallOutcome,
});
export type CallRecord = z.infer<typeof CallRecord>;

/** A successful call of `tool` with these arguments, as the evidence records it. */
export function succeededCall(
  tool: { name: string; produces: readonly string[]; sideEffect: SideEffect },
  args: unknown,
  result: unknown,
  reused: "ledger" | "repeat" | null,
): CallRecord {
  const { name, produces, sideEffect } = tool;
  return { tool: name, args, produces: [...produces], sideEffect, outcome: { kind: "succeeded", result, reused } };
}

/** How a step's run ended, besides its calls. */
export type StepEnding =
  /** One planned call (its own retries inside): the call's outcome is the step's. */
  | { kind: "direct" }
  /** A model loop whose model stopped calling tools and answered with this text. */
  | { kind: "answered"; text: string; modelCalls: number }
  /** A model loop that used all its model calls while still asking for tools. */
  | { kind: "out_of_calls"; text: string; modelCalls: number; maxModelCalls: number };

export interface StepEvidence {
  step: TaskStep;
  /** Every call in order; failed and refused ones too. */
  calls: readonly CallRecord[];
  ending: StepEnding;
  /**
   * The output names the step's tools produce, by tool, for each expected output (a model loop's granted tools):
   * an expected output no granted tool produces is the result of the step's last successful call.
   */
  producers: (output: string) => readonly string[];
}

/** What the evidence shows: a success with its result, or a failure with a class recovery handles. */
export type Verdict =
  | {
      ok: true;
      result: unknown;
      /** The tool whose successful call is the evidence (the last one the result came from). */
      tool: string;
      /** What the result does not cover (a cut read, a binary file): a real result, not a whole one. */
      limits: string[];
    }
  | {
      ok: false;
      failureClass: FailureClass;
      message: string;
      /** The tool that failed, or null when no tool did (the model stopped without a call). */
      tool: string | null;
      errorType: string | null;
      outputs: Record<string, unknown>;
    };

/**
 * Whether a limit of this kind leaves the result short of what was asked: a cut read, a binary file, a listing cut
 * short do; a sample behind the most frequent words does not (the counts beside it cover the whole file).
 */
const LEAVES_OUT: Record<ResultLimitKind, boolean> = {
  truncated: true,
  binary: true,
  listing_cut: true,
  sampled: false,
};

/** A model answer that says the step was not done: words can deny success, never grant it. */
const SAYS_NOT_DONE =
  /\b(could ?n[o']t|can ?n[o']t|cannot|unable to|was not able|wasn't able|were not able|did not (?:manage|succeed)|failed to|no tengo|no pude|no puedo|impossible de|je n'ai pas pu)\b/i;

/**
 * Decides a step's outcome from its calls, the one rule for every kind of step:
 * 1. a side effect whose last call failed stands against any answer: the step fails with that call's class;
 * 2. each expected output must come from a successful call of a tool that produces it (or, when no granted tool
 *    declares it, from the step's last successful call); a step that expects nothing needs one successful call;
 * 3. missing that, the failure is the last failed call's class (over budget stays constraint_violated, so
 *    ADJUST_PARAMETERS recovers it as if the call had been direct), else `no_tool_call` when the model never made
 *    a successful call, `no_result` when it ran out of model calls, `claimed_without_evidence` when it answered;
 * 4. a model answer saying it could not finish fails the step even when calls succeeded.
 */
export function decideStep(e: StepEvidence): Verdict {
  const { calls, ending } = e;
  const said = ending.kind === "direct" ? "" : ending.text;
  const succeeded = calls.filter((c) => c.outcome.kind === "succeeded");
  const contradicted = lastFailedSideEffect(calls);
  if (contradicted) {
    const claim = said ? ` The model's answer ("${cut(said)}") is contradicted by that outcome.` : "";
    return failedBy(contradicted, `${contradicted.tool} failed: ${failureOf(contradicted).error}.${claim}`);
  }
  const values: Record<string, unknown> = {};
  const sources: CallRecord[] = [];
  const missing: { name: string; from: readonly string[] }[] = [];
  for (const name of e.step.expectedOutputs) {
    const from = e.producers(name);
    const source = [...succeeded].reverse().find((c) => from.length === 0 || from.includes(c.tool));
    if (source) {
      values[name] = resultOf(source);
      sources.push(source);
    } else missing.push({ name, from });
  }
  if (e.step.expectedOutputs.length === 0 && succeeded.length === 0) missing.push({ name: "a result", from: [] });
  // A reactive run's step, and a step that names no output, has what each tool's last successful call gave: the
  // evidence whole, not only what it must produce (a count and the report written from it, a flight and its booking).
  const whole = e.step.expectedOutputs.length === 0 || isReactiveStep(e.step);
  if (whole) sources.splice(0, sources.length, ...lastPerTool(succeeded));

  if (missing.length > 0) return missingVerdict(e, missing, succeeded);
  if (said && SAYS_NOT_DONE.test(said)) {
    return unproven(
      "no_result",
      `The ${e.step.workerType} worker's model said it did not finish the step ("${cut(said)}"), so its calls' results are not taken as the step's result.`,
    );
  }
  const names = e.step.expectedOutputs;
  const last = sources.at(-1)!;
  // A reactive step's result is always by tool (resultEntries reads it so); another step's single source is itself.
  const result = whole
    ? sources.length === 1 && !isReactiveStep(e.step)
      ? resultOf(last)
      : Object.fromEntries(sources.map((c) => [c.tool, resultOf(c)]))
    : names.length === 1
      ? values[names[0]!]
      : values;
  const limits = [
    ...new Set(
      sources.flatMap((c) =>
        limitsOf(resultOf(c))
          .filter((l) => LEAVES_OUT[l.kind])
          .map((l) => `${c.tool}: ${l.message}`),
      ),
    ),
  ];
  return { ok: true, result, tool: last.tool, limits };
}

function missingVerdict(
  e: StepEvidence,
  missing: readonly { name: string; from: readonly string[] }[],
  succeeded: readonly CallRecord[],
): Verdict {
  const { calls, ending } = e;
  const what = missing.map((m) => (m.from.length > 0 ? `${m.name} (from ${m.from.join(" or ")})` : m.name));
  // A known class names what to do about it (over budget → ADJUST_PARAMETERS); an error no rule recognises says
  // less than the loop's own ending, and blaming its tool would make recovery avoid a tool that may work.
  const failedProducer = [...calls]
    .reverse()
    .find(
      (c) =>
        c.outcome.kind === "failed" &&
        c.outcome.failureClass !== "unknown" &&
        missing.some((m) => m.from.length === 0 || m.from.includes(c.tool)),
    );
  if (failedProducer) {
    return failedBy(
      failedProducer,
      `${failedProducer.tool} failed: ${failureOf(failedProducer).error}. The step has no ${what.join(", ")}.`,
    );
  }
  if (ending.kind === "direct") return unproven("no_result", `The step's call produced no ${what.join(", ")}.`);
  const calledOk =
    succeeded.length > 0 ? `it called ${succeeded.map((c) => c.tool).join(", ")}` : "it made no successful tool call";
  if (ending.kind === "out_of_calls") {
    return unproven(
      "no_result",
      `The ${e.step.workerType} worker's model used its ${ending.maxModelCalls} model calls without producing ${what.join(", ")}: ${calledOk}.`,
    );
  }
  const answered = ending.text ? `answered "${cut(ending.text)}"` : "gave no answer";
  if (succeeded.length === 0) {
    return unproven(
      "no_tool_call",
      `The ${e.step.workerType} worker's model ${answered} without a successful tool call, so nothing shows the step was done (a model's words are not evidence).`,
    );
  }
  return unproven(
    "claimed_without_evidence",
    `The ${e.step.workerType} worker's model ${answered}, but no successful call produced ${what.join(", ")} (${calledOk}).`,
  );
}

/** Each tool's last successful call, in the order the tools were first called. */
function lastPerTool(calls: readonly CallRecord[]): CallRecord[] {
  const last = new Map<string, CallRecord>();
  for (const c of calls) last.set(c.tool, c);
  return [...last.values()];
}

/** The last call of a tool with a side effect, when it failed and no later call of that tool succeeded. */
function lastFailedSideEffect(calls: readonly CallRecord[]): CallRecord | null {
  const lastByTool = new Map<string, CallRecord>();
  for (const c of calls) if (c.sideEffect !== "none") lastByTool.set(c.tool, c);
  return [...lastByTool.values()].find((c) => c.outcome.kind === "failed") ?? null;
}

function failureOf(c: CallRecord): Extract<CallOutcome, { kind: "failed" }> {
  return c.outcome as Extract<CallOutcome, { kind: "failed" }>;
}

function resultOf(c: CallRecord): unknown {
  return (c.outcome as Extract<CallOutcome, { kind: "succeeded" }>).result;
}

function failedBy(c: CallRecord, message: string): Verdict {
  const f = failureOf(c);
  return { ok: false, failureClass: f.failureClass, message, tool: c.tool, errorType: f.errorType, outputs: f.outputs };
}

/** A failure no tool caused: the model's loop did not show the step done. */
function unproven(failureClass: FailureClass, message: string): Verdict {
  return { ok: false, failureClass, message, tool: null, errorType: null, outputs: {} };
}

function cut(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** What every feedback of a dispatch carries besides its outcome. */
export type FeedbackFacts = Pick<ExecutionFeedback, "durationMs" | "cost" | "attempt" | "attempts"> & {
  step: TaskStep;
};

/**
 * A verdict as the dispatch's feedback: a success carries its evidence (the tool whose call it is) and its limits
 * (a limited result is PARTIAL_SUCCESS, named); a failure carries its class.
 */
export function feedbackOf(verdict: Verdict, facts: FeedbackFacts): ExecutionFeedback {
  const { step } = facts;
  const base = {
    taskId: step.id,
    dispatch: step.dispatches,
    workerType: step.workerType,
    params: step.params,
    durationMs: Math.max(1, facts.durationMs),
    cost: facts.cost,
    at: new Date().toISOString(),
    attempt: facts.attempt,
    attempts: facts.attempts,
    trace: null,
  };
  if (!verdict.ok) {
    return {
      ...base,
      feedbackType: feedbackTypeFor(verdict.failureClass),
      outputs: verdict.outputs,
      errors: [verdict.message],
      failureClass: verdict.failureClass,
      tool: verdict.tool,
      errorType: verdict.errorType,
      evidence: null,
      limits: [],
    };
  }
  const partial = verdict.limits.length > 0 || (step.missingInputs ?? []).length > 0;
  return {
    ...base,
    feedbackType: partial ? "PARTIAL_SUCCESS" : "SUCCESS",
    outputs: { result: verdict.result },
    errors: [],
    failureClass: null,
    tool: verdict.tool,
    errorType: null,
    evidence: { tool: verdict.tool },
    limits: verdict.limits,
  };
}

/**
 * The one writer of a running step's outcome: done with its result when the dispatch's feedback is a success that
 * carries evidence (a successful call), failed otherwise — a success claimed without evidence included, whoever
 * made it. Feedback of another step or an older dispatch changes nothing.
 */
export function settleStep(step: TaskStep, f: ExecutionFeedback): TaskStep {
  if (step.status !== "running" || f.taskId !== step.id || f.dispatch !== step.dispatches) return step;
  const ok = (f.feedbackType === "SUCCESS" || f.feedbackType === "PARTIAL_SUCCESS") && f.evidence != null;
  return {
    ...step,
    status: ok ? "done" : "failed",
    result: ok ? (f.outputs.result ?? null) : null,
    attempts: f.attempt,
    limits: ok ? f.limits : [],
  };
}

/** Applies the feedback of each step's latest dispatch to the plan; feedback of older dispatches is history. */
export function applyFeedback(plan: Plan, feedback: readonly ExecutionFeedback[]): Plan {
  const latest = new Map<string, ExecutionFeedback>();
  for (const f of feedback) latest.set(`${f.taskId}#${f.dispatch}`, f);
  const steps = plan.steps.map((step) => {
    if (step.status !== "running") return step;
    const f = latest.get(`${step.id}#${step.dispatches}`);
    return f ? settleStep(step, f) : step;
  });
  return { ...plan, steps };
}
