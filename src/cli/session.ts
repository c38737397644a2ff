import { closeAfterFailure, closeInTurn } from "./closing.js";
import { Command } from "@langchain/langgraph";
import { z } from "zod";
import { compileAgent } from "../../graphs/agent.js";
import { Node } from "../../nodes/names.js";
import { ANSWER_TAG } from "../../nodes/synthesize.js";
import type { AgentStateValue } from "../../nodes/state.js";
import { defaultToolkits } from "../app/toolkits.js";
import {
  InterruptRequest,
  TokenBudgetRequest,
  TOOL_APPROVAL_DECISIONS,
  type PlanAdjustment,
} from "../domain/approval.js";
import { CandorEvent } from "../domain/notification.js";
import { Plan, type TaskStep } from "../domain/plan.js";
import { modelDrivenPredicate } from "../tools/model-driven.js";
import type { RunStatus } from "../domain/report.js";
import { PlanningRequest, RunSettings } from "../domain/request.js";
import { storageBoundsOf, type CandorEnv } from "../env.js";
import { graphBoundsOf, type StorageBounds } from "../domain/config.js";
import { CandorError, ErrorCode } from "../errors.js";
import { databaseMayExist, openDatabase, type Persistence } from "../memory/persistence.js";
import { RulesReasoner } from "../reasoning/rules.js";
import { pricesFrom } from "../reasoning/prices.js";
import type { Reasoner } from "../reasoning/types.js";
import { parseFaultSpecs, withFaults } from "../tools/faults.js";
import type { Toolkit } from "../tools/types.js";
import type { McpServers } from "../tools/mcp/servers.js";
import { docsToolkit, type DocsToolkitOptions } from "../tools/builtin/docs.js";
import { isPostgresUrl } from "../memory/postgres-url.js";
import { DEFAULT_DB_PATH } from "../env.js";
import { interruptsOf } from "../interrupts.js";
import { debuggingToolkit } from "../tools/builtin/debugging/index.js";
import { persistenceArchive } from "./run-archive.js";
import { otelHandler } from "./tracing.js";
import { THREADS_NAMESPACE, ThreadRecord, type DebugTools, type ReasonerChoice } from "./options.js";

export type CandorGraph = ReturnType<typeof compileAgent>;

/** An open database with the agent compiled on it. Close it when the command is done. */
export interface Session {
  graph: CandorGraph;
  persistence: Persistence;
  /** Where the decision log is: the file beside a SQLite database, or its table in PostgreSQL (`candor logs` reads it). */
  logFile: string;
  /** Whether a step of a plan runs as a model-driven tool loop (the plan view marks those). */
  modelDriven?: (step: TaskStep) => boolean;
  /** Waits for the decision log's writes, then closes the database; fails when a decision could not be written. */
  close(): Promise<void>;
}

/**
 * The default toolkits (workspace + travel), then docs and the MCP servers' toolkits when configured, with the
 * requested faults; malformed specs and unknown tools are INVALID_REQUEST. `env` says whether hard-linked files
 * may be read (CANDOR_ALLOW_HARD_LINKS).
 */
export function buildToolkits(
  faults: readonly string[],
  docs?: DocsToolkitOptions,
  extra: Toolkit[] = [],
  env: Pick<CandorEnv, "CANDOR_ALLOW_HARD_LINKS"> = {},
): Toolkit[] {
  const allowHardLinks = env.CANDOR_ALLOW_HARD_LINKS ?? false;
  return withFaults(
    [...defaultToolkits({ allowHardLinks }), ...(docs ? [docsToolkit(docs)] : []), ...extra],
    parseFaultSpecs(faults),
  );
}

/**
 * Starts the MCP servers of a configuration file (none without one). Loaded only when asked for: a run without
 * MCP never loads the client.
 */
async function openMcp(file: string | null | undefined): Promise<McpServers | null> {
  if (!file) return null;
  const [{ loadMcpConfig }, { openMcpServers }] = await Promise.all([
    import("../tools/mcp/config.js"),
    import("../tools/mcp/servers.js"),
  ]);
  return openMcpServers(loadMcpConfig(file));
}

/** Runs `use` with the servers started; when it throws, they are stopped before the error goes on. */
async function usingMcp<T>(file: string | null | undefined, use: (mcp: McpServers | null) => Promise<T>): Promise<T> {
  const mcp = await openMcp(file);
  try {
    return await use(mcp);
  } catch (e) {
    if (mcp) await closeAfterFailure(mcp, e, { what: "the MCP servers" });
    throw e;
  }
}

/** The docs toolkit over CANDOR_DOCS, indexed in the run's database, graded by the model when there is one. */
function docsOptions(env: CandorEnv, dbPath: string, reasoner: Reasoner): DocsToolkitOptions | undefined {
  if (!env.CANDOR_DOCS) return undefined;
  const grade = reasoner.gradeRelevance?.bind(reasoner);
  return {
    dir: env.CANDOR_DOCS,
    allowHardLinks: env.CANDOR_ALLOW_HARD_LINKS ?? false,
    // The index is SQLite FTS5: on a PostgreSQL database it lives in the default local file instead.
    dbPath: isPostgresUrl(dbPath) ? DEFAULT_DB_PATH : dbPath,
    ...(grade ? { grader: (query, task, passages, signal) => grade({ query, task, passages, signal }) } : {}),
  };
}

/**
 * `onNote` hears what the llm reasoner says when it falls back to rules outside a plan's own notes. The model
 * client is loaded only when a run asks for it: the offline path starts faster without it.
 */
async function buildReasoner(
  choice: ReasonerChoice,
  env: CandorEnv,
  onNote?: (note: string) => void,
): Promise<Reasoner> {
  if (choice.kind === "rules") return new RulesReasoner();
  const [{ createChatModel }, { LlmReasoner }] = await Promise.all([
    import("../reasoning/model.js"),
    import("../reasoning/llm.js"),
  ]);
  const model = createChatModel({
    apiKey: env.OPENAI_API_KEY,
    baseUrl: env.OPENAI_BASE_URL,
    model: choice.model ?? undefined,
  });
  return new LlmReasoner({
    model,
    fallback: new RulesReasoner(),
    onFallback: onNote,
    prices: pricesFrom(env),
    ...(env.CANDOR_MAX_MODEL_CALLS !== undefined ? { maxModelCallsPerStep: env.CANDOR_MAX_MODEL_CALLS } : {}),
  });
}

/**
 * Builds tools and reasoner first (so bad input fails before a file is touched), then opens the database and
 * compiles the agent on it.
 */
export async function openSession(spec: SessionSpec): Promise<Session> {
  const reasoner = await buildReasoner(spec.reasoner, spec.env, spec.onNote);
  return usingMcp(spec.mcp, async (mcp) => {
    const toolkits = buildToolkits(spec.faults, docsOptions(spec.env, spec.dbPath, reasoner), mcp?.toolkits, spec.env);
    // The store holds to the bound on a stored value the environment sets (CANDOR_MAX_STORED_VALUE_BYTES).
    const persistence = await openDatabase(spec.dbPath, { bounds: storageBoundsOf(spec.env) });
    return compileOn(persistence, toolkits, reasoner, spec.env, true, mcp, spec.debugTools);
  });
}

/** Compiles the agent on an already open database (resume, report, history: the thread says which faults). */
export async function sessionOn(persistence: Persistence, spec: Omit<SessionSpec, "dbPath">): Promise<Session> {
  try {
    const reasoner = await buildReasoner(spec.reasoner, spec.env, spec.onNote);
    return await usingMcp(spec.mcp, (mcp) =>
      compileOn(
        persistence,
        buildToolkits(spec.faults, docsOptions(spec.env, persistence.dbPath, reasoner), mcp?.toolkits, spec.env),
        reasoner,
        spec.env,
        true,
        mcp,
        spec.debugTools,
      ),
    );
  } catch (e) {
    return closeAfterFailure(persistence, e, { where: persistence.dbPath });
  }
}

/**
 * Compiles the agent on a database the caller keeps open (a worker runs many threads on one connection pool):
 * `close` waits for the decision log's writes and leaves the database open.
 */
export async function sessionSharing(persistence: Persistence, spec: Omit<SessionSpec, "dbPath">): Promise<Session> {
  const reasoner = await buildReasoner(spec.reasoner, spec.env, spec.onNote);
  return usingMcp(spec.mcp, async (mcp) =>
    compileOn(
      persistence,
      buildToolkits(spec.faults, undefined, mcp?.toolkits, spec.env),
      reasoner,
      spec.env,
      false,
      mcp,
      spec.debugTools,
    ),
  );
}

export interface SessionSpec {
  dbPath: string;
  reasoner: ReasonerChoice;
  faults: readonly string[];
  env: CandorEnv;
  onNote?: (note: string) => void;
  /** An MCP configuration file: its servers are started with the session and stopped when it closes. */
  mcp?: string | null;
  /** The debugging tools: beside the others, or alone (a review); CANDOR_DEBUG_TOOLS adds them too. Default: off. */
  debugTools?: DebugTools;
}

async function compileOn(
  persistence: Persistence,
  toolkits: Toolkit[],
  reasoner: Reasoner,
  env: CandorEnv,
  ownsDatabase = true,
  mcp: McpServers | null = null,
  debugTools?: DebugTools,
): Promise<Session> {
  const logFile = persistence.decisions.where;
  try {
    const decisionLog = persistence.decisions.open(env.CANDOR_LOG_LEVEL ?? "info");
    // The debugging tools read threads through this session's own graph (list fields are rebuilt from history),
    // which exists only once the tools are compiled into it: they ask for it when they run, never before.
    const compiled: { graph?: CandorGraph } = {};
    const debugging = debugTools ?? (env.CANDOR_DEBUG_TOOLS ? "added" : undefined);
    if (debugging) {
      const archive = persistenceArchive(
        persistence,
        async (threadId): Promise<unknown> => (await compiled.graph!.getState(threadConfig(threadId))).values,
      );
      const kit = debuggingToolkit({ archive });
      toolkits = debugging === "alone" ? [kit] : [...toolkits, kit];
    }
    // Side-effecting tool calls are recorded in the same database, so a resumed or replayed thread never repeats one.
    // The bounds the environment sets (CANDOR_MAX_*) hold the graph's plans, tool calls and log lines.
    const bounds = graphBoundsOf(storageBoundsOf(env));
    const agent = compileAgent(
      { toolkits, reasoner, decisionLog, logFile, ledger: persistence.ledger, bounds },
      persistence,
    );
    // With OpenTelemetry on, every run of this graph (run, resume, replay, a worker's threads) reports its spans.
    const traced = await otelHandler(env);
    const graph = traced ? agent.withConfig({ callbacks: [traced] }) : agent;
    compiled.graph = graph;
    // Each part is closed, in this order, whatever the others did: the decision log is flushed into the database
    // before it closes, and the servers are child processes (or open connections) that would keep the CLI alive. The
    // first failure (a full disk while flushing) is the one said; a later one is not lost behind it.
    const close = () =>
      closeInTurn([
        { close: () => decisionLog.flush(), what: "the decision log" },
        { close: async () => mcp?.close(), what: "the MCP servers" },
        { close: async () => (ownsDatabase ? persistence.close() : undefined), where: persistence.dbPath },
      ]);
    const modelDriven = modelDrivenPredicate(toolkits, reasoner.workerModel);
    return { graph, persistence, logFile, modelDriven, close };
  } catch (e) {
    if (ownsDatabase) await closeAfterFailure(persistence, e, { where: persistence.dbPath });
    throw e;
  }
}

/**
 * Opens a database that must already exist: reading a thread never creates an empty database (or its
 * directory) as a side effect of a typo. `bounds`: the store's bound on a stored value, as the environment sets it
 * (`storageBoundsOf`), so a resumed run is held to what a new one is.
 */
export async function openExisting(
  dbPath: string,
  threadId: string,
  bounds: Partial<StorageBounds> = {},
): Promise<Persistence> {
  if (!databaseMayExist(dbPath)) {
    throw new CandorError(
      `There is no thread "${threadId}": no Candor database exists at ${dbPath}. Pass --db with the database the run used, or start a run with: run "<request>".`,
      ErrorCode.UNKNOWN_THREAD,
    );
  }
  return openDatabase(dbPath, { bounds });
}

/** The RunnableConfig that addresses a thread's checkpoints. */
export function threadConfig(threadId: string) {
  return { configurable: { thread_id: threadId } };
}

/** True when the thread has at least one checkpoint in this database. */
export async function threadExists(persistence: Persistence, threadId: string): Promise<boolean> {
  return (await persistence.checkpointer.getTuple(threadConfig(threadId))) !== undefined;
}

/** Remembers how a thread was started (faults, reasoner, user) so another process can rebuild it. */
export async function saveThreadRecord(persistence: Persistence, record: ThreadRecord): Promise<void> {
  await persistence.store.put(THREADS_NAMESPACE, record.threadId, record);
}

/** What the database holds about a thread: how the CLI started it, and whether it reached a checkpoint. */
export interface StoredThread {
  /** The options it was started with, or null for a thread started elsewhere (Studio, the library API). */
  record: ThreadRecord | null;
  /**
   * False when only the record exists: the run stopped (Ctrl-C, a crash) before its first checkpoint, so
   * nothing ran. `resume` starts it again from the record.
   */
  started: boolean;
}

/**
 * The thread's record and whether it has started.
 * @throws CandorError UNKNOWN_THREAD, naming a few known threads, when the database has neither a checkpoint
 *   nor a record of it.
 */
export async function loadThreadRecord(persistence: Persistence, threadId: string): Promise<StoredThread> {
  const started = await threadExists(persistence, threadId);
  const item = await persistence.store.get(THREADS_NAMESPACE, threadId);
  const parsed = ThreadRecord.safeParse(item?.value);
  const record = parsed.success ? parsed.data : null;
  if (!started && !record) throw await unknownThread(persistence, threadId);
  return { record, started };
}

/** The error for a thread this database does not know, with the threads it does know. */
async function unknownThread(persistence: Persistence, threadId: string): Promise<CandorError> {
  const known = (await persistence.store.search(THREADS_NAMESPACE, { limit: 5 })).map((item) => item.key);
  const hint =
    known.length > 0 ? ` Recent threads in this database: ${known.join(", ")}.` : " This database has no threads yet.";
  return new CandorError(
    `There is no thread "${threadId}" in ${persistence.dbPath}.${hint} Check the id, or pass --db with the database the run used.`,
    ErrorCode.UNKNOWN_THREAD,
  );
}

/**
 * What starts a recorded thread: its request for its user, with its settings. `run` starts with it, and `resume`
 * starts a thread that stopped before its first checkpoint with it again, so both start it the same way.
 */
export function startInput(record: ThreadRecord): Extract<ThreadInput, { kind: "start" }> {
  const request = PlanningRequest.parse({
    userIntent: record.request,
    userContext: { userId: record.userId },
    constraints: record.tokenBudget !== undefined ? { tokenBudget: record.tokenBudget } : {},
  });
  return { kind: "start", value: { request, settings: record.settings ?? RunSettings.parse({}) } };
}

/** Receives what a streamed thread reports, as it happens. */
export interface StreamHandlers {
  onEvent(event: CandorEvent): void;
  /** The plan UNDERSTAND made, as soon as it is in state. */
  onPlan(plan: Plan): void;
  /** A piece of the answer as a model writes it (SYNTHESIZE); absent: the graph's messages are not streamed. */
  onAnswerToken?(text: string): void;
}

/** What a run or a resume sends to the graph. */
export type ThreadInput =
  | { kind: "start"; value: Record<string, unknown> }
  | {
      kind: "decision";
      decision: string;
      comment: string | null;
      adjustments?: PlanAdjustment[];
      /** Extra fields of the resume value (e.g. `params` of a retry), passed only when HumanDecision has them. */
      extra?: Record<string, unknown>;
      /** When several interrupts wait (parallel tool approvals), the ids this decision answers. */
      interruptIds?: string[];
    }
  | { kind: "continue" };

/** The resume value a decision sends: one value, or one per interrupt id when several interrupts wait. */
function resumeValue(input: Extract<ThreadInput, { kind: "decision" }>): unknown {
  const value = {
    decision: input.decision,
    comment: input.comment,
    ...(input.adjustments ? { adjustments: input.adjustments } : {}),
    ...input.extra,
  };
  const ids = input.interruptIds ?? [];
  return ids.length > 1 ? Object.fromEntries(ids.map((id) => [id, value])) : value;
}

/**
 * Streams a thread to the end or to its next interrupt, passing events to the handlers as they happen.
 * `checkpointId` starts from that checkpoint instead of the latest (replay and fork).
 */
export async function streamThread(
  graph: CandorGraph,
  threadId: string,
  input: ThreadInput,
  handlers: StreamHandlers,
  signal?: AbortSignal,
  checkpointId?: string,
): Promise<void> {
  const value =
    input.kind === "start"
      ? input.value
      : input.kind === "decision"
        ? new Command({ resume: resumeValue(input) })
        : null;
  const config = checkpointId
    ? { configurable: { thread_id: threadId, checkpoint_id: checkpointId } }
    : threadConfig(threadId);
  const stream = await graph.stream(value as never, {
    ...config,
    streamMode: handlers.onAnswerToken ? ["custom", "updates", "messages"] : ["custom", "updates"],
    subgraphs: true,
    signal,
  });
  for await (const chunk of stream as AsyncIterable<unknown>) {
    if (!Array.isArray(chunk) || chunk.length !== 3) continue;
    const [namespace, mode, data] = chunk as [string[], string, unknown];
    if (mode === "custom") {
      const event = CandorEvent.safeParse(data);
      if (event.success) handlers.onEvent(event.data);
    } else if (mode === "messages") {
      // Every model call streams here (planner, workers); only the answer's tokens carry ANSWER_TAG.
      const [message, meta] = data as [{ text?: unknown } | undefined, { tags?: unknown } | undefined];
      const text = message?.text;
      if (Array.isArray(meta?.tags) && meta.tags.includes(ANSWER_TAG) && typeof text === "string" && text.length > 0)
        handlers.onAnswerToken?.(text);
    } else if (
      mode === "updates" &&
      namespace.length === 0 &&
      data &&
      typeof data === "object" &&
      Node.UNDERSTAND in data
    ) {
      const plan = Plan.safeParse((data as Record<string, { plan?: unknown }>)[Node.UNDERSTAND]?.plan);
      if (plan.success) handlers.onPlan(plan.data);
    }
  }
}

/**
 * A worker waiting for approval of one tool call (an irreversible or approval-gated tool). Read loosely from the
 * worker's interrupt payload: only what the CLI shows and checks is required.
 */
const ToolApprovalWait = z.looseObject({
  kind: z.literal("tool_approval"),
  decisions: z.array(z.string()).default([...TOOL_APPROVAL_DECISIONS]),
  question: z.string().default("A step wants to call a tool that needs approval. Approve the call, or deny it?"),
  taskId: z.string().optional(),
  tool: z.string().optional(),
  args: z.unknown().optional(),
});
type ToolApprovalWait = z.infer<typeof ToolApprovalWait>;

/** What a waiting thread asks: a plan approval or escalation from human_interrupt, or a tool call from a worker. */
export type WaitingRequest = InterruptRequest | ToolApprovalWait;

/** Where a thread stands after a command: finished, waiting for a person, or stopped part-way (a crash). */
export interface ThreadOutcome {
  threadId: string;
  status: RunStatus;
  finished: boolean;
  waitingFor: WaitingRequest | null;
  /** The ids of the pending interrupts the waiting request came from (several when parallel workers wait). */
  interruptIds: string[];
  next: string[];
  values: AgentStateValue;
  /** The part of the answer already printed as the model wrote it (`executeThread` with `streamAnswer`). */
  streamedAnswer?: string;
}

/**
 * Reads the thread's latest checkpoint: waiting when a pending request sits before human_interrupt, or when a
 * worker waits for a tool call's approval.
 */
export async function readOutcome(graph: CandorGraph, threadId: string): Promise<ThreadOutcome> {
  const snapshot = await graph.getState(threadConfig(threadId), { subgraphs: true });
  const values = snapshot.values as AgentStateValue;
  const pending = InterruptRequest.safeParse(values.pendingInterrupt);
  // After a malformed resume value LangGraph leaves the re-asking task out of `next` but keeps its interrupt,
  // so a pending interrupt on any task also means the thread is waiting.
  // Every task's interrupts, subgraph tasks included (a worker's tool approval waits inside the worker).
  const interrupts = interruptsOf(snapshot);
  const interrupted = interrupts.length > 0;
  const waiting = pending.success && (snapshot.next.includes(Node.HUMAN_INTERRUPT) || interrupted);
  const tools = interrupts.flatMap((i): { id: string | undefined; request: WaitingRequest }[] => {
    const parsed = ToolApprovalWait.safeParse(i.value);
    if (parsed.success) return [{ id: i.id, request: parsed.data }];
    // A model call waiting for a larger token budget asks from inside the worker too (or from synthesize).
    const budget = TokenBudgetRequest.safeParse(i.value);
    return budget.success ? [{ id: i.id, request: budget.data }] : [];
  });
  const waitingFor: WaitingRequest | null = waiting ? pending.data : (tools[0]?.request ?? null);
  const interruptIds = waiting
    ? interrupts.flatMap((i) => (i.id ? [i.id] : []))
    : tools.flatMap((t) => (t.id ? [t.id] : []));
  return {
    threadId,
    status: values.status,
    // A process killed after a superstep's tasks saved their writes but before the next checkpoint leaves those
    // tasks out of `next` (they ran) while the graph has not moved on: not finished, `invoke(null)` continues it.
    finished: snapshot.next.length === 0 && snapshot.tasks.length === 0 && !interrupted,
    waitingFor,
    interruptIds,
    next: [...snapshot.next],
    values,
  };
}
