import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import type { ExecutionFeedback } from "../domain/feedback.js";

/*
 * Candor's tools are not LangChain tools: a step's call goes through runStep (grant, arguments, time limit, retries,
 * the effect ledger), and only there is its failure class known. LangChain's callbacks never hear of it, so runStep
 * tells the callback handlers of the run it is part of through this one hook. The handlers are read from LangChain's
 * own async-local run context, so nothing has to carry a tracer down to the step; without such a handler (tracing
 * off, a step run outside a graph) the hook costs one lookup and does nothing.
 */

/** One call of a tool as runStep settled it: its feedback (tool, outcome, failure class) and when it ran. */
export interface ToolCallReport {
  feedback: ExecutionFeedback;
  /** Milliseconds since the epoch, with the fraction the monotonic clock gives (`clockMs`). */
  startedAt: number;
  endedAt: number;
}

/** A callback handler that wants to hear of Candor's tool calls (CandorTraceHandler is one). */
export interface ToolCallObserver {
  /** `parentRunId`: the LangChain run (a node or a task) the call was made in; undefined outside any run. */
  handleCandorToolCall(report: ToolCallReport, parentRunId: string | undefined): void;
}

/** Wall-clock milliseconds on the monotonic clock OpenTelemetry's SDK also reads, so spans line up with their parent. */
export function clockMs(): number {
  return performance.timeOrigin + performance.now();
}

function isObserver(handler: unknown): handler is ToolCallObserver {
  return typeof (handler as Partial<ToolCallObserver> | null)?.handleCandorToolCall === "function";
}

/** The callbacks of a run's config: a manager inside a run, an array when a caller passed handlers directly. */
interface RunCallbacks {
  handlers?: unknown[];
  getParentRunId?: () => string | undefined;
}

/**
 * Tells the observers among the current run's callback handlers that a tool call settled. Never throws: an observer's
 * failure must not change the outcome of the step it reports on.
 */
export function reportToolCall(feedback: ExecutionFeedback, startedAt: number): void {
  if (feedback.tool === null) return;
  const config = AsyncLocalStorageProviderSingleton.getRunnableConfig() as { callbacks?: unknown } | undefined;
  const callbacks = config?.callbacks as RunCallbacks | unknown[] | undefined;
  if (!callbacks) return;
  const handlers = Array.isArray(callbacks) ? callbacks : (callbacks.handlers ?? []);
  const observers = handlers.filter(isObserver);
  if (observers.length === 0) return;
  const parentRunId = Array.isArray(callbacks) ? undefined : callbacks.getParentRunId?.();
  const report = { feedback, startedAt, endedAt: clockMs() };
  for (const observer of observers) {
    try {
      observer.handleCandorToolCall(report, parentRunId);
    } catch {
      // A broken observer loses its own record of this call; the step's outcome stands as runStep decided it.
    }
  }
}
