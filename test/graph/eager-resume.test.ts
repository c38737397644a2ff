import { describe, expect, it } from "vitest";
import { compileAgent } from "../../graphs/agent.js";
import { FixedPlanReasoner, dagPlan, dagToolkit, type DagStep } from "../../bench/fixtures.js";
import type { Toolkit } from "../../src/tools/types.js";
import { openTestDatabase, tempDir, threadConfig } from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";

/**
 * Steps become ready in an order that depends on timing (d1 before c2 here), while EXECUTE's tasks must be called
 * in an order fixed by the plan, or a resumed pass would hand a saved result to the wrong step. Plan order is
 * c1 c2 c3 d1 d2 e1; the steps ready at the start (c1, d1, e1) are called first, and the next steps' tasks are made
 * ahead while tools run.
 */
const STEPS: DagStep[] = [
  { id: "c1", dependsOn: [], latencyMs: 5 },
  { id: "c2", dependsOn: ["c1"], latencyMs: 5 },
  { id: "c3", dependsOn: ["c2"], latencyMs: 5 },
  { id: "d1", dependsOn: [], latencyMs: 20 },
  { id: "d2", dependsOn: ["d1"], latencyMs: 5 },
  { id: "e1", dependsOn: [], latencyMs: 1 },
];

/** dagToolkit's tools, counted per step; `hang` never answers (a process that dies mid-call). */
function counted(calls: Map<string, number>, hang: ReadonlySet<string>, done: Set<string>): Toolkit {
  const kit = dagToolkit(STEPS);
  return {
    ...kit,
    tools: kit.tools.map((t) => ({
      ...t,
      run: async (args: unknown, ctx: Parameters<typeof t.run>[1]) => {
        calls.set(ctx.stepId, (calls.get(ctx.stepId) ?? 0) + 1);
        if (hang.has(ctx.stepId)) return new Promise<never>(() => {});
        const out = await t.run(args, ctx);
        done.add(ctx.stepId);
        return out;
      },
    })),
  };
}

describe("an eager pass cut off mid-way", () => {
  it("resumes with every finished step replayed from its own saved result, not run again", async () => {
    const tmp = tempDir();
    const persistence = openTestDatabase(tmp.dbPath);
    try {
      const calls = new Map<string, number>();
      const done = new Set<string>();
      const config = threadConfig("eager-resume");
      // First process: d2 never answers; the run is stopped once everything else has finished.
      const first = compileAgent(
        { toolkits: [counted(calls, new Set(["d2"]), done)], reasoner: new FixedPlanReasoner(dagPlan(STEPS)) },
        persistence,
      );
      const stop = new AbortController();
      const watcher = setInterval(() => {
        if (["c1", "c2", "c3", "d1", "e1"].every((id) => done.has(id)) && calls.get("d2")) stop.abort();
      }, 2);
      await expect(
        first.invoke({ request: { userIntent: "dag" } }, { ...config, signal: stop.signal }),
      ).rejects.toThrow();
      clearInterval(watcher);
      expect(calls.get("d2")).toBe(1);

      // Second process: the same thread, every tool answering.
      const second = compileAgent(
        { toolkits: [counted(calls, new Set(), done)], reasoner: new FixedPlanReasoner(dagPlan(STEPS)) },
        persistence,
      );
      const final = await second.invoke(null, config);
      expect(final.status).toBe("completed");
      // Each finished step was replayed from its saved result: called once in all; d2, cut off, ran again.
      expect(Object.fromEntries(calls)).toEqual({ c1: 1, c2: 1, c3: 1, d1: 1, e1: 1, d2: 2 });
      // And every result is its own step's.
      for (const step of planOf(final)!.steps) {
        expect(step.status).toBe("done");
        expect(step.result).toMatchObject({ summary: `${step.id} done` });
      }
    } finally {
      await persistence.close();
      tmp.cleanup();
    }
  });
});
