import { HumanDecision, type InterruptRequest } from "../domain/approval.js";
import type { ExecutionFeedback } from "../domain/feedback.js";
import type { Plan } from "../domain/plan.js";
import type { RunSettings } from "../domain/request.js";
import type { ToolRegistry } from "../tools/registry.js";
import { applyStrategy } from "./select.js";
import type { StrategyOutcome } from "./strategies/types.js";

export type ParsedDecision = { ok: true; decision: HumanDecision } | { ok: false; error: string };

/**
 * Parses a resume value against what the thread is waiting for. Accepts `{decision: "approve"}` or the bare
 * string "approve". A malformed value or a decision that does not fit is refused with a message naming what
 * was wrong and the decisions that do fit; the thread keeps waiting.
 */
export function parseDecision(raw: unknown, request: Pick<InterruptRequest, "decisions" | "kind">): ParsedDecision {
  const candidate = typeof raw === "string" ? { decision: raw.trim().toLowerCase() } : raw;
  const parsed = HumanDecision.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, error: `The decision ${JSON.stringify(raw)} is not valid (${issue?.path.join(".") || "value"}: ${issue?.message}). Send one of: ${request.decisions.join(", ")}.` };
  }
  if (!request.decisions.includes(parsed.data.decision)) {
    return { ok: false, error: `"${parsed.data.decision}" does not answer a ${request.kind} request. Send one of: ${request.decisions.join(", ")}.` };
  }
  return { ok: true, decision: parsed.data };
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
  /** The revision, when a human chose to skip the failed step. */
  skip?: Extract<StrategyOutcome, { applies: true }>;
}

/**
 * Applies a validated decision. approve → execute; reject → rejected; abort → failed with the escalation's
 * reason; retry → one more attempt beyond the cap that stopped the run; skip → SKIP on the failed step.
 */
export function decisionEffect(args: {
  request: InterruptRequest;
  decision: HumanDecision;
  plan: Plan;
  settings: RunSettings;
  revisionCount: number;
  feedback: readonly ExecutionFeedback[];
  registry: ToolRegistry;
}): DecisionEffect {
  const { request, decision, plan } = args;
  const note = decision.comment ? `: ${decision.comment}` : "";
  const confidence = plan.confidence.toFixed(2);
  if (request.kind === "plan_approval") {
    if (decision.decision === "approve") {
      const message = `Plan ${plan.planId} approved by a human despite confidence ${confidence}; executing.`;
      return { status: "executing", message, severity: "INFO", reasoning: message };
    }
    const reason = `Plan ${plan.planId} was rejected by a human${note}.`;
    return { status: "rejected", message: reason, severity: "WARNING", reasoning: reason, failureReason: reason };
  }
  switch (decision.decision) {
    case "retry": {
      // One more try beyond the cap that stopped the run; the other caps still hold.
      const settings = { ...args.settings };
      if (request.kind === "max_revisions") settings.maxRevisions = args.revisionCount + 1;
      if (request.kind === "step_failures") settings.maxStepFailures = request.failureCount + 1;
      if (request.kind === "low_confidence") settings.abortBelow = 0;
      return { status: "replanning", settings, message: `A human allowed one more recovery attempt for ${request.taskId}.`, severity: "INFO", reasoning: `a human allowed one more attempt after: ${request.reason}` };
    }
    case "skip": {
      const outcome = applyStrategy("SKIP", { plan, feedback: args.feedback, revisionCount: args.revisionCount, registry: args.registry, taskId: request.taskId });
      return { status: "executing", skip: outcome, message: `A human chose to skip ${request.taskId}${note}.`, severity: "WARNING", reasoning: `a human chose to skip ${request.taskId}` };
    }
    default: {
      const reason = `${request.reason} A human chose to abort${note}.`;
      return { status: "failed", message: `Run stopped: ${reason}`, severity: "ERROR", reasoning: reason, failureReason: reason };
    }
  }
}
