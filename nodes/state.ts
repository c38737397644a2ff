import { DeltaValue, MessagesDeltaValue, ReducedValue, StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { ApprovalRecord, InterruptRequest, ToolCallDecision } from "../src/domain/approval.js";
import { ExecutionFeedback } from "../src/domain/feedback.js";
import { CallRecord } from "../src/execution/evidence.js";
import { Notification, Progress } from "../src/domain/notification.js";
import { Next } from "../src/domain/next.js";
import { PlanDefinition, PlanRuns, TaskStep } from "../src/domain/plan.js";
import { mergeRuns } from "../src/domain/plan-state.js";
import { ExecutionReport, RunStatus } from "../src/domain/report.js";
import { PlanningRequest } from "../src/domain/request.js";
import { defaultStateSettings, mergeSettings, RunSettingsPatch, StateSettings } from "../src/domain/config.js";
import { ConfidencePoint, PlanRevision } from "../src/domain/revision.js";
import { StepContext } from "../src/domain/step-context.js";
import { TokenBudgetState, TokenEvent } from "../src/domain/usage.js";

/**
 * An append-only list. A DeltaValue, not a ReducedValue: a checkpoint stores only what each step appended, and
 * the list is rebuilt on read from the thread's history, so checkpoint bytes grow with what is added, not with
 * the list's length times the number of supersteps (the lists were half of every checkpoint, and a run's bytes
 * grew with the square of its plan). Reading it back is LangGraph's: getState, the stream and Studio see the whole
 * list as before. Concatenation is associative, as a DeltaValue's reducer must be.
 */
const append = <T extends z.ZodType>(item: T) =>
  new DeltaValue(
    z.array(item).default(() => []),
    {
      inputSchema: z.array(item),
      reducer: (current: z.infer<T>[], writes: z.infer<T>[][]) => [...current, ...writes.flat()],
      // Read by stateFieldsOf (src/replay.ts): a fork may not replace a list the run only appends to.
      jsonSchemaExtra: { appendOnly: true },
    },
  );

/**
 * A value each update replaces, kept out of checkpoints: the plan (hundreds of bytes per step) was written into
 * every checkpoint of a run whether it changed or not — most of a run's bytes. As a DeltaValue it is stored once
 * per update that sets it and rebuilt on read. "Last write wins" is batching-invariant, as a DeltaValue's
 * reducer must be (a batch with no write keeps the value).
 */
const latest = <T extends z.ZodType>(value: T) =>
  new DeltaValue(value, {
    inputSchema: value,
    reducer: (current: z.infer<T>, writes: z.infer<T>[]) => (writes.length > 0 ? writes[writes.length - 1]! : current),
  });

/** The main graph's state: the contract in DESIGN.md that the CLI, Studio, apps and tests rely on. */
export const AgentState = new StateSchema({
  /** What the user asked for; the only required input. */
  request: PlanningRequest,
  /**
   * Caps and thresholds for this run, kept in state so a resumed thread keeps them. The input may give any of
   * them; UNDERSTAND takes the rest from the assistant's context/configurable or the defaults (src/domain/config.ts)
   * and fixes them all. Writes are merged field by field (not replaced), so the fields an input left out stay
   * open for the assistant's values.
   */
  settings: new DeltaValue(StateSettings.default(defaultStateSettings), {
    inputSchema: RunSettingsPatch,
    reducer: mergeSettings,
  }),
  /**
   * The current plan's definition; strategies revise it in place (partial replanning). What happened to its steps
   * is in `runs`; code reads the two joined, with `planOf(state)` (src/domain/plan-state.ts).
   */
  plan: latest(PlanDefinition.nullable().default(null)),
  /**
   * The run-state of the plan's steps (status, result, attempts…), by step id. Writes are merged step by step
   * into the runs of the same plan, so a pass that runs three steps writes three small records, not the plan;
   * a write for another plan replaces them (`mergeRuns`). Stored as deltas, like `plan`.
   */
  runs: new DeltaValue(PlanRuns.nullable().default(null), {
    inputSchema: PlanRuns,
    reducer: mergeRuns,
  }),
  /**
   * The planner's own confidence in the plan that runs, before calibration: what REFLECT records as the outcome's
   * confidence. Set by UNDERSTAND, and again when a plan not yet approved is made again with a person's guidance.
   */
  plannedConfidence: z.number().nullable().default(null),
  /** How the plan was obtained (fallbacks, repairs), shown to the user. */
  planNotes: z.array(z.string()).default(() => []),
  /** Every step outcome, in the order they finished. */
  feedback: append(ExecutionFeedback),
  /** Every plan revision, with its reason. */
  revisions: append(PlanRevision),
  /** Revisions made so far; the router caps it at settings.maxRevisions. */
  revisionCount: z.number().int().default(0),
  /** Every confidence change with its reason. */
  confidenceHistory: append(ConfidencePoint),
  /** Every model call (site, step, tokens, cost) and every change a person made to the token budget, in order. */
  tokens: append(TokenEvent),
  /** Everything the user was told, in order. */
  notifications: append(Notification),
  /** The latest progress figures. */
  progress: Progress.nullable().default(null),
  /**
   * What the run does next, set by the node that decides it and read by the routers (src/domain/next.ts). Null in
   * a new thread before UNDERSTAND and in a checkpoint written before the field existed; `nextOf` derives it then.
   */
  next: Next.nullable().default(null),
  /**
   * What a person is shown while the run waits for them (next is `ask`); the CLI, apps, Studio and chat read it.
   * Routers never do: `next` says where the run goes.
   */
  pendingInterrupt: InterruptRequest.nullable().default(null),
  /** The latest human decision. */
  approval: ApprovalRecord.nullable().default(null),
  answer: z.string().nullable().default(null),
  /** Lessons from REFLECT. */
  reflection: z
    .object({ lessons: z.array(z.string()), unrecoveredSteps: z.array(z.string()) })
    .nullable()
    .default(null),
  report: ExecutionReport.nullable().default(null),
  /** The run's public status, shown to people; routing reads `next`, not this. */
  status: RunStatus.default("planning"),
  /** Why the run failed, was rejected or aborted, in plain language. */
  failureReason: z.string().nullable().default(null),
  startedAt: z.string().nullable().default(null),
  /**
   * The conversation, for chat clients (agent-chat-ui and the apps create-agent-chat-app makes): a person's
   * messages in, Candor's short AI messages out (src/chat/). LangGraph's messages reducer, so a client that
   * appends a message (or sends the whole list back) gets the usual merge by id; stored as deltas like the lists above.
   */
  messages: MessagesDeltaValue,
});
export type AgentStateValue = typeof AgentState.State;
export type AgentStateUpdate = typeof AgentState.Update;

/** What a worker is sent (one Send per ready step). */
export const WorkerInput = z.object({
  step: TaskStep,
  /** Outputs of the step's dependencies, by output name. */
  inputs: z.record(z.string(), z.unknown()),
  planId: z.string(),
  /** The values the understanding record says the step uses, and the request's lineage (src/execution/values.ts). */
  context: StepContext.default({ values: [], lineage: "" }),
  /** The run's token budget when the step was sent (null: none), so a model-driven step can keep to it. */
  tokenBudget: TokenBudgetState.nullable().default(null),
});
export type WorkerInput = z.infer<typeof WorkerInput>;

/**
 * The worker subgraph's state. Its output is narrow on purpose: only the new feedback and notifications go back
 * to the parent, so the parent's append-only lists are never duplicated.
 */
const workerFeedback = append(ExecutionFeedback);
const workerNotifications = append(Notification);
const workerTokens = append(TokenEvent);

export const WorkerState = new StateSchema({
  step: TaskStep,
  inputs: z.record(z.string(), z.unknown()).default(() => ({})),
  planId: z.string(),
  context: StepContext.default({ values: [], lineage: "" }),
  /** Set by the gate before an irreversible or approval-gated call; null when the step's call needs no approval. */
  toolDecision: ToolCallDecision.nullable().default(null),
  tokenBudget: TokenBudgetState.nullable().default(null),
  feedback: workerFeedback,
  notifications: workerNotifications,
  tokens: workerTokens,
});
export const WorkerOutput = new StateSchema({
  feedback: workerFeedback,
  notifications: workerNotifications,
  tokens: workerTokens,
});
export type WorkerStateValue = typeof WorkerState.State;

/* The model-driven worker loop (graphs/worker.ts, nodes/worker-agent.ts): its own state, input and output. */

const appendNotifications = new ReducedValue(
  z.array(Notification).default(() => []),
  {
    inputSchema: z.array(Notification),
    reducer: (current: Notification[], added: Notification[]) => [...current, ...added],
  },
);

/** The loop's model calls and budget changes, handed to the run's `tokens` when the loop ends. */
const appendTokens = new ReducedValue(
  z.array(TokenEvent).default(() => []),
  {
    inputSchema: z.array(TokenEvent),
    reducer: (current: TokenEvent[], added: TokenEvent[]) => [...current, ...added],
  },
);

/** A person's answer to a call of the loop, carried to the step's feedback as the gate's is. */
export const LoopApproval = z.object({
  decision: z.enum(["approve", "deny"]),
  comment: z.string().nullable(),
  by: z.string().nullable(),
  at: z.string(),
});

/**
 * The loop's state. Every field but the conversation is small; the conversation is checkpointed with the loop, so
 * a resume (after an approval, or a crash) continues the same conversation instead of asking the model again.
 */
export const AgentLoopState = new StateSchema({
  step: TaskStep,
  inputs: z.record(z.string(), z.unknown()).default(() => ({})),
  planId: z.string(),
  /** The values the understanding record says the step uses, and the request's lineage. */
  context: StepContext.default({ values: [], lineage: "" }),
  /**
   * The model's answers and the tools' replies (the system prompt and the task are rebuilt each call). A delta
   * channel, like the main graph's lists: each checkpoint of the loop stores the new messages, not the whole talk.
   */
  messages: MessagesDeltaValue,
  modelCalls: z.number().int().default(0),
  /**
   * Every call the model asked for, in order, with how it ended: the evidence the step's outcome is decided from
   * (src/execution/evidence.ts), and what later calls' tools receive as inputs (`producedBy`).
   */
  calls: z.array(CallRecord).default(() => []),
  cost: z.number().default(0),
  startedAt: z.string().nullable().default(null),
  /** Set when the loop must end at once (the model unreachable, a call whose outcome is unknown): the failure. */
  halted: ExecutionFeedback.nullable().default(null),
  approval: LoopApproval.nullable().default(null),
  feedback: z.array(ExecutionFeedback).default(() => []),
  notifications: appendNotifications,
  /** The run's token budget when the step was sent; the loop's own calls (in `tokens`) count against it too. */
  tokenBudget: TokenBudgetState.nullable().default(null),
  tokens: appendTokens,
});
export type AgentLoopStateValue = typeof AgentLoopState.State;
/** What the loop is given: the worker's step (nothing of the worker's lists, so nothing is handed back twice). */
export const AgentLoopInput = new StateSchema({
  step: TaskStep,
  inputs: z.record(z.string(), z.unknown()).default(() => ({})),
  planId: z.string(),
  context: StepContext.default({ values: [], lineage: "" }),
  tokenBudget: TokenBudgetState.nullable().default(null),
});
export const AgentLoopOutput = new StateSchema({
  feedback: z.array(ExecutionFeedback).default(() => []),
  notifications: appendNotifications,
  tokens: appendTokens,
});
