import { interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import {
  toolApprovalRequest,
  type HumanDecision,
  type InterruptRequest,
  type ToolCallDecision,
} from "../src/domain/approval.js";
import type { Notification } from "../src/domain/notification.js";
import type { TaskStep } from "../src/domain/plan.js";
import { inputsOf, type ToolSpec } from "../src/tools/types.js";
import { describeInputs } from "../src/transparency/inputs.js";
import { notification } from "../src/transparency/notify.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import { interruptPayload, parseDecision } from "../src/replanning/human-decision.js";
import type { Result } from "../src/result.js";

/** Where the first answer may come from besides a resume, and how long to keep asking. */
export interface AskOptions {
  /** An answer already given (a chat client's reply as a message): taken as the first, before any `interrupt()`. */
  given?: unknown;
  /** Why the answer already given could not be read: shown with the first question. */
  givenError?: string;
  /** After this many answers that do not parse or are refused, the last reason stands and null is returned. */
  maxAsks?: number;
}

/**
 * The one ask loop: asks a person `request` with LangGraph's `interrupt()` until an answer parses and `accept` takes
 * it; a malformed or refused answer is asked again with the reason in the payload, so the person sees what to fix.
 * Each ask's answer is stored with the thread, so a node that re-runs on resume replays the same answers and stops
 * where it stopped. Call it only where nothing before it in the node has side effects: the node re-runs from its top.
 */
export function askUntilAccepted<T>(request: InterruptRequest, accept: (decision: HumanDecision) => Result<T>): T;
export function askUntilAccepted<T>(
  request: InterruptRequest,
  accept: (decision: HumanDecision) => Result<T>,
  options: AskOptions,
): T | null;
export function askUntilAccepted<T>(
  request: InterruptRequest,
  accept: (decision: HumanDecision) => Result<T>,
  options: AskOptions = {},
): T | null {
  let payload = interruptPayload(request, options.givenError);
  // Each pass either gets the next stored resume value or throws the interrupt, so this loop always ends.
  for (let ask = 0; ask < (options.maxAsks ?? Number.POSITIVE_INFINITY); ask++) {
    const answer: unknown = ask === 0 && options.given !== undefined ? options.given : interrupt(payload);
    const parsed = parseDecision(answer, request);
    const taken: Result<T> = parsed.ok ? accept(parsed.decision) : { ok: false, reason: parsed.error };
    if (taken.ok) return taken.value;
    payload = interruptPayload(request, taken.reason);
  }
  return null;
}

/** One call that needs a person's approval, wherever it is about to be made (the gate, or a model-driven loop). */
export interface ApprovalQuestion {
  step: TaskStep;
  planId: string;
  /** The step's inputs, described to the person with the call. */
  inputs: Record<string, unknown>;
  tool: ToolSpec;
  args: Record<string, unknown>;
  /** Why the person is asked again about a call the ledger already holds (another request, arguments or inputs). */
  why?: string;
}

/**
 * Asks a person to approve or deny the exact call with `interrupt()`, asking again with the error when the
 * answer is malformed; records and announces the decision. Call it only where a resume may re-run everything
 * before it: nothing before it in its node may have side effects.
 */
export function askToolApproval(
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  q: ApprovalQuestion,
): { decision: ToolCallDecision; told: Notification } {
  const { step, tool, args } = q;
  const threadId = threadIdOf(config);
  const request = toolApprovalRequest({
    planId: q.planId,
    taskId: step.id,
    tool,
    args,
    inputs: describeInputs(q.inputs, inputsOf(tool)),
    ...(q.why ? { why: q.why } : {}),
  });
  const decision = askUntilAccepted(request, ({ decision: answer, comment, by }): Result<ToolCallDecision> => ({
    ok: true,
    value: {
      decision: answer === "approve" ? "approve" : "deny",
      tool: tool.name,
      args,
      comment,
      by,
      at: new Date().toISOString(),
    },
  }));
  const { comment } = decision;
  const verb = decision.decision === "approve" ? "approved" : "denied";
  deps.decisionLog.record({
    operation: "human_decision",
    planId: q.planId,
    taskId: step.id,
    threadId,
    input: `tool_approval ${tool.name}(${JSON.stringify(args)})`,
    decision: decision.decision,
    reasoning: `a human ${verb} the call${comment ? `: ${comment}` : ""}`,
  });
  const told = notification({
    severity: decision.decision === "approve" ? "INFO" : "WARNING",
    kind: "approval",
    taskId: step.id,
    title: `A human ${verb} ${tool.name} for ${step.id}${decision.decision === "deny" ? "; the tool will not be called" : ""}.`,
    message: comment ?? "",
  });
  emitNotifications(config, [told]);
  return { decision, told };
}
