/**
 * One simulated user through the real graph: each request is run, the answer judged by the user's own judge, the
 * verdict given as `candor feedback` gives it, and an offered firm adjustment confirmed as `candor memory confirm`
 * would. Shared by the learning bench's users (bench/learning.ts) and the held-out users (held-out.ts), so both
 * are measured the same way.
 */
import { isInterrupted } from "@langchain/langgraph";
import { z } from "zod";
import type { compileAgent } from "../../graphs/agent.js";
import type { openPersistence } from "../../src/memory/persistence.js";
import { giveFeedback } from "../../src/reflection/feedback.js";
import { confirmAdjustment, revokeAdjustment, userMemory } from "../../src/reflection/memory-view.js";
import { collectMetrics } from "../../src/reflection/collect-metrics.js";
import type { ToolRegistry } from "../../src/tools/registry.js";
import { MIN_OCCURRENCES } from "../../src/reflection/patterns.js";
import { errorMessage } from "../../src/errors.js";
import { answerOf, type Answer, type Judgement, type TripRequest } from "./users.js";

/** The part of a plan the bench reads when a run stopped to ask (the checkpoint's values are untyped). */
const LearnedOf = z.object({ learned: z.array(z.object({ adjustmentId: z.string() })) });

export interface RunRecord {
  request: string;
  /** Adjustments UNDERSTAND applied to this run's plan. */
  applied: number;
  verdict: "accepted" | "rejected" | "unanswered";
  reason: string | null;
  /** This rejection's reflection was refused by the quality gate. */
  gateRefused: boolean;
  /** The settings Candor read the reason as pointing at (Evaluation.blamed). */
  blamed: string[];
  /** The feedback's answer named the reason as an unmet wish (no setting can choose it, or none was read). */
  wishNamed: boolean;
  /** Adjustments the user confirmed because the feedback offered them (a firm statement). */
  confirmed: number;
}

/** What one simulated user's runs came to. */
export interface SimulatedUser {
  runs: RunRecord[];
  /**
   * The adjustments applied to the user's runs, how many of them `candor memory` shows, and how many could then be
   * revoked (done after the user's last run, so no run is affected).
   */
  lessons: { applied: number; visible: number; revocable: number };
  /** From Candor's own metrics of the user (collectMetrics). */
  metrics: {
    reflections: number;
    gateRejected: number;
    adjustmentsApplied: number;
    costUsd: number;
    rate: number | null;
  };
}

/** The graph, its store and the registry feedback reads settings from. */
export interface SimulationContext {
  graph: ReturnType<typeof compileAgent>;
  persistence: ReturnType<typeof openPersistence>;
  registry: ToolRegistry;
}

/** A user to simulate: their requests, and how they judge an answer (`pick` chooses the wording, 0–1). */
export interface UserSpec {
  userId: string;
  requests: readonly TripRequest[];
  judge: (trip: TripRequest, answer: Answer, pick: number) => Judgement;
  /** Draws the wording of each reason (0–1). */
  wording: () => number;
}

/** Runs one user's requests in order, judging and giving feedback after each, then reads what Candor kept. */
export async function simulateUser(ctx: SimulationContext, spec: UserSpec): Promise<SimulatedUser> {
  const { graph, persistence } = ctx;
  const deps = { store: persistence.store, registry: ctx.registry };
  const { userId } = spec;
  const runs: RunRecord[] = [];
  const appliedIds = new Set<string>();
  for (const [i, trip] of spec.requests.entries()) {
    const threadId = `${userId}-${i + 1}`;
    const out = await graph.invoke(
      { request: { userIntent: trip.text, userContext: { userId } } },
      { configurable: { thread_id: threadId } },
    );
    // A run that stopped to ask still planned: its plan (read from the checkpoint) says what was applied.
    const planned: unknown = isInterrupted(out)
      ? ((await graph.getState({ configurable: { thread_id: threadId } })).values as { plan?: unknown }).plan
      : out.plan;
    const learned = LearnedOf.safeParse(planned).data?.learned ?? [];
    const applied = learned.length;
    for (const l of learned) appliedIds.add(l.adjustmentId);
    const none = { gateRefused: false, blamed: [], wishNamed: false, confirmed: 0 };
    if (isInterrupted(out) || !out.plan) {
      // No answer to judge (a question was asked, or no plan was made): counted against Candor, no feedback.
      runs.push({ request: trip.text, applied, verdict: "unanswered", reason: null, ...none });
      continue;
    }
    const j = spec.judge(trip, answerOf(out), spec.wording());
    const reason = j.verdict === "rejected" ? j.reason : null;
    const record: RunRecord = { request: trip.text, applied, verdict: j.verdict, reason, ...none };
    try {
      const fb = await giveFeedback(graph, threadId, { verdict: j.verdict, reason, comment: null }, deps);
      record.gateRefused = fb.notStored !== null && /quality gate/.test(fb.notStored);
      record.blamed = fb.evaluation.blamed;
      // Named either as no setting can choose it, or as about a tool whose settings it shares no word with.
      record.wishNamed = fb.messages.some((m) => m.includes("Kept as an unmet wish"));
      // A person who is offered an adjustment for confirmation confirms it, as `candor memory confirm` would.
      for (const m of fb.messages)
        for (const [, id] of m.matchAll(/memory confirm (adj-[0-9a-f]+)/g)) {
          await confirmAdjustment(persistence.store, userId, id!);
          record.confirmed += 1;
        }
    } catch (e) {
      process.stderr.write(`learning: feedback on ${threadId} refused: ${errorMessage(e)}\n`);
    }
    runs.push(record);
  }
  const m = await collectMetrics(persistence.store, { userId });
  const shown = new Set((await userMemory(persistence.store, userId, ctx.registry)).adjustments.map((a) => a.id));
  let revocable = 0;
  for (const id of appliedIds)
    try {
      await revokeAdjustment(persistence.store, undefined, id);
      revocable += 1;
    } catch (e) {
      process.stderr.write(`learning: ${id} of ${userId} could not be revoked: ${errorMessage(e)}\n`);
    }
  return {
    runs,
    lessons: {
      applied: appliedIds.size,
      visible: [...appliedIds].filter((id) => shown.has(id)).length,
      revocable,
    },
    metrics: {
      reflections: m.reflection.reflections,
      gateRejected: m.reflection.rejected,
      adjustmentsApplied: m.adjustments.applied,
      costUsd: m.reflection.costUsd,
      rate: m.adjustments.successAfterReflectionRate,
    },
  };
}

/** Pure. The runs from the first one an adjustment was applied to, on: those success after reflection counts. */
export function afterFirstAdjustment(runs: readonly RunRecord[]): RunRecord[] {
  const first = runs.findIndex((r) => r.applied > 0);
  return first < 0 ? [] : runs.slice(first);
}

/**
 * Pure. Whether Candor could have learned for the user by seed 001's rule: a third rejection (for any reason, read
 * or not) came before the user's last run, so there was evidence enough and a run left to apply it to.
 */
export function couldLearn(runs: readonly RunRecord[]): boolean {
  const third = runs.map((r, i) => (r.verdict === "rejected" ? i : -1)).filter((i) => i >= 0)[MIN_OCCURRENCES - 1];
  return third !== undefined && third < runs.length - 1;
}

/** Pure. Rejections a user gave before the first run an adjustment was applied to (null: never applied). */
export function rejectionsBeforeApplied(runs: readonly RunRecord[]): number | null {
  const first = runs.findIndex((r) => r.applied > 0);
  return first < 0 ? null : runs.slice(0, first).filter((r) => r.verdict === "rejected").length;
}

/** The reason a simulated user gives for an answer that lacks the part their preference is about. */
export const MISSING_PART = /^The plan has no .* at all$/;

/**
 * Pure. Like `rejectionsBeforeApplied`, counting only rejections about the preference itself: an answer without the
 * part the preference is about ("The plan has no activities at all") gives no evidence about its setting.
 */
export function preferenceRejectionsBeforeApplied(runs: readonly RunRecord[]): number | null {
  const first = runs.findIndex((r) => r.applied > 0);
  return first < 0
    ? null
    : runs.slice(0, first).filter((r) => r.verdict === "rejected" && !MISSING_PART.test(r.reason ?? "")).length;
}
