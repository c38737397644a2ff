/**
 * Candor's public library API: build and compile the agent, bring your own tools and worker types, persist to
 * SQLite, and read what happened (notifications, reports, decisions). See docs/embedding.md.
 */
export { buildAgentGraph, compileAgent, RECURSION_LIMIT, type AgentDeps, type AgentGraph } from "../graphs/agent.js";
export { buildWorkerGraph } from "../graphs/worker.js";
export { AgentState, WorkerInput, type AgentStateValue, type AgentStateUpdate } from "../nodes/state.js";
export { Node, type NodeId } from "../nodes/names.js";
export { routeAfterUnderstand } from "../nodes/understand.js";
export { routeAfterExecute } from "../nodes/execute.js";
export { ANSWER_TAG, routeAfterSynthesize } from "../nodes/synthesize.js";
export { routeAfterSelectStrategy } from "../nodes/select-strategy.js";
export { routeAfterHumanInterrupt } from "../nodes/human-interrupt.js";
export { routeAfterRevision } from "../nodes/apply-strategy.js";
export { routeAfterReplanWithGuidance } from "../nodes/replan-with-guidance.js";
export { routeFromStart, routeAfterConverse } from "../nodes/chat.js";
export { Next, nextAfterEdit, nextOf, type NextKind } from "./domain/next.js";

export * from "./domain/index.js";
export { CandorError, ErrorCode, errorMessage } from "./errors.js";
export { ToolRegistry, ALL_CATEGORIES } from "./tools/registry.js";
export { defineTool } from "./tools/types.js";
export type { ToolSpec, ToolContext, Toolkit, WorkerType, SideEffect, RequestFacts } from "./tools/types.js";
export { generalToolkit } from "./tools/general.js";
export { withFaults, parseFaultSpec, FAULT_KINDS } from "./tools/faults.js";
export { runStep } from "./execution/run-step.js";
export { loadMcpConfig, parseMcpConfig, type McpServer } from "./tools/mcp/config.js";
export { openMcpServers, type McpServers } from "./tools/mcp/servers.js";
export { RulesReasoner } from "./reasoning/rules.js";
export type { Reasoner, PlanningContext, PlanResult, SynthesisInput } from "./reasoning/types.js";
export { validatePlan, findCycle } from "./planning/validate.js";
export { planWithRules } from "./planning/rules-planner.js";
export { classifyFailure } from "./replanning/classify.js";
export { selectStrategy, STRATEGY_PREFERENCES } from "./replanning/select.js";
export { STRATEGIES } from "./replanning/strategies/index.js";
export { STRATEGY_DELTAS, outcomeDelta } from "./confidence/update.js";
export { SqliteStore } from "./memory/sqlite-store.js";
export {
  openPersistence,
  openDatabase,
  migrateDatabase,
  isPostgresUrl,
  decisionLogPath,
  type Persistence,
  type SqlitePersistence,
  type PostgresPersistence,
  type MigrationReport,
} from "./memory/persistence.js";
export { recentEpisodes, saveEpisode, summarizeLessons } from "./memory/episodes.js";
export { giveFeedback, judgedRunOf, type ThreadStateReader } from "./reflection/feedback.js";
export {
  recordFeedback,
  type FeedbackInput,
  type JudgedRun,
  type LearningDeps,
  type LearningOutcome,
} from "./reflection/learn.js";
export { learnable, type Learnable } from "./reflection/knobs.js";
export { validateReflection, scoreReflection, QUALITY_THRESHOLDS } from "./reflection/quality.js";
export { validatePattern, minePatterns } from "./reflection/patterns.js";
export {
  fileDecisionLog,
  memoryDecisionLog,
  silentDecisionLog,
  type Decision,
  type DecisionLog,
} from "./transparency/decision-log.js";
export { buildReport, renderReport } from "./transparency/report.js";
export {
  pendingRequests,
  answerRequests,
  interruptsOf,
  type PendingRequest,
  type InspectableGraph,
} from "./interrupts.js";
export {
  listCheckpoints,
  replayFrom,
  forkFrom,
  forkBase,
  forkCheckpoint,
  checkpointAt,
  checkpointBefore,
  checkpointConfig,
  updateFromAssignments,
  parseAssignments,
  stateFieldsOf,
  type Assignment,
  type CheckpointInfo,
  type DerivedField,
  type ForkResult,
  type ReplayableGraph,
  type StateFields,
} from "./replay.js";
export {
  acquireLease,
  renewLease,
  releaseLease,
  leaseHolder,
  LEASE_TTL_MS,
  LEASE_RENEW_MS,
  type Lease,
  type ThreadLeases,
  type LeaseHolder,
  type LeaseResult,
} from "./memory/lease.js";
export { CandorTraceHandler, type CandorTraceHandlerOptions } from "./observability/trace-handler.js";
export { startOtlpTracing, otlpTracesUrl, type OtlpTracing, type OtlpTracingOptions } from "./observability/otlp.js";
export { GenAi, CandorAttr } from "./observability/attributes.js";
export type { ToolCallObserver, ToolCallReport } from "./observability/tool-calls.js";
