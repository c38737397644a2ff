import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { planOf, planWrites } from "../src/domain/plan-state.js";
import { ConfidenceCalibrator } from "../src/confidence/calibrator.js";
import type { BaseStore } from "@langchain/langgraph";
import { isReactive, type Plan } from "../src/domain/plan.js";
import type { Episode, RunStatus } from "../src/domain/report.js";
import { clampConfidence, confidencePoint } from "../src/confidence/update.js";
import { saveEpisode } from "../src/memory/episodes.js";
import { finalStatus, reflectOnRun } from "../src/reflection/reflect.js";
import { reflectOnRunFailures } from "../src/reflection/learn.js";
import { CandorError, ErrorCode, errorMessage } from "../src/errors.js";
import { threadIdOf, type NodeDeps } from "./deps.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";

/** REFLECT: learn from the episode — lessons, the confidence the outcome earned, the episode and the plan's outcome (for calibration) in the store. */
export function reflectNode(deps: NodeDeps) {
  return async (state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> => {
    const plan = planOf(state)!;
    const status = finalStatus(state.status, plan);
    const initial = state.plannedConfidence ?? state.confidenceHistory[0]?.value ?? plan.confidence;
    const reflection = reflectOnRun({
      threadId: threadIdOf(config),
      request: state.request.userIntent,
      plan,
      feedback: state.feedback,
      revisions: state.revisions,
      status,
      initialConfidence: initial,
      startedAt: state.startedAt ?? new Date().toISOString(),
    });
    // Nothing ran when a plan is rejected, so its outcome says nothing about the plan's quality.
    const delta = status === "rejected" ? 0 : reflection.outcomeDelta;
    const confidence = clampConfidence(plan.confidence + delta);
    // Faults injected on purpose (`--fault`) make this a practice run: kept, but apart from what real runs learn.
    const injected = deps.registry.injectedFaults();
    const simulated = injected.length > 0;
    const lessons = simulated
      ? [
          ...reflection.lessons,
          `Faults were injected into this run (${injected.join(", ")}): it does not calibrate confidence, and only other runs with injected faults learn from it.`,
        ]
      : reflection.lessons;
    const episode = {
      ...reflection.episode,
      lessons,
      confidenceFinal: confidence,
      ...(simulated ? { simulated } : {}),
    };
    const { learned, outcomeStore } = await remember(deps, config, state, { plan, status, initial, episode });
    deps.decisionLog.record({
      operation: "reflect",
      planId: plan.planId,
      threadId: threadIdOf(config),
      input: `${status}, ${state.revisions.length} revision(s)`,
      decision: `confidence ${delta >= 0 ? "+" : ""}${delta.toFixed(2)}; ${config.store ? `${simulated ? "simulated " : ""}episode stored${outcomeStore ? `, outcome recorded${simulated ? " (not used to calibrate)" : " for calibration"}` : ""}` : "no store: episode not kept"}`,
      reasoning: lessons.join(" "),
      confidenceBefore: plan.confidence,
      confidenceAfter: confidence,
    });
    const reason =
      reflection.unrecoveredSteps.length === 0
        ? "outcome: every needed step succeeded"
        : `outcome: ${reflection.unrecoveredSteps.length} step(s) not recovered`;
    return {
      ...planWrites(state, { ...plan, confidence }),
      status,
      reflection: { lessons: [...lessons, ...learned], unrecoveredSteps: reflection.unrecoveredSteps },
      confidenceHistory: delta === 0 ? [] : [confidencePoint(confidence, reason)],
      failureReason:
        state.failureReason ??
        (status === "partial" || status === "failed"
          ? `Not completed: ${reflection.unrecoveredSteps.join(", ") || "some steps"} could not be recovered.`
          : null),
    };
  };
}

/**
 * What the run leaves for next time, in the store when there is one: the episode, a failed run's own reflection (the
 * rules', fast, so the answer never waits), and the plan's outcome for calibration (not for a rejected plan, which
 * never ran, nor for a reactive run, whose neutral 0.5 was nobody's rating of a plan). `initial` is the planner's raw
 * score, so calibration never learns from its own corrections.
 */
async function remember(
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  state: AgentStateValue,
  run: { plan: Plan; status: RunStatus; initial: number; episode: Episode },
): Promise<{ learned: string[]; outcomeStore: BaseStore | undefined }> {
  const { plan, status, initial, episode } = run;
  const simulated = episode.simulated === true;
  const userId = state.request.userContext.userId;
  let learned: string[] = [];
  if (config.store) {
    const saved = await saveEpisode(config.store, userId, episode).then((key) => ({ key }), refusedForSize);
    // The run stands as it ended: only what it would have taught later runs is lost, and that is said.
    if ("refused" in saved)
      return { learned: [`This run was not remembered for next time: ${saved.refused}`], outcomeStore: undefined };
    const { key } = saved;
    const outcome = await reflectOnRunFailures(
      { store: config.store, registry: deps.registry, decisionLog: deps.decisionLog },
      userId,
      key,
      episode,
    );
    learned = outcome?.reflection ? [`Reflection ${outcome.reflection.id}: ${outcome.reflection.learning}`] : [];
  }
  const outcomeStore = status === "rejected" || isReactive(plan) ? undefined : config.store;
  if (outcomeStore) {
    const outcome = {
      planId: plan.planId,
      confidence: initial,
      success: status === "completed",
      executionMs: episode.durationMs,
      cost: episode.cost,
      at: episode.at,
      ...(simulated ? { simulated } : {}),
    };
    await new ConfidenceCalibrator(outcomeStore, userId).record(outcome);
  }
  return { learned, outcomeStore };
}

/** A store that refused the episode for its size (LIMIT_EXCEEDED) is said, not thrown; any other failure is the store's. */
function refusedForSize(e: unknown): { refused: string } {
  if (CandorError.hasCode(e, ErrorCode.LIMIT_EXCEEDED)) return { refused: errorMessage(e) };
  throw e;
}
