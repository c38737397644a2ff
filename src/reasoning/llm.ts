import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import { z } from "zod";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import { ModelPlan } from "../domain/plan.js";
import type { PlanningRequest } from "../domain/request.js";
import { extractJson, fallbackPlan, planFromText, toPlanResult } from "../planning/parse.js";
import { ModelRecoveryProposal, toRecoveryProposal } from "./recovery-answer.js";
import type { ToolRegistry } from "../tools/registry.js";
import { abortReason } from "../tools/sleep.js";
import { inputsOf } from "../tools/types.js";
import { planPrompt } from "../../prompts/plan.js";
import { replanStrategyPrompt } from "../../prompts/replan.js";
import { reviewPrompt, synthesizePrompt } from "../../prompts/synthesize.js";
import { reflectPrompt } from "../../prompts/reflect.js";
import { gradePrompt } from "../../prompts/grade.js";
import { workerPrompt } from "../../prompts/worker.js";
import type { ReflectionDraft } from "../domain/reflection.js";
import type { Result } from "../result.js";
import { partsToReview, type AnswerReview } from "../planning/coverage.js";
import type { PriceTable } from "./prices.js";
import { atSite, budgetRefusal, meterModel } from "./usage.js";
import {
  DEFAULT_MAX_MODEL_CALLS_PER_STEP,
  type WorkerModel,
  type PlanResult,
  type PlanningContext,
  type Reasoner,
  type RecoveryProposal,
  type RecoveryQuestion,
  type ReflectionAnswer,
  type ReflectionQuestion,
  type RelevanceQuestion,
  type SynthesisInput,
} from "./types.js";

/** Grades as the model is asked for them (strict mode). */
const ModelGrades = z.object({ grades: z.array(z.object({ index: z.number().int(), score: z.number() })) });

/** A reflection as the model is asked for it (strict mode: flat, every field required). */
const ModelReflection = z.object({
  whatHappened: z.string(),
  why: z.string(),
  rootCause: z.string(),
  patternsIdentified: z.array(z.string()),
  strategyAdjustments: z.array(z.string()),
  learning: z.string(),
});

/** What a model is asked when it reviews an answer (strict mode: every field required). */
const ModelAnswerReview = z.object({
  parts: z.array(z.object({ partId: z.string(), answered: z.boolean(), why: z.string().nullable() })),
});

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
  /**
   * Time the model gets to propose a recovery, across any second attempt (default 5000 ms, seed 003). Enforced
   * even if the model ignores its abort signal.
   */
  recoveryTimeoutMs?: number;
  /**
   * Told when synthesis falls back to the rules template, or when `proposeRecovery` has no proposal (late,
   * unreachable or unusable answer), since neither can return notes.
   */
  onFallback?: (note: string) => void;
  /**
   * Model calls a model-driven step may make, tool calls included (default 6); 0 turns model-driven workers off,
   * so every step is a direct call as with the rules reasoner.
   */
  maxModelCallsPerStep?: number;
  /** Prices of the model's tokens, for the cost of each call (default DEFAULT_PRICES). */
  prices?: PriceTable;
}

/** Seed 003: strategy generation must finish within 5 seconds. */
const DEFAULT_RECOVERY_TIMEOUT_MS = 5000;

/** Outcome of asking the model for a plan: a usable plan, or a sentence saying why there is none. */
type Attempt = PlanResult | { why: string };

/**
 * Plans and synthesizes with a LangChain chat model, validated by the same schemas as the rules reasoner.
 * A bad answer (unparseable, invalid, cyclic, late, or an unreachable server) never throws: the plan comes
 * from the fallback reasoner and `notes` says why. Only cancellation through `ctx.signal` propagates.
 */
export class LlmReasoner implements Reasoner {
  readonly kind = "llm" as const;
  readonly modelName: string;
  private readonly model: BaseChatModel;
  private readonly fallback: Reasoner;
  private readonly timeoutMs: number;
  private readonly method: StructuredOutputMethod | undefined;
  private readonly onFallback: ((note: string) => void) | undefined;
  private readonly recoveryTimeoutMs: number;
  readonly workerModel?: WorkerModel;

  constructor(opts: LlmReasonerOptions) {
    const maxModelCalls = opts.maxModelCallsPerStep ?? DEFAULT_MAX_MODEL_CALLS_PER_STEP;
    if (!Number.isInteger(maxModelCalls) || maxModelCalls < 0) {
      throw new CandorError(
        `maxModelCallsPerStep must be a whole number of model calls, 0 or more (got ${maxModelCalls}); 0 turns model-driven workers off.`,
        ErrorCode.CONFIGURATION,
      );
    }
    if (maxModelCalls > 0) this.workerModel = { model: opts.model, maxModelCalls, prompt: workerPrompt };
    this.model = opts.model;
    this.modelName = (opts.model as { model?: unknown }).model?.toString() ?? "unknown";
    // Every call of this model, the worker loop's included, is recorded and priced (src/reasoning/usage.ts).
    meterModel(opts.model, this.modelName, opts.prices);
    this.fallback = opts.fallback;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.recoveryTimeoutMs = opts.recoveryTimeoutMs ?? DEFAULT_RECOVERY_TIMEOUT_MS;
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
        consumes: inputsOf(t),
        produces: t.produces,
        // What a step's call can carry: a constraint is served only through a parameter (check-understanding.ts).
        arguments: compactArguments(t.schema),
      })),
      workers: [...ctx.registry.workers.values()].map((w) => ({
        name: w.name,
        description: w.description,
        tools: ctx.registry.grant(w.name).map((t) => t.name),
      })),
      lessons: [
        ...ctx.lessons,
        ...Object.entries(ctx.unreliableTools).map(
          ([tool, n]) => `${tool} failed in ${n} recent run${n === 1 ? "" : "s"}.`,
        ),
      ],
    });
    const refused = budgetRefusal("planning");
    if (refused) return this.planWithFallback(request, ctx, `The model was not asked for a plan: ${refused}`);
    const attempt = await this.askForPlan(prompt, request, ctx.registry, ctx.signal);
    if ("plan" in attempt) return attempt;
    return this.planWithFallback(request, ctx, attempt.why);
  }

  /**
   * Seed 003: asks the model for a recovery of a failure no rule recognises. Returns null (and tells
   * `onFallback` why) when the answer is late, the server fails, or the answer is unusable, so the caller skips
   * or escalates; only cancellation through `question.signal` propagates. The proposal is checked for shape
   * only: `validateProposal` decides whether it fits the plan.
   */
  async proposeRecovery(question: RecoveryQuestion): Promise<RecoveryProposal | null> {
    const caller = question.signal;
    caller?.throwIfAborted();
    const { registry } = question;
    const prompt = replanStrategyPrompt({
      failure: question.failure,
      plan: question.plan,
      tools: [...registry.tools.values()].map((t) => ({
        name: t.name,
        description: t.description,
        produces: t.produces,
        arguments: argumentsOf(t.schema),
      })),
      workers: [...registry.workers.values()].map((w) => ({
        name: w.name,
        tools: registry.grant(w.name).map((t) => t.name),
      })),
    });
    const refused = budgetRefusal("recovery");
    if (refused) {
      this.onFallback?.(`The model was not asked for a recovery of step ${question.failure.step.id}: ${refused}.`);
      return null;
    }
    const timeout = AbortSignal.timeout(this.recoveryTimeoutMs);
    const signal = caller ? AbortSignal.any([caller, timeout]) : timeout;
    const answer = await this.askForRecovery(prompt, signal, caller, timeout);
    if ("proposal" in answer) return answer.proposal;
    this.onFallback?.(
      `The model proposed no usable recovery for step ${question.failure.step.id}: ${sentence(answer.why)}`,
    );
    return null;
  }

  private async askForRecovery(
    prompt: string,
    signal: AbortSignal,
    caller: AbortSignal | undefined,
    timeout: AbortSignal,
  ): Promise<{ proposal: RecoveryProposal } | { why: string }> {
    const structured = this.model.withStructuredOutput(ModelRecoveryProposal, {
      includeRaw: true,
      name: "recovery",
      ...(this.method ? { method: this.method } : {}),
    });
    let out: { raw: BaseMessage; parsed: unknown };
    try {
      out = await untilAborted(structured.invoke(prompt, { signal }), signal);
    } catch (e) {
      const failed = this.recoveryCallFailure(e, caller, timeout);
      if (failed) return failed;
      // As in plan(): the SDK threw away the text of an answer it could not parse, so ask once without a schema.
      const first = `its structured answer could not be parsed (${briefError(e, "recovery")})`;
      let message: BaseMessage;
      try {
        message = await untilAborted(this.model.invoke(prompt, { signal }), signal);
      } catch (e2) {
        const again = this.recoveryCallFailure(e2, caller, timeout);
        return {
          why: `${first}; asking again without a schema failed: ${again ? again.why : briefError(e2, "recovery")}`,
        };
      }
      const repaired = recoveryFromText(messageText(message));
      return "why" in repaired ? { why: `${first}; asked again without a schema, but ${repaired.why}` } : repaired;
    }
    if (out.parsed !== null && out.parsed !== undefined) {
      const proposal = toRecoveryProposal(out.parsed);
      return "why" in proposal ? { why: `its answer is unusable: ${proposal.why}` } : proposal;
    }
    return recoveryFromText(structuredText(out.raw));
  }

  /** Rethrows cancellation; a timeout or transport failure becomes a reason; null means the answer was malformed. */
  private recoveryCallFailure(
    e: unknown,
    caller: AbortSignal | undefined,
    timeout: AbortSignal,
  ): { why: string } | null {
    if (caller?.aborted) throw e;
    if (timeout.aborted) return { why: `the model did not answer within ${this.recoveryTimeoutMs} ms` };
    if (isOutputError(e)) return null;
    return { why: `the model could not be asked: ${briefError(e, "recovery")}` };
  }

  async synthesize(input: SynthesisInput): Promise<string> {
    const refused = budgetRefusal("synthesis");
    if (refused) {
      this.onFallback?.(
        `The model was not asked to write the answer (${refused}); used the ${this.fallback.kind} template instead.`,
      );
      return this.fallback.synthesize(input);
    }
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let why: string;
    try {
      const message = await this.model.invoke(synthesizePrompt(input), { signal: timeout });
      const text = messageText(message).trim();
      if (text.length > 0) return text;
      why = "the model returned an empty answer";
    } catch (e) {
      why = timeout.aborted
        ? `the model did not answer within ${this.timeoutMs} ms`
        : `the model call failed: ${briefError(e)}`;
    }
    this.onFallback?.(
      `The model could not write the answer (${why}); used the ${this.fallback.kind} template instead.`,
    );
    return this.fallback.synthesize(input);
  }

  /**
   * Asks the model whether the results answer each part of the request. Null (and `onFallback` told why) when the
   * model is late, unreachable or answers in another shape: the record alone then decides, as with rules.
   */
  async reviewAnswer(input: SynthesisInput): Promise<AnswerReview | null> {
    // Nothing a review could change (no part answered by a step, or no parts): no call is made.
    if (partsToReview(input.plan).length === 0) return null;
    const refused = budgetRefusal("review");
    if (refused) {
      this.onFallback?.(
        `The model did not review the answer (${refused}); the understanding record alone decides what was answered.`,
      );
      return null;
    }
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const structured = this.model.withStructuredOutput(ModelAnswerReview, {
      name: "answer_review",
      ...(this.method ? { method: this.method } : {}),
    });
    try {
      const parsed = ModelAnswerReview.safeParse(
        // Recorded as a review, not as the synthesis call that writes the answer after it.
        await atSite("review", () =>
          untilAborted(structured.invoke(reviewPrompt(input), { signal: timeout }), timeout),
        ),
      );
      if (parsed.success) return parsed.data;
      this.onFallback?.(
        `The model's review of the answer was unusable (${briefError(parsed.error, "review")}); the understanding record alone decides what was answered.`,
      );
    } catch (e) {
      const why = timeout.aborted ? `it did not answer within ${this.timeoutMs} ms` : briefError(e, "review");
      this.onFallback?.(
        `The model could not review the answer (${why}); the understanding record alone decides what was answered.`,
      );
    }
    return null;
  }

  /**
   * Seed 001: asks the model for a reflection, with the prompt of the improvement loop's attempt. `ok: false` says
   * why there is none (late, unreachable, another shape); the caller falls back to the rules. Only cancellation
   * through `question.signal` propagates. The draft is checked for shape only: the quality gate judges it.
   */
  async reflect(question: ReflectionQuestion): Promise<Result<ReflectionAnswer>> {
    const caller = question.signal;
    caller?.throwIfAborted();
    const refused = budgetRefusal("reflection");
    if (refused) return { ok: false, reason: `the model was not asked: ${refused}` };
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = caller ? AbortSignal.any([caller, timeout]) : timeout;
    const structured = this.model.withStructuredOutput(ModelReflection, {
      includeRaw: true,
      name: "reflection",
      ...(this.method ? { method: this.method } : {}),
    });
    const prompt = reflectPrompt({ input: question.input, attempt: question.attempt, previous: question.previous });
    let out: { raw: BaseMessage; parsed: unknown };
    try {
      out = await untilAborted(structured.invoke(prompt, { signal }), signal);
    } catch (e) {
      if (caller?.aborted) throw e;
      if (timeout.aborted) return { ok: false, reason: `the model did not answer within ${this.timeoutMs} ms` };
      return { ok: false, reason: `the model's reflection is unusable: ${briefError(e, "reflection")}` };
    }
    let value = out.parsed;
    if (value === null || value === undefined) {
      try {
        value = extractJson(structuredText(out.raw), "the reflection");
      } catch (e) {
        return { ok: false, reason: `the model's reflection has no usable JSON: ${briefError(e, "reflection")}` };
      }
    }
    const parsed = ModelReflection.safeParse(value);
    if (!parsed.success)
      return { ok: false, reason: `the model's reflection is unusable: ${briefError(parsed.error, "reflection")}` };
    const r = parsed.data;
    const draft: ReflectionDraft = {
      analysis: { whatHappened: r.whatHappened, why: r.why, rootCause: r.rootCause },
      patternsIdentified: r.patternsIdentified,
      strategyAdjustments: r.strategyAdjustments,
      learning: r.learning,
    };
    return { ok: true, value: { draft, usage: usageOf(out.raw, this.model) } };
  }

  /**
   * Grades passages with the model. Null (and `onFallback` told why) when it is late, unreachable, or leaves a
   * passage ungraded: term coverage grades then. Only cancellation through `question.signal` propagates.
   */
  async gradeRelevance(question: RelevanceQuestion): Promise<number[] | null> {
    const caller = question.signal;
    caller?.throwIfAborted();
    const refused = budgetRefusal("grading");
    if (refused) {
      this.onFallback?.(`The model did not grade the passages (${refused}); term coverage graded them instead.`);
      return null;
    }
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = caller ? AbortSignal.any([caller, timeout]) : timeout;
    const structured = this.model.withStructuredOutput(ModelGrades, {
      name: "relevance_grades",
      ...(this.method ? { method: this.method } : {}),
    });
    let why: string;
    try {
      const parsed = ModelGrades.safeParse(
        await untilAborted(structured.invoke(gradePrompt(question), { signal }), signal),
      );
      if (parsed.success) {
        const scores = question.passages.map((_, i) => parsed.data.grades.find((g) => g.index === i)?.score);
        if (scores.every((x): x is number => typeof x === "number"))
          return scores.map((x) => Math.min(1, Math.max(0, x)));
        why = "it left some passages ungraded";
      } else why = briefError(parsed.error, "grades");
    } catch (e) {
      if (caller?.aborted) throw e;
      why = timeout.aborted ? `it did not answer within ${this.timeoutMs} ms` : briefError(e, "grades");
    }
    this.onFallback?.(`The model could not grade the passages (${why}); term coverage graded them instead.`);
    return null;
  }

  private async askForPlan(
    prompt: string,
    request: PlanningRequest,
    registry: ToolRegistry,
    caller: AbortSignal | undefined,
  ): Promise<Attempt> {
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
      return this.askForPlainPlan(
        prompt,
        request,
        registry,
        signal,
        caller,
        timeout,
        `The model's structured answer could not be parsed (${briefError(e)}).`,
      );
    }

    if (out.parsed !== null && out.parsed !== undefined) {
      return this.usable(() => toPlanResult(out.parsed, request, registry, "llm", this.workerModel));
    }
    // No parsed value (a non-OpenAI model, streaming, or function calling with broken arguments): the raw
    // message still has the text.
    const text = structuredText(out.raw);
    return this.usable(() => {
      const result = planFromText(text, request, registry, this.workerModel);
      return {
        plan: result.plan,
        notes: ["The model's answer did not match the plan schema; the plan was read from its text.", ...result.notes],
      };
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
    const attempt = this.usable(() => planFromText(messageText(message), request, registry, this.workerModel));
    if ("why" in attempt) return { why: `${first} Asked again without a schema, but: ${attempt.why}` };
    return {
      plan: attempt.plan,
      notes: [`${first} Asked the model again without a schema and read the plan from its text.`, ...attempt.notes],
    };
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
      return {
        plan: result.plan,
        notes: [`${sentence(why)} Used the ${this.fallback.kind} planner instead.`, ...result.notes],
      };
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
function briefError(e: unknown, schema = "plan"): string {
  const issues = (e as { issues?: unknown }).issues;
  if (Array.isArray(issues) && issues.length > 0) {
    const first = (issues as { path?: PropertyKey[]; message?: string }[])
      .slice(0, 3)
      .map((i) => `${i.path?.map(String).join(".") || "(root)"}: ${i.message ?? "invalid"}`);
    return `it does not match the ${schema} schema: ${first.join("; ")}`;
  }
  const text = errorMessage(e).replace(/\s+/g, " ").trim();
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/** A tool's argument properties as compact JSON Schema; `unrepresentable: "any"` keeps transforms from throwing. */
function argumentsOf(schema: z.ZodType): string {
  const json = z.toJSONSchema(schema, { unrepresentable: "any", io: "input" }) as { properties?: unknown };
  const text = JSON.stringify(json.properties ?? {});
  return text.length > 400 ? `${text.slice(0, 399)}…` : text;
}

/** One JSON Schema property as a planner reads it: `"a" | "b"`, `integer 1–60`, `number | null`. */
interface JsonProperty {
  type?: string;
  enum?: unknown[];
  anyOf?: JsonProperty[];
  minimum?: number;
  maximum?: number;
  items?: JsonProperty;
  default?: unknown;
}

function propertyText(p: JsonProperty): string {
  if (p.enum) return p.enum.map((e) => JSON.stringify(e)).join(" | ");
  if (p.anyOf) return p.anyOf.map(propertyText).join(" | ");
  if (p.type === "array") return `list of ${p.items ? propertyText(p.items) : "values"}`;
  const range = p.minimum !== undefined && p.maximum !== undefined ? ` ${p.minimum}–${p.maximum}` : "";
  return `${p.type ?? "any"}${range}`;
}

/**
 * A tool's parameters in one line for the planning prompt, every one named with its type, its choices and its
 * default ("priority: \"recommended\" | \"price\" = \"recommended\""): a constraint is carried only by a
 * parameter, so the model must see every parameter, not a JSON Schema cut off at a length.
 */
function compactArguments(schema: z.ZodType): string {
  const json = z.toJSONSchema(schema, { unrepresentable: "any", io: "input" }) as {
    properties?: Record<string, JsonProperty>;
  };
  return Object.entries(json.properties ?? {})
    .map(
      ([name, p]) => `${name}: ${propertyText(p)}${p.default !== undefined ? ` = ${JSON.stringify(p.default)}` : ""}`,
    )
    .join("; ");
}

/** A recovery read tolerantly from model text (fences, prose, trailing commas), or why it cannot be. */
function recoveryFromText(text: string): { proposal: RecoveryProposal } | { why: string } {
  let value: unknown;
  try {
    value = extractJson(text, "the recovery proposal");
  } catch (e) {
    if (!CandorError.isInstance(e)) throw e;
    return { why: `its answer has no usable JSON: ${briefError(e)}` };
  }
  const proposal = toRecoveryProposal(value);
  return "why" in proposal ? { why: `its answer is unusable: ${proposal.why}` } : proposal;
}

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as it aborts: a deadline holds even if a
 * model ignores its signal. The abandoned promise's rejection is observed so it is never reported as unhandled.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
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

/** The tokens a call used, from the message's usage metadata; zero when the server sent none. */
function usageOf(raw: BaseMessage, model: BaseChatModel): { model: string; inputTokens: number; outputTokens: number } {
  const m = raw as BaseMessage & {
    usage_metadata?: { input_tokens?: number; output_tokens?: number };
    response_metadata?: { model_name?: string; model?: string };
  };
  const name =
    m.response_metadata?.model_name ?? m.response_metadata?.model ?? (model as { model?: string }).model ?? "unknown";
  return {
    model: name,
    inputTokens: m.usage_metadata?.input_tokens ?? 0,
    outputTokens: m.usage_metadata?.output_tokens ?? 0,
  };
}
