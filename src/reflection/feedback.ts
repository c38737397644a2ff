import { z } from "zod";
import { RunStatus, TERMINAL_STATUSES } from "../domain/report.js";
import { CandorError, ErrorCode } from "../errors.js";
import {
  recordFeedback,
  type FeedbackInput,
  type JudgedRun,
  type LearningDeps,
  type LearningOutcome,
} from "./learn.js";

/** What feedback needs of a graph: its state at a thread's head (any compiled Candor graph has it). */
export interface ThreadStateReader {
  getState(config: { configurable: { thread_id: string } }): Promise<{ values: unknown; next: readonly string[] }>;
}

/** The fields of the agent's state feedback reads; parsed, never cast, since a checkpoint may be old or foreign. */
const FinishedValues = z.object({
  request: z.object({ userIntent: z.string(), userContext: z.object({ userId: z.string() }) }),
  plan: z.object({ planId: z.string() }).nullable(),
  status: RunStatus,
  failureReason: z.string().nullable().optional(),
});

/**
 * The finished run a thread holds, as feedback addresses it: its user and plan.
 * @throws CandorError UNKNOWN_THREAD when the graph has no such thread; INVALID_REQUEST when it has not finished
 *   (feedback judges an answer, so there must be one) or made no plan.
 */
export async function judgedRunOf(graph: ThreadStateReader, threadId: string): Promise<JudgedRun> {
  const snapshot = await graph.getState({ configurable: { thread_id: threadId } });
  const parsed = FinishedValues.safeParse(snapshot.values);
  if (!parsed.success)
    throw new CandorError(
      `There is no run "${threadId}" to give feedback on: the thread has no state. Check the id (candor threads lists them).`,
      ErrorCode.UNKNOWN_THREAD,
    );
  const v = parsed.data;
  if (snapshot.next.length > 0 || !TERMINAL_STATUSES.includes(v.status))
    throw new CandorError(
      `Run ${threadId} has not finished (status ${v.status}): feedback judges a finished run's answer. Finish it first (candor resume ${threadId}), then give feedback.`,
      ErrorCode.INVALID_REQUEST,
    );
  if (!v.plan)
    throw new CandorError(
      `Run ${threadId} made no plan (${v.failureReason ?? v.status}), so there is no answer to judge.`,
      ErrorCode.INVALID_REQUEST,
    );
  return { threadId, userId: v.request.userContext.userId, planId: v.plan.planId };
}

/**
 * The library's `candor feedback`: judges the finished run on `threadId` of `graph` (a compiled Candor graph) and
 * learns from it (see `recordFeedback`). `deps.store` must be the store the graph was compiled with.
 */
export async function giveFeedback(
  graph: ThreadStateReader,
  threadId: string,
  input: FeedbackInput,
  deps: LearningDeps,
): Promise<LearningOutcome> {
  return recordFeedback(deps, await judgedRunOf(graph, threadId), input);
}
