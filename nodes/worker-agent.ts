import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { isGraphBubbleUp, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { z } from "zod";
import { ExecutionFeedback, OUTCOME_UNKNOWN, type FailureClass } from "../src/domain/feedback.js";
import { succeededCall, type CallRecord } from "../src/execution/evidence.js";
import type { Notification } from "../src/domain/notification.js";
import { TaskStep } from "../src/domain/plan.js";
import { CandorError, ErrorCode, errorMessage } from "../src/errors.js";
import type { WorkerModel } from "../src/reasoning/types.js";
import { budgetRefusal } from "../src/reasoning/usage.js";
import { classifyFailure, feedbackTypeFor } from "../src/replanning/classify.js";
import { runStep } from "../src/execution/run-step.js";
import { failureNotification, notification, successNotification } from "../src/transparency/notify.js";
import type { ToolSpec } from "../src/tools/types.js";
import {
  callStep,
  earlierIdenticalCall,
  expectedOutputs,
  loopFeedback,
  loopNudge,
  MAX_NUDGES,
  producedBy,
  nextToolCall,
  toolDefinitions,
  toolMessage,
} from "../src/execution/agent-step.js";
import { loopTools } from "../src/tools/model-driven.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import type { AgentLoopStateValue, LoopApproval } from "./state.js";
import { askToolApproval } from "./ask.js";
import { recordedCall } from "../src/execution/values.js";
import { applyRecordedValues } from "../src/tools/args.js";
import { valuesNotification } from "../src/execution/worker-step.js";
import { answerableCalls, argumentsShape, callText, malformedArguments } from "../src/execution/call-arguments.js";
import { argumentsOverBound } from "../src/memory/bounds.js";

/** Node ids of the model-driven loop (the worker's `agent` subgraph). */
export const AgentLoopNode = { MODEL: "model", TOOL: "tool", FINISH: "finish" } as const;

function workersOf(deps: NodeDeps): WorkerModel {
  const workers = deps.reasoner.workerModel;
  if (!workers) {
    throw new CandorError(
      "A step reached the model-driven worker, but the reasoner has no worker model: configure a model, or plan steps with complete tool calls.",
      ErrorCode.CONFIGURATION,
    );
  }
  return workers;
}

/**
 * Asks the model for the step's next move, offering exactly the step's granted tools. A model that cannot be
 * reached ends the loop with the failure classified (as a tool's would be); cancellation propagates.
 */
export function agentModelNode(deps: NodeDeps) {
  return async (state: AgentLoopStateValue, config: LangGraphRunnableConfig) => {
    const { step } = state;
    const workers = workersOf(deps);
    const tools = loopTools(step, deps.registry);
    const startedAt = state.startedAt ?? new Date().toISOString();
    if (!workers.model.bindTools) {
      throw new CandorError(
        `The worker model cannot call tools (it has no bindTools), so step ${step.id} cannot run model-driven: use a chat model with tool calling.`,
        ErrorCode.CONFIGURATION,
      );
    }
    const bound = workers.model.bindTools(toolDefinitions(tools));
    const prompt = workers.prompt({
      step,
      inputs: state.inputs,
      expected: expectedOutputs(step, tools),
      missing: (step.missingInputs ?? []).map((m) => `${m.input}: ${m.reason}`),
      values: state.context.values,
      maxModelCalls: workers.maxModelCalls,
    });
    const task = new HumanMessage(`Do step ${step.id}: ${step.description}`);
    // Each model call gets the step's time limit, as each tool call does: a hung server must not hang the run.
    const limit = AbortSignal.timeout(step.timeoutMs);
    const signal = config.signal ? AbortSignal.any([config.signal, limit]) : limit;
    try {
      // The run's token budget, checked where the call is made (the person was already asked: nodes/usage.ts).
      const refused = budgetRefusal("worker");
      if (refused)
        throw new CandorError(refused, ErrorCode.INSUFFICIENT_RESOURCES, {
          details: { failureClass: "policy_blocked" },
        });
      const answer = withUniqueCallIds(
        await bound.invoke([new SystemMessage(prompt), task, ...state.messages], { signal }),
        state.messages,
        step.id,
      );
      const update = { messages: [answer], modelCalls: state.modelCalls + 1, startedAt };
      return { ...update, ...nudged(deps, config, { ...state, ...update, messages: [...state.messages, answer] }) };
    } catch (e) {
      if (isGraphBubbleUp(e) || config.signal?.aborted) throw e;
      const why = limit.aborted
        ? `it did not answer within the step's time limit of ${step.timeoutMs} ms (timed out)`
        : errorMessage(e);
      const message = `The ${step.workerType} worker's model could not be asked for step ${step.id}: ${why}`;
      const failureClass = classifyFailure(message, e);
      const halted: ExecutionFeedback = {
        ...loopFeedback(recordOf(deps, state, workers, startedAt)),
        feedbackType: feedbackTypeFor(failureClass),
        errors: [message],
        failureClass,
        outputs: {},
      };
      return { halted, modelCalls: state.modelCalls + 1, startedAt };
    }
  };
}

/**
 * Answers the model's next tool call, one call per pass so an approval's resume re-runs only this call's gate: a
 * tool outside the step's grant is refused and the model told, never called; a call that needs approval asks a
 * person first (once: the effect ledger holds an approved call's result, and a resume reuses it); every call is
 * validated and run by runStep with its own ledger key, and its error goes back to the model as an error message.
 */
export function agentToolNode(deps: NodeDeps) {
  return async (state: AgentLoopStateValue, config: LangGraphRunnableConfig) => {
    const next = nextToolCall(state.messages);
    if (!next) return {};
    const { call, index } = next;
    const { step } = state;
    const threadId = threadIdOf(config);
    const tools = loopTools(step, deps.registry);
    const tool = tools.find((t) => t.name === call.name);
    if (!tool) return notGrantedCall(deps, config, state, call, tools);
    const malformed =
      malformedArguments(call.args) ?? argumentsOverBound(call.args, deps.registry.bounds.maxToolArgumentBytes);
    if (malformed) return malformedCall(deps, config, state, call, tool, malformed);
    const repeat = earlierIdenticalCall(state.calls, tool.name, call.args);
    if (repeat) return repeatedCall(deps, config, state, call, repeat);
    // The values the request's record gives this step replace what the model passed (or left out), and are named.
    const reconciled = applyRecordedValues(call.args, state.context.values, tool);
    const asStep = callStep(step, { ...call, args: reconciled.args }, index, tool);
    const inputs = { ...state.inputs, ...producedBy(state.calls) };
    const asked = await approvalOf(deps, config, state, { call, tool, asStep, args: reconciled.args, inputs });
    if ("denied" in asked) return asked.denied;
    const { approval, told } = asked;
    told.push(...announcedCall(deps, config, state, { call, tool, index, reconciled }));
    let reused: "ledger" | null = null;
    const f = await runStep({
      step: asStep,
      inputs,
      registry: deps.registry,
      dispatch: asStep.dispatches,
      ...(config.signal ? { signal: config.signal } : {}),
      ...(deps.ledger ? { ledger: deps.ledger, threadId } : {}),
      context: state.context,
      approved: approval?.decision === "approve",
      onRecordedResult: () => {
        reused = "ledger";
      },
    });
    const update = { notifications: told, ...(approval ? { approval } : {}) };
    const ok = f.feedbackType === "SUCCESS" || f.feedbackType === "PARTIAL_SUCCESS";
    if (!ok) {
      const error = f.errors.join(" | ");
      const failed = failedCall(call, tool, f.failureClass ?? "unknown", error, f.errorType, f.outputs);
      const messages = [toolMessage(call, { ok: false, error })];
      if (f.errorType === OUTCOME_UNKNOWN) {
        // The call may have taken effect: the loop stops here and a person decides, as for a direct call.
        const halted: ExecutionFeedback = { ...f, taskId: step.id, params: step.params, attempt: state.modelCalls };
        return { ...update, messages, halted, calls: [...state.calls, failed] };
      }
      return { ...update, messages, calls: [...state.calls, failed] };
    }
    const result = f.outputs.result;
    const succeeded = succeededCall(tool, reconciled.args, result, reused);
    const note =
      reconciled.applied.length > 0 ? `Called with the request's values: ${reconciled.applied.join("; ")}. ` : "";
    return {
      ...update,
      messages: [toolMessage(call, { ok: true, result }, note)],
      calls: [...state.calls, succeeded],
      cost: state.cost + f.cost,
    };
  };
}

/** A tool outside the step's grant: refused and the model told, never called; logged and shown. */
function notGrantedCall(
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  state: AgentLoopStateValue,
  call: ToolCall,
  tools: readonly ToolSpec[],
) {
  const { step } = state;
  const allowed = tools.map((t) => t.name).join(", ") || "nothing";
  const error = `Tool ${call.name} is not granted to the ${step.workerType} worker for step ${step.id}, so the call was refused and nothing ran. You may use: ${allowed}.`;
  logDispatch(deps, config, state, call, `refuse ${call.name}`, error);
  const told = notification({
    severity: "WARNING",
    kind: "step_started",
    taskId: step.id,
    title: `${step.description} (${step.id}): its model asked for ${call.name}, which the ${step.workerType} worker may not use; refused, nothing ran.`,
  });
  emitNotifications(config, [told]);
  const refused = failedCall(call, null, "wrong_tool", error, ErrorCode.TOOL_NOT_GRANTED);
  return {
    messages: [toolMessage(call, { ok: false, error })],
    notifications: [told],
    calls: [...state.calls, refused],
  };
}

/** One call of the loop, as approval, announcement and the run see it. */
interface LoopCall {
  call: ToolCall;
  tool: ToolSpec;
  asStep: TaskStep;
  args: Record<string, unknown>;
  inputs: Record<string, unknown>;
}

/**
 * A call that needs approval (irreversible, or its tool asks for it) asks a person first, once: invalid arguments
 * fail later without a call, so there is nothing to approve; the same call recorded (done, or of unknown outcome) is
 * settled by the ledger in runStep, never asked again; another call recorded for this position (a fork with another
 * request) is asked again, saying why. A denial answers the model and runs nothing.
 */
async function approvalOf(
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  state: AgentLoopStateValue,
  c: LoopCall,
): Promise<
  | { approval: z.infer<typeof LoopApproval> | null; told: Notification[] }
  | { denied: Partial<AgentLoopStateValue> & { messages: BaseMessage[] } }
> {
  const { tool, asStep, call } = c;
  const threadId = threadIdOf(config);
  const told: Notification[] = [];
  if (tool.sideEffect !== "irreversible" && !tool.needsApproval) return { approval: null, told };
  const valid = tool.schema.safeParse(c.args);
  const args = valid.success ? (isRecord(valid.data) ? valid.data : { value: valid.data }) : {};
  const unknown =
    deps.ledger && threadId
      ? (await deps.ledger.verdict({ threadId, stepId: asStep.id, dispatch: asStep.dispatches })).kind === "unknown"
      : false;
  const recorded = await recordedCall(deps.ledger, threadId, asStep, { tool, args }, c.inputs, state.context.lineage);
  if (!valid.success || unknown || recorded.kind === "same") return { approval: null, told };
  const why = recorded.kind === "other" ? { why: recorded.why } : {};
  const { step, planId } = state;
  const asked = askToolApproval(deps, config, { step, planId, inputs: c.inputs, tool, args, ...why });
  told.push(asked.told);
  const { decision, comment, by, at } = asked.decision;
  const approval =
    decision === "approve" || decision === "deny"
      ? { decision, comment, by, at: at ?? new Date().toISOString() }
      : null;
  if (decision !== "deny") return { approval, told };
  const error = `A human denied ${tool.name}(${JSON.stringify(args)})${comment ? ` (${comment})` : ""}; the tool was not called. Do not ask for it again.`;
  const denied = failedCall(call, tool, "policy_blocked", error, "HUMAN_DENIED");
  return {
    denied: {
      messages: [toolMessage(call, { ok: false, error })],
      notifications: told,
      approval,
      calls: [...state.calls, denied],
    },
  };
}

/**
 * What a person sees and the log records as a call is made: the request's values applied (if any), and the call
 * itself, shown as it happens (a loop's calls are the person's only view of what its model does with the tools).
 */
function announcedCall(
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  state: AgentLoopStateValue,
  c: {
    call: ToolCall;
    tool: ToolSpec;
    index: number;
    reconciled: { args: Record<string, unknown>; applied: string[] };
  },
): Notification[] {
  const { step } = state;
  const told: Notification[] = [];
  if (c.reconciled.applied.length > 0) told.push(valuesNotification(step, c.reconciled.applied));
  told.push(
    notification({
      severity: "INFO",
      kind: "step_started",
      taskId: step.id,
      title: `${step.description} (${step.id}): its model calls ${callText(c.tool.name, c.reconciled.args)}`,
    }),
  );
  emitNotifications(config, told);
  logDispatch(
    deps,
    config,
    state,
    c.call,
    `call ${c.tool.name} (call ${c.index} of the model-driven loop)`,
    "the step's model asked for it and the step's grant allows it",
  );
  return told;
}

/**
 * One line of the decision log about a call of the loop: what was decided about it and why. The arguments are shown
 * as the person sees them (callText: long ones cut, with their size), so a huge argument never makes a huge log line.
 */
function logDispatch(
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  state: AgentLoopStateValue,
  call: ToolCall,
  decision: string,
  reasoning: string,
): void {
  deps.decisionLog.record({
    operation: "dispatch",
    planId: state.planId,
    taskId: state.step.id,
    threadId: threadIdOf(config),
    input: callText(call.name, call.args),
    decision,
    reasoning,
  });
}

/** A call as the evidence records it when it failed (refused, denied, or the tool failed). */
function failedCall(
  call: ToolCall,
  tool: ToolSpec | null,
  failureClass: FailureClass,
  error: string,
  errorType: string | null,
  outputs: Record<string, unknown> = {},
): CallRecord {
  return {
    tool: call.name,
    args: call.args,
    produces: tool?.produces ?? [],
    sideEffect: tool?.sideEffect ?? "none",
    outcome: { kind: "failed", error, failureClass, errorType, outputs },
  };
}

/**
 * The model sent arguments that are not a JSON object (null, a list, a string, text that is not JSON): nothing runs,
 * and the model is told what was wrong and what the tool takes, as an error it can correct with its next call.
 */
function malformedCall(
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  state: AgentLoopStateValue,
  call: ToolCall,
  tool: ToolSpec,
  why: string,
) {
  const { step } = state;
  const error = `The arguments of your call to ${tool.name} ${why}, so nothing ran. Call ${tool.name} again with its arguments as one JSON object: ${argumentsShape(tool)}.`;
  const told = notification({
    severity: "WARNING",
    kind: "step_started",
    taskId: step.id,
    title: `${step.description} (${step.id}): its model called ${callText(tool.name, call.args)}, whose arguments ${why}; nothing ran, and the model was told.`,
  });
  emitNotifications(config, [told]);
  logDispatch(deps, config, state, call, `refuse ${tool.name}: malformed arguments`, error);
  const refused = failedCall(call, tool, "invalid_parameters", error, ErrorCode.INVALID_REQUEST);
  return {
    messages: [toolMessage(call, { ok: false, error })],
    notifications: [told],
    calls: [...state.calls, refused],
  };
}

/**
 * The model asked again for a call it already made with the same arguments: it gets the first result back and the
 * tool is not run again (a side effect is never repeated, a read not paid twice); the repeat is recorded, logged
 * and announced. It still counts against the step's model calls, so a model that keeps repeating runs out.
 */
function repeatedCall(
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  state: AgentLoopStateValue,
  call: ToolCall,
  earlier: CallRecord,
) {
  const { step } = state;
  const result = earlier.outcome.kind === "succeeded" ? earlier.outcome.result : null;
  const told = notification({
    severity: "INFO",
    kind: "step_started",
    taskId: step.id,
    title: `${step.description} (${step.id}): its model repeated ${callText(call.name, call.args)}; the first call's result was given back and the tool was not run again.`,
  });
  emitNotifications(config, [told]);
  logDispatch(
    deps,
    config,
    state,
    call,
    `reuse the result of the identical earlier call of ${call.name}`,
    "the model repeated a call it already made with the same arguments",
  );
  const repeated: CallRecord = {
    ...earlier,
    args: call.args,
    outcome: { kind: "succeeded", result, reused: "repeat" },
  };
  return {
    messages: [toolMessage(call, { ok: true, result })],
    notifications: [told],
    calls: [...state.calls, repeated],
  };
}

/**
 * A model that answered without the evidence its step needs, with calls left, is told what is missing and asked
 * again (src/execution/agent-step.ts `loopNudge`): the reply goes into the conversation, and the person sees it.
 */
function nudged(deps: NodeDeps, config: LangGraphRunnableConfig, state: AgentLoopStateValue) {
  const last = state.messages.at(-1);
  if (!last || !AIMessage.isInstance(last) || (last.tool_calls ?? []).length > 0) return {};
  const told = state.messages.filter((m) => HumanMessage.isInstance(m)).length;
  const nudge = loopNudge(recordOf(deps, state, workersOf(deps), state.startedAt), told);
  if (!nudge) return {};
  const { step } = state;
  const shown = notification({
    severity: "WARNING",
    kind: "step_started",
    taskId: step.id,
    title: `${step.description} (${step.id}): its model answered without a successful call producing what the step needs; told so and asked again (${told + 1} of ${MAX_NUDGES}).`,
  });
  emitNotifications(config, [shown]);
  return { messages: [state.messages.at(-1)!, new HumanMessage(nudge)], notifications: [shown] };
}

/** Ends the loop: the step's feedback, checked against what it must produce, announced and logged with why. */
export function agentFinishNode(deps: NodeDeps) {
  return (state: AgentLoopStateValue, config: LangGraphRunnableConfig) => {
    const workers = workersOf(deps);
    const { step } = state;
    const ended = state.halted ?? loopFeedback(recordOf(deps, state, workers, state.startedAt));
    const feedback: ExecutionFeedback = {
      ...(UNPROVEN.has(ended.failureClass ?? "unknown") && state.approval?.decision === "deny"
        ? deniedLoop(ended)
        : ended),
      ...(state.approval ? { approval: state.approval } : {}),
    };
    const ok = feedback.feedbackType === "SUCCESS" || feedback.feedbackType === "PARTIAL_SUCCESS";
    const told = ok ? successNotification(step, feedback) : failureNotification(step, feedback, deps.logFile);
    emitNotifications(config, [told]);
    deps.decisionLog.record({
      operation: "step_result",
      planId: state.planId,
      taskId: step.id,
      threadId: threadIdOf(config),
      input: `${step.description} (model-driven: ${state.modelCalls} model call(s), tools ${calledTools(state.calls) || "none"})`,
      decision: feedback.feedbackType,
      reasoning: ok
        ? `its model finished in ${state.modelCalls} call(s) with what the step must produce`
        : `${feedback.failureClass}: ${feedback.errors.join(" | ")}`,
      cost: feedback.cost,
    });
    return { feedback: [feedback], notifications: [told] };
  };
}

export type AfterAgentModel = typeof AgentLoopNode.TOOL | typeof AgentLoopNode.MODEL | typeof AgentLoopNode.FINISH;

/**
 * The model asked for tools: answer them; it was told it is not done (the last message is that reply): ask it again;
 * it answered without (or could not be asked): finish.
 */
export function routeAfterAgentModel(state: AgentLoopStateValue): AfterAgentModel {
  if (state.halted) return AgentLoopNode.FINISH;
  if (nextToolCall(state.messages)) return AgentLoopNode.TOOL;
  const last = state.messages.at(-1);
  return last && HumanMessage.isInstance(last) ? AgentLoopNode.MODEL : AgentLoopNode.FINISH;
}

export type AfterAgentTool = typeof AgentLoopNode.TOOL | typeof AgentLoopNode.MODEL | typeof AgentLoopNode.FINISH;

/**
 * More calls of the same answer go first; then the model sees the results, unless its calls per step are spent
 * (the cap lives in state, so a resumed loop keeps counting) or a call's outcome is unknown.
 */
export function routeAfterAgentTool(state: AgentLoopStateValue, maxModelCalls: number): AfterAgentTool {
  if (state.halted) return AgentLoopNode.FINISH;
  if (nextToolCall(state.messages)) return AgentLoopNode.TOOL;
  return state.modelCalls >= maxModelCalls ? AgentLoopNode.FINISH : AgentLoopNode.MODEL;
}

function recordOf(deps: NodeDeps, state: AgentLoopStateValue, workers: WorkerModel, startedAt: string | null) {
  return {
    step: state.step,
    tools: loopTools(state.step, deps.registry),
    messages: state.messages,
    calls: state.calls,
    modelCalls: state.modelCalls,
    maxModelCalls: workers.maxModelCalls,
    durationMs: startedAt ? Date.now() - Date.parse(startedAt) : 1,
    cost: state.cost,
  };
}

/**
 * Gives every tool call an id no earlier call of the loop has: some OpenAI-compatible servers send none, or the
 * same one every time, and the loop matches each reply to its call by id.
 */
function withUniqueCallIds(raw: BaseMessage, earlier: readonly BaseMessage[], stepId: string): BaseMessage {
  // Calls whose arguments are not JSON are answered too (with the error), so they need ids as any other call does.
  const answer = answerableCalls(raw);
  if (!AIMessage.isInstance(answer) || (answer.tool_calls ?? []).length === 0) return answer;
  const seen = new Set(earlier.flatMap((m) => (AIMessage.isInstance(m) ? (m.tool_calls ?? []).map((c) => c.id) : [])));
  let n = seen.size;
  let changed = false;
  const calls: ToolCall[] = (answer.tool_calls ?? []).map((c) => {
    n += 1;
    if (c.id && !seen.has(c.id)) {
      seen.add(c.id);
      return c;
    }
    changed = true;
    const id = `${stepId}-call${n}`;
    seen.add(id);
    return { ...c, id };
  });
  if (!changed) return answer;
  return new AIMessage({
    content: answer.content,
    tool_calls: calls,
    ...(answer.id ? { id: answer.id } : {}),
    response_metadata: answer.response_metadata,
    ...(answer.usage_metadata ? { usage_metadata: answer.usage_metadata } : {}),
  });
}

/** Failures of the loop itself (no tool failed): after a person's denial, the denial is why. */
const UNPROVEN: ReadonlySet<FailureClass> = new Set(["no_result", "no_tool_call", "claimed_without_evidence"]);

/** The tools the loop called successfully, in order, for the decision log. */
function calledTools(calls: readonly CallRecord[]): string {
  return calls
    .filter((c) => c.outcome.kind === "succeeded")
    .map((c) => c.tool)
    .join(", ");
}

/**
 * A loop left without its output after a person denied one of its calls was stopped by that decision, not by the
 * model: it fails as policy_blocked (as a denied direct call does), so replanning does not look for another way to
 * make the call a person refused.
 */
function deniedLoop(f: ExecutionFeedback): ExecutionFeedback {
  return {
    ...f,
    failureClass: "policy_blocked",
    feedbackType: feedbackTypeFor("policy_blocked"),
    errorType: "HUMAN_DENIED",
    errors: [`A human denied a call this step needed. ${f.errors.join(" ")}`],
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
