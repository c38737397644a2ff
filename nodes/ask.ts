import { interrupt } from "@langchain/langgraph";
import type { HumanDecision, InterruptRequest } from "../src/domain/approval.js";
import { interruptPayload, parseDecision } from "../src/replanning/human-decision.js";
import type { Result } from "../src/result.js";

/**
 * Asks a person `request` with LangGraph's `interrupt()` until an answer parses and `accept` takes it; a malformed
 * or refused answer is asked again with the reason in the payload, so the person sees what to fix. Each ask's
 * answer is stored with the thread, so a node that re-runs on resume replays the same answers and stops where it
 * stopped. Call it only where nothing before it in the node has side effects: the node re-runs from its top.
 */
export function askUntilAccepted<T>(request: InterruptRequest, accept: (decision: HumanDecision) => Result<T>): T {
  let payload = interruptPayload(request);
  // Each pass either gets the next stored resume value or throws the interrupt, so this loop always ends.
  for (;;) {
    const parsed = parseDecision(interrupt(payload), request);
    const taken: Result<T> = parsed.ok ? accept(parsed.decision) : { ok: false, reason: parsed.error };
    if (taken.ok) return taken.value;
    payload = interruptPayload(request, taken.reason);
  }
}
