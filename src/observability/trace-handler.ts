import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import type { BaseMessage } from "@langchain/core/messages";
import type { LLMResult } from "@langchain/core/outputs";
import { isGraphBubbleUp } from "@langchain/langgraph";
import {
  context,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import { z } from "zod";
import { CandorError, errorMessage } from "../errors.js";
import { CandorAttr, GenAi, PLANNING_NODE } from "./attributes.js";
import { clockMs, type ToolCallObserver, type ToolCallReport } from "./tool-calls.js";

/*
 * OpenTelemetry spans for Candor's runs, after the GenAI semantic conventions (status: Development), from LangChain's
 * callbacks: the graph's run is `invoke_agent candor`, each node (and each eager step's task) a span under it, a
 * model call `chat <model>` with its token usage, and each tool call `execute_tool <tool>` (reported by runStep,
 * which alone knows a call's failure class: src/observability/tool-calls.ts). A plan and each revision get a span of
 * their own under the node that made them. Parents are set explicitly from LangChain's run ids, so the spans nest
 * without an OpenTelemetry context manager; a run started inside an app's active span becomes its child.
 */

/** What a node's update may carry that the trace names: read loosely, each field on its own. */
const PlanWritten = z.looseObject({
  planId: z.string(),
  steps: z.array(z.unknown()),
  confidence: z.number().optional(),
});
const RevisionsWritten = z.array(
  z.looseObject({
    revisionId: z.string(),
    strategy: z.string(),
    failedTaskId: z.string(),
    failureClass: z.string(),
  }),
);
const Status = z.string();

/** LangChain's run, as far as the trace follows it. */
interface Run {
  /** The context a child's span is started in: this run's span, or its nearest ancestor's. */
  ctx: Context;
  span: Span | null;
  /** The LangGraph node this run is (null: the graph, a model call, or a runnable inside a node). */
  node: string | null;
  startedAt: number;
  /** The thread the run belongs to (gen_ai.conversation.id), from the graph's run down to every call in it. */
  conversation: string | undefined;
}

/** Either a LangGraph node's (or task's) own run, or null (the graph's internal runnables, a node's inner chains). */
function nodeOf(runName: string | undefined, tags: string[] | undefined, metadata: Record<string, unknown> = {}) {
  if (tags?.includes("langsmith:hidden")) return null;
  return runName !== undefined && metadata.langgraph_node === runName ? runName : null;
}

/** What went wrong, as error.type: Candor's error code, else the error's name. */
function errorType(err: unknown): string {
  if (CandorError.isInstance(err)) return err.code;
  return err instanceof Error ? err.name : typeof err;
}

/** One line of at most 300 characters: a span's status message, not a log. */
function cut(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 300 ? `${flat.slice(0, 299)}…` : flat;
}

function defined(attributes: Record<string, string | number | boolean | string[] | undefined | null>): Attributes {
  return Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== undefined && v !== null)) as Attributes;
}

export interface CandorTraceHandlerOptions {
  /** gen_ai.agent.name, and the name of the root span (default: the graph's run name, `candor`). */
  agentName?: string;
}

/**
 * A LangChain callback handler that turns a Candor run into OpenTelemetry spans on the given tracer. Pass it in the
 * graph's config (`graph.withConfig({ callbacks: [handler] })` or per call); one handler serves any number of runs at
 * once. The tracer decides where spans go: `startOtlpTracing` builds one that exports over OTLP/HTTP, or an app
 * passes its own provider's.
 */
export class CandorTraceHandler extends BaseCallbackHandler implements ToolCallObserver {
  name = "candor_trace_handler";
  // Awaited, not queued: a node's span must exist before the node runs, or its tool calls would find no parent.
  override awaitHandlers = true;
  private readonly runs = new Map<string, Run>();

  constructor(
    private readonly tracer: Tracer,
    private readonly options: CandorTraceHandlerOptions = {},
  ) {
    super();
  }

  /** The parent context of a run's span: its parent run's, else the caller's active context (an app's span). */
  private parentCtx(parentRunId: string | undefined): Context {
    return (parentRunId !== undefined ? this.runs.get(parentRunId)?.ctx : undefined) ?? context.active();
  }

  private open(
    runId: string,
    parentRunId: string | undefined,
    node: string | null,
    make: (ctx: Context, conversation: string | undefined) => Span | null,
    conversation = this.conversationOf(parentRunId),
  ) {
    const parent = this.parentCtx(parentRunId);
    const span = make(parent, conversation);
    const ctx = span ? trace.setSpan(parent, span) : parent;
    this.runs.set(runId, { ctx, span, node, startedAt: clockMs(), conversation });
  }

  private conversationOf(parentRunId: string | undefined): string | undefined {
    return parentRunId !== undefined ? this.runs.get(parentRunId)?.conversation : undefined;
  }

  // LangChain calls this with (chain, inputs, runId, parentRunId, tags, metadata, runType, runName), whatever the
  // declaration's parameter names say (@langchain/core 1.4 callbacks/manager.js).
  override handleChainStart(
    _chain: Serialized,
    _inputs: unknown,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    _runType?: string,
    runName?: string,
  ): void {
    // The agent's run is the first this handler hears of: the top of a call, or the graph inside an app's own
    // runnable when the handler was bound to the graph alone.
    if (parentRunId === undefined || !this.runs.has(parentRunId)) {
      const agent = this.options.agentName ?? runName ?? "candor";
      const threadId = typeof metadata?.thread_id === "string" ? metadata.thread_id : undefined;
      const span = (ctx: Context) =>
        this.tracer.startSpan(
          `invoke_agent ${agent}`,
          {
            kind: SpanKind.INTERNAL,
            attributes: defined({
              [GenAi.OPERATION]: "invoke_agent",
              [GenAi.AGENT_NAME]: agent,
              [GenAi.CONVERSATION_ID]: threadId,
            }),
          },
          ctx,
        );
      this.open(runId, parentRunId, null, span, threadId);
      return;
    }
    const node = nodeOf(runName, tags, metadata);
    this.open(runId, parentRunId, node, (ctx) =>
      node
        ? this.tracer.startSpan(node, { kind: SpanKind.INTERNAL, attributes: { [CandorAttr.NODE]: node } }, ctx)
        : null,
    );
  }

  override handleChainEnd(outputs: unknown, runId: string): void {
    const run = this.take(runId);
    if (!run?.span) return;
    const out = (outputs ?? {}) as Record<string, unknown>;
    if (run.node) this.markPlanAndRevisions(run, run.span, out);
    else {
      const status = Status.safeParse(out.status);
      if (status.success) run.span.setAttribute(CandorAttr.RUN_STATUS, status.data);
    }
    run.span.end();
  }

  override handleChainError(err: unknown, runId: string): void {
    const run = this.take(runId);
    if (!run?.span) return;
    // An interrupt (a question to a person) or a command to the parent graph ends a node without failing it.
    if (isGraphBubbleUp(err)) run.span.setAttribute(CandorAttr.INTERRUPTED, true);
    else this.fail(run.span, errorType(err), errorMessage(err));
    run.span.end();
  }

  /** The plan a planning node wrote, and each revision any node made, as spans over the node's own time. */
  private markPlanAndRevisions(run: Run, span: Span, out: Record<string, unknown>): void {
    const end = clockMs();
    const plan = PlanWritten.safeParse(out.plan);
    if (run.node === PLANNING_NODE && plan.success) {
      const attributes = defined({
        [CandorAttr.PLAN_ID]: plan.data.planId,
        [CandorAttr.PLAN_STEPS]: plan.data.steps.length,
        [CandorAttr.PLAN_CONFIDENCE]: plan.data.confidence,
      });
      span.setAttributes(attributes);
      this.tracer.startSpan("plan", { startTime: run.startedAt, attributes }, run.ctx).end(end);
    }
    const revisions = RevisionsWritten.safeParse(out.revisions);
    for (const r of revisions.success ? revisions.data : []) {
      const attributes = {
        [CandorAttr.REVISION_ID]: r.revisionId,
        [CandorAttr.STRATEGY]: r.strategy,
        [CandorAttr.FAILED_STEP]: r.failedTaskId,
        [CandorAttr.FAILURE_CLASS]: r.failureClass,
      };
      this.tracer.startSpan(`revise ${r.strategy}`, { startTime: run.startedAt, attributes }, run.ctx).end(end);
    }
  }

  // (llm, messages, runId, parentRunId, extraParams, tags, metadata, runName), as declared.
  override handleChatModelStart(
    _llm: Serialized,
    _messages: BaseMessage[][],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
  ): void {
    const params = (extraParams?.invocation_params ?? {}) as Record<string, unknown>;
    const model = [params.model, params.modelName, metadata?.ls_model_name].find(
      (m): m is string => typeof m === "string",
    );
    const provider = typeof metadata?.ls_provider === "string" ? metadata.ls_provider : undefined;
    const num = (v: unknown) => (typeof v === "number" ? v : undefined);
    this.open(runId, parentRunId, null, (ctx, conversation) =>
      this.tracer.startSpan(
        model ? `chat ${model}` : "chat",
        {
          kind: SpanKind.CLIENT,
          attributes: defined({
            [GenAi.OPERATION]: "chat",
            [GenAi.CONVERSATION_ID]: conversation,
            [GenAi.REQUEST_MODEL]: model,
            [GenAi.PROVIDER]: provider,
            [GenAi.SYSTEM]: provider,
            [GenAi.REQUEST_TEMPERATURE]: num(params.temperature),
            [GenAi.REQUEST_MAX_TOKENS]: num(params.max_tokens ?? params.max_completion_tokens),
          }),
        },
        ctx,
      ),
    );
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    const run = this.take(runId);
    if (!run?.span) return;
    run.span.setAttributes(usageAttributes(output));
    run.span.end();
  }

  override handleLLMError(err: unknown, runId: string): void {
    const run = this.take(runId);
    if (!run?.span) return;
    this.fail(run.span, errorType(err), errorMessage(err));
    run.span.end();
  }

  /** A tool call runStep settled: `execute_tool <tool>`, failed with Candor's failure class as error.type. */
  handleCandorToolCall(report: ToolCallReport, parentRunId: string | undefined): void {
    const f = report.feedback;
    const tool = f.tool ?? "unknown";
    const span = this.tracer.startSpan(
      `execute_tool ${tool}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: report.startedAt,
        attributes: defined({
          [GenAi.OPERATION]: "execute_tool",
          [GenAi.CONVERSATION_ID]: this.conversationOf(parentRunId),
          [GenAi.TOOL_NAME]: tool,
          [GenAi.TOOL_TYPE]: "function",
          [CandorAttr.STEP_ID]: f.taskId,
          [CandorAttr.DISPATCH]: f.dispatch,
          [CandorAttr.ATTEMPTS]: f.attempt,
          [CandorAttr.OUTCOME]: f.feedbackType,
        }),
      },
      this.parentCtx(parentRunId),
    );
    // Each failed attempt before the last, as an event: a retried call is one span that says what it went through.
    for (const a of f.attempts.slice(0, -1)) {
      if (a.error) span.addEvent("attempt failed", { attempt: a.attempt, message: cut(a.error) });
    }
    if (f.failureClass !== null) {
      this.fail(span, f.failureClass, f.errors.at(-1) ?? f.failureClass);
      if (f.errorType) span.setAttribute(CandorAttr.ERROR_CODE, f.errorType);
    }
    span.end(report.endedAt);
  }

  private fail(span: Span, type: string, message: string): void {
    span.setAttribute(GenAi.ERROR_TYPE, type);
    span.setStatus({ code: SpanStatusCode.ERROR, message: cut(message) });
  }

  private take(runId: string): Run | undefined {
    const run = this.runs.get(runId);
    this.runs.delete(runId);
    return run;
  }
}

/** Token usage and the answering model of a model call: usage_metadata first, else the provider's own tokenUsage. */
function usageAttributes(output: LLMResult): Attributes {
  const generation = output.generations[0]?.[0] as
    | {
        message?: { usage_metadata?: { input_tokens?: number; output_tokens?: number }; response_metadata?: unknown };
        generationInfo?: Record<string, unknown>;
      }
    | undefined;
  const usage = generation?.message?.usage_metadata;
  const legacy = (output.llmOutput?.tokenUsage ?? {}) as { promptTokens?: number; completionTokens?: number };
  const meta = (generation?.message?.response_metadata ?? {}) as { model_name?: unknown; finish_reason?: unknown };
  const finish = generation?.generationInfo?.finish_reason ?? meta.finish_reason;
  return defined({
    [GenAi.INPUT_TOKENS]: usage?.input_tokens ?? legacy.promptTokens,
    [GenAi.OUTPUT_TOKENS]: usage?.output_tokens ?? legacy.completionTokens,
    [GenAi.RESPONSE_MODEL]: typeof meta.model_name === "string" ? meta.model_name : undefined,
    [GenAi.FINISH_REASONS]: typeof finish === "string" ? [finish] : undefined,
  });
}
