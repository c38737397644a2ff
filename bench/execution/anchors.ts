/**
 * Candor against the designs people build instead (bench/anchors/), on the same plan and the same tools, at
 * several model/tool latencies, with the same checkpointer. Candor's planner and synthesis are paced by the model
 * latency (one call each, ModelPacedReasoner); its workers call their tool directly, with no model call.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { buildDagWaves, buildTaskFetching } from "../anchors/dag-compiler.js";
import { buildPlanExecute } from "../anchors/plan-execute.js";
import { anchorModel, searchTool } from "../anchors/workload.js";
import { dagToolkit, waveSteps } from "../fixtures.js";
import { candorApp, invokeCandor, newThreadId } from "./drive.js";

export const DESIGNS = ["candor", "planExecute", "dagWaves", "taskFetching"] as const;
export type Design = (typeof DESIGNS)[number];

export interface AnchorSetting {
  modelMs: number;
  toolMs: number;
  /** Wall time of each round, per design. */
  ms: Record<Design, number[]>;
  /** Model calls per run, per design (Candor's are its two paced reasoner calls). */
  calls: Record<Design, number>;
}

const RECURSION_LIMIT = 1000;
const OBJECTIVE = "Answer the question that needs every fact of the plan.";

interface Runner {
  run(): Promise<{ ms: number; calls: number }>;
}

function runners(modelMs: number, toolMs: number, steps: number, width: number, saver: BaseCheckpointSaver) {
  const plan = waveSteps(steps, width, toolMs);
  const anchor = (design: Exclude<Design, "candor">): Runner => {
    const model = anchorModel(modelMs, plan);
    const tools = [searchTool(dagToolkit(plan))];
    const build = { planExecute: buildPlanExecute, dagWaves: buildDagWaves, taskFetching: buildTaskFetching }[design];
    const app = build(model, tools, saver);
    return {
      async run() {
        const before = model.calls;
        const t0 = performance.now();
        const out = await app.invoke(
          { input: OBJECTIVE },
          { configurable: { thread_id: newThreadId(design) }, recursionLimit: RECURSION_LIMIT },
        );
        const ms = performance.now() - t0;
        const done = "pastSteps" in out ? out.pastSteps.length : Object.keys(out.results).length;
        if (!out.response || done !== steps)
          throw new Error(`bench: ${design} anchor finished ${done} of ${steps} steps, response "${out.response}"`);
        return { ms, calls: model.calls - before };
      },
    };
  };
  const candor = candorApp(plan, saver, { modelLatencyMs: modelMs });
  const all: Record<Design, Runner> = {
    candor: { run: async () => ({ ms: (await invokeCandor(candor, "anchor")).ms, calls: 2 }) },
    planExecute: anchor("planExecute"),
    dagWaves: anchor("dagWaves"),
    taskFetching: anchor("taskFetching"),
  };
  return all;
}

/**
 * Every design at every (model, tool) latency, `rounds` times after a warm-up, interleaved: each round runs each
 * setting's designs in turn, in an order that rotates from round to round.
 */
export async function anchorBench(
  settings: readonly (readonly [number, number])[],
  rounds: number,
  steps: number,
  width: number,
  saver: BaseCheckpointSaver,
  log: (line: string) => void,
): Promise<AnchorSetting[]> {
  const prepared = settings.map(([modelMs, toolMs]): AnchorSetting & { runners: Record<Design, Runner> } => ({
    modelMs,
    toolMs,
    runners: runners(modelMs, toolMs, steps, width, saver),
    ms: { candor: [], planExecute: [], dagWaves: [], taskFetching: [] },
    calls: { candor: 0, planExecute: 0, dagWaves: 0, taskFetching: 0 },
  }));
  for (const p of prepared) for (const d of DESIGNS) await p.runners[d].run(); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (const p of prepared) {
      const order = DESIGNS.map((_, i) => DESIGNS[(i + round) % DESIGNS.length]!);
      for (const d of order) {
        const { ms, calls } = await p.runners[d].run();
        p.ms[d].push(ms);
        p.calls[d] = calls;
      }
      log(
        `anchors round ${round + 1}/${rounds} M=${p.modelMs} T=${p.toolMs}: ` +
          DESIGNS.map((d) => `${d} ${p.ms[d].at(-1)!.toFixed(0)} ms`).join(", "),
      );
    }
  }
  return prepared.map(({ modelMs, toolMs, ms, calls }) => ({ modelMs, toolMs, ms, calls }));
}
