import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { askUntilAccepted } from "./ask.js";
import { TOKEN_BUDGET_DECISIONS, type TokenBudgetRequest } from "../src/domain/approval.js";
import type { Notification } from "../src/domain/notification.js";
import {
  formatUsage,
  tokenBudgetAfter,
  tokenBudgetOf,
  type BudgetChange,
  type CallSite,
  type ModelCall,
  type TokenBudget,
  type TokenEvent,
} from "../src/domain/usage.js";
import { callEstimate, overBudget, withUsageScope } from "../src/reasoning/usage.js";
import { notification } from "../src/transparency/notify.js";
import { emitNotifications, threadIdOf, type NodeDeps } from "./deps.js";
import type { AgentStateUpdate, AgentStateValue } from "./state.js";
import type { AgentLoopStateValue } from "./state.js";

/*
 * Wrappers the graphs put around nodes (not nodes themselves): each runs its node in a usage scope, so every model
 * call the node makes — through the reasoner or the worker's model, now or in code added later — lands in the
 * run's `tokens` list and the decision log; and, where a model call is certain to follow, asks a person before
 * one that would take the run past its token budget.
 */

type Update = Record<string, unknown>;
type NodeFn<S> = (state: S, config: LangGraphRunnableConfig) => Promise<Update> | Update;
/** A main-graph node, typed as the graph's builder wants it (and as the other wrappers, such as withChat, take it). */
type MainNode = (state: AgentStateValue, config: LangGraphRunnableConfig) => Promise<AgentStateUpdate>;

/**
 * A main-graph node with its model calls recorded as `site`. With `asks`, and a model reasoner, a call that would
 * exceed the budget is put to a person first (synthesis: its call is certain; recovery and reflection are not
 * asked about, since most runs make none, and the reasoner falls back to its rules when the budget refuses them).
 */
export function metered(deps: NodeDeps, site: CallSite, node: MainNode, opts: { asks?: boolean } = {}): MainNode {
  return async (state, config) => {
    const before = tokenBudgetOf(state.request.constraints.tokenBudget, state.tokens);
    const asked =
      opts.asks && deps.reasoner.kind === "llm" && before
        ? askIfOver(
            deps,
            config,
            { planId: state.plan?.planId ?? "(no plan)", taskId: site, site },
            before,
            state.tokens,
            // SYNTHESIZE has the answer reviewed before it is written: both calls are certain, so both are asked about.
            site === "synthesis" && deps.reasoner.reviewAnswer ? ["review", "synthesis"] : [site],
          )
        : null;
    const budget = asked ? tokenBudgetAfter(before, [asked.change]) : before;
    const { value, calls } = await withUsageScope({ site, taskId: null, budget, history: state.tokens }, async () =>
      node(state, config),
    );
    logCalls(deps, config, state.plan?.planId ?? null, calls);
    // withEvents adds only `tokens` and `notifications`, both fields of the main state.
    return withEvents(value, asked, calls);
  };
}

/** The model-driven loop's model node, its calls recorded against its step, asking before one over the budget. */
export function meteredLoopModel(deps: NodeDeps, node: NodeFn<AgentLoopStateValue>): NodeFn<AgentLoopStateValue> {
  return async (state, config) => {
    const before = tokenBudgetAfter(state.tokenBudget, state.tokens);
    const asked = before
      ? askIfOver(deps, config, { planId: state.planId, taskId: state.step.id, site: "worker" }, before, state.tokens)
      : null;
    const budget = asked ? tokenBudgetAfter(before, [asked.change]) : before;
    const { value, calls } = await withUsageScope(
      { site: "worker", taskId: state.step.id, budget, history: state.tokens },
      async () => node(state, config),
    );
    logCalls(deps, config, state.planId, calls);
    return withEvents(value, asked, calls);
  };
}

function withEvents(value: Update, asked: Asked | null, calls: readonly ModelCall[]): Update {
  const events: TokenEvent[] = [...(asked ? [asked.change] : []), ...calls];
  if (events.length === 0) return value;
  const told = asked ? [asked.told] : [];
  const notifications = [...((value.notifications as Notification[] | undefined) ?? []), ...told];
  return { ...value, tokens: [...((value.tokens as TokenEvent[] | undefined) ?? []), ...events], notifications };
}

function logCalls(deps: NodeDeps, config: LangGraphRunnableConfig, planId: string | null, calls: readonly ModelCall[]) {
  for (const c of calls) {
    deps.decisionLog.record({
      operation: "model_call",
      planId,
      taskId: c.taskId,
      threadId: threadIdOf(config),
      input: `${c.site} (${c.model})`,
      decision: formatUsage(c),
      reasoning: `a ${c.site} call of ${c.model}`,
      cost: c.costUsd,
      tokens: { input: c.inputTokens, output: c.outputTokens, costUsd: c.costUsd },
    });
  }
}

/** A person's answer to a token-budget question, accepted when a retry raises the budget to a whole number above it. */
function raisedBudget<A extends { decision: string; params?: Record<string, unknown> | null }>(
  answer: A,
  limit: number,
  suggested: number,
): { ok: true; value: A & { raised: unknown } } | { ok: false; reason: string } {
  const raw = answer.params?.tokenBudget;
  const raised = typeof raw === "string" && /^\d+$/.test(raw.trim()) ? Number(raw) : raw;
  if (answer.decision === "retry" && (typeof raised !== "number" || !Number.isInteger(raised) || raised <= limit)) {
    return {
      ok: false,
      reason: `tokenBudget must be a whole number of tokens above the current ${limit} (got ${JSON.stringify(raw)}), e.g. {"decision":"retry","params":{"tokenBudget":${suggested}}}; or abort to stop spending.`,
    };
  }
  return { ok: true, value: { ...answer, raised } };
}

interface Asked {
  change: BudgetChange;
  told: Notification;
}

/**
 * When one more call at `where.site` would go past the budget, asks a person (with `interrupt()`, asking again
 * when the answer is malformed) to raise it or stop; null when it fits or a person already stopped (the call is
 * then refused where it is made). Nothing before it has side effects, so a resume may re-run the node from the top.
 */
function askIfOver(
  deps: NodeDeps,
  config: LangGraphRunnableConfig,
  where: { planId: string; taskId: string; site: CallSite },
  budget: TokenBudget,
  history: readonly TokenEvent[],
  sites: readonly CallSite[] = [where.site],
): Asked | null {
  if (budget.stopped) return null;
  const why = overBudget(sites, budget, history);
  if (!why) return null;
  const estimate = sites.reduce((n, s) => n + callEstimate(s, history), 0);
  const suggested = Math.ceil(Math.max(budget.limit * 2, budget.used + estimate * 4) / 1000) * 1000;
  const request: TokenBudgetRequest = {
    kind: "token_budget",
    planId: where.planId,
    taskId: where.taskId,
    site: where.site,
    used: budget.used,
    limit: budget.limit,
    estimate,
    retryWith: { tokenBudget: suggested },
    question: `The run has used ${budget.used} of its ${budget.limit}-token budget, and the next ${where.site} call${where.site === "worker" ? ` for step ${where.taskId}` : ""}${sites.length > 1 ? ` (with its ${sites.filter((s) => s !== where.site).join(", ")})` : ""} takes about ${estimate} tokens. Raise the budget to ${suggested} (or another figure) and go on, or stop spending?`,
    decisions: [...TOKEN_BUDGET_DECISIONS],
  };
  const { decision, by, comment, raised } = askUntilAccepted(request, (answer) =>
    raisedBudget(answer, budget.limit, suggested),
  );
  const stopped = decision !== "retry";
  const change: BudgetChange = {
    type: "budget",
    tokenBudget: stopped ? budget.limit : (raised as number),
    stopped,
    by,
    at: new Date().toISOString(),
  };
  const what = stopped
    ? `A person stopped spending tokens at ${budget.used} of ${budget.limit}; no further model call is made`
    : `A person raised the token budget from ${budget.limit} to ${change.tokenBudget}`;
  deps.decisionLog.record({
    operation: "human_decision",
    planId: where.planId,
    taskId: where.site === "worker" ? where.taskId : null,
    threadId: threadIdOf(config),
    input: `token_budget ${budget.used}/${budget.limit} before a ${where.site} call`,
    decision: decision === "retry" ? `raise to ${change.tokenBudget}` : "stop",
    reasoning: `${what}${comment ? `: ${comment}` : ""}`,
  });
  const told = notification({
    severity: stopped ? "WARNING" : "INFO",
    kind: "approval",
    taskId: where.site === "worker" ? where.taskId : null,
    title: `${what}.`,
    message: comment ?? "",
  });
  emitNotifications(config, [told]);
  return { change, told };
}
