import { z } from "zod";
import { Plan, TaskStep } from "../src/domain/plan.js";
import type { PlanningRequest } from "../src/domain/request.js";
import type { PlanResult, Reasoner, SynthesisInput } from "../src/reasoning/types.js";
import { sleep } from "../src/tools/sleep.js";
import type { Toolkit } from "../src/tools/types.js";

/** A toolkit of `n` tools that each wait `latencyMs` (honouring the abort signal) and return their name. */
export function benchToolkit(n: number, latencyMs: number): Toolkit {
  return {
    name: "bench",
    tools: Array.from({ length: n }, (_, i) => ({
      name: `t${i + 1}`,
      description: `Bench tool ${i + 1}`,
      category: "bench",
      keywords: [],
      consumes: [],
      produces: [`o${i + 1}`],
      sideEffect: "none" as const,
      needsApproval: false,
      schema: z.looseObject({}),
      estimates: { durationMs: latencyMs, cost: 0 },
      run: async (_args: unknown, ctx: { signal: AbortSignal }) => {
        await sleep(latencyMs, ctx.signal);
        return { summary: `t${i + 1} done` };
      },
    })),
    workers: [{ name: "bench_worker", description: "runs bench tools", categories: ["bench"] }],
  };
}

/**
 * A 12-step plan in waves: `width` independent steps per wave, each depending on every step of the previous
 * wave. With `width` 1 the same steps form a chain: the plan run one step at a time.
 */
export function wavePlan(n: number, width: number, latencyMs: number): Plan {
  const steps = Array.from({ length: n }, (_, i) => {
    const wave = Math.floor(i / width);
    const previous = Array.from({ length: width }, (_, j) => (wave - 1) * width + j).filter((k) => k >= 0 && k < n);
    return TaskStep.parse({
      id: `s${i + 1}`,
      description: `step ${i + 1}`,
      workerType: "bench_worker",
      tools: [`t${i + 1}`],
      dependsOn: wave === 0 ? [] : previous.map((k) => `s${k + 1}`),
      expectedOutputs: [`o${i + 1}`],
      estimates: { durationMs: latencyMs, cost: 0 },
      order: i + 1,
      retry: { maxAttempts: 1, backoffMs: [0] },
    });
  });
  return Plan.parse({ planId: `bench-${n}x${width}`, objective: "bench", steps, confidence: 0.9 });
}

/** A Reasoner that returns a fixed plan: the seam lets the bench drive the real graph with any plan. */
export class FixedPlanReasoner implements Reasoner {
  readonly kind = "rules" as const;
  constructor(private readonly fixed: Plan) {}
  async plan(_request: PlanningRequest): Promise<PlanResult> {
    return { plan: this.fixed, notes: [] };
  }
  async proposeRecovery(): Promise<null> {
    return null;
  }
  async synthesize(input: SynthesisInput): Promise<string> {
    return `${Object.keys(input.results).length} results`;
  }
}

/** One step of a DAG-shaped bench plan: the steps it waits for and how long its tool takes. */
export interface DagStep {
  id: string;
  dependsOn: readonly string[];
  latencyMs: number;
}

/** wavePlan's shape as DagSteps: `width` independent steps per wave, each depending on every step of the previous wave. */
export function waveSteps(n: number, width: number, latencyMs: number): DagStep[] {
  return Array.from({ length: n }, (_, i) => {
    const wave = Math.floor(i / width);
    const previous = wave === 0 ? [] : Array.from({ length: width }, (_, j) => (wave - 1) * width + j);
    return { id: `s${i + 1}`, dependsOn: previous.filter((k) => k < n).map((k) => `s${k + 1}`), latencyMs };
  });
}

/** The tool that serves a DagStep in dagToolkit (one tool per step, so each can have its own latency). */
export const dagToolName = (stepId: string) => `t_${stepId}`;

/**
 * One tool per DagStep, waiting the step's latency (honouring the abort signal). When `returned` is given, each
 * tool notes performance.now() in it, under its step id, right before it returns: the start of a latency sample.
 * When `started` is given, each notes when it was first called, the same way.
 */
export function dagToolkit(
  steps: readonly DagStep[],
  returned?: Map<string, number>,
  started?: Map<string, number>,
): Toolkit {
  return {
    name: "bench_dag",
    tools: steps.map((step) => ({
      name: dagToolName(step.id),
      description: `Bench tool for step ${step.id}`,
      category: "bench",
      keywords: [],
      consumes: [],
      produces: [`o_${step.id}`],
      sideEffect: "none" as const,
      needsApproval: false,
      schema: z.looseObject({}),
      estimates: { durationMs: step.latencyMs, cost: 0 },
      run: async (_args: unknown, ctx: { signal: AbortSignal; stepId: string }) => {
        if (started && !started.has(ctx.stepId)) started.set(ctx.stepId, performance.now());
        await sleep(step.latencyMs, ctx.signal);
        returned?.set(ctx.stepId, performance.now());
        return { summary: `${step.id} done` };
      },
    })),
    workers: [{ name: "bench_worker", description: "runs bench tools", categories: ["bench"] }],
  };
}

/** The Candor plan of a DAG: one step per DagStep on its own tool, one attempt each. */
export function dagPlan(steps: readonly DagStep[], planId = `bench-dag-${steps.length}`): Plan {
  return Plan.parse({
    planId,
    objective: "bench",
    confidence: 0.9,
    steps: steps.map((step, i) =>
      TaskStep.parse({
        id: step.id,
        description: `step ${step.id}`,
        workerType: "bench_worker",
        tools: [dagToolName(step.id)],
        dependsOn: step.dependsOn,
        expectedOutputs: [`o_${step.id}`],
        estimates: { durationMs: step.latencyMs, cost: 0 },
        order: i + 1,
        retry: { maxAttempts: 1, backoffMs: [0] },
      }),
    ),
  });
}

/**
 * A FixedPlanReasoner that waits `modelLatencyMs` before planning and before synthesising, as a reasoner backed
 * by a model would (one call each), so Candor pays the same model latency as the designs it is compared with.
 */
export class ModelPacedReasoner extends FixedPlanReasoner {
  constructor(
    fixed: Plan,
    private readonly modelLatencyMs: number,
  ) {
    super(fixed);
  }
  override async plan(request: PlanningRequest): Promise<PlanResult> {
    await sleep(this.modelLatencyMs);
    return super.plan(request);
  }
  override async synthesize(input: SynthesisInput): Promise<string> {
    await sleep(this.modelLatencyMs);
    return super.synthesize(input);
  }
}
