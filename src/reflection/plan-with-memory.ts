import type { BaseStore } from "@langchain/langgraph";
import { applyCalibration, ConfidenceCalibrator, type Calibration } from "../confidence/calibrator.js";
import type { Plan } from "../domain/plan.js";
import type { PlanningRequest } from "../domain/request.js";
import { recentEpisodes, summarizeLessons } from "../memory/episodes.js";
import type { Reasoner } from "../reasoning/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import { applyLearning } from "./apply.js";

/** How many of the user's most recent episodes the planner learns from. */
const EPISODES_CONSIDERED = 20;

/** A plan made with the user's memory and calibrated on their past outcomes. */
export interface PlannedWithMemory {
  /** The planner's own plan, before calibration: its confidence is what calibration learns from. */
  raw: Plan;
  /** The plan that runs (or waits for approval): confidence calibrated. */
  plan: Plan;
  /** How the plan was made (fallbacks, assumptions) and what memory taught, for the user. */
  notes: string[];
  calibration: Calibration | null;
}

/**
 * Plans a request the way UNDERSTAND does, for it and for a plan made again with a person's guidance: lessons
 * from the user's episodes, then calibration on their past outcomes. A practice run (faults injected) learns
 * from every episode; a real run never from a practice run's, so a tool that only failed on purpose is not avoided
 * for real. Throws what the reasoner throws (CandorError NO_VALID_PLAN).
 */
export async function planWithMemory(
  deps: { registry: ToolRegistry; reasoner: Reasoner },
  request: PlanningRequest,
  config: { store?: BaseStore | undefined; signal?: AbortSignal | undefined },
): Promise<PlannedWithMemory> {
  const userId = request.userContext.userId;
  const simulated = deps.registry.injectedFaults().length > 0;
  const all = config.store ? await recentEpisodes(config.store, userId, Number.MAX_SAFE_INTEGER) : [];
  const usable = (simulated ? all : all.filter((e) => !e.simulated)).slice(0, EPISODES_CONSIDERED);
  const leftOut = all.slice(0, EPISODES_CONSIDERED).filter((e) => e.simulated && !simulated).length;
  const memory = summarizeLessons(usable);
  const result = await deps.reasoner.plan(request, {
    registry: deps.registry,
    lessons: memory.lessons,
    unreliableTools: memory.unreliableTools,
    signal: config.signal,
  });
  // What this user's feedback taught (issue 12): learned settings on the steps, each announced with its source.
  const learned = await applyLearning(config.store, userId, result.plan, deps.registry, simulated);
  // Before the approval check, so a history of failed high-confidence plans brings this one to a human sooner.
  const calibration = config.store
    ? await new ConfidenceCalibrator(config.store, userId).calibrate(result.plan.confidence)
    : null;
  const notes = [
    ...result.notes,
    ...learned.notes,
    ...memory.lessons.map((l) => `Memory: ${l}`),
    ...(leftOut > 0
      ? [`Memory: ${leftOut} recent run(s) with injected faults left out; practice runs do not teach real ones.`]
      : []),
  ];
  return { raw: learned.plan, plan: applyCalibration(learned.plan, calibration), notes, calibration };
}
