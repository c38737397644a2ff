import { afterPersonEdits } from "../planning/understanding.js";
import {
  EDITABLE_STEP_FIELDS,
  editableSteps,
  HitlDecision,
  HumanDecision,
  HumanResponse,
  PlanAdjustment,
  type InterruptPayload,
  type InterruptRequest,
} from "../domain/approval.js";
import { hitlMeaning, hitlRequestOf, humanInterruptOf } from "../domain/decisions.js";
import type { ExecutionFeedback } from "../domain/feedback.js";
import { Plan, TaskStep } from "../domain/plan.js";
import type { PlanningRequest, RunSettings } from "../domain/request.js";
import { CandorError, ErrorCode } from "../errors.js";
import { assignOrder, validatePlan } from "../planning/validate.js";
import type { ToolRegistry } from "../tools/registry.js";
import { checkEditedStep, resetForRerun } from "./plan-edit.js";
import { reasonHint, recoverOrSkip } from "./recover.js";
import type { StrategyOutcome } from "./strategies/types.js";

export type ParsedDecision = { ok: true; decision: HumanDecision } | { ok: false; error: string };

/**
 * What parseDecision needs to know about the request: the plan lets an `edit` of a plan approval become
 * adjustments, the failed step's params let an `edit` of an escalation become a retry with the changed ones.
 */
export type DecisionContext = Pick<InterruptRequest, "decisions" | "kind"> & {
  plan?: Plan;
  params?: Record<string, unknown>;
  retryWith?: Record<string, unknown>;
  taskId?: string;
};

/**
 * Parses a resume value against what the thread is waiting for. Accepts Candor's `{decision: "approve"}`, the
 * bare string "approve", or LangGraph's HumanResponse (`{type: "accept", args: null}`, alone or as a one-item
 * array, as Agent Inbox sends it). A malformed value or a decision that does not fit is refused with a message
 * naming what was wrong and the decisions that do fit; the thread keeps waiting.
 */
export function parseDecision(raw: unknown, request: DecisionContext): ParsedDecision {
  const fits = `Send one of: ${request.decisions.join(", ")}.`;
  let candidate: unknown = typeof raw === "string" ? { decision: raw.trim().toLowerCase() } : raw;
  // LangChain v1: {decisions: [one per action]}; Candor asks about one action at a time.
  if (isObject(candidate) && "decisions" in candidate && !("decision" in candidate)) {
    const list = candidate.decisions;
    if (!Array.isArray(list) || list.length !== 1)
      return {
        ok: false,
        error: `"decisions" must hold exactly one decision for the one action asked about, e.g. {"decisions":[{"type":"approve"}]}. ${fits}`,
      };
    candidate = list[0];
  }
  if (isHitlDecision(candidate)) {
    const mapped = fromHitlDecision(candidate, request);
    if (!mapped.ok) return mapped;
    candidate = mapped.decision;
  }
  if (Array.isArray(candidate)) {
    if (candidate.length !== 1)
      return {
        ok: false,
        error: `A list of ${candidate.length} responses does not answer one request: send exactly one. ${fits}`,
      };
    candidate = candidate[0];
  }
  if (isObject(candidate) && "type" in candidate && !("decision" in candidate)) {
    const mapped = fromHumanResponse(candidate, request);
    if (!mapped.ok) return mapped;
    candidate = mapped.decision;
  }
  const parsed = HumanDecision.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      error: `The decision ${JSON.stringify(raw)} is not valid (${issue?.path.join(".") || "value"}: ${issue?.message}). ${fits}`,
    };
  }
  const decision = parsed.data;
  if (!request.decisions.includes(decision.decision)) {
    return { ok: false, error: `"${decision.decision}" does not answer a ${request.kind} request. ${fits}` };
  }
  if (decision.decision === "adjust" && (decision.adjustments ?? []).length === 0) {
    return {
      ok: false,
      error: `"adjust" needs a non-empty "adjustments" list of {taskId, field, newValue}, e.g. [{"taskId":"s2","field":"params.limit","newValue":3}].`,
    };
  }
  if (decision.decision !== "adjust" && decision.adjustments !== null) {
    return { ok: false, error: `"adjustments" only go with "adjust", not with "${decision.decision}". ${fits}` };
  }
  if (decision.params !== null && decision.decision !== "retry") {
    return {
      ok: false,
      error: `"params" only go with "retry" (new parameters for the failed step), not with "${decision.decision}". ${fits}`,
    };
  }
  if (decision.params !== null && Object.keys(decision.params).length === 0) {
    return {
      ok: false,
      error: `"params" is empty: name the parameters to change (e.g. {"decision":"retry","params":{"maxPrice":300}}), or leave "params" out to retry as before.`,
    };
  }
  // Retrying a change to the request is accepting it: the step runs with the values the recovery proposed.
  if (
    (request.kind === "request_change" || request.kind === "token_budget") &&
    decision.decision === "retry" &&
    decision.params === null &&
    request.retryWith
  ) {
    return { ok: true, decision: { ...decision, params: request.retryWith } };
  }
  if (request.kind === "infeasible_constraint" && decision.decision === "retry" && decision.params === null) {
    const example = JSON.stringify({
      decision: "retry",
      params: request.retryWith ?? { "<limit>": "<a value that can be met>" },
    });
    return {
      ok: false,
      error: `A plain retry would fail the same way: the limit cannot be met as it is. Retry with a new limit in "params" (e.g. ${example}), replan with guidance, skip or abort.`,
    };
  }
  if (decision.decision === "replan" && decision.guidance === null) {
    return {
      ok: false,
      error: `"replan" needs "guidance": say what to do differently (e.g. {"decision":"replan","guidance":"a budget of 4000 dollars is fine"}).`,
    };
  }
  if (decision.guidance !== null && decision.decision !== "replan") {
    return { ok: false, error: `"guidance" only goes with "replan", not with "${decision.decision}". ${fits}` };
  }
  return { ok: true, decision };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A v1 decision: `approve` or `reject`, or an `edit` with an edited action (a HumanResponse edit has `args`). */
function isHitlDecision(v: unknown): v is Record<string, unknown> {
  if (!isObject(v) || "decision" in v) return false;
  return (
    v.type === "approve" || v.type === "reject" || (v.type === "edit" && ("edited_action" in v || "editedAction" in v))
  );
}

/**
 * Maps a LangChain v1 decision onto Candor's, by the interrupt table: approve and reject become the kind's
 * decisions for them (a reject's message is the comment: the reason), edit goes the way a HumanResponse edit goes.
 * Edited values a form sends back as text (`"[...]"`, `"{...}"`) are read as the JSON they hold.
 */
function fromHitlDecision(
  raw: Record<string, unknown>,
  request: DecisionContext,
): { ok: true; decision: unknown } | { ok: false; error: string } {
  const parsed = HitlDecision.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      error: `The decision ${JSON.stringify(raw)} is not a valid v1 decision (${issue?.path.join(".") || "value"}: ${issue?.message}). Send {"type": "approve"}, {"type": "reject", "message": "…"} or {"type": "edit", "edited_action": {"name", "args"}}.`,
    };
  }
  const d = parsed.data;
  if (d.type === "edit") {
    const action = d.edited_action ?? d.editedAction;
    if (!action || hitlMeaning(request.kind, "edit") === null)
      return {
        ok: false,
        error: `A ${request.kind} request cannot be edited${action ? "" : " (and the edit carries no edited_action)"}: approve or reject it. Send one of: ${request.decisions.join(", ")}.`,
      };
    const args = Object.fromEntries(Object.entries(action.args).map(([k, v]) => [k, jsonText(v)]));
    return { ok: true, decision: { type: "edit", args: { action: action.name, args } } };
  }
  const decision = hitlMeaning(request.kind, d.type);
  const message = d.type === "reject" && d.message?.trim() ? d.message.trim() : null;
  return { ok: true, decision: { decision, comment: message } };
}

/** A value a form sent back as text: the JSON object or list it spells, else the text itself. */
function jsonText(v: unknown): unknown {
  if (typeof v !== "string" || !/^\s*[[{]/.test(v)) return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v; // Not JSON after all: the text is the value, and the step's schema judges it.
  }
}

/**
 * Maps a HumanResponse onto Candor's decisions. Plan approval: accept → approve, edit → adjust (the edited
 * `steps`, or an explicit `adjustments` list), response → replan with the text as guidance (reject with it as
 * the reason where replanning is not offered), ignore → reject.
 * Escalation: accept → retry, ignore → skip, response → replan with the text as guidance (retry with it as a
 * comment where replanning is not offered), edit → retry with the edited `params` (issue 4 items 2 and 11).
 * Tool approval: accept → approve, ignore → deny, response → deny with the text as the reason; edit is refused.
 */
function fromHumanResponse(
  raw: Record<string, unknown>,
  request: DecisionContext,
): { ok: true; decision: Record<string, unknown> } | { ok: false; error: string } {
  const parsed = HumanResponse.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      error: `The response ${JSON.stringify(raw)} is not a valid HumanResponse (${issue?.path.join(".") || "value"}: ${issue?.message}). Send {type: "accept" | "edit" | "response" | "ignore", args}.`,
    };
  }
  const { type, args } = parsed.data;
  const text = typeof args === "string" && args.trim() ? args.trim() : null;
  if (type === "response" && !text)
    return { ok: false, error: `A "response" needs its text in "args" (a non-empty string).` };
  if (request.kind === "tool_approval") {
    if (type === "accept") return { ok: true, decision: { decision: "approve" } };
    if (type === "ignore") return { ok: true, decision: { decision: "deny", comment: "ignored" } };
    if (type === "response") return { ok: true, decision: { decision: "deny", comment: text } };
    return {
      ok: false,
      error: `Editing a tool call's arguments is not supported: approve the call as shown, or deny it. ${`Send one of: ${request.decisions.join(", ")}.`}`,
    };
  }
  if (request.kind === "token_budget") {
    // Accept raises the budget as proposed, edit to the figure the person set, ignore stops spending.
    if (type === "accept") return { ok: true, decision: { decision: "retry" } };
    if (type === "ignore") return { ok: true, decision: { decision: "abort", comment: "ignored" } };
    if (type === "edit" && isObject(args) && isObject(args.args))
      return { ok: true, decision: { decision: "retry", params: { tokenBudget: jsonText(args.args.tokenBudget) } } };
    return {
      ok: false,
      error: `Answer a token budget question with accept (raise it as proposed), edit (args.tokenBudget: the new budget) or ignore (stop spending). ${`Send one of: ${request.decisions.join(", ")}.`}`,
    };
  }
  if (request.kind === "unknown_outcome") {
    // Only a person's check can answer it: accept = it did not happen (run it again), ignore = it did (skip). A
    // note is not an answer, and must never run a side-effecting call again by default.
    if (type === "accept" && request.decisions.includes("retry")) return { ok: true, decision: { decision: "retry" } };
    if (type === "ignore")
      return { ok: true, decision: { decision: "skip", comment: "it took effect, or is not wanted" } };
    return {
      ok: false,
      error: `Say what your check found: accept if ${request.taskId ?? "the step"}'s call did not take effect${request.decisions.includes("retry") ? " (it runs again)" : " (not offered any more: it has failed too often)"}, ignore if it did (the step is skipped). ${`Send one of: ${request.decisions.join(", ")}.`}`,
    };
  }
  if (request.kind !== "plan_approval") {
    if (type === "accept") return { ok: true, decision: { decision: "retry" } };
    if (type === "ignore") return { ok: true, decision: { decision: "skip" } };
    if (type === "response")
      return {
        ok: true,
        decision: request.decisions.includes("replan")
          ? { decision: "replan", guidance: text }
          : { decision: "retry", comment: text },
      };
    const edited =
      isObject(args) && isObject((args as { args?: unknown }).args)
        ? (args as { args: Record<string, unknown> }).args.params
        : undefined;
    if (!isObject(edited))
      return {
        ok: false,
        error: `An "edit" of an escalation needs args.args.params: the failed step's parameters with the values you want changed.`,
      };
    const before = request.params ?? {};
    const changed = Object.fromEntries(
      Object.entries(edited).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(before[k])),
    );
    // An edit that changes nothing is a plain retry.
    return {
      ok: true,
      decision:
        Object.keys(changed).length > 0
          ? { decision: "retry", params: changed }
          : { decision: "retry", comment: "edited without changes" },
    };
  }
  if (type === "accept") return { ok: true, decision: { decision: "approve" } };
  if (type === "ignore") return { ok: true, decision: { decision: "reject", comment: "ignored" } };
  if (type === "response")
    return {
      ok: true,
      decision: request.decisions.includes("replan")
        ? { decision: "replan", guidance: text }
        : { decision: "reject", comment: text },
    };
  if (!isObject(args))
    return {
      ok: false,
      error: `An "edit" needs "args" to be {action, args} with the edited plan (args.steps) or an adjustments list (args.adjustments).`,
    };
  const edited = (args as { args: Record<string, unknown> }).args;
  if ("adjustments" in edited) return { ok: true, decision: { decision: "adjust", adjustments: edited.adjustments } };
  if (!isObject(edited.steps) || !request.plan) {
    return {
      ok: false,
      error: `An "edit" needs args.args.steps (step id → edited fields) or args.args.adjustments ([{taskId, field, newValue}]).`,
    };
  }
  const diff = diffSteps(request.plan, edited.steps);
  if (!diff.ok) return diff;
  // An edit that changes nothing is an approval of the plan as shown.
  if (diff.adjustments.length === 0)
    return { ok: true, decision: { decision: "approve", comment: "edited without changes" } };
  return { ok: true, decision: { decision: "adjust", adjustments: diff.adjustments } };
}

/** Turns an edited copy of the editable view into adjustments: one per changed field. */
function diffSteps(
  plan: Plan,
  edited: Record<string, unknown>,
): { ok: true; adjustments: PlanAdjustment[] } | { ok: false; error: string } {
  const current = editableSteps(plan);
  const missing = Object.keys(current).filter((id) => !(id in edited));
  if (missing.length > 0) {
    return {
      ok: false,
      error: `The edited plan leaves out step(s) ${missing.join(", ")}; removing steps is not supported. Keep every step, or reject the plan.`,
    };
  }
  const adjustments: PlanAdjustment[] = [];
  for (const [taskId, fields] of Object.entries(edited)) {
    if (!isObject(fields))
      return {
        ok: false,
        error: `Edited step "${taskId}" must be an object of fields, got ${JSON.stringify(fields)}.`,
      };
    for (const [field, newValue] of Object.entries(fields)) {
      if (JSON.stringify(newValue) !== JSON.stringify(current[taskId]?.[field]))
        adjustments.push({ taskId, field, newValue });
    }
  }
  return { ok: true, adjustments };
}

export type AdjustedPlan = { ok: true; plan: Plan; changes: string[] } | { ok: false; error: string };

/**
 * Applies a person's ADJUST edits to a plan awaiting approval, then re-parses it with the Plan schema and re-runs
 * validatePlan, so an adjusted plan is held to the same rules as a planned one. Step order is recomputed when
 * dependencies change (a person should not have to renumber). Any problem is returned as an error naming the
 * adjustment and what was wrong; the plan given is never modified.
 */
export function applyAdjustments(
  plan: Plan,
  adjustments: readonly PlanAdjustment[],
  request: PlanningRequest,
  registry: ToolRegistry,
): AdjustedPlan {
  if (adjustments.length === 0) return { ok: false, error: "There are no adjustments to apply." };
  const editable = `Editable fields: ${EDITABLE_STEP_FIELDS.join(", ")}, or params.<key>.`;
  let steps: TaskStep[] = structuredClone(plan.steps);
  const changes: string[] = [];
  for (const [i, a] of adjustments.entries()) {
    const label = `Adjustment ${i + 1} (${a.taskId}.${a.field})`;
    const index = steps.findIndex((s) => s.id === a.taskId);
    if (index < 0)
      return {
        ok: false,
        error: `${label}: the plan has no step "${a.taskId}". Steps: ${steps.map((s) => s.id).join(", ")}.`,
      };
    if (a.newValue === undefined) return { ok: false, error: `${label}: "newValue" is missing.` };
    const step: Record<string, unknown> = { ...steps[index]! };
    let before: unknown;
    if (a.field.startsWith("params.")) {
      const key = a.field.slice("params.".length);
      if (!key)
        return { ok: false, error: `${label}: name the parameter after "params.", e.g. params.nights. ${editable}` };
      const params = { ...(step.params as Record<string, unknown>) };
      before = params[key];
      params[key] = a.newValue;
      step.params = params;
    } else if ((EDITABLE_STEP_FIELDS as readonly string[]).includes(a.field)) {
      before = step[a.field];
      step[a.field] = a.newValue;
    } else {
      return { ok: false, error: `${label}: "${a.field}" is not a field a person can change. ${editable}` };
    }
    const reparsed = TaskStep.safeParse(step);
    if (!reparsed.success) {
      const issue = reparsed.error.issues[0];
      return {
        ok: false,
        error: `${label}: ${JSON.stringify(a.newValue)} is not valid (${issue?.path.join(".") || a.field}: ${issue?.message}).`,
      };
    }
    steps[index] = reparsed.data;
    changes.push(`${a.taskId}.${a.field}: ${JSON.stringify(before) ?? "unset"} → ${JSON.stringify(a.newValue)}`);
  }
  if (adjustments.some((a) => a.field === "dependsOn")) steps = assignOrder(steps);
  const candidate = Plan.safeParse({ ...plan, steps, createdBy: "human", createdAt: new Date().toISOString() });
  if (!candidate.success) {
    const issue = candidate.error.issues[0];
    return { ok: false, error: `The adjusted plan is not valid (${issue?.path.join(".")}: ${issue?.message}).` };
  }
  try {
    validatePlan(candidate.data, request, registry);
  } catch (e) {
    if (!CandorError.isInstance(e)) throw e;
    return { ok: false, error: `The adjusted plan is not valid: ${e.message}` };
  }
  // Held to what the step's tool accepts, as `--retry --set` is: a value it would refuse fails here, with the
  // thread still waiting, not at run time where recovery would "repair" it into something the person did not ask.
  const edited = new Set(adjustments.map((a) => a.taskId));
  const checkedSteps: TaskStep[] = [];
  for (const step of candidate.data.steps) {
    const original = plan.steps.find((s) => s.id === step.id);
    if (!edited.has(step.id) || !original) {
      checkedSteps.push(step);
      continue;
    }
    const checked = checkEditedStep(step, original, registry);
    if (!checked.ok) return { ok: false, error: `The adjusted step ${step.id} is not valid: ${checked.reason}` };
    checkedSteps.push(checked.value);
  }
  const edits = adjustments
    .filter((a) => a.field.startsWith("params."))
    .map((a) => ({
      stepId: a.taskId,
      key: a.field.slice("params.".length),
      from: plan.steps.find((s) => s.id === a.taskId)?.params[a.field.slice("params.".length)],
      to: a.newValue,
    }));
  const understanding = afterPersonEdits(candidate.data.understanding, checkedSteps, edits);
  return { ok: true, plan: { ...candidate.data, steps: checkedSteps, understanding }, changes };
}

/**
 * The `interrupt()` payload for a request, in the three dialects clients speak: LangGraph's HumanInterrupt (Agent
 * Inbox), LangChain v1's HITL request in both casings (agent-chat-ui), and Candor's request, spread at the top level
 * for existing readers and whole under `candor`. The kind's entry in the interrupt table says what each holds.
 */
export function interruptPayload(request: InterruptRequest, error?: string): InterruptPayload {
  const human = humanInterruptOf(request);
  return { ...request, ...human, ...hitlRequestOf(request, human), candor: request, ...(error ? { error } : {}) };
}

/** What a human decision does to the run, as data; the node turns it into a state update and notifications. */
export interface DecisionEffect {
  status: "executing" | "replanning" | "rejected" | "failed";
  /** What the user is told, in one line. */
  message: string;
  severity: "INFO" | "WARNING" | "ERROR";
  /** For the decision log. */
  reasoning: string;
  failureReason?: string;
  /** New caps, when a human allowed one more attempt. */
  settings?: RunSettings;
  /** The revision, when a human chose to skip the failed step or to retry it with new parameters. */
  skip?: Extract<StrategyOutcome, { applies: true }>;
  /**
   * Set when a human asked to plan again: the replan node plans with this guidance. `taskId` is the failed step
   * of an escalation, null for a plan not yet approved.
   */
  guidance?: { taskId: string | null; text: string };
  /** The plan that replaces the current one, when a human adjusted it. */
  plan?: Plan;
}

/**
 * Applies a validated decision. approve → execute; adjust → execute the adjusted plan (already applied and
 * validated by applyAdjustments, passed as `adjusted`); reject → rejected; abort → failed with the escalation's
 * reason; retry → one more attempt beyond the cap that stopped the run, with the person's parameters when given
 * (already built and checked by retryWithHumanParams, passed as `retried`); replan → one more revision, made by
 * planning again with the person's guidance; skip → SKIP on the failed step.
 */
export function decisionEffect(args: {
  request: InterruptRequest;
  decision: HumanDecision;
  plan: Plan;
  settings: RunSettings;
  revisionCount: number;
  feedback: readonly ExecutionFeedback[];
  registry: ToolRegistry;
  adjusted?: Extract<AdjustedPlan, { ok: true }>;
  retried?: Extract<StrategyOutcome, { applies: true }>;
}): DecisionEffect {
  const { request, decision, plan } = args;
  const note = decision.comment ? `: ${decision.comment}` : "";
  const confidence = plan.confidence.toFixed(2);
  if (request.kind === "plan_approval") {
    if (decision.decision === "approve") {
      const message = `Plan ${plan.planId} approved by a human despite confidence ${confidence}; executing.`;
      return { status: "executing", message, severity: "INFO", reasoning: message };
    }
    if (decision.decision === "replan") {
      const text = decision.guidance ?? "";
      const message = `A human asked for plan ${plan.planId} to be made again: "${text}".`;
      return { status: "replanning", guidance: { taskId: null, text }, message, severity: "INFO", reasoning: message };
    }
    if (decision.decision === "adjust") {
      if (!args.adjusted)
        throw new CandorError(
          "An adjust decision needs the adjusted plan (applyAdjustments) before its effect.",
          ErrorCode.INVALID_DECISION,
        );
      const message = `Plan ${plan.planId} adjusted by a human (${args.adjusted.changes.length} change(s)) despite confidence ${confidence}; executing the adjusted plan.`;
      return {
        status: "executing",
        plan: args.adjusted.plan,
        message,
        severity: "INFO",
        reasoning: `${message} ${args.adjusted.changes.join("; ")}`,
      };
    }
    const reason = `Plan ${plan.planId} was rejected by a human${note}.`;
    return { status: "rejected", message: reason, severity: "WARNING", reasoning: reason, failureReason: reason };
  }
  if (request.kind === "tool_approval") {
    // The worker applies tool approvals itself (run or fail the step); nothing here should ever see one.
    throw new CandorError(
      `A tool approval for ${request.tool} is answered inside the worker, not by human_interrupt.`,
      ErrorCode.INVALID_DECISION,
    );
  }
  if (request.kind === "token_budget") {
    // Asked and applied where the model call waits (nodes/usage.ts); nothing here should ever see one.
    throw new CandorError(
      `A token budget question for ${request.taskId} is answered where the model call waits, not by human_interrupt.`,
      ErrorCode.INVALID_DECISION,
    );
  }
  // One more try beyond the cap that stopped the run; the other caps still hold, and none is ever lowered.
  const settings = { ...args.settings };
  if (request.kind === "max_revisions") settings.maxRevisions = Math.max(settings.maxRevisions, args.revisionCount + 1);
  if (request.kind === "step_failures")
    settings.maxStepFailures = Math.max(settings.maxStepFailures, request.failureCount + 1);
  // Just under today's confidence: the next revision (every strategy lowers it) asks again, so the abort
  // threshold is relaxed for one attempt, not switched off for the rest of the run. Only for a retry: a replan
  // makes a new plan whose confidence starts again, and the lower threshold would outlive it.
  // The escalation's confidence is the one the next revision would bring, when that is what was below the threshold.
  if (request.kind === "low_confidence" && decision.decision === "retry")
    settings.abortBelow = Math.max(0, Math.round((Math.min(plan.confidence, request.confidence) - 0.01) * 100) / 100);
  switch (decision.decision) {
    case "retry": {
      if (request.kind === "unknown_outcome" && !decision.params) {
        // The person checked that the call did not take effect: the same step runs again on a new dispatch (a new
        // ledger key, so the call is really made), and its approval is asked again.
        const message = `A human checked that ${request.taskId}'s call did not take effect; it runs again${note}.`;
        return {
          status: "executing",
          plan: resetForRerun(plan, [request.taskId]),
          message,
          severity: "INFO",
          reasoning: message,
        };
      }
      if (decision.params) {
        if (!args.retried)
          throw new CandorError(
            "A retry with parameters needs its revision (retryWithHumanParams) before its effect.",
            ErrorCode.INVALID_DECISION,
          );
        const message = `A human retried ${request.taskId} with new parameters (${Object.entries(decision.params)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(", ")}).`;
        return {
          status: "executing",
          settings,
          skip: args.retried,
          message,
          severity: "INFO",
          reasoning: `${message} After: ${request.reason}`,
        };
      }
      return {
        status: "replanning",
        settings,
        message: `A human allowed one more recovery attempt for ${request.taskId}.`,
        severity: "INFO",
        reasoning: `a human allowed one more attempt after: ${request.reason}`,
      };
    }
    case "replan": {
      const text = decision.guidance ?? "";
      return {
        status: "replanning",
        settings,
        guidance: { taskId: request.taskId, text },
        message: `A human asked to plan the unfinished work again: "${text}".`,
        severity: "INFO",
        reasoning: `a human gave guidance after: ${request.reason}`,
      };
    }
    case "skip": {
      const why = `A person chose to skip ${request.taskId}${note}.`;
      const outcome = recoverOrSkip(
        "SKIP",
        {
          plan,
          feedback: args.feedback,
          revisionCount: args.revisionCount,
          registry: args.registry,
          taskId: request.taskId,
        },
        reasonHint("person", why),
      );
      return {
        status: "executing",
        skip: outcome,
        message: `A human chose to skip ${request.taskId}${note}.`,
        severity: "WARNING",
        reasoning: `a human chose to skip ${request.taskId}`,
      };
    }
    case "abort": {
      const reason = `${request.reason} A human chose to abort${note}.`;
      return {
        status: "failed",
        message: `Run stopped: ${reason}`,
        severity: "ERROR",
        reasoning: reason,
        failureReason: reason,
      };
    }
    case "approve":
    case "adjust":
    case "reject":
    case "deny":
      // parseDecision admits only the decisions the request offers, and no escalation offers these.
      throw new CandorError(
        `"${decision.decision}" does not answer a ${request.kind} escalation; it offers ${request.decisions.join(", ")}.`,
        ErrorCode.INVALID_DECISION,
      );
    default: {
      // A decision added to DecisionName without an effect here fails the typecheck.
      const unhandled: never = decision.decision;
      throw new CandorError(
        `No effect is defined for the decision "${String(unhandled)}".`,
        ErrorCode.INVALID_DECISION,
      );
    }
  }
}
