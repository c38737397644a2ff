import { randomBytes } from "node:crypto";
import { z } from "zod";
import { Understanding } from "./understanding.js";
import { AppliedAdjustment } from "./reflection.js";

export const StepStatus = z.enum(["pending", "running", "done", "failed", "skipped"]);
export type StepStatus = z.infer<typeof StepStatus>;

/**
 * When a step runs, evaluated once its dependencies are settled (seed 002 StepCondition).
 * `success` (the default): every dependency succeeded. `failure`: at least one dependency failed or was skipped.
 * `always`: whatever happened. `expression`: a safe expression over earlier results (see planning/condition.ts).
 */
export const StepCondition = z.object({
  type: z.enum(["success", "failure", "always", "expression"]),
  expression: z.string().nullable().default(null),
});
export type StepCondition = z.infer<typeof StepCondition>;

/** The step's own retry policy: attempts inside the worker before the failure goes to replanning. */
export const RetryPolicy = z.object({
  maxAttempts: z.number().int().min(1).max(10).default(2),
  /** Wait before attempt n+1 is backoffMs[n-1] (the last value repeats). */
  backoffMs: z.array(z.number().int().min(0)).default([200]),
});
export type RetryPolicy = z.infer<typeof RetryPolicy>;

export const Estimates = z.object({
  durationMs: z.number().min(0).default(1000),
  cost: z.number().min(0).default(0),
});
export type Estimates = z.infer<typeof Estimates>;

/** An optional input a step ran without, and why it was missing (shown with the step's result and the answer). */
export const MissingInput = z.object({
  /** The input's name (an output name the step's tool consumes). */
  input: z.string(),
  /** The step that was to provide it; null when no step of the plan provides it. */
  from: z.string().nullable(),
  /** Why it is missing, in plain language (e.g. "skipped by a person after it failed: …"). */
  reason: z.string(),
});
export type MissingInput = z.infer<typeof MissingInput>;

/**
 * What a step is: what it does, with what, after what, and where it came from. Set when the plan is made or
 * revised (understand, a replanning strategy, a person's guidance), never by running it. Stored in the state's
 * `plan`; its run-state is stored apart, in `runs` (see `StepRun`, `planView`).
 */
export const StepDefinition = z.object({
  id: z
    .string()
    .min(1)
    .regex(/^[A-Za-z0-9_.-]+$/, "step ids use letters, digits, '_', '-', '.'"),
  description: z.string().min(1),
  /** Worker type that runs the step; it decides which tools the step may touch. */
  workerType: z.string().min(1),
  /** Tools the step may use (the first is the one a rules worker calls). Intersected with the worker's grant. */
  tools: z.array(z.string()).default([]),
  params: z.record(z.string(), z.unknown()).default({}),
  dependsOn: z.array(z.string()).default([]),
  condition: StepCondition.default({ type: "success", expression: null }),
  retry: RetryPolicy.default({ maxAttempts: 2, backoffMs: [200] }),
  /** Per-attempt time limit; the call is aborted through its AbortSignal when it passes. */
  timeoutMs: z.number().int().positive().default(30_000),
  /** Names of what the step produces; dependents receive them as inputs. */
  expectedOutputs: z.array(z.string()).default([]),
  estimates: Estimates.default({ durationMs: 1000, cost: 0 }),
  /** Position in the plan (seed 002 `order`); dependencies must come earlier. */
  order: z.number().int().min(0).default(0),
  /** Worker types that already failed this step's lineage: RETRY_DIFFERENT_AGENT never picks them again. */
  failedWorkers: z.array(z.string()).default([]),
  /** The step this one replaces (after a retry, workaround or decomposition), for the report and loop guards. */
  replaces: z.string().nullable().default(null),
  /** Every step id this one descends from through replacements, oldest first (failure counts follow it). */
  lineage: z.array(z.string()).default([]),
});
export type StepDefinition = z.infer<typeof StepDefinition>;

/**
 * What happened to a step in this run: written by execute, the worker and the strategies as it runs, stored in
 * the state's `runs`, apart from its definition, so a pass that only runs steps writes only their run-state.
 */
export const StepRun = z.object({
  status: StepStatus.default("pending"),
  result: z.unknown().nullable().default(null),
  /** Attempts made by the worker in the latest dispatch. */
  attempts: z.number().int().min(0).default(0),
  /** How many times execute has dispatched the step (re-runs after ADJUST_PARAMETERS count too). */
  dispatches: z.number().int().min(0).default(0),
  /** Why the step was skipped, when it was, in plain language. */
  skipReason: z.string().nullable().default(null),
  /**
   * Why it was skipped, as data: given up after failing, a dependency's result is missing, or its condition
   * was false (not needed). Only the last is not a gap in the answer.
   */
  skipCause: z.enum(["failed", "dependency_failed", "condition_false"]).nullable().default(null),
  /** Optional inputs its latest dispatch ran without (set when it is dispatched; empty when it had them all). */
  missingInputs: z.array(MissingInput).default([]),
  /** What its result does not cover (a cut read, a binary file), named: a real result, but not a whole one. */
  limits: z.array(z.string()).default([]),
});
export type StepRun = z.infer<typeof StepRun>;

/**
 * A step as code reads it: its definition joined with its run-state (`planView`). Every function over a plan
 * takes this view; only the state stores the two apart.
 */
export const TaskStep = StepDefinition.extend(StepRun.shape);
export type TaskStep = z.infer<typeof TaskStep>;
export type TaskStepInput = z.input<typeof TaskStep>;

/**
 * A new plan's id: random, so each plan made is told apart in the decision log, across threads and databases.
 * A hash of the request repeated for every run of the same request and mixed them up in `logs --plan`; the same
 * request still gives the same plan content (INV-PLAN-001 is about content, not ids).
 */
export function newPlanId(): string {
  return `plan-${randomBytes(6).toString("hex")}`;
}

export const Plan = z.object({
  planId: z.string().min(1),
  objective: z.string().min(1),
  contextSummary: z.string().default(""),
  steps: z.array(TaskStep).min(1, "a plan needs at least one step"),
  /** 0..1: how likely the planner thinks the plan is to succeed as written. */
  confidence: z.number().min(0).max(1),
  /** Why confidence is what it is (shown when a human is asked to approve). */
  confidenceReasons: z.array(z.string()).default([]),
  estimatedDurationMs: z.number().min(0).default(0),
  estimatedCost: z.number().min(0).default(0),
  /** `reactive`: no plan was made; one model-driven `general` step carries the request (src/execution/reactive.ts). */
  createdBy: z.enum(["rules", "llm", "fallback", "human", "reactive"]).default("rules"),
  createdAt: z.string().default(() => new Date().toISOString()),
  /**
   * What the planner understood of the request and how each part is served (see domain/understanding.ts). A plan
   * from a checkpoint written before the record existed gets an empty one (`by: "none"`).
   */
  understanding: Understanding.default(() => Understanding.parse({})),
  /** Adjustments learned from this user's feedback that UNDERSTAND applied to the steps (see reflection/adjustments.ts). */
  learned: z.array(AppliedAdjustment).default([]),
});
export type Plan = z.infer<typeof Plan>;
export type PlanInput = z.input<typeof Plan>;

/**
 * A plan as the state stores it: its steps' definitions, without their run-state (stored in `runs`). Strict: a
 * step written with run-state (`status`, `result`…) is refused, not stripped, so an edit that meant to change
 * what happened to a step is told to write `runs` instead of having its change silently dropped.
 */
export const PlanDefinition = Plan.extend({
  steps: z.array(z.strictObject(StepDefinition.shape)).min(1, "a plan needs at least one step"),
});
export type PlanDefinition = z.infer<typeof PlanDefinition>;

/**
 * The run-state of a plan's steps, by step id, as the state stores it. Tagged with the plan it belongs to: a run
 * written for another plan (a new request on the thread, whose steps reuse the ids) is never read as this one's.
 */
export const PlanRuns = z.object({
  planId: z.string().min(1),
  steps: z.record(z.string(), StepRun),
  /**
   * The run-state of every step of the plan, written with the plan whole (a revision, an edit): it replaces what
   * was there rather than merging into it, so a step a revision dropped leaves nothing behind for an id to find.
   */
  whole: z.boolean().optional(),
});
export type PlanRuns = z.infer<typeof PlanRuns>;

/**
 * The understanding record as a model is asked for it (strict mode: every field required, values as text). The
 * generic checker still reads the request itself: a part the model claims without a step, or meaningful text no
 * part covers, is caught whatever the model says.
 */
export const ModelUnderstanding = z.object({
  parts: z.array(
    z.object({
      text: z.string(),
      description: z.string(),
      kind: z.enum(["task", "exclusion", "constraint"]),
      status: z.enum(["served", "excluded", "unsupported", "not_understood"]),
      stepIds: z.array(z.string()),
      why: z.string().nullable(),
    }),
  ),
  /** `stepIds`: the steps whose tools take the value (as a parameter of that name), so their calls are checked. */
  values: z.array(z.object({ name: z.string(), value: z.string(), source: z.string(), stepIds: z.array(z.string()) })),
  assumptions: z.array(
    z.object({ name: z.string(), value: z.string(), why: z.string(), stepIds: z.array(z.string()) }),
  ),
  changes: z.array(
    z.object({
      name: z.string(),
      from: z.string(),
      to: z.string(),
      source: z.string(),
      why: z.string(),
      stepIds: z.array(z.string()),
    }),
  ),
});
export type ModelUnderstanding = z.infer<typeof ModelUnderstanding>;

/** What a model is asked to produce (strict-mode friendly: nullable, never optional). Converted to Plan. */
export const ModelPlan = z.object({
  objective: z.string(),
  contextSummary: z.string().nullable(),
  confidence: z.number().min(0).max(1).nullable(),
  steps: z
    .array(
      z.object({
        id: z.string(),
        description: z.string(),
        workerType: z.string(),
        tools: z.array(z.string()),
        /**
         * The tool's parameters as a JSON-encoded object (e.g. "{\"city\":\"Lisbon\"}"), or null. A string because
         * json_schema strict mode does not allow free-form objects.
         */
        paramsJson: z.string().nullable(),
        dependsOn: z.array(z.string()),
        expectedOutputs: z.array(z.string()).nullable(),
      }),
    )
    .min(1),
  /** The parts of the request and the steps serving each; null only from models that cannot give it. */
  understanding: ModelUnderstanding.nullable(),
});
export type ModelPlan = z.infer<typeof ModelPlan>;

/** The worker type that runs a reactive request: seed 004's catch-all, granted every tool. */
export const REACTIVE_WORKER = "general";

/** The one step of a reactive run, which the plan view, the report and the decision log show. */
export const REACTIVE_STEP_ID = "reactive";

/**
 * Whether a step is a reactive run's one step: its evidence is every tool's last successful output, not only the
 * outputs it must produce (a count and the report written from it, a flight and the booking of it).
 */
export function isReactiveStep(step: Partial<Pick<TaskStep, "id" | "workerType" | "tools">>): boolean {
  return step.id === REACTIVE_STEP_ID && step.workerType === REACTIVE_WORKER && step.tools?.length === 0;
}

/** One piece of a step's result as an answer shows it: a tool's output (labelled by the tool) or the whole result. */
export interface ResultEntry {
  label: string | null;
  value: unknown;
}

/**
 * A step's result in the pieces an answer shows: a reactive step's result holds every tool's last output by tool
 * (see isReactiveStep), so each is its own piece and none crowds out another (a booking after four searches); any
 * other step's result is one piece.
 */
export function resultEntries(
  step: Partial<Pick<TaskStep, "id" | "workerType" | "tools">>,
  result: unknown,
): ResultEntry[] {
  if (isReactiveStep(step) && result !== null && typeof result === "object" && !Array.isArray(result))
    return Object.entries(result as Record<string, unknown>).map(([label, value]) => ({ label, value }));
  return [{ label: null, value: result }];
}

/** Whether a plan is a reactive run's rather than a planner's. */
export function isReactive(plan: Pick<Plan, "createdBy"> | null | undefined): boolean {
  return plan?.createdBy === "reactive";
}
