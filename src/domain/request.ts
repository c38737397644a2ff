import { z } from "zod";

/** Limits a plan must respect (seed 002 POST-PLAN-004). All optional: absent means unlimited. */
export const Constraints = z.object({
  /** Most steps a plan may have. */
  maxSteps: z.number().int().positive().optional(),
  /** Wall-clock budget for the whole plan, in ms (compared with the plan's estimate). */
  timeoutMs: z.number().int().positive().optional(),
  /** Money budget for what the plan books or buys (same unit as tool costs; USD in the travel demo). */
  budget: z.number().positive().optional(),
  /**
   * Seed 002's token budget: the most model tokens (input and output) the run may use. Named apart from `budget`,
   * which stays the money the plan may spend. Checked against the plan's estimate before it runs (PRE-PLAN-003)
   * and before each model call; a call that would go over it asks a person to raise it or stop.
   */
  tokenBudget: z.number().int().positive().optional(),
  priority: z.enum(["low", "medium", "high"]).optional(),
});
export type Constraints = z.infer<typeof Constraints>;

/**
 * The longest request read, in characters. A request is a few sentences; a document to work on belongs in a file the
 * request names. Without a bound, 100,000 characters of pasted text were read word by word as places and dates and
 * echoed back to the terminal in every line that quotes the request (3 MB of output).
 */
export const MAX_REQUEST_CHARS = 20_000;

/** What the user asked for (seed 002 PlanningRequest; systemContext comes from the tool registry instead). */
export const PlanningRequest = z.object({
  userIntent: z
    .string()
    .trim()
    .min(1, "the request is empty: say what you want done")
    .max(MAX_REQUEST_CHARS, {
      error: (issue) =>
        `the request is ${(issue.input as string).length.toLocaleString("en-US")} characters long, over the ${MAX_REQUEST_CHARS.toLocaleString("en-US")} a request may have: put the long text in a file and name the file in the request (for example: summarize notes.txt)`,
    }),
  userContext: z
    .object({
      userId: z.string().min(1).default("default"),
      sessionId: z.string().optional(),
      preferences: z.record(z.string(), z.unknown()).default({}),
    })
    .default({ userId: "default", preferences: {} }),
  constraints: Constraints.default({}),
});
export type PlanningRequest = z.infer<typeof PlanningRequest>;
export type PlanningRequestInput = z.input<typeof PlanningRequest>;

/** Per-run settings that must survive a restart, so they live in graph state (not in process memory). */
export const RunSettings = z.object({
  /** Revisions allowed before the run escalates to a human (seed 000 MAX_REVISIONS). */
  maxRevisions: z.number().int().min(0).default(3),
  /** Plans whose confidence is below this wait for human approval before any step runs. */
  approvalThreshold: z.number().min(0).max(1).default(0.5),
  /** After revisions, a confidence below this stops the run (seed 000 scenario 12). */
  abortBelow: z.number().min(0).max(1).default(0.3),
  /** A step (with its replacements) that failed this many times escalates to a human (scenario 16). */
  maxStepFailures: z.number().int().min(1).default(3),
  /**
   * False: reactive mode — no plan; one `general` worker loop runs the request with every tool (needs a worker
   * model). True (the default): UNDERSTAND plans, and falls back to reactive mode only when planning fails.
   */
  planner: z.boolean().default(true),
});
export type RunSettings = z.infer<typeof RunSettings>;
export type RunSettingsInput = z.input<typeof RunSettings>;
