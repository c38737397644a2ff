import { FailureClass, type FeedbackType } from "../domain/feedback.js";
import { CandorError, ErrorCode } from "../errors.js";
import type { FailureClassifier } from "../tools/types.js";

/**
 * Rule-based failure classification (seed 000 scenario 3). Known classes never need a model: coded errors are
 * decided by their code, then the tool's own domain classifier (ToolSpec.classifyFailure: "no seats left" in a
 * toolkit that sells seats), then generic wording. Order matters: the more specific classes come first ("fully
 * booked" is a resource problem, not an unavailable agent; "budget exceeded" is a constraint).
 */
const RULES: readonly [FailureClass, RegExp][] = [
  ["dependency_failed", /\bdependenc(y|ies)\b.*\bfail/i],
  [
    "constraint_violated",
    /exceed(s|ed)?\s+(the\s+)?(budget|limit|maximum|cap|quota)|over\s+budget|budget\s+(exceeded|violation)|constraint\s+violat|more than the (budget|limit)/i,
  ],
  [
    "resource_unavailable",
    /fully booked|sold out|no availability|not available|no (results?|vacanc(y|ies))\b|out of stock|booked up|no .* under \$?\d/i,
  ],
  ["timeout", /timed?\s*-?out|timeout|ETIMEDOUT|ESOCKETTIMEDOUT|\b504\b|gateway time|deadline exceeded|took too long/i],
  [
    "agent_unavailable",
    /returned (garbled|empty|invalid) output|does not match its schema|service unavailable|agent unavailable|unavailable|\b50[23]\b|ECONNREFUSED|ECONNRESET|EAI_AGAIN|not responding|overloaded|rate.?limit|\b429\b|internal (server )?error|\b500\b/i,
  ],
  [
    "too_complex",
    /too complex|too (large|big|long) to|cannot be done in one step|decompose|too many (items|sub-?tasks)/i,
  ],
  ["wrong_tool", /not granted|unknown tool|no tool (can|is|was)|not allowed to use|cannot use tool/i],
  ["policy_blocked", /denied|forbidden|\b403\b|policy|not permitted|blocked by|requires approval/i],
  [
    "invalid_parameters",
    /invalid (param|arg|input|value)|validation (error|failed)|expected .* received|is required|must be|\b400\b|bad request|unknown (location|place|address)/i,
  ],
];

const BY_CODE: Partial<Record<string, FailureClass>> = {
  [ErrorCode.TIMEOUT]: "timeout",
  [ErrorCode.CONSTRAINT_VIOLATION]: "constraint_violated",
  [ErrorCode.RESOURCE_UNAVAILABLE]: "resource_unavailable",
  [ErrorCode.TOOL_NOT_GRANTED]: "wrong_tool",
};

/** Classifies an error message (and the thrown value when there is one), with the tool's own classifier if any. */
export function classifyFailure(message: string, error?: unknown, own?: FailureClassifier): FailureClass {
  if (CandorError.isInstance(error)) {
    const byCode = BY_CODE[error.code];
    if (byCode) return byCode;
    // A tool that already knows what went wrong (TOOL_FAILED "already classified") says so in its details.
    const declared = FailureClass.safeParse(error.details.failureClass);
    if (declared.success) return declared.data;
  }
  const domain = own?.(message, error);
  if (domain) return FailureClass.parse(domain);
  if (isZodError(error)) return "invalid_parameters";
  for (const [cls, pattern] of RULES) if (pattern.test(message)) return cls;
  return "unknown";
}

/** The feedback type a failure class is reported as. */
export function feedbackTypeFor(cls: FailureClass): FeedbackType {
  if (cls === "constraint_violated") return "CONSTRAINT_VIOLATION";
  if (cls === "dependency_failed") return "DEPENDENCY_FAILURE";
  return "FAILURE";
}

/** Transient classes are worth retrying with the same call; the others would fail the same way again. */
export function isTransient(cls: FailureClass): boolean {
  return cls === "timeout" || cls === "agent_unavailable" || cls === "unknown";
}

function isZodError(e: unknown): boolean {
  return (
    typeof e === "object" &&
    e !== null &&
    (e as { name?: unknown }).name === "ZodError" &&
    Array.isArray((e as { issues?: unknown }).issues)
  );
}
