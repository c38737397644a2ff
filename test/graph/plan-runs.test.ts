import { describe, expect, it } from "vitest";
import { Node } from "../../nodes/names.js";
import type { PlanDefinition, PlanRuns } from "../../src/domain/plan.js";
import { planOf } from "../../src/domain/plan-state.js";
import { EASY_TRIP, agentsOnTempDb, threadConfig, tripInput, valuesOf } from "../fakes/graph-harness.js";

const { agent } = agentsOnTempDb();
/** The two fields a node's update may carry, as the nodes write them. */
type Written = { plan?: PlanDefinition; runs?: PlanRuns };

describe("a plan's definition and its steps' run-state in the state", () => {
  it("are written apart: planning writes the plan, running it writes only run-state, and the two read back joined", async () => {
    const a = agent();
    const config = threadConfig("plan-runs-apart");
    const updates: [string, Written][] = [];
    for await (const chunk of await a.graph.stream(tripInput(EASY_TRIP), { ...config, streamMode: "updates" })) {
      for (const [node, update] of Object.entries(chunk as Record<string, Written | null>)) {
        if (update) updates.push([node, update]);
      }
    }
    const by = (node: string) => updates.filter(([n]) => n === node).map(([, u]) => u);

    const [planned] = by(Node.UNDERSTAND);
    expect(planned!.plan?.steps.length).toBeGreaterThan(0);
    for (const step of planned!.plan!.steps) expect(step).not.toHaveProperty("status");
    expect(planned!.runs).toBeUndefined();

    const [executed] = by(Node.EXECUTE);
    // Running the plan changes no step's definition: the plan is not written again, only what happened.
    expect(executed).not.toHaveProperty("plan");
    const ran = Object.entries(executed!.runs!.steps);
    expect(ran.map(([id]) => id).sort()).toEqual(planned!.plan!.steps.map((s) => s.id).sort());
    for (const [, run] of ran) expect(run.status).toBe("done");
    expect(executed!.runs!.planId).toBe(planned!.plan!.planId);

    // REFLECT rates the plan: a new confidence is the definition's, and no step's run changed.
    const [reflected] = by(Node.REFLECT);
    expect(reflected!.plan?.confidence).not.toBeUndefined();
    expect(reflected!.runs).toBeUndefined();

    const state = valuesOf(await a.graph.getState(config));
    const view = planOf(state)!;
    expect(view.steps.every((s) => s.status === "done" && s.result !== null)).toBe(true);
    expect(view.confidence).toBe(reflected!.plan!.confidence);
    expect(state.report?.tasks.map((t) => [t.id, t.status])).toEqual(view.steps.map((s) => [s.id, s.status]));
  });

  it("refuses a plan written with its steps' run-state, instead of dropping the change", async () => {
    const a = agent();
    const config = threadConfig("plan-runs-refused");
    await a.graph.invoke(tripInput(EASY_TRIP), config);
    const view = planOf(valuesOf(await a.graph.getState(config)))!;
    const edited = { ...view, steps: view.steps.map((s) => ({ ...s, status: "pending" as const })) };
    await expect(a.graph.updateState(config, { plan: edited })).rejects.toThrow(/unrecognized_keys[\s\S]*status/i);
    // The change it meant is written to `runs`, and read back joined.
    const first = view.steps[0]!.id;
    await a.graph.updateState(config, {
      runs: { planId: view.planId, steps: { [first]: { ...view.steps[0]!, status: "pending" } } },
    });
    const after = planOf(valuesOf(await a.graph.getState(config)))!;
    expect(after.steps[0]!.status).toBe("pending");
    expect(after.steps[1]!.status).toBe("done");
  });
});
