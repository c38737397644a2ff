import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { openDatabase, openPersistence } from "../../src/memory/persistence.js";
import { openRecords } from "../../src/memory/records.js";

/*
 * Issue 24: the commands that only read opened the database for writing (creating tables, sweeping expired memory),
 * so a database this user may not write could not even be listed. Opened read-only, nothing in the file or beside it
 * changes and every write is refused as STORAGE_READ_ONLY; these checks hold whatever the file's permissions.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "candor-read-only-open-"));
  dirs.push(dir);
  return dir;
}
const config = { configurable: { thread_id: "t-1" } };

describe("a database opened read-only", () => {
  it("reads what was written, refuses every write as STORAGE_READ_ONLY, and leaves the file as it was", async () => {
    const dir = tempDir();
    const db = path.join(dir, "candor.db");
    const writer = openPersistence(db);
    await writer.store.put(["candor", "threads"], "t-1", { request: "hello" });
    writer.close();
    const before = statSync(db);

    const p = await openDatabase(db, { readOnly: true });
    try {
      expect((await p.store.get(["candor", "threads"], "t-1"))?.value).toEqual({ request: "hello" });
      expect(await p.checkpointer.getTuple(config)).toBeUndefined();
      expect(await p.leases.holder("t-1")).toBeNull();
      await expect(p.store.put(["candor", "threads"], "t-2", { request: "x" })).rejects.toMatchObject({
        code: ErrorCode.STORAGE_READ_ONLY,
      });
      await expect(p.leases.acquire("t-1")).rejects.toMatchObject({ code: ErrorCode.STORAGE_READ_ONLY });
      expect(() => p.decisions.open("info").record({} as never)).toThrow(
        expect.objectContaining({ code: ErrorCode.STORAGE_READ_ONLY }),
      );
    } finally {
      await p.close();
    }
    const after = statSync(db);
    expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);
    // In a folder it may write, SQLite keeps its -wal and -shm files beside a WAL database; nothing else appears.
    expect(readdirSync(dir).filter((f) => !/^candor\.db(-wal|-shm)?$/.test(f))).toEqual([]);
  });

  it("a file with none of Candor's tables reads as empty, and stays without them", async () => {
    const dir = tempDir();
    const db = path.join(dir, "empty.db");
    writeFileSync(db, "");
    const p = await openDatabase(db, { readOnly: true });
    try {
      expect(await p.store.search(["candor", "threads"])).toEqual([]);
      expect(await p.checkpointer.getTuple(config)).toBeUndefined();
      const listed = [];
      for await (const c of p.checkpointer.list(config)) listed.push(c);
      expect(listed).toEqual([]);
    } finally {
      await p.close();
    }
    const raw = new Database(db, { readonly: true });
    expect(raw.prepare("SELECT count(*) AS n FROM sqlite_master").get()).toEqual({ n: 0 });
    raw.close();
  });

  it("a missing file is not created", async () => {
    const db = path.join(tempDir(), "missing.db");
    await expect(openDatabase(db, { readOnly: true })).rejects.toMatchObject({ code: ErrorCode.STORAGE });
    expect(existsSync(db)).toBe(false);
  });
});

describe("openRecords, the light reader", () => {
  it("lists one namespace's live items, newest first, and hands its connection to the whole persistence", async () => {
    const db = path.join(tempDir(), "candor.db");
    const writer = openPersistence(db);
    await writer.store.put(["candor", "threads"], "a", { n: 1 });
    await writer.store.put(["candor", "threads"], "b", { n: 2 });
    await writer.store.put(["candor", "threads", "deeper"], "c", { n: 3 });
    await writer.store.put(["candor", "threads"], "gone", { n: 4 }, undefined, { ttl: 0.0001 });
    writer.close();
    await new Promise((resolve) => setTimeout(resolve, 20));

    const reader = await openRecords(db, { readOnly: true });
    expect(await reader.items(["candor", "threads"], 10)).toEqual([
      { key: "b", value: { n: 2 } },
      { key: "a", value: { n: 1 } },
    ]);
    const p = await reader.persistence();
    expect((await p.store.get(["candor", "threads"], "a"))?.value).toEqual({ n: 1 });
    await reader.close(); // the persistence owns the connection now: this does not close it
    expect((await p.store.get(["candor", "threads"], "b"))?.value).toEqual({ n: 2 });
    await p.close();
  });
});
