import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { saveEpisode } from "../../src/memory/episodes.js";
import { liveEpisodes, userReflections } from "../../src/memory/learning.js";
import { SqliteStore, STORE_TABLE, type SqliteStoreOptions } from "../../src/memory/sqlite-store.js";
import { recordFeedback } from "../../src/reflection/learn.js";
import { userMemory } from "../../src/reflection/memory-view.js";
import { hotelChoice, judgedEpisode } from "../fakes/learning-fixtures.js";
import { travelRegistry } from "../fakes/toolkit-fixtures.js";

const DAY = 86_400_000;
const MINUTE = 60_000;
const registry = travelRegistry();
const opened: Database.Database[] = [];
afterEach(() => {
  for (const db of opened.splice(0)) db.close();
});

/** A store on an in-memory database with a clock the test moves. */
function clocked(options: Omit<SqliteStoreOptions, "now"> = {}) {
  const clock = { now: Date.parse("2025-01-01T00:00:00.000Z") };
  const db = new Database(":memory:");
  opened.push(db);
  const store = new SqliteStore(db, { ...options, now: () => clock.now });
  const rows = () => db.prepare(`SELECT COUNT(*) AS n FROM ${STORE_TABLE}`).get() as { n: number };
  return { clock, db, store, rows };
}

describe("SqliteStore TTL (LangGraph's store TTL contract)", () => {
  it("an item past its ttl is never read, and sweep deletes it", async () => {
    const { clock, store, rows } = clocked();
    await store.put(["u", "x"], "short", { v: 1 }, undefined, { ttl: 1 });
    await store.put(["u", "x"], "forever", { v: 2 });
    clock.now += 2 * MINUTE;
    expect(await store.get(["u", "x"], "short")).toBeNull();
    expect((await store.search(["u"])).map((i) => i.key)).toEqual(["forever"]);
    expect(rows().n).toBe(2);
    expect(store.sweep()).toBe(1);
    expect(rows().n).toBe(1);
  });

  it("a read refreshes the ttl by default, and not when refreshOnRead is false", async () => {
    for (const refreshOnRead of [true, false]) {
      const { clock, store } = clocked({ ttl: { refreshOnRead } });
      await store.put(["u", "x"], "k", { v: 1 }, undefined, { ttl: 10 });
      clock.now += 8 * MINUTE;
      expect(await store.get(["u", "x"], "k")).not.toBeNull();
      clock.now += 8 * MINUTE;
      expect((await store.get(["u", "x"], "k")) !== null).toBe(refreshOnRead);
    }
  });

  it("defaultTtl applies to puts without one; ttl null never expires", async () => {
    const { clock, store } = clocked({ ttl: { defaultTtl: 5 } });
    await store.put(["u", "x"], "default", { v: 1 });
    await store.put(["u", "x"], "never", { v: 1 }, undefined, { ttl: null });
    clock.now += 6 * MINUTE;
    expect((await store.search(["u", "x"])).map((i) => i.key)).toEqual(["never"]);
  });

  it("a database written before TTLs gains the columns and keeps every item, none expiring", async () => {
    const db = new Database(":memory:");
    opened.push(db);
    db.exec(`CREATE TABLE ${STORE_TABLE} (namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (namespace, key));
      INSERT INTO ${STORE_TABLE} VALUES ('u.x', 'old', '{"v":1}', 1, 1, 1);`);
    const store = new SqliteStore(db);
    expect((await store.get(["u", "x"], "old"))?.value).toEqual({ v: 1 });
    expect(store.sweep()).toBe(0);
  });
});

describe("memory hygiene (seed 001 scenario 8; issue 12 item 7)", () => {
  it("scenario 8: episodes and reflections live 90 days: read on day 89, gone on day 91, and swept", async () => {
    const { clock, store, rows } = clocked({ ttl: { refreshOnRead: false } });
    const t0 = clock.now;
    const episode = judgedEpisode(registry, [hotelChoice("Paris", 6.9)], null, { at: t0 });
    await saveEpisode(store, "ana", episode, t0);
    const out = await recordFeedback(
      { store, registry, now: () => clock.now },
      { threadId: episode.threadId, userId: "ana", planId: episode.planId },
      { verdict: "rejected", reason: "a shabby hotel", comment: null },
    );
    expect(out.reflection?.expiresAt).toBe(new Date(t0 + 90 * DAY).toISOString());
    clock.now = t0 + 89 * DAY;
    expect(await liveEpisodes(store, "ana", clock.now)).toHaveLength(1);
    expect(await userReflections(store, "ana", clock.now)).toHaveLength(1);
    clock.now = t0 + 91 * DAY;
    const view = await userMemory(store, "ana", registry, clock.now);
    expect([view.episodes, view.reflections, view.patterns]).toEqual([[], [], []]);
    const before = rows().n;
    expect(store.sweep()).toBe(3); // the episode, the reflection and its run record
    expect(rows().n).toBe(before - 3);
    // What the user chose to keep is not memory of a run: learned settings stay until revoked.
    expect(view.adjustments).toHaveLength(2);
  });

  it("one user never sees another's memory", async () => {
    const { store } = clocked();
    const episode = judgedEpisode(registry, [hotelChoice("Paris", 6.9)], null);
    await saveEpisode(store, "ana", episode);
    await recordFeedback(
      { store, registry },
      { threadId: episode.threadId, userId: "ana", planId: episode.planId },
      { verdict: "rejected", reason: "a shabby hotel", comment: null },
    );
    const ben = await userMemory(store, "ben", registry);
    expect([ben.episodes, ben.reflections, ben.patterns, ben.adjustments]).toEqual([[], [], [], []]);
    await expect(
      recordFeedback(
        { store, registry },
        { threadId: episode.threadId, userId: "ben", planId: episode.planId },
        { verdict: "accepted", reason: null, comment: null },
      ),
    ).rejects.toThrow(/has no stored episode for user ben/);
    expect((await userMemory(store, "ana", registry)).reflections).toHaveLength(1);
  });
});
