import { HumanDecision, type InterruptRequest } from "../domain/approval.js";

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
