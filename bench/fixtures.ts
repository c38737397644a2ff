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
