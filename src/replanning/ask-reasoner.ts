import type { ExecutionFeedback } from "../domain/feedback.js";
import type { Plan } from "../domain/plan.js";
import { CandorError, ErrorCode } from "../errors.js";
import type { Reasoner } from "../reasoning/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { FailureContext } from "../domain/feedback.js";
import { validateProposal, type ProposalVerdict } from "./proposal.js";

/** Seed 003: strategy generation must finish within 5 s; after that the rules decide. */
export const RECOVERY_TIMEOUT_MS = 5_000;

export interface RecoveryAsk {
  reasoner: Reasoner;
  failure: FailureContext;
  plan: Plan;
  registry: ToolRegistry;
  feedback: readonly ExecutionFeedback[];
  revisionNumber: number;
  /** The run's signal: cancelling the run cancels the question too. */
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * Asks the reasoner how to recover from a failure no rule recognises, under a real time limit: the question's
 * signal is aborted and the answer stops being awaited when the limit passes, whether or not the reasoner honours
 * the signal. The proposal is validated before it is offered. Every way of not getting a usable proposal (late,
 * none, invalid, unsure, the reasoner threw) is a verdict with the reason, for the notification and decision log;
 * only cancellation of the run itself propagates.
 */
export async function askReasonerForRecovery(ask: RecoveryAsk): Promise<ProposalVerdict> {
  const timeoutMs = ask.timeoutMs ?? RECOVERY_TIMEOUT_MS;
  const controller = new AbortController();
  const forward = () => controller.abort(ask.signal?.reason);
  if (ask.signal?.aborted) forward();
  ask.signal?.addEventListener("abort", forward, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => {
      // Settle first: a reasoner that rejects on abort must still count as late, not as a failed question.
      resolve("late");
      controller.abort(
        new CandorError(`The reasoner did not propose a recovery within ${timeoutMs} ms.`, ErrorCode.TIMEOUT),
      );
    }, timeoutMs);
  });
  const asked = ask.reasoner.proposeRecovery({
    failure: ask.failure,
    plan: ask.plan,
    registry: ask.registry,
    signal: controller.signal,
  });
  // Once the limit has passed nobody awaits `asked`; its eventual rejection must not become an unhandled one.
  asked.catch(() => undefined);
  try {
    const answer = await Promise.race([asked, late]);
    if (answer === "late")
      return { ok: false, reason: `The ${ask.reasoner.kind} reasoner did not answer within ${timeoutMs / 1000} s.` };
    if (answer === null)
      return { ok: false, reason: `The ${ask.reasoner.kind} reasoner has no proposal for this failure.` };
    return validateProposal(answer, ask.failure, ask.plan, ask.registry, ask.revisionNumber, ask.feedback);
  } catch (e) {
    if (ask.signal?.aborted) throw e;
    return {
      ok: false,
      reason: `Asking the ${ask.reasoner.kind} reasoner failed: ${e instanceof Error ? e.message : String(e)}.`,
    };
  } finally {
    clearTimeout(timer);
    ask.signal?.removeEventListener("abort", forward);
  }
}
