import { z } from "zod";
import { newPlanId, Plan, REACTIVE_STEP_ID, REACTIVE_WORKER, TaskStep } from "../domain/plan.js";
import type { Notification } from "../domain/notification.js";
import { Understanding } from "../domain/understanding.js";
import type { PlanningRequest } from "../domain/request.js";
import { CandorError, ErrorCode } from "../errors.js";
import { planWithRules } from "../planning/rules-planner.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { Result } from "../result.js";
import { notification } from "../transparency/notify.js";

/**
 * Reactive mode (seed 004's reactive session): no plan; one `general` worker loop runs the request with every tool
 * the toolkits grant. It is not a second loop: a reactive run is a one-step plan whose step names no tool, so the
 * model-driven worker (src/execution/agent-step.ts) runs it over the `general` worker's whole grant, with the grant
 * check, the approval gate and the effect ledger of any model-driven step. Its plan is marked `createdBy:
 * "reactive"` so the plan view, the notification and the report say "reactive mode" instead of showing a plan
 * nobody made.
 */

/** Why a run is reactive: the user asked for it (`--reactive`, `settings.planner: false`), or planning failed. */
export const ReactiveTrigger = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("asked") }),
  z.object({ kind: z.literal("planning_failed"), why: z.string().min(1) }),
]);
export type ReactiveTrigger = z.infer<typeof ReactiveTrigger>;

/**
 * Confidence of a reactive run: nobody rated a plan, so neither high nor low. At the default approval threshold
 * (0.5) it runs without asking; a user who set a higher threshold is asked before it runs, as for any plan.
 */
const REACTIVE_CONFIDENCE = 0.5;

/**
 * Planning errors that mean "no usable plan came out" — the fallback's cue. A refusal (a budget the plan cannot
 * meet, an invalid request, a bad configuration, storage) is not: reactive mode must not get around it.
 */
const PLANNING_FAILURES: readonly ErrorCode[] = [
  ErrorCode.NO_VALID_PLAN,
  ErrorCode.MODEL_OUTPUT,
  ErrorCode.PLAN_INVALID,
  ErrorCode.PLAN_CYCLE,
  ErrorCode.PLAN_ORDER,
  ErrorCode.PLAN_MISSING_DEPENDENCY,
  ErrorCode.PLAN_UNKNOWN_REFERENCE,
];

/** One sentence on why the run is reactive, for the plan's summary, the report and the decision log. */
function reactiveReason(trigger: ReactiveTrigger): string {
  return trigger.kind === "asked"
    ? "Reactive mode was asked for (--reactive or settings.planner false): no plan was made."
    : `Planning failed: ${withoutFinalStop(trigger.why)}; running in reactive mode instead of a plan.`;
}

/** What the offline reader makes of a request a reactive run is given: used to check the run, not to run it. */
export interface OfflineReading {
  /** What the run must produce before it is done (see reactiveReading). */
  requires: string[];
  /** The values the request gives and the changes made to them (a conversion), for the reactive step. */
  values: Understanding["values"];
  changes: Understanding["changes"];
}

const NOTHING_READ: OfflineReading = { requires: [], values: [], changes: [] };

/**
 * What the offline reader makes of a request a reactive run is given. Nobody planned the run, but the request still
 * says what it asks for and with which values:
 * - `requires`: what the reader's plan ends in (the outputs no other step of that plan consumes: an itinerary, a
 *   booking, a report). Without it, a model that stopped after its first search, or said "done", would have done
 *   the request;
 * - the values read from the request (a report's title, a file) and the changes made to them (a budget converted),
 *   given to the reactive step as any step's recorded values are: a call that leaves one out gets it, named.
 * Nothing when the reader finds no tool for the request: then one successful call is the evidence. The reader's plan
 * is used for nothing else: the model chooses its calls.
 */
export function reactiveReading(request: PlanningRequest, registry: ToolRegistry): OfflineReading {
  let plan: Plan;
  try {
    plan = planWithRules(request, registry);
  } catch (e) {
    if (CandorError.isInstance(e)) return NOTHING_READ;
    throw e;
  }
  const consumed = new Set(plan.steps.flatMap((s) => s.dependsOn));
  const mine = { stepIds: [REACTIVE_STEP_ID] };
  return {
    requires: [...new Set(plan.steps.filter((s) => !consumed.has(s.id)).flatMap((s) => s.expectedOutputs))],
    values: plan.understanding.values.map((v) => ({ ...v, ...mine })),
    changes: plan.understanding.changes.map((c) => ({ ...c, ...mine })),
  };
}

/**
 * The reactive run as a plan: one model-driven step on the `general` worker that carries the whole request, names
 * no tool (so its loop gets the worker's whole grant), must produce what the request asks for and uses the values it
 * gives (see reactiveReading).
 */
export function reactivePlan(
  request: PlanningRequest,
  trigger: ReactiveTrigger,
  read: OfflineReading = NOTHING_READ,
): Plan {
  const step = TaskStep.parse({
    id: REACTIVE_STEP_ID,
    description: request.userIntent,
    workerType: REACTIVE_WORKER,
    tools: [],
    expectedOutputs: [...read.requires],
    order: 1,
  });
  return Plan.parse({
    planId: newPlanId(),
    objective: request.userIntent,
    contextSummary: reactiveReason(trigger),
    steps: [step],
    confidence: REACTIVE_CONFIDENCE,
    confidenceReasons: [`Reactive mode: no planner rated a plan, so confidence starts at ${REACTIVE_CONFIDENCE}.`],
    estimatedDurationMs: step.estimates.durationMs,
    estimatedCost: 0,
    createdBy: "reactive",
    understanding: Understanding.parse({ values: read.values, changes: read.changes, by: "rules" }),
  });
}

/** What planning gave UNDERSTAND: a plan, or the coded error it threw. */
export type PlanningOutcome = { kind: "plan"; plan: Plan } | { kind: "error"; error: CandorError };

/**
 * Whether planning's outcome sends the run to reactive mode, and why. It does when a worker model is configured
 * and planning failed: the planner threw a planning failure (not a refusal), or every planner failed and seed
 * 004's one-step fallback plan came back (a plan in name only: it names no tool). Without a worker model nothing
 * changes, so a run without a model behaves as it always has.
 */
export function reactiveFallback(outcome: PlanningOutcome, hasWorkerModel: boolean): Result<ReactiveTrigger> {
  if (!hasWorkerModel) return { ok: false, reason: "no worker model is configured, so reactive mode cannot run" };
  if (outcome.kind === "error") {
    const { error } = outcome;
    return PLANNING_FAILURES.includes(error.code)
      ? { ok: true, value: { kind: "planning_failed", why: error.message } }
      : {
          ok: false,
          reason: `${error.code} is a refusal, not a planning failure: reactive mode must not get around it`,
        };
  }
  if (outcome.plan.createdBy === "fallback") {
    const why = outcome.plan.confidenceReasons.join(" ").trim() || "no planner produced a usable plan";
    return { ok: true, value: { kind: "planning_failed", why } };
  }
  return { ok: false, reason: "planning produced a plan" };
}

/**
 * Refuses reactive mode when there is no model to run its loop: the user's choice cannot be honoured, and
 * planning instead would do something other than what was asked.
 */
export function reactiveNeedsModel(): CandorError {
  return new CandorError(
    "Reactive mode (--reactive, or settings.planner false) needs a chat model to run its worker loop, and none is configured, so nothing was run. Pass --model <model> with OPENAI_API_KEY set (OPENAI_BASE_URL for an OpenAI-compatible server), or drop --reactive / settings.planner false to plan the request.",
    ErrorCode.CONFIGURATION,
  );
}

/**
 * The reactive run announced in place of a plan: why, what runs it, and what still guards it; `notes` (settings
 * from the assistant, a confidence below --abort-below) as a plan's notes are.
 */
export function reactiveNotification(
  plan: Plan,
  trigger: ReactiveTrigger,
  toolCount: number,
  notes: readonly string[] = [],
): Notification {
  const title =
    trigger.kind === "asked"
      ? "Reactive mode: no plan; one general worker runs the request"
      : `Planning failed: ${withoutFinalStop(trigger.why)}; running in reactive mode`;
  return notification({
    severity: trigger.kind === "asked" && notes.length === 0 ? "INFO" : "WARNING",
    kind: "plan",
    title,
    message: [
      `Run ${plan.planId}: the ${REACTIVE_WORKER} worker's model works on the request with every tool (${toolCount}) and no plan.`,
      "A tool that needs approval still asks first, and a side effect is made at most once.",
      ...requirementLine(plan),
      ...notes,
    ].join("\n"),
  });
}

/** What the run must produce to be done, read offline from the request, said before it runs. */
function requirementLine(plan: Plan): string[] {
  const requires = plan.steps[0]?.expectedOutputs ?? [];
  // Said too when nothing could be read: the run is then checked only for a successful call, and the user should know.
  return requires.length === 0
    ? [
        "The offline reader found no tool for the request, so what it asks for is not checked: the run is done once a tool call succeeds.",
      ]
    : [
        `It is done only when successful tool calls produce ${requires.join(", ")} (what the request asks for, as the offline reader reads it); the model's words do not count.`,
      ];
}

function withoutFinalStop(text: string): string {
  return text.trim().replace(/\.+$/, "");
}
