import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { z } from "zod";
import { compileAgent } from "../graphs/agent.js";
import { Plan, TaskStep } from "../src/domain/plan.js";
import type { CandorEvent } from "../src/domain/notification.js";
import { sleep } from "../src/tools/sleep.js";
import type { Toolkit } from "../src/tools/types.js";
import { FixedPlanReasoner } from "./fixtures.js";
import { demoScenario, registryFor } from "./scenarios.js";
import { median } from "./stats.js";

/** The CandorEvent inside a stream chunk, whatever the chunk's shape ([ns, mode, payload], [mode, payload] or payload). */
function eventOf(chunk: unknown): CandorEvent | null {
  const payload: unknown = Array.isArray(chunk) ? chunk[chunk.length - 1] : chunk;
  if (typeof payload !== "object" || payload === null || !("type" in payload)) return null;
  const type = payload.type;
  return type === "notification" || type === "progress" ? (payload as CandorEvent) : null;
}

/**
 * `pairs` steps that fail and `pairs` that succeed, all independent, each after its own short wait (so they end
 * at different moments, as real tools do). A tool notes performance.now() right before it throws or returns.
 */
function latencyToolkit(pairs: number, marks: Map<string, number>): Toolkit {
  const tool = (name: string, fail: boolean, waitMs: number) => ({
    name,
    description: `${fail ? "failing" : "succeeding"} bench tool`,
    category: "bench",
    keywords: [],
    consumes: [],
    produces: [`${name}_out`],
    sideEffect: "none" as const,
    needsApproval: false,
    schema: z.looseObject({}),
    estimates: { durationMs: waitMs, cost: 0 },
    run: async (_args: unknown, ctx: { signal: AbortSignal; stepId: string }) => {
      await sleep(waitMs, ctx.signal);
      marks.set(ctx.stepId, performance.now());
      if (fail) throw new Error(`${name} failed: simulated internal error (HTTP 500)`);
      return { ok: true };
    },
  });
  const tools = [];
  for (let i = 0; i < pairs; i++) {
    tools.push(tool(`fail_${i + 1}`, true, 2 + 3 * i), tool(`ok_${i + 1}`, false, 3 + 3 * i));
  }
  return {
    name: "latency",
    tools,
    workers: [{ name: "bench_worker", description: "runs bench tools", categories: ["bench"] }],
  };
}

function latencyPlan(pairs: number): Plan {
  const steps = [];
  for (let i = 0; i < pairs; i++) {
    for (const [kind, id] of [
      ["fail", `f${i + 1}`],
      ["ok", `s${i + 1}`],
    ] as const) {
      steps.push(
        TaskStep.parse({
          id,
          description: `${kind} step ${i + 1}`,
          workerType: "bench_worker",
          tools: [`${kind}_${i + 1}`],
          expectedOutputs: [`${kind}_${i + 1}_out`],
          estimates: { durationMs: 3 * i, cost: 0 },
          order: steps.length + 1,
          retry: { maxAttempts: 1, backoffMs: [0] },
        }),
      );
    }
  }
  return Plan.parse({ planId: "bench-latency", objective: "bench", steps, confidence: 0.9 });
}

export interface NotificationLatency {
  failureToNotification: number[];
  successToNotification: number[];
  successToProgress: number[];
}

/**
 * Runs the real graph (SqliteSaver or any checkpointer given) `runs` times with `pairs` failing and `pairs`
 * succeeding steps, streaming custom events, and measures tool-side mark → event received by the consumer.
 * A run is cancelled once every expected event has arrived (replanning of the failures is not what is measured).
 */
export async function notificationLatency(
  runs: number,
  pairs: number,
  checkpointer: BaseCheckpointSaver,
): Promise<NotificationLatency> {
  const out: NotificationLatency = { failureToNotification: [], successToNotification: [], successToProgress: [] };
  for (let r = 0; r < runs; r++) {
    const marks = new Map<string, number>();
    const app = compileAgent(
      { toolkits: [latencyToolkit(pairs, marks)], reasoner: new FixedPlanReasoner(latencyPlan(pairs)) },
      { checkpointer },
    );
    const controller = new AbortController();
    const seen = { failed: new Set<string>(), ok: new Set<string>(), progress: new Set<string>() };
    const stream = await app.stream(
      { request: { userIntent: "bench" } },
      {
        configurable: { thread_id: `latency-${r}-${Math.random().toString(16).slice(2)}` },
        streamMode: ["custom"],
        subgraphs: true,
        signal: controller.signal,
      },
    );
    try {
      for await (const chunk of stream) {
        const at = performance.now();
        const event = eventOf(chunk);
        if (!event) continue;
        if (event.type === "notification") {
          const { kind, taskId } = event.notification;
          const mark = taskId ? marks.get(taskId) : undefined;
          if (mark === undefined || !taskId) continue;
          if (kind === "step_failed" && !seen.failed.has(taskId)) {
            seen.failed.add(taskId);
            out.failureToNotification.push(at - mark);
          } else if (kind === "step_succeeded" && !seen.ok.has(taskId)) {
            seen.ok.add(taskId);
            out.successToNotification.push(at - mark);
          }
        } else if (event.progress.status === "SUCCESS" && event.progress.taskId) {
          const taskId = event.progress.taskId;
          const mark = marks.get(taskId);
          if (mark !== undefined && !seen.progress.has(taskId)) {
            seen.progress.add(taskId);
            out.successToProgress.push(at - mark);
          }
        }
        if (seen.failed.size === pairs && seen.ok.size === pairs && seen.progress.size === pairs) {
          controller.abort(new Error("bench: every event measured"));
          break;
        }
      }
    } catch (e) {
      if (!controller.signal.aborted) throw e;
    }
    if (seen.failed.size !== pairs || seen.ok.size !== pairs || seen.progress.size !== pairs) {
      throw new Error(
        `latency run ${r}: expected ${pairs} of each event, got ${seen.failed.size} failed / ${seen.ok.size} succeeded / ${seen.progress.size} progress`,
      );
    }
  }
  return out;
}

export interface StrategyLatency {
  /** Per demo failure (step id): the median over runs of failure notification → strategy notification. */
  byStep: { taskId: string; median: number; samples: number[]; strategy: string }[];
  runMs: number[];
  statuses: string[];
}

/**
 * The demo (flight timeout, hotel fully booked, budget exceeded) through the real graph with MemorySaver,
 * `latencyMs` per tool: for each failed step, the time between its step_failed event and its strategy event,
 * both as received by the stream consumer.
 */
export async function strategyLatency(runs: number, latencyMs: number): Promise<StrategyLatency> {
  const demo = demoScenario(latencyMs);
  const samples = new Map<string, { xs: number[]; strategy: string }>();
  const runMs: number[] = [];
  const statuses: string[] = [];
  for (let r = 0; r < runs; r++) {
    const toolkits = demo.toolkits();
    const plan = demo.plan(registryFor(toolkits));
    const app = compileAgent({ toolkits, reasoner: new FixedPlanReasoner(plan) }, { checkpointer: new MemorySaver() });
    const failedAt = new Map<string, number>();
    const done = new Set<string>();
    const t0 = performance.now();
    const stream = await app.stream(
      { request: { userIntent: demo.request } },
      { configurable: { thread_id: `demo-${r}` }, streamMode: ["custom", "values"], subgraphs: true },
    );
    let status = "unknown";
    for await (const chunk of stream) {
      const at = performance.now();
      const payload: unknown = Array.isArray(chunk) ? chunk[chunk.length - 1] : chunk;
      const mode: unknown = Array.isArray(chunk) ? chunk[chunk.length - 2] : null;
      if (mode === "values" && Array.isArray(chunk) && chunk[0].length === 0) {
        const next = (payload as { status?: unknown }).status;
        if (typeof next === "string") status = next;
        continue;
      }
      const event = eventOf(chunk);
      if (event?.type !== "notification" || !event.notification.taskId) continue;
      const { kind, taskId, recoveryStrategy } = event.notification;
      if (kind === "step_failed" && !failedAt.has(taskId) && !done.has(taskId)) failedAt.set(taskId, at);
      if (kind === "strategy" && failedAt.has(taskId) && !done.has(taskId)) {
        done.add(taskId);
        const entry = samples.get(taskId) ?? { xs: [], strategy: recoveryStrategy ?? "?" };
        entry.xs.push(at - failedAt.get(taskId)!);
        samples.set(taskId, entry);
      }
    }
    runMs.push(performance.now() - t0);
    statuses.push(status);
  }
  return {
    byStep: [...samples.entries()].map(([taskId, { xs, strategy }]) => ({
      taskId,
      median: median(xs),
      samples: xs,
      strategy,
    })),
    runMs,
    statuses,
  };
}
