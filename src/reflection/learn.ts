import { randomBytes } from "node:crypto";
import type { BaseStore } from "@langchain/langgraph-checkpoint";
import type { Episode } from "../domain/report.js";
import type { Adjustment, AdjustmentOp, Evaluation, Pattern, Reflection, UserConfig } from "../domain/reflection.js";
import { CandorError, ErrorCode } from "../errors.js";
import {
  addCost,
  costToday,
  expiryOf,
  findEpisode,
  liveEpisodes,
  loadLearnedConfig,
  putEpisode,
  recordReflectionRun,
  saveLearnedConfig,
  saveReflection,
  userReflections,
} from "../memory/learning.js";
import type { Reasoner } from "../reasoning/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { DecisionLog } from "../transparency/decision-log.js";
import { describeOp, parseAdjustment, sameTarget } from "./adjustments.js";
import { blamedKeys, diagnose, type Diagnosis } from "./diagnose.js";
import { generateQualityReflection, type LoopOutcome } from "./improve.js";
import { costOf, DEFAULT_LIMITS, estimatedCost, usd, type ReflectionLimits } from "./limits.js";
import type { ModelUsage } from "../reasoning/types.js";
import { knobsOf, show, type Knob } from "./knobs.js";
import { MIN_OCCURRENCES, minePatterns, splitBlamed } from "./patterns.js";
import { confirmHint, isFirm } from "./firm.js";
import { runScope } from "./relevance.js";
import { recordWish, unmetWishMessage, wishOf } from "./wishes.js";
import { failureIsReflectable, type ReflectionInput } from "./rules-reflection.js";

/** What learning needs: the user's memory, the tools (their steerable settings), and who reflects. */
export interface LearningDeps {
  store: BaseStore;
  registry: ToolRegistry;
  /** Who writes reflections; absent: the rules. */
  reasoner?: Reasoner;
  decisionLog?: DecisionLog;
  /** The clock in ms; injected so expiry can be tested. */
  now?: () => number;
  /** Budget, time limit and prices of model reflection; DEFAULT_LIMITS where absent. */
  limits?: Partial<ReflectionLimits>;
}

/** A finished run as feedback addresses it. */
export interface JudgedRun {
  threadId: string | null;
  userId: string;
  planId: string;
}

/** What a user says about a finished run. */
export interface FeedbackInput {
  verdict: "accepted" | "rejected";
  /** Why it was rejected (required for a rejection). */
  reason: string | null;
  comment: string | null;
}

/** What learning from one evaluation did, for the user and for tests. */
export interface LearningOutcome {
  evaluation: Evaluation;
  /** The reflection stored; null when none was (see `notStored`). */
  reflection: Reflection | null;
  /** Why no reflection was stored, when one was attempted and none was. */
  notStored: string | null;
  /** Valid patterns of the user's episodes. */
  patterns: Pattern[];
  /** Adjustments created or changed by this evaluation. */
  adjustments: Adjustment[];
  /** Plain-language lines for the user, in order. */
  messages: string[];
}

const NO_REVOKE = (id: string) => `candor memory revoke ${id}`;

/**
 * Records a user's verdict on a finished run with its episode and, for a rejection, reflects on it at once:
 * the reason is read as the settings it points at, patterns are mined from the user's episodes, a reflection is
 * written and judged by the quality gate (stored only when it passes), and its adjustments join the user's config
 * — active when a valid pattern backs them, proposed until then. An acceptance of a run that ran under learned
 * adjustments is stored as a success after reflection.
 * @throws CandorError INVALID_REQUEST when the run has no stored episode (it ran without a store, or its episode
 *   expired) or a rejection has no reason.
 */
export async function recordFeedback(
  deps: LearningDeps,
  run: JudgedRun,
  input: FeedbackInput,
): Promise<LearningOutcome> {
  const now = (deps.now ?? Date.now)();
  const reason = input.reason?.trim() || null;
  if (input.verdict === "rejected" && !reason)
    throw new CandorError(
      'A rejection needs a reason: say what was wrong, e.g. --reject "the report was too vague".',
      ErrorCode.INVALID_REQUEST,
    );
  const found = await findEpisode(deps.store, run.userId, run.planId, now);
  if (!found)
    throw new CandorError(
      `Run ${run.threadId ?? run.planId} has no stored episode for user ${run.userId}: it ran without a memory store, or its episode expired (episodes are kept 90 days). Feedback is kept with the episode, so there is nothing to attach it to.`,
      ErrorCode.INVALID_REQUEST,
    );
  const knobs = knobsOf(deps.registry);
  const diagnosis: Diagnosis =
    input.verdict === "rejected"
      ? diagnose([reason, input.comment].filter(Boolean).join(". "), found.episode.choices ?? [], knobs, deps.registry)
      : { namedTools: [], matches: [] };
  const appliedFrom = [...new Set((found.episode.applied ?? []).map((a) => a.reflectionId))];
  const evaluation: Evaluation = {
    verdict: input.verdict,
    source: "user",
    reason,
    comment: input.comment?.trim() || null,
    at: new Date(now).toISOString(),
    blamed: blamedKeys(diagnosis),
    appliedFrom,
  };
  const previous = found.episode.evaluation;
  const episode: Episode = { ...found.episode, evaluation };
  await putEpisode(deps.store, run.userId, found.key, episode, now);
  const messages: string[] = [];
  if (previous?.source === "user")
    messages.push(`This replaces your earlier feedback on this run (${previous.verdict} at ${previous.at}).`);
  deps.decisionLog?.record({
    operation: "reflect",
    planId: run.planId,
    threadId: run.threadId,
    input: `feedback: ${input.verdict}${reason ? ` — ${reason}` : ""}`,
    decision: `evaluation stored${evaluation.blamed.length > 0 ? `; points at ${evaluation.blamed.join(", ")}` : ""}`,
    reasoning: appliedFrom.length > 0 ? `The run ran under adjustments from ${appliedFrom.join(", ")}.` : "",
  });
  if (input.verdict === "accepted") {
    messages.push(`Recorded: you accepted run ${run.threadId ?? run.planId}.`);
    if (appliedFrom.length > 0)
      messages.push(
        `It ran under what was learned (${(found.episode.applied ?? []).map((a) => `${a.summary}, from reflection ${a.reflectionId}`).join("; ")}): counted as a success after reflection.`,
      );
    return { evaluation, reflection: null, notStored: null, patterns: [], adjustments: [], messages };
  }
  messages.push(`Recorded: you rejected run ${run.threadId ?? run.planId}. Reflecting on it now…`);
  if (diagnosis.matches.length === 0 && reason)
    messages.push(await keepUnmetWish(deps, run, found.episode, reason, diagnosis, knobs, now));
  if (appliedFrom.length > 0)
    messages.push(`It ran under adjustments from ${appliedFrom.join(", ")}: they did not satisfy you this time.`);
  const outcome = await reflectOnEpisode(deps, run.userId, episode, evaluation, diagnosis, "rejection", knobs, now);
  const firm = reason !== null && isFirm(reason);
  // A reason about one value the run showed ("never Iberia", "not that airline") is explicit evidence about it.
  const explicitOf = (a: Adjustment) =>
    diagnosis.matches.find(
      (m) => m.explicit && a.op.type !== "remove_tool" && a.op.tool === m.knob.tool && a.op.param === m.knob.param,
    );
  const offered = outcome.adjustments.filter((a) => a.status === "proposed" && (firm || explicitOf(a)));
  const offers = offered.map((a) => {
    const m = explicitOf(a);
    const why = firm
      ? `You said it firmly ("${reason}")`
      : `You pointed at ${show(m!.value)}, the ${m!.knob.learn.kind === "exclude" ? m!.knob.learn.field : m!.knob.param} of the answer you rejected ("${reason}")`;
    deps.decisionLog?.record({
      operation: "reflect",
      planId: run.planId,
      threadId: run.threadId,
      input: `feedback: rejected — ${reason}`,
      decision: `${firm ? "firm statement" : "explicit value"}: ${a.id} offered for confirmation`,
      reasoning: `${describeOp(a.op)} stays proposed until the user confirms it.`,
    });
    return `${why}: ${describeOp(a.op)} (${a.id}) need not wait for ${MIN_OCCURRENCES} rejections. Confirm it and it applies from your next run: ${confirmHint(a.id)}`;
  });
  return { ...outcome, evaluation, messages: [...messages, ...outcome.messages, ...offers] };
}

/**
 * A rejection whose reason no setting of the run's tools can act on is kept as the user's unmet wish (see
 * wishes.ts), logged, and named back to them; returns the sentence that names it.
 */
async function keepUnmetWish(
  deps: LearningDeps,
  run: JudgedRun,
  episode: Episode,
  reason: string,
  diagnosis: Diagnosis,
  knobs: readonly Knob[],
  now: number,
): Promise<string> {
  const tools = [...new Set(episode.plan.steps.flatMap((s) => (s.tools[0] ? [s.tools[0]] : [])))];
  const config = await loadLearnedConfig(deps.store, run.userId);
  const recorded = recordWish(
    config,
    { wish: wishOf(reason), reason, tools, threadId: run.threadId, at: new Date(now).toISOString() },
    episode.simulated === true,
  );
  await saveLearnedConfig(deps.store, run.userId, recorded.config);
  const message = unmetWishMessage(recorded, knobs, diagnosis.namedTools);
  deps.decisionLog?.record({
    operation: "reflect",
    planId: run.planId,
    threadId: run.threadId,
    input: `feedback: rejected — ${reason}`,
    decision: `unmet wish ${recorded.wish.id}: "${recorded.wish.wish}" (said ${recorded.wish.times} time${recorded.wish.times === 1 ? "" : "s"})`,
    reasoning: message,
  });
  return message;
}

/**
 * Reflects on a judged episode (a rejection, or a run's own failures): patterns, the improvement loop, the quality
 * gate, storage, and the adjustments merged into the user's config. Stores nothing when the reflection fails the
 * gate. Practice runs learn only from practice runs and teach only practice runs.
 */
async function reflectOnEpisode(
  deps: LearningDeps,
  userId: string,
  episode: Episode,
  evaluation: Evaluation,
  diagnosis: Diagnosis,
  trigger: "rejection" | "failure",
  knobs: readonly Knob[] = knobsOf(deps.registry),
  now: number = (deps.now ?? Date.now)(),
): Promise<Omit<LearningOutcome, "evaluation">> {
  const simulated = episode.simulated === true;
  const history = (await liveEpisodes(deps.store, userId, now)).filter((e) => (e.simulated === true) === simulated);
  if (!history.some((e) => e.planId === episode.planId)) history.unshift(episode);
  const patterns = minePatterns(history, knobs);
  const first = (await userReflections(deps.store, userId, now)).length === 0;
  const input: ReflectionInput = {
    episode,
    evaluation,
    trigger,
    diagnosis,
    history,
    patterns,
    knobs,
    registry: deps.registry,
    first,
  };
  const evidence = [
    evaluation.reason ?? "",
    ...(episode.choices ?? []).map((c) => c.tool),
    ...episode.failures.map((f) => `${f.tool ?? ""} ${f.failureClass}`),
  ];
  const at = new Date(now).toISOString();
  const valid = patterns.filter((p) => p.valid);
  const limits: ReflectionLimits = { ...DEFAULT_LIMITS, ...deps.limits };
  const reasoner = deps.reasoner ?? rulesOnly;
  let spent = (await costToday(deps.store, userId, now)).cost;
  const calls: ModelUsage[] = [];
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  // Every outcome below is logged the same way: what triggered the reflection, what became of it, and why.
  const logReflect = (decision: string, reasoning: string, cost?: number) =>
    deps.decisionLog?.record({
      operation: "reflect",
      planId: episode.planId,
      threadId: episode.threadId,
      input: `${trigger}: ${evaluation.reason ?? ""}`,
      decision,
      reasoning,
      ...(cost === undefined ? {} : { cost }),
    });
  const spentOn = () => ({
    cost: calls.reduce((sum, u) => sum + costOf(u, limits.prices), 0),
    tokens: calls.reduce((sum, u) => sum + u.inputTokens + u.outputTokens, 0),
  });
  let loop: LoopOutcome;
  try {
    loop = await generateQualityReflection(
      reasoner,
      input,
      {
        evidence,
        first,
        patternsExpected: valid.length > 0,
        scope: runScope(episode, evaluation, diagnosis, deps.registry),
      },
      {
        signal: timeout,
        beforeModelCall: () => {
          const next = spent + estimatedCost(reasoner.modelName ?? "*", limits);
          return next > limits.dailyBudgetUsd
            ? {
                ok: false,
                reason: `MetacognitionCostExceeded: Would exceed daily budget: ${usd(next)} > ${usd(limits.dailyBudgetUsd)}; no model reflection until tomorrow (UTC)`,
              }
            : { ok: true, value: undefined };
        },
        afterModelCall: (usage) => {
          calls.push(usage);
          spent += costOf(usage, limits.prices);
        },
      },
    );
  } catch (e) {
    if (!timeout.aborted) throw e;
    await recordCosts(deps.store, userId, now, calls, limits);
    const why = `MetacognitionTimeout: the reflection took longer than ${limits.timeoutMs / 1000} s, so it was stopped and nothing from it was stored (non-reflective mode for this run)`;
    await recordReflectionRun(deps.store, userId, {
      at,
      threadId: episode.threadId,
      trigger,
      source: reasoner.kind,
      iterations: calls.length,
      reflectionId: null,
      scores: null,
      violations: [],
      degraded: "timeout",
      ...spentOn(),
      adjustmentsActivated: 0,
      expiresAt: expiryOf(now),
      ...(simulated ? { simulated } : {}),
    });
    logReflect("degraded: reflection timed out", why);
    return { reflection: null, notStored: why, patterns: valid, adjustments: [], messages: [`Not learned: ${why}.`] };
  }
  await recordCosts(deps.store, userId, now, calls, limits);
  const { cost, tokens } = spentOn();
  if (loop.degraded === "budget") logReflect("degraded: daily reflection budget", loop.notes.join(" "), cost);
  for (const r of loop.refused)
    logReflect(
      `model reflection attempt ${r.attempt} refused by the quality gate (quality ${r.quality}); not stored`,
      r.violations.join("; ") || `quality ${r.quality} below the minimum`,
    );
  const messages = loop.notes.map((n) => `Reflection: ${n}`);
  if (!loop.verdict.valid) {
    const why = `the reflection failed the quality gate (quality ${loop.verdict.scores.quality}${loop.verdict.violations.length > 0 ? `: ${loop.verdict.violations.join("; ")}` : ""}), so it was not stored and nothing was learned`;
    await recordReflectionRun(deps.store, userId, {
      at,
      threadId: episode.threadId,
      trigger,
      source: loop.source,
      iterations: loop.iterations,
      reflectionId: null,
      scores: loop.verdict.scores,
      violations: loop.verdict.violations,
      degraded: loop.degraded,
      cost,
      tokens,
      adjustmentsActivated: 0,
      expiresAt: expiryOf(now),
      ...(simulated ? { simulated } : {}),
    });
    logReflect("reflection rejected by the quality gate", why);
    return {
      reflection: null,
      notStored: why,
      patterns: valid,
      adjustments: [],
      messages: [...messages, `Not learned: ${why}.`],
    };
  }
  const id = `refl-${randomBytes(4).toString("hex")}`;
  const config = await loadLearnedConfig(deps.store, userId);
  const merged = mergeAdjustments(config, loop.draft.strategyAdjustments, {
    reflectionId: id,
    patterns,
    knobs,
    registry: deps.registry,
    at,
    simulated,
  });
  const reflection: Reflection = {
    ...loop.draft,
    id,
    threadId: episode.threadId,
    planId: episode.planId,
    task: episode.request,
    trigger,
    scores: loop.verdict.scores,
    source: loop.source,
    attempts: Math.max(1, loop.iterations),
    adjustmentIds: merged.changed.map((a) => a.id),
    createdAt: at,
    expiresAt: expiryOf(now),
    ...(simulated ? { simulated } : {}),
  };
  await saveReflection(deps.store, userId, reflection, now);
  await saveLearnedConfig(deps.store, userId, merged.config);
  const activated = merged.changed.filter((a) => a.status === "active" && a.activatedAt === at).length;
  await recordReflectionRun(deps.store, userId, {
    at,
    threadId: episode.threadId,
    trigger,
    source: loop.source,
    iterations: loop.iterations,
    reflectionId: id,
    scores: loop.verdict.scores,
    violations: [],
    degraded: loop.degraded,
    cost,
    tokens,
    adjustmentsActivated: activated,
    expiresAt: expiryOf(now),
    ...(simulated ? { simulated } : {}),
  });
  logReflect(
    `reflection ${id} stored (quality ${reflection.scores.quality}, ${reflection.source}); ${merged.changed.map((a) => `${a.id} ${a.status}`).join(", ") || "no adjustment"}`,
    `${reflection.analysis.rootCause} ${reflection.learning}`,
  );
  messages.push(
    `Reflection ${id} (${reflection.source}, quality ${reflection.scores.quality}: depth ${reflection.scores.depth}, actionability ${reflection.scores.actionability}): ${reflection.analysis.rootCause}`,
    `Learned: ${reflection.learning}`,
    ...merged.notes,
  );
  return { reflection, notStored: null, patterns: valid, adjustments: merged.changed, messages };
}

/**
 * A run that ended failed or partial evaluates itself: its errors are stored as a run's evaluation on its episode
 * (stored under `key`), and when a tool's own misbehaviour has an alternative, the rules reflect on it (never a
 * model: the run's answer must not wait). Returns null when there was nothing to evaluate or to reflect on.
 */
export async function reflectOnRunFailures(
  deps: Omit<LearningDeps, "reasoner">,
  userId: string,
  key: string,
  episode: Episode,
): Promise<Omit<LearningOutcome, "evaluation"> | null> {
  if ((episode.status !== "failed" && episode.status !== "partial") || episode.failures.length === 0) return null;
  const now = (deps.now ?? Date.now)();
  const evaluation: Evaluation = {
    verdict: "rejected",
    source: "run",
    reason: episode.failures.map((f) => `${f.taskId}: ${f.error}`).join("; "),
    comment: null,
    at: new Date(now).toISOString(),
    blamed: [],
    appliedFrom: [...new Set((episode.applied ?? []).map((a) => a.reflectionId))],
  };
  const judged: Episode = { ...episode, evaluation };
  await putEpisode(deps.store, userId, key, judged, now);
  // A failure's words are not a preference: "no hotel rated 9 or more" must not raise the minimum rating again.
  const diagnosis: Diagnosis = { namedTools: [], matches: [] };
  if (!failureIsReflectable({ episode: judged, diagnosis, registry: deps.registry })) return null;
  return reflectOnEpisode(deps, userId, judged, evaluation, diagnosis, "failure", undefined, now);
}

/** Adds each model call's cost to the user's ledger for the day. */
async function recordCosts(
  store: BaseStore,
  userId: string,
  now: number,
  calls: readonly ModelUsage[],
  limits: ReflectionLimits,
): Promise<void> {
  for (const u of calls) await addCost(store, userId, now, costOf(u, limits.prices), u.inputTokens + u.outputTokens);
}

/** The rules reasoner's reflection without constructing a reasoner (any `Reasoner` would do; only `reflect` is used). */
const rulesOnly: Reasoner = {
  kind: "rules",
  plan: () => Promise.reject(new Error("not used")),
  synthesize: () => Promise.reject(new Error("not used")),
  proposeRecovery: () => Promise.resolve(null),
};

interface MergeContext {
  reflectionId: string;
  patterns: readonly Pattern[];
  knobs: readonly Knob[];
  registry: ToolRegistry;
  at: string;
  simulated: boolean;
}

/**
 * Pure. The user's config with a reflection's adjustments merged in. Each one that parses becomes an adjustment:
 * `active` when a valid pattern backs it, else `proposed`; one equal to an adjustment the user revoked is not
 * proposed again; one equal to an existing adjustment updates it (a proposed one becomes active when its pattern
 * now holds); one with another value for the same setting supersedes the old when it is active itself.
 * Adjustments that do not parse stay in the reflection's text only, and a note says why.
 */
export function mergeAdjustments(
  config: UserConfig,
  texts: readonly string[],
  ctx: MergeContext,
): { config: UserConfig; changed: Adjustment[]; notes: string[] } {
  const list = [...config.adjustments];
  const changed: Adjustment[] = [];
  const notes: string[] = [];
  for (const text of texts) {
    const parsed = parseAdjustment(text, ctx.knobs, ctx.registry);
    if (!parsed.ok) {
      notes.push(`Kept as text only, not applied: "${text}" (${parsed.reason}).`);
      continue;
    }
    const op = parsed.value;
    const backing = backingPattern(op, ctx.patterns);
    const status: Adjustment["status"] = backing ? "active" : "proposed";
    const why = backing
      ? `${backing.text} (validity ${backing.validity.toFixed(2)})`
      : `proposed: ${pendingReason(op, ctx.patterns)}`;
    const same = (a: Adjustment) => a.simulated === (ctx.simulated || undefined) && sameTarget(a.op, op);
    if (list.some((a) => same(a) && a.status === "revoked" && sameValue(a.op, op))) {
      notes.push(`Not proposed again: you revoked the same adjustment (${describeOp(op)}).`);
      continue;
    }
    const equal = list.findIndex(
      (a) => same(a) && (a.status === "active" || a.status === "proposed") && sameValue(a.op, op),
    );
    if (equal >= 0) {
      const old = list[equal]!;
      if (old.status === "proposed" && status === "active") {
        const updated: Adjustment = {
          ...old,
          status,
          why,
          reflectionId: ctx.reflectionId,
          pattern: backing!.key,
          activatedAt: ctx.at,
        };
        list[equal] = updated;
        changed.push(updated);
        notes.push(
          `Adjustment ${old.id} is now active: ${describeOp(op)} — ${why}. Revoke it with: ${NO_REVOKE(old.id)}`,
        );
      } else if (old.status === "proposed") {
        const updated: Adjustment = { ...old, why };
        list[equal] = updated;
        changed.push(updated);
        notes.push(`Adjustment ${old.id} stays proposed: ${describeOp(op)} — ${why}.`);
      } else {
        notes.push(`Adjustment ${old.id} is already active: ${describeOp(op)}.`);
      }
      continue;
    }
    const created: Adjustment = {
      id: `adj-${randomBytes(4).toString("hex")}`,
      op,
      text,
      reflectionId: ctx.reflectionId,
      status,
      why,
      pattern: backing?.key ?? null,
      createdAt: ctx.at,
      activatedAt: status === "active" ? ctx.at : null,
      revokedAt: null,
      ...(ctx.simulated ? { simulated: true } : {}),
    };
    if (status === "active")
      for (const [i, a] of list.entries())
        if (same(a) && (a.status === "active" || a.status === "proposed")) {
          list[i] = { ...a, status: "superseded", why: `replaced by ${created.id}` };
          notes.push(`Adjustment ${a.id} (${describeOp(a.op)}) is replaced by ${created.id}.`);
        }
    list.push(created);
    changed.push(created);
    notes.push(
      status === "active"
        ? `Adjustment ${created.id} is active from your next run: ${describeOp(op)} — ${why}. Revoke it with: ${NO_REVOKE(created.id)}`
        : `Adjustment ${created.id} is proposed: ${describeOp(op)} — ${why}.`,
    );
  }
  return { config: { ...config, adjustments: list }, changed, notes };
}

/** The valid pattern that backs an operation: rejections blamed on its setting (and value), or its tool's failures. */
function backingPattern(op: AdjustmentOp, patterns: readonly Pattern[]): Pattern | null {
  return patterns.find((p) => p.valid && backs(p, op)) ?? null;
}

function backs(p: Pattern, op: AdjustmentOp): boolean {
  if (op.type === "remove_tool") return p.key.startsWith("failed:") && p.target === op.tool;
  if (!p.key.startsWith("rejected:")) return false;
  const [target, value] = splitBlamed(p.key.slice("rejected:".length));
  if (target !== `${op.tool}.${op.param}`) return false;
  if (value === null) return true;
  return value === String(op.type === "change_priority" ? op.to : op.value);
}

/** Why an operation is only proposed: how far its pattern is from holding. */
function pendingReason(op: AdjustmentOp, patterns: readonly Pattern[]): string {
  const p = patterns.find((x) => backs({ ...x, valid: true }, op));
  return p ? `${p.reason}; it applies once the pattern holds` : "no pattern backs it yet";
}

function sameValue(a: AdjustmentOp, b: AdjustmentOp): boolean {
  const v = (o: AdjustmentOp) => (o.type === "change_priority" ? o.to : o.type === "remove_tool" ? o.tool : o.value);
  return String(v(a)) === String(v(b));
}
