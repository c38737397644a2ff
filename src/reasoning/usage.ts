import { AsyncLocalStorage } from "node:async_hooks";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { LLMResult } from "@langchain/core/outputs";
import type { CallSite, ModelCall, TokenBudget, TokenEvent } from "../domain/usage.js";
import { costOf, DEFAULT_PRICES, type PriceTable } from "./prices.js";

/*
 * The one seam every model call goes through for accounting: a LangChain callback handler attached to the chat
 * model itself (so calls through withStructuredOutput, bindTools or streaming are all seen, and a caller added
 * later is metered without doing anything), which records each call's tokens into the usage scope the current
 * node opened (an AsyncLocalStorage, so parallel steps never mix their calls). The node then writes the calls
 * into the run's `tokens` list (nodes/usage.ts).
 */

/** What a node's model calls are recorded against, and the run's token budget as the node began. */
export interface UsageScope {
  site: CallSite;
  taskId: string | null;
  budget: TokenBudget | null;
  /** The run's earlier calls, for estimating the next one from what calls at the same site really took. */
  history: readonly TokenEvent[];
  /** Filled by the meter as calls end. */
  calls: ModelCall[];
}

const scopes = new AsyncLocalStorage<UsageScope>();

/** Runs `fn` with its model calls recorded; returns them with its value. A throw loses the calls (none are half-done). */
export async function withUsageScope<T>(
  scope: Omit<UsageScope, "calls">,
  fn: () => Promise<T>,
): Promise<{ value: T; calls: ModelCall[] }> {
  const open: UsageScope = { ...scope, calls: [] };
  const value = await scopes.run(open, fn);
  settleHeard(open);
  return { value, calls: open.calls };
}

/**
 * A response the meter's tap heard (see tapFetch), kept until its call ends: a call that ends well is recorded
 * from its own result and drops it; one that fails after the server answered (an answer the OpenAI SDK could not
 * parse as the requested JSON: the SDK throws, and LangChain never sees the completion or its usage) is recorded
 * from it, so the tokens the server counted are not lost.
 */
interface Heard {
  /** The completion's id, to pair it with the result of its call. */
  id: string | null;
  call: ModelCall;
}

/** Per scope (keyed by its calls list, which atSite shares): responses heard, and calls under way. */
interface Ledger {
  heard: Heard[];
  underWay: number;
}

const ledgers = new WeakMap<ModelCall[], Ledger>();

function ledgerOf(scope: UsageScope): Ledger {
  let ledger = ledgers.get(scope.calls);
  if (!ledger) {
    ledger = { heard: [], underWay: 0 };
    ledgers.set(scope.calls, ledger);
  }
  return ledger;
}

/** Records every response heard in the scope whose call did not end well, and forgets them. */
function settleHeard(scope: UsageScope): void {
  const ledger = ledgers.get(scope.calls);
  if (!ledger) return;
  scope.calls.push(...ledger.heard.map((h) => h.call));
  ledger.heard = [];
}

/**
 * Runs `fn` with its model calls recorded at `site` in the current scope (the same list, the same budget): for a
 * node that makes calls of two kinds (the synthesize node reviews the answer, then writes it). Outside a scope,
 * just runs `fn`.
 */
export function atSite<T>(site: CallSite, fn: () => Promise<T>): Promise<T> {
  const scope = scopes.getStore();
  return scope ? scopes.run({ ...scope, site }, fn) : fn();
}

/** The calls recorded so far in the current scope (none outside one). */
export function scopeCalls(): readonly ModelCall[] {
  return scopes.getStore()?.calls ?? [];
}

/** Tokens one call at each site is expected to take before any was made: refuses only what clearly cannot fit. */
const DEFAULT_CALL_ESTIMATE: Record<CallSite, number> = {
  planning: 3000,
  recovery: 1800,
  worker: 1800,
  // Writing the answer, with room for the review before it: the planning estimate (src/planning/token-budget.ts) and
  // the synthesize node's budget question count this site alone for the node's calls.
  synthesis: 3500,
  review: 1500,
  reflection: 3200,
  grading: 1700,
  other: 1800,
};

/** Tokens the next call at `site` should take: the mean of the run's calls there so far, else the default. */
export function callEstimate(site: CallSite, history: readonly TokenEvent[]): number {
  let n = 0;
  let sum = 0;
  for (const e of history) {
    if (e.type !== "call" || e.site !== site) continue;
    n += 1;
    sum += e.inputTokens + e.outputTokens;
  }
  return n > 0 ? Math.ceil(sum / n) : DEFAULT_CALL_ESTIMATE[site];
}

/** What the budget looks like inside the current scope: its calls so far counted in. */
function budgetNow(scope: UsageScope): TokenBudget | null {
  if (!scope.budget) return null;
  const spent = scope.calls.reduce((n, c) => n + c.inputTokens + c.outputTokens, 0);
  return { ...scope.budget, used: scope.budget.used + spent };
}

/**
 * Why a model call at `site` may not be made now (the run's token budget is stopped, or the call would take it
 * past its limit), or null when it may, or when no scope or budget applies. Callers fall back or ask a person.
 */
export function budgetRefusal(site: CallSite): string | null {
  const scope = scopes.getStore();
  const budget = scope ? budgetNow(scope) : null;
  if (!scope || !budget) return null;
  return overBudget(site, budget, [...scope.history, ...scope.calls]);
}

/**
 * Why one more call at `site` (or one at each of several sites, made together) does not fit `budget` (stopped, or
 * the estimate goes past the limit), or null.
 */
export function overBudget(
  site: CallSite | readonly CallSite[],
  budget: TokenBudget,
  history: readonly TokenEvent[],
): string | null {
  if (budget.stopped)
    return `a person chose to stop spending tokens (${budget.used} of the ${budget.limit}-token budget used)`;
  const sites: readonly CallSite[] = typeof site === "string" ? [site] : site;
  const estimate = sites.reduce((n, s) => n + callEstimate(s, history), 0);
  if (budget.used + estimate <= budget.limit) return null;
  const what = sites.length === 1 ? `a ${sites[0]} call takes` : `the ${sites.join(" and ")} calls take`;
  return `${what} about ${estimate} tokens and ${budget.used} of the ${budget.limit}-token budget are used, so it would exceed the token budget`;
}

/** What a model's answer may say about its usage (LangChain's AIMessage fields). */
interface ReportedUsage {
  usage_metadata?: { input_tokens?: number; output_tokens?: number };
  response_metadata?: Record<string, unknown>;
}

/** The usage a message reports: LangChain's usage_metadata, else the OpenAI-style token counts. */
function usageOfMessage(
  m: ReportedUsage | undefined,
  llmOutput: Record<string, unknown> | undefined,
): { inputTokens: number; outputTokens: number; model: string | null } {
  const meta = m?.response_metadata ?? {};
  const model =
    typeof meta.model_name === "string" ? meta.model_name : typeof meta.model === "string" ? meta.model : null;
  if (m?.usage_metadata)
    return {
      inputTokens: m.usage_metadata.input_tokens ?? 0,
      outputTokens: m.usage_metadata.output_tokens ?? 0,
      model,
    };
  const usage = (llmOutput?.tokenUsage ?? {}) as { promptTokens?: number; completionTokens?: number };
  return { inputTokens: usage.promptTokens ?? 0, outputTokens: usage.completionTokens ?? 0, model };
}

/** Records each finished call into the current scope, priced by the table. Awaited, so a node never ends before it. */
class UsageMeter extends BaseCallbackHandler {
  name = "candor_usage_meter";
  prices: PriceTable;

  constructor(
    prices: PriceTable,
    private readonly modelName: string,
  ) {
    super({ _awaitHandler: true });
    this.prices = prices;
  }

  /** The call as recorded in `scope`: its tokens priced by the table, the meter's model unless the server named one. */
  callOf(scope: UsageScope, used: { inputTokens: number; outputTokens: number; model: string | null }): ModelCall {
    const tokens = {
      model: used.model ?? this.modelName,
      inputTokens: used.inputTokens,
      outputTokens: used.outputTokens,
    };
    return {
      type: "call",
      site: scope.site,
      taskId: scope.taskId,
      ...tokens,
      costUsd: costOf(tokens, this.prices),
      at: new Date().toISOString(),
    };
  }

  override handleChatModelStart(): void {
    this.started();
  }

  override handleLLMStart(): void {
    this.started();
  }

  private started(): void {
    const scope = scopes.getStore();
    if (scope) ledgerOf(scope).underWay += 1;
  }

  override handleLLMEnd(output: LLMResult): void {
    const scope = scopes.getStore();
    if (!scope) return;
    const generation = output.generations[0]?.[0] as { message?: ReportedUsage & { id?: string } } | undefined;
    scope.calls.push(this.callOf(scope, usageOfMessage(generation?.message, output.llmOutput)));
    // Its response, if the tap heard it, is recorded now: drop it, found by the completion's id; from a server that
    // sends none (LangChain then gives the message an id of its own), the oldest response heard without one.
    const ledger = ledgerOf(scope);
    ledger.underWay = Math.max(0, ledger.underWay - 1);
    const id = generation?.message?.id;
    const byId = ledger.heard.findIndex((h) => h.id !== null && h.id === id);
    const at = byId >= 0 ? byId : ledger.heard.findIndex((h) => h.id === null);
    if (at >= 0) ledger.heard.splice(at, 1);
  }

  override handleLLMError(): void {
    const scope = scopes.getStore();
    if (!scope) return;
    // The failed call's response, if the server answered, is among those heard; with no other call under way in the
    // scope, every response still heard is one whose call failed: record them now, so the budget counts them.
    const ledger = ledgerOf(scope);
    ledger.underWay = Math.max(0, ledger.underWay - 1);
    if (ledger.underWay === 0) settleHeard(scope);
  }
}

/** What a chat-completions (or responses) body says of its usage. */
interface ResponseBody {
  id?: unknown;
  model?: unknown;
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    input_tokens?: number;
    output_tokens?: number;
  } | null;
}

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * The meter's tap on the HTTP client of an OpenAI model: each JSON response with usage made inside a usage scope is
 * heard (see Heard). A streamed response is not read here: its usage reaches handleLLMEnd.
 */
function tapFetch(inner: Fetch, meter: UsageMeter): Fetch {
  return async (input, init) => {
    const res = await inner(input, init);
    const scope = scopes.getStore();
    if (!scope || !res.ok || !(res.headers.get("content-type") ?? "").includes("application/json")) return res;
    try {
      const body = (await res.clone().json()) as ResponseBody;
      const usage = body.usage;
      if (usage)
        ledgerOf(scope).heard.push({
          id: typeof body.id === "string" ? body.id : null,
          call: meter.callOf(scope, {
            inputTokens: usage.prompt_tokens ?? usage.input_tokens ?? 0,
            outputTokens: usage.completion_tokens ?? usage.output_tokens ?? 0,
            model: typeof body.model === "string" ? body.model : null,
          }),
        });
    } catch {
      // Not JSON after all: the SDK will say so; there is no usage to hear.
    }
    return res;
  };
}

/** The parts of ChatOpenAI (and its completions and responses clients) the tap is set on. */
interface OpenAIClientHolder {
  clientConfig?: { fetch?: Fetch };
  client?: unknown;
  completions?: OpenAIClientHolder;
  responses?: OpenAIClientHolder;
}

const meters = new WeakMap<BaseChatModel, UsageMeter>();

/**
 * Attaches the meter to a chat model, once (a second reasoner on the same model reprices, never double-counts).
 * The model's own callbacks are kept.
 */
export function meterModel(model: BaseChatModel, modelName: string, prices: PriceTable = DEFAULT_PRICES): void {
  const existing = meters.get(model);
  if (existing) {
    existing.prices = prices;
    return;
  }
  const meter = new UsageMeter(prices, modelName);
  meters.set(model, meter);
  const callbacks = model.callbacks;
  if (callbacks === undefined) model.callbacks = [meter];
  else if (Array.isArray(callbacks)) model.callbacks = [...callbacks, meter];
  else callbacks.addHandler(meter, false);
  // ChatOpenAI's bindTools and withStructuredOutput go through its withConfig, which builds a new model from the
  // constructor fields (`new ChatOpenAI(this.fields)`), not from this instance: without the meter in those fields,
  // every tool-calling and structured call (the planner's, the workers', the review's) went unrecorded.
  const fields = (model as { fields?: { callbacks?: unknown; configuration?: { fetch?: Fetch } } }).fields;
  if (fields && typeof fields === "object" && (fields.callbacks === undefined || Array.isArray(fields.callbacks)))
    fields.callbacks = [...((fields.callbacks as unknown[] | undefined) ?? []), meter];
  // The OpenAI SDK parses a structured answer itself and throws when it is not the requested JSON, so LangChain
  // never sees that completion: its usage is heard on the HTTP client (the model's clients, and the fields the
  // models ChatOpenAI rebuilds are made from) and recorded when the call fails.
  const tap = (f: Fetch | undefined) => tapFetch(f ?? ((input, init) => globalThis.fetch(input, init)), meter);
  const holder = model as unknown as OpenAIClientHolder;
  for (const m of [holder, holder.completions, holder.responses])
    if (m?.clientConfig && m.client === undefined)
      m.clientConfig = { ...m.clientConfig, fetch: tap(m.clientConfig.fetch) };
  if (fields && typeof fields === "object" && holder.clientConfig)
    fields.configuration = { ...fields.configuration, fetch: tap(fields.configuration?.fetch) };
}
