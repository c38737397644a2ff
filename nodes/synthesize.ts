import { RunnableLambda } from "@langchain/core/runnables";
import { nextOf } from "../src/domain/next.js";
import { planOf, planWrites } from "../src/domain/plan-state.js";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Notification } from "../src/domain/notification.js";
import { failIncompleteSteps, judgeReview, missingFromAnswer, type ReviewVerdict } from "../src/planning/coverage.js";
import { resultsById } from "../src/planning/schedule.js";
import { resultLine } from "../src/reasoning/rules.js";
import type { SynthesisInput } from "../src/reasoning/types.js";
import { checkAnswer, type Correction } from "../src/transparency/answer-check.js";
import { failureNotification, notification } from "../src/transparency/notify.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import { Node } from "./names.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";

/**
 * The tag on the model call that writes the answer: in LangGraph's `messages` stream mode its tokens arrive as
 * they are written, with this tag in their metadata's `tags` (other model calls — the planner, workers — stream
 * there too; this tag says which tokens are the answer).
 */
export const ANSWER_TAG = "candor:answer";

/** LangGraph's tag for a model call whose tokens stay out of the `messages` stream. */
const NO_STREAM_TAG = "langsmith:nostream";

/**
 * Runs a reasoner call as a child of the node's run, under the node's config (its callbacks, among them the
 * `messages` stream's handler, which asks the model to stream) with `tags` added: the model call inside inherits
 * both, so a model that streams hands its tokens to the graph's stream as they come. The rules reasoner makes no
 * model call; the child run is then only a step in a trace.
 */
function underNodeConfig<T>(
  config: LangGraphRunnableConfig,
  runName: string,
  tags: string[],
  call: () => Promise<T>,
): Promise<T> {
  return RunnableLambda.from(call).invoke(undefined, { ...config, runName, tags: [...(config.tags ?? []), ...tags] });
}

/**
 * SYNTHESIZE: with failures pending, hand over to replanning; otherwise judge the results against the request's
 * understanding record (a part no step served is missing; with a model, a part whose results do not answer it
 * goes back to replanning as `incomplete_result`) and compose the answer, checked against the run's record before
 * it is kept: what the runs do not back is taken out or added, and each correction is said (answer-check.ts).
 */
export function synthesizeNode(deps: NodeDeps) {
  return async (state: AgentStateValue, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> => {
    const plan = planOf(state)!;
    const failed = plan.steps.filter((s) => s.status === "failed");
    if (failed.length > 0) {
      deps.decisionLog.record({
        operation: "route",
        planId: plan.planId,
        threadId: threadIdOf(config),
        input: `${failed.length} failed step(s)`,
        decision: "replan",
        reasoning: `failed: ${failed.map((s) => s.id).join(", ")}`,
        confidenceBefore: plan.confidence,
        confidenceAfter: plan.confidence,
      });
      return { status: "replanning", next: { kind: "choose_recovery" } };
    }
    const missing = missingFromAnswer(plan);
    const input = { request: state.request, plan, results: resultsById(plan), missing };
    const told: Notification[] = [];
    const sentBack = await reviewed(deps, config, state, input, told);
    if (sentBack) return sentBack;
    emitNotifications(config, told);
    const written = await underNodeConfig(config, "write_answer", [ANSWER_TAG], () => deps.reasoner.synthesize(input));
    const { answer, corrections } = checkAnswer({
      ...input,
      answer: written,
      feedback: state.feedback,
      tools: [...deps.registry.tools.values()],
      grants: grantsOf(deps.registry),
      resultLine,
    });
    told.push(...announceCorrections(deps, config, plan.planId, corrections));
    deps.decisionLog.record({
      operation: "synthesize",
      planId: plan.planId,
      threadId: threadIdOf(config),
      input: `${plan.steps.length} steps`,
      decision: missing.length ? `answer without ${missing.map((m) => m.id).join(", ")}` : "answer",
      reasoning: `${deps.reasoner.kind} synthesis`,
    });
    // Nothing more runs: REFLECT and FINALIZE end the run.
    return { answer, status: "reflecting", next: { kind: "end" }, ...(told.length > 0 ? { notifications: told } : {}) };
  };
}

/** The tools each worker type may use, by name: what a step that names no tool could have called. */
function grantsOf(registry: NodeDeps["registry"]): Record<string, string[]> {
  return Object.fromEntries([...registry.workers.keys()].map((w) => [w, registry.grant(w).map((t) => t.name)]));
}

/**
 * Each correction of the answer, said at once (a WARNING, as for an overruled review) and recorded in the decision
 * log; the answer itself carries a "Corrected: …" line for each.
 */
function announceCorrections(
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  planId: string,
  corrections: readonly Correction[],
): Notification[] {
  const told = corrections.map((c) =>
    notification({
      severity: "WARNING",
      kind: "outcome",
      title: `The answer was corrected: ${c.text}${c.sentence ? ` The sentence was: ${JSON.stringify(c.sentence)}` : ""}`,
    }),
  );
  for (const c of corrections) {
    deps.decisionLog.record({
      operation: "synthesize",
      planId,
      threadId: threadIdOf(config),
      input: c.sentence ?? "the answer as written",
      decision: `correct the answer (${c.kind})`,
      reasoning: c.text,
    });
  }
  emitNotifications(config, told);
  return told;
}

/**
 * With a model, its review of the results against the request's parts: a part it says is answered though no step
 * served it is overruled (and said); a served part whose results do not answer it fails its last step as
 * `incomplete_result` and the run goes back to replanning (the update returned). Null: the answer can be written.
 */
async function reviewed(
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  state: AgentStateValue,
  input: SynthesisInput,
  told: Notification[],
): Promise<AgentStateUpdate | null> {
  const { plan } = input;
  const reviewAnswer = deps.reasoner.reviewAnswer?.bind(deps.reasoner);
  // The review is JSON for Candor, not text for the user: kept out of the `messages` stream.
  const review = reviewAnswer
    ? await underNodeConfig(config, "review_answer", [NO_STREAM_TAG], () => reviewAnswer(input))
    : null;
  if (review) {
    const verdict = judgeReview(plan, review);
    told.push(...overruled(deps, config, plan.planId, verdict.overruled));
    if (verdict.incomplete.length > 0) {
      const { plan: revised, feedback } = failIncompleteSteps(plan, verdict.incomplete);
      for (const [i, gap] of verdict.incomplete.entries()) {
        told.push(
          failureNotification(
            revised.steps.find((s) => s.id === gap.stepId)!,
            feedback[i]!,
            deps.logFile,
          ),
        );
        deps.decisionLog.record({
          operation: "synthesize",
          planId: plan.planId,
          taskId: gap.stepId,
          threadId: threadIdOf(config),
          input: `review of ${gap.partId}`,
          decision: "incomplete_result: replan",
          reasoning: gap.why,
        });
      }
      emitNotifications(config, told);
      return {
        ...planWrites(state, revised),
        feedback,
        notifications: told,
        status: "replanning",
        next: { kind: "choose_recovery" },
      };
    }
  }
  return null;
}

/** Parts the model said are answered though no step served them: the record wins, said and logged. */
function overruled(
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  planId: string,
  parts: ReviewVerdict["overruled"],
): Notification[] {
  return parts.map((o) => {
    deps.decisionLog.record({
      operation: "synthesize",
      planId,
      threadId: threadIdOf(config),
      input: `review of ${o.partId}`,
      decision: "overrule the model",
      reasoning: o.why,
    });
    return notification({
      severity: "WARNING",
      kind: "outcome",
      title: `Part "${o.text}" is missing from the answer: ${o.why}; the model's review is overruled`,
    });
  });
}

export type AfterSynthesize = typeof Node.SELECT_STRATEGY | typeof Node.REFLECT;

/** Failed steps (a tool's failure, or a result a review found does not answer its part) → select_strategy; else reflect. */
export function routeAfterSynthesize(state: AgentStateValue): AfterSynthesize {
  return nextOf(state).kind === "choose_recovery" ? Node.SELECT_STRATEGY : Node.REFLECT;
}
