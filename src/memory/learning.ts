import { randomBytes } from "node:crypto";
import type { BaseStore } from "@langchain/langgraph-checkpoint";
import { z } from "zod";
import { Episode } from "../domain/report.js";
import { Reflection, ReflectionRun, UserConfig } from "../domain/reflection.js";
import { CONFIG_LEAF, loadUserConfig, saveUserConfig } from "./episodes.js";
import { newestEntries, newestItems, putExpiring, userNamespace } from "./user-items.js";

/** Episodes, reflections and reflection runs are forgotten this long after they are written (seed 001). */
const MEMORY_TTL_DAYS = 90;
const DAY_MS = 24 * 60 * 60 * 1000;

const EPISODES = "episodes";
const REFLECTIONS = "reflections";
const REFLECTION_RUNS = "reflection_runs";

/** When something written at `now` expires. */
export function expiryOf(now: number): string {
  return new Date(now + MEMORY_TTL_DAYS * DAY_MS).toISOString();
}

/** The user's episode of a plan (not expired), with its key so it can be written back; null when there is none. */
export async function findEpisode(
  store: BaseStore,
  userId: string,
  planId: string,
  now: number = Date.now(),
): Promise<{ key: string; episode: Episode } | null> {
  const all = await newestEntries(store, userNamespace(userId, EPISODES), Episode, Number.MAX_SAFE_INTEGER, now);
  const hit = all.find((e) => e.value.planId === planId);
  return hit ? { key: hit.key, episode: hit.value } : null;
}

/** Writes an episode back under its key (e.g. with the evaluation the user gave it). */
export async function putEpisode(
  store: BaseStore,
  userId: string,
  key: string,
  episode: Episode,
  now: number = Date.now(),
): Promise<void> {
  await putExpiring(store, userNamespace(userId, EPISODES), key, Episode.parse(episode), now);
}

/** The user's episodes that have not expired, newest first. */
export async function liveEpisodes(store: BaseStore, userId: string, now: number = Date.now()): Promise<Episode[]> {
  return newestItems(store, userNamespace(userId, EPISODES), Episode, Number.MAX_SAFE_INTEGER, now);
}

/** Stores a reflection that passed the quality gate. */
export async function saveReflection(
  store: BaseStore,
  userId: string,
  reflection: Reflection,
  now: number = Date.now(),
): Promise<void> {
  const parsed = Reflection.parse(reflection);
  await putExpiring(store, userNamespace(userId, REFLECTIONS), `${parsed.createdAt}_${parsed.id}`, parsed, now);
}

/** The user's reflections that have not expired, newest first. */
export async function userReflections(
  store: BaseStore,
  userId: string,
  now: number = Date.now(),
): Promise<Reflection[]> {
  return newestItems(store, userNamespace(userId, REFLECTIONS), Reflection, Number.MAX_SAFE_INTEGER, now);
}

/** Records one reflection attempt for the metrics. */
export async function recordReflectionRun(store: BaseStore, userId: string, run: ReflectionRun): Promise<void> {
  const parsed = ReflectionRun.parse(run);
  await putExpiring(
    store,
    userNamespace(userId, REFLECTION_RUNS),
    `${parsed.at}_${parsed.reflectionId ?? randomBytes(4).toString("hex")}`,
    parsed,
    Date.parse(parsed.at),
  );
}

/** The user's reflection attempts that have not expired, newest first. */
export async function reflectionRuns(
  store: BaseStore,
  userId: string,
  now: number = Date.now(),
): Promise<ReflectionRun[]> {
  return newestItems(store, userNamespace(userId, REFLECTION_RUNS), ReflectionRun, Number.MAX_SAFE_INTEGER, now);
}

/**
 * The user's learned settings. Settings saved in another shape (older versions, hand edits) read as none rather
 * than failing the run, and are replaced at the next save.
 */
export async function loadLearnedConfig(store: BaseStore, userId: string): Promise<UserConfig> {
  const parsed = UserConfig.safeParse((await loadUserConfig(store, userId)) ?? {});
  return parsed.success ? parsed.data : { adjustments: [] };
}

/**
 * The users who have learned settings saved, sorted. Adjustment ids are random, so one id names one adjustment of
 * one user; this is how `candor memory revoke <id>` finds it without being told whose it is.
 */
export async function usersWithLearnedConfig(store: BaseStore): Promise<string[]> {
  const namespaces = await store.listNamespaces({ suffix: [CONFIG_LEAF], maxDepth: 2, limit: 100_000 });
  return namespaces
    .filter((ns) => ns.length === 2)
    .map((ns) => ns[0]!)
    .sort();
}

export async function saveLearnedConfig(store: BaseStore, userId: string, config: UserConfig): Promise<void> {
  await saveUserConfig(store, userId, UserConfig.parse(config));
}

const METACOGNITION = "metacognition";

/** What a user's reflections cost the model on one (UTC) day. */
export const DailyCost = z.object({
  day: z.string(),
  cost: z.number().min(0),
  tokens: z.number().int().min(0),
  calls: z.number().int().min(0),
  expiresAt: z.string(),
});
export type DailyCost = z.infer<typeof DailyCost>;

/** The UTC day of a time, as the ledger keys it ("2025-11-16"). */
function dayOf(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** What the user's reflections have cost today. */
export async function costToday(store: BaseStore, userId: string, now: number): Promise<DailyCost> {
  const day = dayOf(now);
  const item = await store.get(userNamespace(userId, METACOGNITION), `cost-${day}`);
  const parsed = DailyCost.safeParse(item?.value);
  return parsed.success ? parsed.data : { day, cost: 0, tokens: 0, calls: 0, expiresAt: expiryOf(now) };
}

/** Adds one model call's cost to today's ledger. */
export async function addCost(
  store: BaseStore,
  userId: string,
  now: number,
  cost: number,
  tokens: number,
): Promise<void> {
  const today = await costToday(store, userId, now);
  await putExpiring(
    store,
    userNamespace(userId, METACOGNITION),
    `cost-${today.day}`,
    {
      ...today,
      cost: today.cost + cost,
      tokens: today.tokens + tokens,
      calls: today.calls + 1,
    },
    now,
  );
}
