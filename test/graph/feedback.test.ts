import { describe, expect, it } from "vitest";
import { Command } from "@langchain/langgraph";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { liveEpisodes, loadLearnedConfig, reflectionRuns, userReflections } from "../../src/memory/learning.js";
import { giveFeedback } from "../../src/reflection/feedback.js";
import type { LearningDeps } from "../../src/reflection/learn.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { EASY_TRIP, agentsOnTempDb, threadConfig, tripInput, type Agent } from "../fakes/graph-harness.js";
import { travelRegistry } from "../fakes/toolkit-fixtures.js";

const { agent } = agentsOnTempDb();

function learning(a: Agent): LearningDeps & { log: ReturnType<typeof memoryDecisionLog> } {
  const log = memoryDecisionLog();
  return { store: a.persistence.store, registry: travelRegistry(), decisionLog: log, log };
}

async function finishedRun(a: Agent, thread: string, user: string, request = EASY_TRIP) {
  const out = await a.graph.invoke(tripInput(request, {}, user), threadConfig(thread));
  expect(out.status).toBe("completed");
  return out;
}

describe("evaluation: feedback on a finished run (issue 12 item 1)", () => {
  it("a rejection is stored with the episode and reflected on at once; the reflection passes the gate and is stored", async () => {
    const a = agent();
    await finishedRun(a, "fb-reject", "ana");
    const deps = learning(a);
    const out = await giveFeedback(
      a.graph,
      "fb-reject",
      { verdict: "rejected", reason: "The hotel was a dump", comment: null },
      deps,
    );
    expect(out.messages[0]).toBe("Recorded: you rejected run fb-reject. Reflecting on it now…");
    const [episode] = await liveEpisodes(a.persistence.store, "ana");
    expect(episode!.evaluation).toMatchObject({
      verdict: "rejected",
      source: "user",
      reason: "The hotel was a dump",
      blamed: ["search_hotels.priority=quality", "search_hotels.minRating"],
    });
    // Scenario 8: a valid reflection is stored for the user, with its scores and a 90-day expiry.
    expect(out.reflection).not.toBeNull();
    const stored = await userReflections(a.persistence.store, "ana");
    expect(stored.map((r) => r.id)).toEqual([out.reflection!.id]);
    expect(stored[0]).toMatchObject({
      threadId: "fb-reject",
      planId: episode!.planId,
      task: EASY_TRIP,
      source: "rules",
    });
    expect(stored[0]!.scores.quality).toBeGreaterThanOrEqual(0.6);
    const days = (Date.parse(stored[0]!.expiresAt) - Date.parse(stored[0]!.createdAt)) / 86_400_000;
    expect(days).toBe(90);
    expect(stored[0]!.analysis.whatHappened).toContain("search_hotels");
    // One rejection proposes; it takes a pattern (three) to change later runs.
    const config = await loadLearnedConfig(a.persistence.store, "ana");
    expect(config.adjustments.map((x) => [x.op.type, x.status])).toEqual([
      ["change_priority", "proposed"],
      ["add_constraint", "proposed"],
    ]);
    expect(config.adjustments[0]!.why).toBe(
      "proposed: Insufficient data (1 < 3 min_occurrences); it applies once the pattern holds",
    );
    expect((await reflectionRuns(a.persistence.store, "ana"))[0]).toMatchObject({ reflectionId: out.reflection!.id });
    expect(deps.log.entries.filter((d) => d.operation === "reflect").map((d) => d.decision)).toEqual([
      "evaluation stored; points at search_hotels.priority=quality, search_hotels.minRating",
      expect.stringMatching(
        /^reflection refl-\w+ stored \(quality [\d.]+, rules\); adj-\w+ proposed, adj-\w+ proposed$/,
      ),
    ]);
  });

  it("an acceptance is stored without a reflection", async () => {
    const a = agent();
    await finishedRun(a, "fb-accept", "bea");
    const out = await giveFeedback(
      a.graph,
      "fb-accept",
      { verdict: "accepted", reason: null, comment: "great" },
      learning(a),
    );
    expect(out.messages).toEqual(["Recorded: you accepted run fb-accept."]);
    expect(out.reflection).toBeNull();
    expect((await liveEpisodes(a.persistence.store, "bea"))[0]!.evaluation).toMatchObject({
      verdict: "accepted",
      comment: "great",
    });
    expect(await userReflections(a.persistence.store, "bea")).toEqual([]);
  });

  it("is refused for an unknown thread, an unfinished one, and a rejection without a reason", async () => {
    const a = agent();
    const deps = learning(a);
    const refusal = async (thread: string, reason: string | null) => {
      try {
        await giveFeedback(a.graph, thread, { verdict: "rejected", reason, comment: null }, deps);
      } catch (e) {
        if (CandorError.isInstance(e)) return e;
      }
      throw new Error("not refused");
    };
    expect(await refusal("nope", "bad")).toMatchObject({ code: ErrorCode.UNKNOWN_THREAD });
    await a.graph.invoke(tripInput(EASY_TRIP, { approvalThreshold: 0.99 }, "cy"), threadConfig("fb-waiting"));
    const waiting = await refusal("fb-waiting", "bad");
    expect(waiting.code).toBe(ErrorCode.INVALID_REQUEST);
    expect(waiting.message).toMatch(/has not finished \(status awaiting_approval\)/);
    await a.graph.invoke(new Command({ resume: { decision: "approve" } }), threadConfig("fb-waiting"));
    expect((await refusal("fb-waiting", "  ")).message).toMatch(/A rejection needs a reason/);
  });
});
