import type { BaseStore } from "@langchain/langgraph-checkpoint";
import { CandorError, ErrorCode } from "../errors.js";
import { Episode } from "../domain/report.js";
import { newestItems, putExpiring, userNamespace } from "./user-items.js";
import type { FailureClass } from "../domain/feedback.js";
import type { RevisionStrategy } from "../domain/revision.js";

const EPISODES = "episodes";
/** The leaf of a user's saved settings namespace, [userId, CONFIG_LEAF]. */
export const CONFIG_LEAF = "config";
const CONFIG_KEY = "agent";
/** Statuses in which a run reached its end with an answer, so the strategies it used kept it going. */
const FINISHED: ReadonlySet<Episode["status"]> = new Set(["completed", "partial"]);

/**
 * Stores one run's episode under [userId, "episodes"]. The key starts with the episode's ISO time so keys
 * sort chronologically, and ends with the plan id so two runs in the same millisecond do not collide.
 * @returns the key written.
 * @throws CandorError INVALID_REQUEST for a user id that cannot be a namespace label, or an episode that
 *   does not match the Episode schema or has an unparseable `at`.
 */
export async function saveEpisode(
  store: BaseStore,
  userId: string,
  episode: Episode,
  now: number = Date.now(),
): Promise<string> {
  const parsed = Episode.safeParse(episode);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CandorError(
      `Cannot save the episode: field "${issue?.path.join(".") ?? "?"}" is invalid (${issue?.message ?? "unknown issue"}).`,
      ErrorCode.INVALID_REQUEST,
      { cause: parsed.error },
    );
  }
  const at = new Date(parsed.data.at);
  if (Number.isNaN(at.getTime())) {
    throw new CandorError(
      `Cannot save the episode of plan ${parsed.data.planId}: "at" is not a date (${parsed.data.at}).`,
      ErrorCode.INVALID_REQUEST,
    );
  }
  const key = `${at.toISOString()}_${parsed.data.planId}`;
  // An episode with an expiry (90 days after the run) is forgotten then, by the store itself where it keeps TTLs.
  await putExpiring(store, userNamespace(userId, EPISODES), key, parsed.data, now);
  return key;
}

/**
 * The user's most recent valid episodes, newest first. Items that no longer match the Episode schema (older
 * versions, hand edits) are skipped rather than failing the run that wants its memory.
 *
 * Reads every episode of the user: stores differ in search order (SqliteStore newest first, InMemoryStore
 * oldest first), so sorting by key here is the only order that holds under Studio's injected store too.
 */
export async function recentEpisodes(store: BaseStore, userId: string, limit = 20): Promise<Episode[]> {
  return newestItems(store, userNamespace(userId, EPISODES), Episode, limit);
}

/** Failure classes that count against a tool's reliability. */
const UNRELIABLE_CLASSES: ReadonlySet<FailureClass> = new Set(["timeout", "agent_unavailable", "unknown"]);

/** What past runs teach the planner. */
export interface LessonSummary {
  /** Plain-language lines for the planner prompt and the report. */
  lessons: string[];
  /**
   * Tool name → number of episodes in which that tool itself misbehaved (timed out, was unavailable, returned
   * garbage, failed unexpectedly). A fully booked hotel or a blown budget says nothing about the tool.
   */
  unreliableTools: Record<string, number>;
}

/**
 * Pure. Turns episodes into lessons: a line for each tool that failed in at least two of them (with the
 * failure classes seen), and a line for each recovery strategy used, saying how often the run it was used
 * in still finished (completed or partial).
 */
export function summarizeLessons(episodes: readonly Episode[]): LessonSummary {
  const toolEpisodes = new Map<string, number>();
  const unreliable = new Map<string, number>();
  const toolClasses = new Map<string, Map<FailureClass, number>>();
  const strategyUses = new Map<RevisionStrategy, { used: number; recovered: number }>();

  for (const episode of episodes) {
    const failedTools = new Set<string>();
    for (const failure of episode.failures) {
      if (failure.tool === null) continue;
      failedTools.add(failure.tool);
      const classes = toolClasses.get(failure.tool) ?? new Map<FailureClass, number>();
      classes.set(failure.failureClass, (classes.get(failure.failureClass) ?? 0) + 1);
      toolClasses.set(failure.tool, classes);
    }
    for (const tool of failedTools) toolEpisodes.set(tool, (toolEpisodes.get(tool) ?? 0) + 1);
    const misbehaved = new Set(
      episode.failures
        .filter((f) => f.tool !== null && UNRELIABLE_CLASSES.has(f.failureClass))
        .map((f) => f.tool as string),
    );
    for (const tool of misbehaved) unreliable.set(tool, (unreliable.get(tool) ?? 0) + 1);

    const finished = FINISHED.has(episode.status);
    for (const strategy of episode.strategiesUsed) {
      const tally = strategyUses.get(strategy) ?? { used: 0, recovered: 0 };
      tally.used += 1;
      if (finished) tally.recovered += 1;
      strategyUses.set(strategy, tally);
    }
  }

  const lessons: string[] = [];
  const runs = plural(episodes.length, "run", "runs");
  for (const [tool, count] of byCountThenName(toolEpisodes)) {
    if (count < 2) continue;
    const classes = [...byCountThenName(toolClasses.get(tool) ?? new Map<FailureClass, number>())].map(([c]) => c);
    // Only a tool's own misbehaviour calls for another tool; "fully booked" twice is about the requests.
    const advice = classes.some((c) => UNRELIABLE_CLASSES.has(c))
      ? "consider its backup"
      : "a property of the requests, not of the tool";
    lessons.push(`${tool} failed in ${count} of the last ${runs} (${classes.join(", ")}); ${advice}`);
  }
  const strategies = [...strategyUses.entries()].sort((a, b) => b[1].used - a[1].used || a[0].localeCompare(b[0]));
  for (const [strategy, { used, recovered }] of strategies) {
    if (recovered === 0) {
      lessons.push(`Strategy ${strategy} was used ${plural(used, "time", "times")} and none of those runs finished`);
    } else if (recovered === used) {
      lessons.push(`Strategy ${strategy} recovered ${plural(recovered, "failure", "failures")}`);
    } else {
      lessons.push(
        `Strategy ${strategy} recovered ${recovered} of ${plural(used, "failure", "failures")} it was used on`,
      );
    }
  }
  return { lessons, unreliableTools: Object.fromEntries(unreliable) };
}

/**
 * The user's saved agent settings, or null when none were ever saved.
 * @throws CandorError INVALID_REQUEST for a user id that cannot be a namespace label.
 */
export async function loadUserConfig(store: BaseStore, userId: string): Promise<Record<string, unknown> | null> {
  const item = await store.get(userNamespace(userId, CONFIG_LEAF), CONFIG_KEY);
  return item === null ? null : (item.value as Record<string, unknown>);
}

/**
 * Replaces the user's saved agent settings.
 * @throws CandorError INVALID_REQUEST for a user id that cannot be a namespace label.
 */
export async function saveUserConfig(store: BaseStore, userId: string, config: Record<string, unknown>): Promise<void> {
  await store.put(userNamespace(userId, CONFIG_LEAF), CONFIG_KEY, config);
}

function byCountThenName<K extends string>(counts: Map<K, number>): [K, number][] {
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
