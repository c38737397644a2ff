import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { InMemoryStore } from "@langchain/langgraph-checkpoint";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Episode } from "../../src/domain/report.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import {
  loadUserConfig,
  recentEpisodes,
  saveEpisode,
  saveUserConfig,
  summarizeLessons,
} from "../../src/memory/episodes.js";
import { SqliteStore } from "../../src/memory/sqlite-store.js";

type Failure = Episode["failures"][number];

function episode(over: Partial<Episode> & { planId: string; at: string }): Episode {
  return {
    threadId: `thread-${over.planId}`,
    request: "Plan a trip to Lisbon",
    status: "completed",
    plan: { steps: [{ id: "s1", workerType: "travel", tools: ["search_flights"] }] },
    failures: [],
    strategiesUsed: [],
    confidenceInitial: 0.8,
    confidenceFinal: 0.7,
    lessons: [],
    durationMs: 1200,
    cost: 0.01,
    ...over,
  };
}

function failure(tool: string | null, failureClass: Failure["failureClass"], taskId = "s1"): Failure {
  return { taskId, tool, workerType: "travel", failureClass, error: `${tool ?? "step"} ${failureClass}` };
}

let dir: string;
let store: SqliteStore;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "candor-episodes-"));
  store = new SqliteStore(path.join(dir, "memory.db"));
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("saveEpisode / recentEpisodes", () => {
  it("stores under [userId, 'episodes'] with a key of ISO time and plan id", async () => {
    const key = await saveEpisode(store, "u1", episode({ planId: "p1", at: "2025-03-01T10:00:00Z" }));
    expect(key).toBe("2025-03-01T10:00:00.000Z_p1");
    const item = await store.get(["u1", "episodes"], key);
    expect(item?.value).toMatchObject({ planId: "p1", status: "completed" });
  });

  it("returns episodes newest first by their time, not by when they were written", async () => {
    await saveEpisode(store, "u1", episode({ planId: "mid", at: "2025-03-02T00:00:00Z" }));
    await saveEpisode(store, "u1", episode({ planId: "new", at: "2025-03-03T00:00:00Z" }));
    await saveEpisode(store, "u1", episode({ planId: "old", at: "2025-03-01T00:00:00Z" }));
    await saveEpisode(store, "u2", episode({ planId: "someone-else", at: "2025-03-04T00:00:00Z" }));
    expect((await recentEpisodes(store, "u1")).map((e) => e.planId)).toEqual(["new", "mid", "old"]);
    expect((await recentEpisodes(store, "u1", 2)).map((e) => e.planId)).toEqual(["new", "mid"]);
    expect(await recentEpisodes(store, "nobody")).toEqual([]);
  });

  it("reads past the first page of the store's search", async () => {
    const base = Date.parse("2025-01-01T00:00:00Z");
    for (let i = 0; i < 130; i += 1) {
      await saveEpisode(store, "u1", episode({ planId: `p${i}`, at: new Date(base + i * 60_000).toISOString() }));
    }
    // Written oldest first, so the newest sits on the store's first page but the oldest only on its second.
    const all = await recentEpisodes(store, "u1", 200);
    expect(all).toHaveLength(130);
    expect(all[0]?.planId).toBe("p129");
    expect(all[129]?.planId).toBe("p0");
  });

  it("orders the same way on a store that searches oldest first (Studio's InMemoryStore)", async () => {
    const memory = new InMemoryStore();
    await saveEpisode(memory, "u1", episode({ planId: "a", at: "2025-03-01T00:00:00Z" }));
    await saveEpisode(memory, "u1", episode({ planId: "b", at: "2025-03-02T00:00:00Z" }));
    expect((await recentEpisodes(memory, "u1")).map((e) => e.planId)).toEqual(["b", "a"]);
  });

  it("skips items that do not match the Episode schema, and items in deeper namespaces", async () => {
    await saveEpisode(store, "u1", episode({ planId: "good", at: "2025-03-01T00:00:00Z" }));
    await store.put(["u1", "episodes"], "2025-03-05T00:00:00.000Z_broken", { planId: "broken", status: "exploded" });
    await store.put(
      ["u1", "episodes", "archive"],
      "2025-03-06T00:00:00.000Z_x",
      episode({ planId: "archived", at: "2025-03-06T00:00:00Z" }),
    );
    expect((await recentEpisodes(store, "u1")).map((e) => e.planId)).toEqual(["good"]);
  });

  it("refuses an episode whose time is not a date", async () => {
    const e = await saveEpisode(store, "u1", episode({ planId: "p1", at: "yesterday" })).catch((err: unknown) => err);
    expect(CandorError.hasCode(e, ErrorCode.INVALID_REQUEST)).toBe(true);
    expect((e as Error).message).toContain("yesterday");
  });

  it("refuses a user id that cannot be a namespace label, in the user's terms", async () => {
    const e = await recentEpisodes(store, "ana@example.com").catch((err: unknown) => err);
    expect(CandorError.hasCode(e, ErrorCode.INVALID_REQUEST)).toBe(true);
    expect((e as Error).message).toContain('User id "ana@example.com"');
    const empty = await saveEpisode(store, "", episode({ planId: "p", at: "2025-03-01T00:00:00Z" })).catch(
      (err: unknown) => err,
    );
    expect(CandorError.hasCode(empty, ErrorCode.INVALID_REQUEST)).toBe(true);
  });
});

describe("user config", () => {
  it("is null until saved, then round-trips and is replaced on save", async () => {
    expect(await loadUserConfig(store, "u1")).toBeNull();
    await saveUserConfig(store, "u1", { model: "gpt-4o-mini", maxRevisions: 3 });
    expect(await loadUserConfig(store, "u1")).toEqual({ model: "gpt-4o-mini", maxRevisions: 3 });
    await saveUserConfig(store, "u1", { model: "other" });
    expect(await loadUserConfig(store, "u1")).toEqual({ model: "other" });
    expect(await loadUserConfig(store, "u2")).toBeNull();
    expect((await store.get(["u1", "config"], "agent"))?.value).toEqual({ model: "other" });
  });
});

describe("summarizeLessons", () => {
  const runs: Episode[] = [
    episode({
      planId: "r1",
      at: "2025-03-01T00:00:00Z",
      status: "completed",
      // Two failures of one tool in one run count as one episode.
      failures: [failure("search_flights", "timeout"), failure("search_flights", "timeout", "s2")],
      strategiesUsed: ["SWAP_TOOL"],
    }),
    episode({
      planId: "r2",
      at: "2025-03-02T00:00:00Z",
      status: "failed",
      failures: [
        failure("search_flights", "agent_unavailable"),
        failure("book_hotel", "resource_unavailable"),
        failure(null, "too_complex"),
      ],
      strategiesUsed: ["SWAP_TOOL", "DECOMPOSE"],
    }),
    episode({
      planId: "r3",
      at: "2025-03-03T00:00:00Z",
      status: "partial",
      failures: [failure("search_flights", "timeout")],
      strategiesUsed: ["SKIP"],
    }),
    episode({ planId: "r4", at: "2025-03-04T00:00:00Z" }),
  ];

  it("counts, per tool, the episodes in which the tool itself misbehaved (a fully booked hotel does not count)", () => {
    expect(summarizeLessons(runs).unreliableTools).toEqual({ search_flights: 3 });
  });

  it("writes a lesson only for tools that failed in at least two runs, naming the failure classes", () => {
    const { lessons } = summarizeLessons(runs);
    expect(lessons.filter((l) => l.includes("failed in"))).toEqual([
      "search_flights failed in 3 of the last 4 runs (timeout, agent_unavailable); consider its backup",
    ]);
  });

  it("says how often each strategy's run still finished", () => {
    const { lessons } = summarizeLessons(runs);
    expect(lessons.filter((l) => l.startsWith("Strategy"))).toEqual([
      "Strategy SWAP_TOOL recovered 1 of 2 failures it was used on",
      "Strategy DECOMPOSE was used 1 time and none of those runs finished",
      "Strategy SKIP recovered 1 failure",
    ]);
  });

  it("has nothing to say about clean runs or no runs", () => {
    expect(summarizeLessons([])).toEqual({ lessons: [], unreliableTools: {} });
    expect(summarizeLessons([runs[3] as Episode])).toEqual({ lessons: [], unreliableTools: {} });
  });

  it("matches the planner-facing wording for a tool that failed twice in three runs", () => {
    const three = [
      episode({ planId: "a", at: "2025-03-01T00:00:00Z", failures: [failure("search_flights", "timeout")] }),
      episode({ planId: "b", at: "2025-03-02T00:00:00Z", failures: [failure("search_flights", "timeout")] }),
      episode({ planId: "c", at: "2025-03-03T00:00:00Z" }),
    ];
    expect(summarizeLessons(three).lessons).toEqual([
      "search_flights failed in 2 of the last 3 runs (timeout); consider its backup",
    ]);
  });
});
