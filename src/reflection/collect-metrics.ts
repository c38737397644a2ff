import type { BaseStore } from "@langchain/langgraph-checkpoint";
import { z } from "zod";
import { ConfidenceCalibrator } from "../confidence/calibrator.js";
import { liveEpisodes, loadLearnedConfig, reflectionRuns, userReflections } from "../memory/learning.js";
import { learningMetrics, type LearningMetrics } from "./metrics.js";

/** A line of the decision log, as far as the metrics read it. */
const PlanLine = z.object({
  operation: z.literal("plan"),
  planId: z.string(),
  threadId: z.string().nullable().optional(),
});

/**
 * The metrics of one user, or of every user with episodes in the store, from the store (episodes, reflections,
 * reflection records, calibration outcomes) and the decision log's text (plans made, including runs that never
 * finished). Nothing expired is counted.
 */
export async function collectMetrics(
  store: BaseStore,
  opts: { userId?: string; decisionLog?: string | null; now?: number } = {},
): Promise<LearningMetrics> {
  const now = opts.now ?? Date.now();
  const users = opts.userId
    ? [opts.userId]
    : (await store.listNamespaces({ suffix: ["episodes"], maxDepth: 2, limit: 100_000 }))
        .filter((ns) => ns.length === 2)
        .map((ns) => ns[0]!)
        .sort();
  const per = await Promise.all(
    users.map(async (u) => ({
      episodes: await liveEpisodes(store, u, now),
      reflections: await userReflections(store, u, now),
      runs: await reflectionRuns(store, u, now),
      outcomes: await new ConfidenceCalibrator(store, u).outcomes(Number.MAX_SAFE_INTEGER),
      wishes: (await loadLearnedConfig(store, u)).wishes ?? [],
    })),
  );
  const episodes = per.flatMap((p) => p.episodes);
  let plansLogged: number | null = null;
  if (opts.decisionLog != null) {
    const threads = new Set(episodes.flatMap((e) => (e.threadId ? [e.threadId] : [])));
    const plans = new Set<string>();
    for (const raw of opts.decisionLog.split("\n")) {
      if (!raw.trim()) continue;
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch {
        continue; // a torn last line (a crash mid-write) is not a plan
      }
      const line = PlanLine.safeParse(json);
      if (!line.success) continue;
      if (opts.userId && !(line.data.threadId && threads.has(line.data.threadId))) continue;
      plans.add(line.data.planId);
    }
    plansLogged = plans.size;
  }
  return learningMetrics({
    users,
    episodes,
    reflections: per.flatMap((p) => p.reflections),
    runs: per.flatMap((p) => p.runs),
    outcomes: per.flatMap((p) => p.outcomes),
    plansLogged,
    wishes: per.flatMap((p) => p.wishes),
  });
}
