import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { Node } from "../../nodes/names.js";
import { recentEpisodes } from "../../src/memory/episodes.js";
import { RESTART_USER, startAgent, tempDir, threadConfig, valuesOf } from "../fakes/graph-harness.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** Runs child-resume.ts in its own Node process and returns its JSON line (it has exited by then). */
async function child(mode: "start" | "resume", threadId: string): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "test/graph/child-resume.ts", tmp.dbPath, threadId, mode],
    {
      cwd: ROOT,
      timeout: 30_000,
      env: { ...process.env, OPENAI_API_KEY: "" },
    },
  );
  const lines = stdout.trim().split("\n");
  return JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>;
}

describe("an approval interrupt survives a restart", () => {
  it("process A stops at approval and exits; process B resumes from the SQLite file and completes", async () => {
    const threadId = "restart-1";
    const a = await child("start", threadId);
    expect(a).toMatchObject({ interrupted: "plan_approval", toolCalls: 0 });

    // Between the processes, only the file knows the thread is waiting.
    const peek = startAgent({ dbPath: tmp.dbPath });
    try {
      const waiting = await peek.graph.getState(threadConfig(threadId));
      expect(waiting.next).toEqual([Node.HUMAN_INTERRUPT]);
      expect(waiting.values.status).toBe("awaiting_approval");
      expect(waiting.tasks[0]!.interrupts[0]!.value).toMatchObject({
        kind: "plan_approval",
        recommendedAction: "REVIEW_AND_ADJUST",
      });
    } finally {
      peek.close();
    }

    const b = await child("resume", threadId);
    expect(b.pid).not.toBe(a.pid);
    expect(b).toMatchObject({ waitingFor: ["plan_approval"], status: "completed" });
    // Every tool ran in process B, once.
    expect(b.toolCalls).toEqual({
      search_flights: 1,
      search_hotels: 1,
      search_activities: 1,
      check_budget: 1,
      build_itinerary: 1,
    });

    const reader = startAgent({ dbPath: tmp.dbPath });
    try {
      const final = await reader.graph.getState(threadConfig(threadId));
      expect(final.next).toEqual([]);
      expect(final.tasks).toEqual([]);
      expect(final.values.status).toBe("completed");
      expect(final.values.approval).toMatchObject({ kind: "plan_approval", decision: "approve", by: "child" });
      expect(valuesOf(final).feedback.map((f) => f.feedbackType)).toEqual(Array(5).fill("SUCCESS"));
      expect(final.values.report!.summary.status).toBe("completed");
      const episodes = await recentEpisodes(reader.persistence.store, RESTART_USER);
      expect(episodes.map((e) => [e.threadId, e.status])).toEqual([[threadId, "completed"]]);
      expect(reader.calls.total()).toBe(0);
    } finally {
      reader.close();
    }
  });
});
