import type { BaseStore } from "@langchain/langgraph-checkpoint";
import type { Adjustment, Pattern, Reflection, UnmetWish } from "../domain/reflection.js";
import type { Episode } from "../domain/report.js";
import { CandorError, ErrorCode } from "../errors.js";
import {
  liveEpisodes,
  loadLearnedConfig,
  saveLearnedConfig,
  userReflections,
  usersWithLearnedConfig,
} from "../memory/learning.js";
import type { ToolRegistry } from "../tools/registry.js";
import { describeOp, sameTarget } from "./adjustments.js";
import { confirmHint } from "./firm.js";
import { knobsOf } from "./knobs.js";
import { minePatterns } from "./patterns.js";

/** Everything Candor remembers about one user and what it does with it (`candor memory`). */
export interface MemoryView {
  userId: string;
  /** Newest first, none expired. */
  episodes: Episode[];
  reflections: Reflection[];
  /** Every candidate pattern of the real (not practice) episodes, valid or not, with why. */
  patterns: Pattern[];
  adjustments: Adjustment[];
  /** Preferences the user stated that no tool setting can express (see wishes.ts). */
  wishes: UnmetWish[];
}

/** The user's memory as it stands now: nothing expired, and one user's memory only. */
export async function userMemory(
  store: BaseStore,
  userId: string,
  registry: ToolRegistry,
  now: number = Date.now(),
): Promise<MemoryView> {
  const episodes = await liveEpisodes(store, userId, now);
  const config = await loadLearnedConfig(store, userId);
  return {
    userId,
    episodes,
    reflections: await userReflections(store, userId, now),
    patterns: minePatterns(
      episodes.filter((e) => !e.simulated),
      knobsOf(registry),
    ),
    adjustments: config.adjustments,
    wishes: config.wishes ?? [],
  };
}

/**
 * Withdraws an adjustment: it is kept, revoked, and never applied or proposed again as it was. Without `userId` the
 * adjustment is found by its id alone (ids are unique across users); with one, only that user's are searched.
 * @returns the revoked adjustment and whose it was.
 * @throws CandorError INVALID_REQUEST for an id no adjustment has (of that user, when one is given), or one already
 *   revoked.
 */
export async function revokeAdjustment(
  store: BaseStore,
  userId: string | undefined,
  id: string,
  now: number = Date.now(),
): Promise<{ userId: string; adjustment: Adjustment }> {
  const owner = userId ?? (await ownerOf(store, id));
  const config = await loadLearnedConfig(store, owner);
  const i = config.adjustments.findIndex((a) => a.id === id);
  const found = config.adjustments[i];
  if (!found) {
    const ids = config.adjustments.filter((a) => a.status !== "revoked").map((a) => a.id);
    throw new CandorError(
      `User ${owner} has no adjustment "${id}"${ids.length > 0 ? `; theirs are ${ids.join(", ")}` : " (they have none)"}. See them with: candor memory${owner === "default" ? "" : ` --user ${owner}`}, or leave out --user to find the id among every user's.`,
      ErrorCode.INVALID_REQUEST,
    );
  }
  if (found.status === "revoked")
    throw new CandorError(
      `Adjustment ${id} of user ${owner} was already revoked at ${found.revokedAt ?? "?"}: nothing to do.`,
      ErrorCode.INVALID_REQUEST,
    );
  const revoked: Adjustment = {
    ...found,
    status: "revoked",
    revokedAt: new Date(now).toISOString(),
    why: `revoked by the user (was ${found.status}: ${found.why})`,
  };
  const adjustments = [...config.adjustments];
  adjustments[i] = revoked;
  await saveLearnedConfig(store, owner, { ...config, adjustments });
  return { userId: owner, adjustment: revoked };
}

/**
 * Activates a proposed adjustment on the person's word: a firm statement ("never fly Iberia again") proposes its
 * adjustment at once, and the person's confirmation is the evidence that makes it apply, without the three
 * rejections a pattern needs. An active or proposed adjustment of the same setting is superseded by it.
 * @returns the confirmed adjustment and whose it is.
 * @throws CandorError INVALID_REQUEST for an unknown id, or one that is not proposed (already active, revoked or
 *   superseded).
 */
export async function confirmAdjustment(
  store: BaseStore,
  userId: string | undefined,
  id: string,
  now: number = Date.now(),
): Promise<{ userId: string; adjustment: Adjustment; superseded: Adjustment[] }> {
  const owner = userId ?? (await ownerOf(store, id));
  const config = await loadLearnedConfig(store, owner);
  const found = config.adjustments.find((a) => a.id === id);
  if (!found)
    throw new CandorError(
      `User ${owner} has no adjustment "${id}". See them with: candor memory${owner === "default" ? "" : ` --user ${owner}`}, or leave out --user to find the id among every user's.`,
      ErrorCode.INVALID_REQUEST,
    );
  if (found.status !== "proposed")
    throw new CandorError(
      `Adjustment ${id} of user ${owner} is ${found.status}, not proposed: only a proposed adjustment can be confirmed${found.status === "revoked" ? " (a revoked one is never applied again; a new feedback proposes it anew)" : ""}.`,
      ErrorCode.INVALID_REQUEST,
    );
  const at = new Date(now).toISOString();
  const confirmed: Adjustment = {
    ...found,
    status: "active",
    activatedAt: at,
    why: `confirmed by the user (was proposed: ${found.why})`,
  };
  const superseded: Adjustment[] = [];
  const adjustments = config.adjustments.map((a) => {
    if (a.id === id) return confirmed;
    const rival =
      (a.status === "active" || a.status === "proposed") &&
      a.simulated === found.simulated &&
      sameTarget(a.op, found.op);
    if (!rival) return a;
    const replaced: Adjustment = { ...a, status: "superseded", why: `replaced by ${id}, confirmed by the user` };
    superseded.push(replaced);
    return replaced;
  });
  await saveLearnedConfig(store, owner, { ...config, adjustments });
  return { userId: owner, adjustment: confirmed, superseded };
}

/**
 * The user whose learned settings hold adjustment `id`.
 * @throws CandorError INVALID_REQUEST when no user's do.
 */
async function ownerOf(store: BaseStore, id: string): Promise<string> {
  const users = await usersWithLearnedConfig(store);
  for (const user of users)
    if ((await loadLearnedConfig(store, user)).adjustments.some((a) => a.id === id)) return user;
  throw new CandorError(
    `There is no adjustment "${id}" in this database (${users.length === 0 ? "no user has learned settings yet" : `searched the learned settings of ${users.length} user${users.length === 1 ? "" : "s"}`}). Adjustment ids look like adj-1a2b3c4d; list a user's with: candor memory --user <id>.`,
    ErrorCode.INVALID_REQUEST,
  );
}

/** The memory as lines for a person. */
export function memoryLines(m: MemoryView): string[] {
  const out = [`Memory of user ${m.userId}:`];
  out.push(``, `Adjustments (${m.adjustments.length}):`);
  for (const a of m.adjustments)
    out.push(
      `  ${a.id}  ${a.status.padEnd(10)} ${describeOp(a.op)}  from reflection ${a.reflectionId} — ${a.why}${a.status === "proposed" ? ` (apply it now: ${confirmHint(a.id)})` : ""}`,
    );
  if (m.adjustments.length === 0) out.push("  none");
  out.push(``, `Unmet wishes (${m.wishes.length}) — no tool setting can choose them:`);
  for (const w of m.wishes)
    out.push(
      `  ${w.id}  "${w.wish}"${w.simulated ? " (practice)" : ""} — said ${w.times} time${w.times === 1 ? "" : "s"}, last ${w.lastAt}, about ${w.tools.join(", ") || "no tool"}: "${w.reasons[w.reasons.length - 1] ?? ""}"`,
    );
  if (m.wishes.length === 0) out.push("  none");
  out.push(``, `Patterns (${m.patterns.length}):`);
  for (const p of m.patterns)
    out.push(
      `  ${p.valid ? "valid  " : "not yet"} ${p.text} — ${p.occurrences} occurrence(s), validity ${p.validity.toFixed(2)}: ${p.reason}`,
    );
  if (m.patterns.length === 0) out.push("  none");
  out.push(``, `Reflections (${m.reflections.length}):`);
  for (const r of m.reflections)
    out.push(
      `  ${r.id}  ${r.createdAt}  ${r.source}, quality ${r.scores.quality} (depth ${r.scores.depth}, actionability ${r.scores.actionability}) on ${r.threadId ?? r.planId}: ${r.learning}`,
    );
  if (m.reflections.length === 0) out.push("  none");
  out.push(``, `Episodes (${m.episodes.length}):`);
  for (const e of m.episodes)
    out.push(
      `  ${e.at}  ${e.threadId ?? e.planId}  ${e.status}${e.simulated ? " (practice)" : ""}${e.evaluation ? `, ${e.evaluation.verdict} by the ${e.evaluation.source}${e.evaluation.reason && e.evaluation.source === "user" ? `: "${e.evaluation.reason}"` : ""}` : ""}${(e.applied ?? []).length > 0 ? `, ran under ${(e.applied ?? []).map((x) => x.adjustmentId).join(", ")}` : ""}  "${e.request}"`,
    );
  if (m.episodes.length === 0) out.push("  none");
  return out;
}
