import type { Decision } from "../transparency/decision-log.js";

/*
 * What the help text names (flag bounds, log operations), kept apart from the flag schemas in options.ts: `candor
 * --help` builds the command tree from these alone, so it loads neither zod nor the agent (issue 25, fast start).
 */

/** The bounds of the numeric flags, said in their messages and in docs/cli.md. */
export const FLAG_BOUNDS = {
  maxRevisions: { min: 0, max: 20 },
  limit: { min: 1, max: 10_000 },
  /** The N of `--fault tool=kind*N`. */
  faultCalls: { min: 1, max: 1000 },
  tokenBudget: { min: 1, max: 999_999_999 },
} as const;

/** Every operation the decision log records; `satisfies` and the check below keep it in step with `Decision`. */
export const LOG_OPERATIONS = [
  "plan",
  "approval",
  "route",
  "dispatch",
  "step_result",
  "classify",
  "strategy",
  "revision",
  "escalation",
  "human_decision",
  "synthesize",
  "reflect",
  "report",
  "model_call",
] as const satisfies readonly Decision["operation"][];
const everyOperation: Exclude<Decision["operation"], (typeof LOG_OPERATIONS)[number]> extends never ? true : never =
  true;
void everyOperation;
