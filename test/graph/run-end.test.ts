import { describe, expect, it } from "vitest";
import { Node } from "../../nodes/names.js";
import { EASY_TRIP, agentsOnTempDb, historyOf, threadConfig, tripInput, valuesOf } from "../fakes/graph-harness.js";

const { agent } = agentsOnTempDb();

describe("the run's end", () => {
  it("is written by REFLECT in its own superstep: the report counts what the reflection wrote", async () => {
    const a = agent();
    const final = await a.graph.invoke(tripInput(EASY_TRIP), threadConfig("end-in-reflect"));
    expect(final.status).toBe("completed");

    const history = await historyOf(a, "end-in-reflect");
    // Nothing runs after reflect: its checkpoint is the last one, and no checkpoint ever waited for finalize.
    expect(history[0]!.next).toEqual([]);
    expect(history[1]!.next).toEqual([Node.REFLECT]);
    expect(history.some((s) => s.next.includes(Node.FINALIZE))).toBe(false);

    const end = valuesOf(history[0]!);
    expect(end.report?.summary.status).toBe("completed");
    expect(end.next).toEqual({ kind: "end" });
    // The report is built on the state as REFLECT leaves it: its lessons and the confidence it set.
    expect(end.reflection?.lessons.length).toBeGreaterThan(0);
    expect(end.report?.lessonsLearned).toEqual(end.reflection?.lessons);
    expect(end.report?.confidenceEvolution).toEqual(end.confidenceHistory);
    // Told once, after the run's other notifications.
    expect(end.notifications.filter((n) => n.kind === "outcome")).toHaveLength(1);
    expect(end.notifications.at(-1)?.kind).toBe("outcome");
  });

  it("goes through FINALIZE when there is no plan to reflect on", async () => {
    const a = agent();
    const final = await a.graph.invoke(tripInput("What is the capital of France?"), threadConfig("no-plan"));
    const history = await historyOf(a, "no-plan");
    if (final.plan) return expect.unreachable(`expected no plan for an unsupported request, got ${final.status}`);
    expect(history.some((s) => s.next.includes(Node.FINALIZE))).toBe(true);
    expect(history.some((s) => s.next.includes(Node.REFLECT))).toBe(false);
    expect(final.report?.summary.status).toBe(final.status);
  });
});
