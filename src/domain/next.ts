import { z } from "zod";
import { ApprovalRecord, InterruptRequest, planApprovalRequest } from "./approval.js";
import { FailureClass } from "./feedback.js";
import { Plan, type PlanDefinition, type PlanRuns } from "./plan.js";
import { planOf } from "./plan-state.js";
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
    proposed: z.object({ plan: Plan, revision: PlanRevision }),
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

/** The public fields `legacyNext` reads: all still in the state. */
export interface LegacyFields {
  status: RunStatus;
  plan: Plan | PlanDefinition | null;
  runs?: PlanRuns | null;
  pendingInterrupt: InterruptRequest | null;
  approval: ApprovalRecord | null;
  settings: { approvalThreshold: number };
}

/**
 * `next` as a checkpoint written before the field existed implies it. Such a thread has `next: null` (the
 * default) and, after the upgrade, no `pendingStrategy` or `guidance` (the state no longer has those channels,
 * so LangGraph does not load them); it is derived from what is left, in the order the old routers read it:
 * an ended status or no plan ends; a request shown to a person asks; a person's just-given `replan` (status
 * `replanning` with the replan recorded as the latest `approval`) replans — its question rebuilt for a plan
 * approval, while an escalation's question was kept only in the dropped `guidance`, so that case continues as
 * `execute` and the still-failed step is recovered (and escalated again at its cap); a person's plain retry
 * (`replanning`) chooses a recovery; anything else executes. Not derivable: a strategy select_strategy chose
 * (`pendingStrategy`): the strategy node already chosen builds its revision again from the failed step.
 */
export function legacyNext(s: LegacyFields): Next {
  if (ENDED_STATUSES.has(s.status) || !s.plan) return { kind: "end" };
  if (s.pendingInterrupt) return { kind: "ask" };
  if (s.status === "replanning" && s.approval?.decision === "replan" && s.approval.guidance) {
    if (s.approval.kind !== "plan_approval") return { kind: "execute" };
    return {
      kind: "replan",
      taskId: null,
      text: s.approval.guidance,
      request: planApprovalRequest(planOf(s)!, s.settings.approvalThreshold),
    };
  }
  if (s.status === "replanning") return { kind: "choose_recovery" };
  return { kind: "execute" };
}

/** The state's `next`, derived once from the older fields when a checkpoint written before it has none. */
export function nextOf(s: LegacyFields & { next: Next | null }): Next {
  return s.next ?? legacyNext(s);
}
