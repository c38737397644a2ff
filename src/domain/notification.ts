import { z } from "zod";

export const Severity = z.enum(["INFO", "WARNING", "ERROR"]);
export type Severity = z.infer<typeof Severity>;

/**
 * A message for the person watching the run (seed 000 scenarios 2, 17, 18). Emitted as a `custom` stream event
 * the moment it happens and appended to state.
 */
export const Notification = z.object({
  id: z.string(),
  at: z.string(),
  severity: Severity,
  kind: z.enum([
    "plan",
    "step_started",
    "step_failed",
    "step_succeeded",
    "strategy",
    "escalation",
    "approval",
    "progress",
    "outcome",
  ]),
  taskId: z.string().nullable().default(null),
  /** One plain-language line: what happened. */
  title: z.string(),
  /** Plain-language detail: why, what happens now, expected impact. */
  message: z.string().default(""),
  errorSummary: z.string().nullable().default(null),
  recoveryStrategy: z.string().nullable().default(null),
  estimatedDelay: z.string().nullable().default(null),
  /** Where the full details are: a CLI command or log file a developer can open. */
  details: z.string().nullable().default(null),
});
export type Notification = z.infer<typeof Notification>;
export type NotificationInput = z.input<typeof Notification>;

/** Progress after each finished step (seed 000 scenario 17). */
export const Progress = z.object({
  at: z.string(),
  taskId: z.string().nullable(),
  status: z.enum(["SUCCESS", "FAILURE", "SKIPPED"]).nullable(),
  /** Steps settled: done, or skipped (counted so the percentage can reach 100). */
  done: z.number().int().min(0),
  /** Of those, how many were skipped rather than done. */
  skipped: z.number().int().min(0).default(0),
  total: z.number().int().min(0),
  percent: z.number().min(0).max(100),
  /** Estimated time left, from the remaining steps' estimates and the observed speed so far. */
  etaMs: z.number().min(0),
  /** The run's model tokens and their cost so far; absent when no model was called. */
  tokens: z
    .object({
      calls: z.number().int(),
      inputTokens: z.number().int(),
      outputTokens: z.number().int(),
      costUsd: z.number(),
    })
    .optional(),
});
export type Progress = z.infer<typeof Progress>;

/** The documented schema of Candor's `custom` stream events. */
export const CandorEvent = z.discriminatedUnion("type", [
  z.object({ type: z.literal("notification"), notification: Notification }),
  z.object({ type: z.literal("progress"), progress: Progress }),
]);
export type CandorEvent = z.infer<typeof CandorEvent>;
