/**
 * Running one plan on Candor (through its public API only: compileAgent, a checkpointer, invoke or stream) and on
 * the floor, so the bench keeps working whatever EXECUTE does inside.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { compileAgent } from "../../graphs/agent.js";
import { FixedPlanReasoner, ModelPacedReasoner, dagPlan, dagToolkit, type DagStep } from "../fixtures.js";
import { FLOOR_RECURSION_LIMIT, buildEagerFloor, buildFloor } from "./floor.js";

let counter = 0;
/** A fresh thread id per run: every run starts from START and its checkpoint bytes can be read apart. */
export const newThreadId = (label: string) => `${label}-${++counter}-${Math.random().toString(16).slice(2, 8)}`;

export interface Run {
  ms: number;
  threadId: string;
}

/** A run of a DAG plan, with the time from its first tool's start to its last tool's return: execution alone. */
export interface SpannedRun extends Run {
  spanMs: number;
}

/** The tools' start and return times of one run, by step id, and the span from the first start to the last return. */
function toolClock() {
  const started = new Map<string, number>();
  const returned = new Map<string, number>();
  return {
    started,
    returned,
    spanMs: () => Math.max(...returned.values()) - Math.min(...started.values()),
  };
}

type CandorApp = ReturnType<typeof compileAgent>;

/**
 * Candor's app for `steps`, on dagToolkit's tools; `modelLatencyMs` paces planning and synthesis like a model. At
 * 0 ms there is no model to pace: the plain FixedPlanReasoner, since a sleep(0) is a 1 ms timer (twice a run) that
 * the floor, with no model, never waits for, and that the anchors' scripted model skips at 0 ms too.
 */
export function candorApp(
  steps: readonly DagStep[],
  checkpointer: BaseCheckpointSaver | undefined,
  options: { returned?: Map<string, number>; started?: Map<string, number>; modelLatencyMs?: number } = {},
): CandorApp {
  return compileAgent(
    {
      toolkits: [dagToolkit(steps, options.returned, options.started)],
      reasoner: options.modelLatencyMs
        ? new ModelPacedReasoner(dagPlan(steps), options.modelLatencyMs)
        : new FixedPlanReasoner(dagPlan(steps)),
    },
    { checkpointer },
  );
}

/** One timed run of Candor from START; throws unless it ends `completed` (a failed run is not a time). */
export async function invokeCandor(app: CandorApp, label: string): Promise<Run> {
  const threadId = newThreadId(`candor-${label}`);
  const t0 = performance.now();
  const final = await app.invoke({ request: { userIntent: "bench" } }, { configurable: { thread_id: threadId } });
  const ms = performance.now() - t0;
  if (final.status !== "completed") throw new Error(`bench: Candor run ${threadId} ended ${String(final.status)}`);
  return { ms, threadId };
}

export async function runCandor(
  steps: readonly DagStep[],
  checkpointer: BaseCheckpointSaver | undefined,
  label: string,
): Promise<SpannedRun> {
  const clock = toolClock();
  const run = await invokeCandor(candorApp(steps, checkpointer, clock), label);
  return { ...run, spanMs: clock.spanMs() };
}

type FloorApp = ReturnType<typeof buildFloor>;

export function floorApp(steps: readonly DagStep[], checkpointer: BaseCheckpointSaver | undefined): FloorApp {
  return buildFloor(steps, dagToolkit(steps), checkpointer);
}

/** One timed run of the floor from START; throws unless every step has a result. */
export async function invokeFloor(app: FloorApp, steps: number, label: string): Promise<Run> {
  const threadId = newThreadId(`floor-${label}`);
  const t0 = performance.now();
  const final = await app.invoke({}, { configurable: { thread_id: threadId }, recursionLimit: FLOOR_RECURSION_LIMIT });
  const ms = performance.now() - t0;
  const done = Object.keys(final.results).length;
  if (done !== steps) throw new Error(`bench: floor run ${threadId} has ${done} of ${steps} results`);
  return { ms, threadId };
}

export async function runFloor(
  steps: readonly DagStep[],
  checkpointer: BaseCheckpointSaver | undefined,
  label: string,
) {
  return invokeFloor(floorApp(steps, checkpointer), steps.length, label);
}

/** One timed run of the eager floor (buildEagerFloor) from START; throws unless every step has a result. */
export async function runEagerFloor(
  steps: readonly DagStep[],
  checkpointer: BaseCheckpointSaver | undefined,
  label: string,
): Promise<SpannedRun> {
  const clock = toolClock();
  const app = buildEagerFloor(steps, dagToolkit(steps, clock.returned, clock.started), checkpointer);
  const threadId = newThreadId(`eager-floor-${label}`);
  const t0 = performance.now();
  const final = await app.invoke({}, { configurable: { thread_id: threadId } });
  const ms = performance.now() - t0;
  const done = Object.keys(final.results).length;
  if (done !== steps.length)
    throw new Error(`bench: eager floor run ${threadId} has ${done} of ${steps.length} results`);
  return { ms, threadId, spanMs: clock.spanMs() };
}

/** The `progress` event inside a custom stream chunk ([namespace, mode, payload], [mode, payload] or payload). */
function progressOf(chunk: unknown): { taskId: string; status: string } | null {
  const payload: unknown = Array.isArray(chunk) ? chunk[chunk.length - 1] : chunk;
  if (typeof payload !== "object" || payload === null) return null;
  const event = payload as { type?: unknown; progress?: { taskId?: unknown; status?: unknown } };
  if (event.type !== "progress" || typeof event.progress?.taskId !== "string") return null;
  return { taskId: event.progress.taskId, status: String(event.progress.status) };
}

/**
 * Streams one Candor run (custom events, subgraphs included) and returns, per step, the time from its tool's
 * return (noted by the tool) to the first SUCCESS `progress` event naming it, as the consumer receives it.
 * Throws when a step's progress never arrives.
 */
export async function progressLatency(
  steps: readonly DagStep[],
  checkpointer: BaseCheckpointSaver | undefined,
): Promise<number[]> {
  const returned = new Map<string, number>();
  const app = candorApp(steps, checkpointer, { returned });
  const seen = new Map<string, number>();
  const stream = await app.stream(
    { request: { userIntent: "bench" } },
    { configurable: { thread_id: newThreadId("progress") }, streamMode: ["custom"], subgraphs: true },
  );
  for await (const chunk of stream) {
    const at = performance.now();
    const progress = progressOf(chunk);
    if (progress?.status !== "SUCCESS" || seen.has(progress.taskId)) continue;
    const mark = returned.get(progress.taskId);
    if (mark !== undefined) seen.set(progress.taskId, at - mark);
  }
  const missing = steps.filter((s) => !seen.has(s.id)).map((s) => s.id);
  if (missing.length > 0) throw new Error(`bench: no SUCCESS progress event for step(s) ${missing.join(", ")}`);
  return steps.map((s) => seen.get(s.id)!);
}
