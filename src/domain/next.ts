import { z } from "zod";
import { CandorError, ErrorCode } from "../errors.js";
import { InterruptRequest } from "./approval.js";
import { FailureClass } from "./feedback.js";
import type { Plan, PlanDefinition, PlanRuns } from "./plan.js";
import { PlanChanges } from "./plan-changes.js";
import { RunStatus } from "./report.js";
import { PlanRevision, StrategyType } from "./revision.js";

/**
 * What the run does next: the one value the routers switch on (STYLE 13), set by the node that decides it
 * (understand, select_strategy, human_interrupt, replan_with_guidance, a strategy node, reflect or finalize). It replaced
 * three fields routers had to read together with `status` (`pendingStrategy`, `guidance`, and `pendingInterrupt`
 * as a flag). Each variant carries exactly what the node it leads to needs.
 */
export const Next = z.discriminatedUnion("kind", [
  /** Run the plan: what is ready runs, results are judged, failed steps are recovered — the plan's steps decide. */
  z.object({ kind: z.literal("execute") }),
  /** A person decides. What they are asked is the state's `pendingInterrupt`, kept once (a plan approval carries the whole plan). */
  z.object({ kind: z.literal("ask") }),
  /** Choose a recovery for the next failed step (a person answered an escalation with a plain retry). */
  z.object({ kind: z.literal("choose_recovery") }),
  /** Apply the strategy select_strategy chose, with the revision it built when it tested it (computed once). */
  z.object({
    kind: z.literal("recover"),
    strategy: StrategyType,
    taskId: z.string(),
    failureClass: FailureClass,
    reasoning: z.string(),
    /** The revision, and what it changes in the plan (not the whole revised plan: see PlanChanges). */
    proposed: z.object({ changes: PlanChanges, revision: PlanRevision }),
  }),
  /**
   * Plan the unfinished work again with a person's guidance (an approval or escalation answered with `replan`);
   * `request` is the question they answered, asked again if no usable plan comes out.
   */
  z.object({
    kind: z.literal("replan"),
    taskId: z.string().nullable(),
    text: z.string(),
    request: InterruptRequest,
  }),
  /** The run ends: nothing more runs. Why is the state's `failureReason` (with `status`), said once. */
  z.object({ kind: z.literal("end") }),
]);
export type Next = z.infer<typeof Next>;
export type NextKind = Next["kind"];

/** Statuses a run ends with (set by the run's end: `finalizeRun`). */
const ENDED_STATUSES: ReadonlySet<RunStatus> = new Set(["completed", "partial", "failed", "rejected", "aborted"]);

/** What a run's `next` is read from when it is not set: the fields every build of the state has. */
export interface NextFields {
  status: RunStatus;
  plan: Plan | PlanDefinition | null;
  runs?: PlanRuns | null;
  next: Next | null;
}

/**
 * Where a run goes when an edit recorded a person's decision by clearing `pendingInterrupt` as human_interrupt
 * (Studio's fork at an approval), without saying `next`: as the edited `status` says. An ended status ends, a run
 * put back to `replanning` chooses a recovery for its failed step, anything else runs the plan.
 */
export function nextAfterEdit(status: RunStatus): Next {
  if (ENDED_STATUSES.has(status)) return { kind: "end" };
  return status === "replanning" ? { kind: "choose_recovery" } : { kind: "execute" };
}

/**
 * The state's `next`. It is null only before UNDERSTAND made a plan (nothing can run: the run ends), or in a
 * checkpoint written by a build of this 0.x package from before the field existed. Such a run that ended ends; one
 * that did not is not continued from a guess at where it was: the error says so.
 *
 * @throws CandorError UNSUPPORTED_CHECKPOINT for an unfinished thread with a plan and no `next`.
 */
export function nextOf(s: NextFields): Next {
  if (s.next) return s.next;
  if (!s.plan || ENDED_STATUSES.has(s.status)) return { kind: "end" };
  throw new CandorError(
    `This thread was checkpointed by an earlier build of Candor (its state has a plan but no \`next\`), which this build cannot continue. Its checkpoints can still be read (candor history, candor report); to run its request again, start a new thread with candor run.`,
    ErrorCode.UNSUPPORTED_CHECKPOINT,
  );
}
