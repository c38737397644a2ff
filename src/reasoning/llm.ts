import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import { ModelPlan } from "../domain/plan.js";
import type { PlanningRequest } from "../domain/request.js";
import { fallbackPlan, planFromText, toPlanResult } from "../planning/parse.js";
import type { ToolRegistry } from "../tools/registry.js";
import { planPrompt } from "../../prompts/plan.js";
import { synthesizePrompt } from "../../prompts/synthesize.js";
import type { PlanResult, PlanningContext, Reasoner, RecoveryProposal, RecoveryQuestion, SynthesisInput } from "./types.js";

/** How the model is asked for structured output; see `withStructuredOutput` of the model in use. */
export type StructuredOutputMethod = "jsonSchema" | "functionCalling" | "jsonMode";

/** What an LlmReasoner is built from; the model is injected, never constructed here. */
export interface LlmReasonerOptions {
  model: BaseChatModel;
  /** Used whenever the model's answer is unusable (normally the rules reasoner). */
  fallback: Reasoner;
  /** Time the model gets per judgement, across any second attempt (default 30 000 ms). */
  timeoutMs?: number;
  /**
   * Structured-output method. Absent: the model's default (`jsonSchema`, strict, for ChatOpenAI).
   * `functionCalling` keeps a malformed answer inspectable in one call; see `plan()`.
   */
  method?: StructuredOutputMethod;
  /** Told when synthesis falls back to the rules template, since `synthesize` can only return text. */
  onFallback?: (note: string) => void;
}

/** Outcome of asking the model for a plan: a usable plan, or a sentence saying why there is none. */
type Attempt = PlanResult | { why: string };

/**
 * Plans and synthesizes with a LangChain chat model, validated by the same schemas as the rules reasoner.
 * A bad answer (unparseable, invalid, cyclic, late, or an unreachable server) never throws: the plan comes
 * from the fallback reasoner and `notes` says why. Only cancellation through `ctx.signal` propagates.
 */
export class LlmReasoner implements Reasoner {
  readonly kind = "llm" as const;
  private readonly model: BaseChatModel;
  private readonly fallback: Reasoner;
  private readonly timeoutMs: number;
  private readonly method: StructuredOutputMethod | undefined;
  private readonly onFallback: ((note: string) => void) | undefined;

  constructor(opts: LlmReasonerOptions) {
    this.model = opts.model;
    this.fallback = opts.fallback;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.method = opts.method;
    this.onFallback = opts.onFallback;
  }

  async plan(request: PlanningRequest, ctx: PlanningContext): Promise<PlanResult> {
    ctx.signal?.throwIfAborted();
    const prompt = planPrompt({
      request,
      tools: [...ctx.registry.tools.values()].map((t) => ({
        name: t.name,
        description: t.description,
        category: t.category,
        consumes: t.consumes,
        produces: t.produces,
      })),
      workers: [...ctx.registry.workers.values()].map((w) => ({
        name: w.name,
        description: w.description,
        tools: ctx.registry.grant(w.name).map((t) => t.name),
      })),
      lessons: [
        ...ctx.lessons,
        ...Object.entries(ctx.unreliableTools).map(([tool, n]) => `${tool} failed in ${n} recent run${n === 1 ? "" : "s"}.`),
      ],
    });
    const attempt = await this.askForPlan(prompt, request, ctx.registry, ctx.signal);
    if ("plan" in attempt) return attempt;
    return this.planWithFallback(request, ctx, attempt.why);
  }

  /** Issue 3 builds the model path (typed prompt, strict schema, 5 s limit); until then the rules answer stands. */
  async proposeRecovery(question: RecoveryQuestion): Promise<RecoveryProposal | null> {
    return this.fallback.proposeRecovery(question);
  }

  async synthesize(input: SynthesisInput): Promise<string> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let why: string;
    try {
      const message = await this.model.invoke(synthesizePrompt(input), { signal: timeout });
      const text = messageText(message).trim();
      if (text.length > 0) return text;
      why = "the model returned an empty answer";
    } catch (e) {
      why = timeout.aborted ? `the model did not answer within ${this.timeoutMs} ms` : `the model call failed: ${briefError(e)}`;
    }
    this.onFallback?.(`The model could not write the answer (${why}); used the ${this.fallback.kind} template instead.`);
    return this.fallback.synthesize(input);
  }

  private async askForPlan(prompt: string, request: PlanningRequest, registry: ToolRegistry, caller: AbortSignal | undefined): Promise<Attempt> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = caller ? AbortSignal.any([caller, timeout]) : timeout;
    const structured = this.model.withStructuredOutput(ModelPlan, {
      includeRaw: true,
      name: "plan",
      ...(this.method ? { method: this.method } : {}),
    });

    let out: { raw: BaseMessage; parsed: unknown };
    try {
      out = await structured.invoke(prompt, { signal });
    } catch (e) {
      const failed = this.callFailure(e, caller, timeout);
      if (failed) return failed;
      // ChatOpenAI's json_schema mode parses the answer inside the OpenAI SDK and throws, so the text is lost.
      // Ask once more without a schema: the point is to see the text, which planFromText can then repair.
      return this.askForPlainPlan(prompt, request, registry, signal, caller, timeout, `The model's structured answer could not be parsed (${briefError(e)}).`);
    }

    if (out.parsed !== null && out.parsed !== undefined) {
      return this.usable(() => toPlanResult(out.parsed, request, registry, "llm"));
    }
    // No parsed value (a non-OpenAI model, streaming, or function calling with broken arguments): the raw
    // message still has the text.
    const text = structuredText(out.raw);
    return this.usable(() => {
      const result = planFromText(text, request, registry);
      return { plan: result.plan, notes: ["The model's answer did not match the plan schema; the plan was read from its text.", ...result.notes] };
    });
  }

  private async askForPlainPlan(
    prompt: string,
    request: PlanningRequest,
    registry: ToolRegistry,
    signal: AbortSignal,
    caller: AbortSignal | undefined,
    timeout: AbortSignal,
    first: string,
  ): Promise<Attempt> {
    let message: BaseMessage;
    try {
      message = await this.model.invoke(prompt, { signal });
    } catch (e) {
      const failed = this.callFailure(e, caller, timeout);
      return { why: `${first} ${failed ? failed.why : `Asking again without a schema failed: ${briefError(e)}.`}` };
    }
    const attempt = this.usable(() => planFromText(messageText(message), request, registry));
    if ("why" in attempt) return { why: `${first} Asked again without a schema, but: ${attempt.why}` };
    return { plan: attempt.plan, notes: [`${first} Asked the model again without a schema and read the plan from its text.`, ...attempt.notes] };
  }

  /** Rethrows cancellation; turns a timeout or a transport failure into a reason. Null: the answer itself was bad. */
  private callFailure(e: unknown, caller: AbortSignal | undefined, timeout: AbortSignal): { why: string } | null {
    if (caller?.aborted) throw e;
    if (timeout.aborted) return { why: `The model did not answer within ${this.timeoutMs} ms.` };
    if (isOutputError(e)) return null;
    return { why: `The model could not be asked for a plan: ${briefError(e)}` };
  }

  private usable(build: () => PlanResult): Attempt {
    try {
      return build();
    } catch (e) {
      if (!CandorError.isInstance(e)) throw e;
      return { why: `The model's plan was rejected: ${e.message}` };
    }
  }

  /** The fallback reasoner's plan, or seed 004's one-step plan when it has none either. */
  private async planWithFallback(request: PlanningRequest, ctx: PlanningContext, why: string): Promise<PlanResult> {
    try {
      const result = await this.fallback.plan(request, ctx);
      return { plan: result.plan, notes: [`${sentence(why)} Used the ${this.fallback.kind} planner instead.`, ...result.notes] };
    } catch (e) {
      if (!CandorError.hasCode(e, ErrorCode.NO_VALID_PLAN)) throw e;
      const both = `${sentence(why)} The ${this.fallback.kind} planner found no plan either: ${sentence(e.message)}`;
      return { plan: fallbackPlan(request, both), notes: [`${both} Using a one-step plan on the general worker.`] };
    }
  }
}

/** Errors that mean "the model answered, but not in the requested shape", as opposed to transport errors. */
function isOutputError(e: unknown): boolean {
  if (e instanceof SyntaxError) return true;
  const name = e instanceof Error ? e.name : "";
  return name === "ZodError" || name === "$ZodError" || name === "OutputParserException";
}

/** One line for a note: schema errors as their first issues, anything else flattened and cut short. */
function briefError(e: unknown): string {
  const issues = (e as { issues?: unknown }).issues;
  if (Array.isArray(issues) && issues.length > 0) {
    const first = (issues as { path?: PropertyKey[]; message?: string }[])
      .slice(0, 3)
      .map((i) => `${i.path?.map(String).join(".") || "(root)"}: ${i.message ?? "invalid"}`);
    return `it does not match the plan schema: ${first.join("; ")}`;
  }
  const text = errorMessage(e).replace(/\s+/g, " ").trim();
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/** The text of a message, whatever its content shape. */
function messageText(message: BaseMessage): string {
  return typeof message.content === "string" ? message.content : message.text;
}

/** Where a structured answer's text lives: tool-call arguments (parsed or broken) or the message text. */
function structuredText(raw: BaseMessage): string {
  const m = raw as BaseMessage & { tool_calls?: { args: unknown }[]; invalid_tool_calls?: { args?: string }[] };
  const call = m.tool_calls?.[0];
  if (call) return JSON.stringify(call.args);
  const broken = m.invalid_tool_calls?.[0]?.args;
  if (broken) return broken;
  return messageText(raw);
}

function sentence(text: string): string {
  const t = text.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}
