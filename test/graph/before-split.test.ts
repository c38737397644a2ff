import { copyFileSync } from "node:fs";
import path from "node:path";
import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { Node } from "../../nodes/names.js";
import { planOf } from "../../src/domain/plan-state.js";
import { startAgent, tempDir, threadConfig, valuesOf } from "../fakes/graph-harness.js";

/*
 * test/fixtures/before-split.db is a SQLite file written by Candor before a step's definition and its run-state
 * were stored apart (commit af147d5): the thread "before-split" ran EASY_TRIP with `search_hotels=unavailable`
 * and maxRevisions 0, so it waits for a person at the hotel's escalation, with flight and activities done. Its
 * plan's steps carry their run-state; it has no `runs`. Made with test/fakes/graph-harness.ts's startAgent on
 * that commit: `graph.invoke(tripInput(EASY_TRIP, { maxRevisions: 0 }), threadConfig("before-split"))`.
 */
const FIXTURE = path.join(import.meta.dirname, "../fixtures/before-split.db");

describe("a thread checkpointed before the plan and its run-state were apart", () => {
  it("is read with the run-state its plan carries, and resumes without running its finished steps again", async () => {
    const tmp = tempDir();
    const dbPath = path.join(tmp.dir, "before-split.db");
    copyFileSync(FIXTURE, dbPath);
    const a = startAgent({ dbPath });
    try {
      const config = threadConfig("before-split");
      const waiting = await a.graph.getState(config);
      expect(waiting.next).toEqual([Node.HUMAN_INTERRUPT]);
      expect(valuesOf(waiting).runs).toBeNull();
      const before = planOf(valuesOf(waiting))!;
      const status = (p: typeof before) => Object.fromEntries(p.steps.map((s) => [s.id, s.status]));
      expect(status(before)).toMatchObject({ flight: "done", hotel: "failed", activities: "done" });
      const flight = before.steps.find((s) => s.id === "flight")!.result;
      expect(flight).not.toBeNull();

      const done = await a.graph.invoke(new Command({ resume: { decision: "skip" } }), config);
      const after = planOf(done)!;
      expect(status(after)).toMatchObject({ flight: "done", hotel: "skipped", activities: "done" });
      expect(after.steps.find((s) => s.id === "flight")!.result).toEqual(flight);
      // The finished steps kept their results: nothing ran them again; the rest ran once.
      expect(a.calls.count("search_flights")).toBe(0);
      expect(a.calls.count("search_activities")).toBe(0);
      expect(a.calls.count("search_hotels")).toBe(0);
      expect(status(after)).toMatchObject({ budget_status: "done", itinerary: "done" });
      expect(done.report?.tasks.find((t) => t.id === "flight")?.status).toBe("done");
    } finally {
      a.close();
      tmp.cleanup();
    }
  });
});
