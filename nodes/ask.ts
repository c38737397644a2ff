import { interrupt } from "@langchain/langgraph";
import type { HumanDecision, InterruptRequest } from "../src/domain/approval.js";
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
