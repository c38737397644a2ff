import { Episode } from "../../src/domain/report.js";
import type { Evaluation, StepChoice } from "../../src/domain/reflection.js";
import { blamedKeys, diagnose } from "../../src/reflection/diagnose.js";
import { knobsOf } from "../../src/reflection/knobs.js";
import { expiryOf } from "../../src/memory/learning.js";
import type { ToolRegistry } from "../../src/tools/registry.js";

/** A hotel search's choice as an episode keeps it: the params it ran with and the hotel it picked. */
export function hotelChoice(city: string, rating: number, params: Record<string, unknown> = {}): StepChoice {
  return {
    stepId: "hotel",
    tool: "search_hotels",
    params: { city, nights: 2, travellers: 2, radiusKm: 0, ...params },
    result: {
      name: `Grand Hotel ${city}`,
      city,
      stars: 4,
      rating,
      cost: 900,
      summary: `Grand Hotel ${city} (4★, guests rate it ${rating}/10, 0.5 km from the centre): $450 × 2 night(s) × 1 room(s) = $900`,
    },
  };
}

/** A flight search's choice. */
export function flightChoice(airline: string, stops = 0, params: Record<string, unknown> = {}): StepChoice {
  return {
    stepId: "flight",
    tool: "search_flights",
    params: { origin: "Madrid", destination: "Paris", travellers: 2, ...params },
    result: {
      airline,
      stops,
      cost: 600,
      summary: `${airline} XX123 Madrid ⇄ Paris, ${stops === 0 ? "nonstop" : `${stops} stop`}`,
    },
  };
}

let seq = 0;

/**
 * A finished episode of `userId`'s run with the given choices, judged by the user when `verdict` is given (a
 * rejection's reason read the way `candor feedback` reads it).
 */
export function judgedEpisode(
  registry: ToolRegistry,
  choices: StepChoice[],
  judgement: { verdict: "accepted" | "rejected"; reason?: string } | null,
  opts: { at?: number; request?: string } = {},
): Episode {
  seq += 1;
  const at = opts.at ?? Date.now() - 1000 * (100 - seq);
  const reason = judgement?.reason ?? null;
  const evaluation: Evaluation | undefined = judgement
    ? {
        verdict: judgement.verdict,
        source: "user",
        reason,
        comment: null,
        at: new Date(at).toISOString(),
        blamed: reason ? blamedKeys(diagnose(reason, choices, knobsOf(registry), registry)) : [],
        appliedFrom: [],
      }
    : undefined;
  return Episode.parse({
    threadId: `t-${seq}`,
    planId: `plan-${seq}`,
    request: opts.request ?? `Plan a 3-day trip to ${String(choices[0]?.result.city ?? "Paris")}`,
    status: "completed",
    plan: { steps: choices.map((c) => ({ id: c.stepId, workerType: "agent", tools: [c.tool] })) },
    failures: [],
    strategiesUsed: [],
    confidenceInitial: 0.85,
    confidenceFinal: 0.9,
    lessons: [],
    durationMs: 10,
    cost: 0.02,
    at: new Date(at).toISOString(),
    choices,
    ...(evaluation ? { evaluation } : {}),
    expiresAt: expiryOf(at),
  });
}
