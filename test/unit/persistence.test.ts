import { mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Annotation, END, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { decisionLogPath, openPersistence, type SqlitePersistence } from "../../src/memory/persistence.js";

let dir: string;
const opened: SqlitePersistence[] = [];

function open(dbPath: string): SqlitePersistence {
  const p = openPersistence(dbPath);
  opened.push(p);
  return p;
}

function storageErrorFrom(fn: () => unknown): CandorError {
  try {
    fn();
  } catch (e) {
    if (CandorError.hasCode(e, ErrorCode.STORAGE)) return e;
    throw e;
  }
  throw new Error("expected a STORAGE CandorError");
}

/** A one-node graph whose node writes to the store it is given, so one run touches both saver and store. */
function counterGraph() {
  const State = Annotation.Root({ count: Annotation<number>, userId: Annotation<string> });
  return new StateGraph(State)
    .addNode("bump", async (s: typeof State.State, config: LangGraphRunnableConfig) => {
      const next = s.count + 1;
      await config.store?.put([s.userId, "counters"], "bump", { count: next });
      return { count: next };
    })
    .addEdge(START, "bump")
    .addEdge("bump", END);
}

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "candor-persist-"));
});

afterEach(() => {
  for (const p of opened.splice(0)) p.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("openPersistence", () => {
  it("creates missing parent directories and returns the absolute path", () => {
    const dbPath = path.join(dir, "nested", "deeper", "candor.db");
    const p = open(dbPath);
    expect(p.dbPath).toBe(dbPath);
    expect(existsSync(dbPath)).toBe(true);
    // One connection: a transaction the store opens is the checkpointer's too (the saver sees the connection
    // through a statement cache, so the objects differ).
    p.store.db.exec("BEGIN");
    expect(p.checkpointer.db.inTransaction).toBe(true);
    p.store.db.exec("ROLLBACK");
    expect(p.store.db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(p.store.db.pragma("busy_timeout", { simple: true })).toBe(5000);
    // NORMAL (1): a commit does not wait for the disk; a process crash still loses nothing in WAL mode.
    expect(p.store.db.pragma("synchronous", { simple: true })).toBe(1);
  });

  it("shares one file between checkpoints and the store, and both survive reopening", async () => {
    const dbPath = path.join(dir, "candor.db");
    const first = open(dbPath);
    const graph = counterGraph().compile({ checkpointer: first.checkpointer, store: first.store });
    const config = { configurable: { thread_id: "t1" } };
    const out = await graph.invoke({ count: 1, userId: "u1" }, config);
    expect(out.count).toBe(2);
    expect((await first.store.get(["u1", "counters"], "bump"))?.value).toEqual({ count: 2 });
    const tables = first.store.db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((r) => (r as { name: string }).name);
    expect(tables).toEqual(expect.arrayContaining(["candor_store", "checkpoints", "writes"]));
    first.close();
    first.close();

    const second = open(dbPath);
    expect((await second.store.get(["u1", "counters"], "bump"))?.value).toEqual({ count: 2 });
    const reopened = counterGraph().compile({ checkpointer: second.checkpointer, store: second.store });
    expect((await reopened.getState(config)).values).toEqual({ count: 2, userId: "u1" });
    const again = await reopened.invoke({ count: 10, userId: "u1" }, config);
    expect(again.count).toBe(11);
    expect((await second.store.get(["u1", "counters"], "bump"))?.value).toEqual({ count: 11 });
  });

  it("lets a second connection to the same file read what the first wrote", async () => {
    const dbPath = path.join(dir, "candor.db");
    const a = open(dbPath);
    const b = open(dbPath);
    const graph = counterGraph().compile({ checkpointer: a.checkpointer, store: a.store });
    await graph.invoke({ count: 0, userId: "u1" }, { configurable: { thread_id: "t1" } });
    const tuple = await b.checkpointer.getTuple({ configurable: { thread_id: "t1" } });
    expect(tuple?.checkpoint.channel_values).toMatchObject({ count: 1 });
    expect((await b.store.get(["u1", "counters"], "bump"))?.value).toEqual({ count: 1 });
  });

  it("fails with STORAGE naming the path, the OS error and the fix when the parent is a regular file", () => {
    const file = path.join(dir, "plain-file");
    writeFileSync(file, "not a directory");
    const dbPath = path.join(file, "candor.db");
    const e = storageErrorFrom(() => openPersistence(dbPath));
    expect(e.message).toContain(dbPath);
    expect(e.message).toContain(`"${file}" is a file, not a directory`);
    expect(e.message).toContain("--db");
    expect(e.message).toContain("CANDOR_DB");
    expect(e.message).not.toMatch(/\n|\bat .+:\d+:\d+/);
    expect(e.details).toEqual({ dbPath });
  });

  it("fails with STORAGE under /etc/passwd", () => {
    const e = storageErrorFrom(() => openPersistence("/etc/passwd/x.db"));
    expect(e.message).toContain("/etc/passwd/x.db");
    expect(e.message).toContain('"/etc/passwd" is a file, not a directory');
  });

  it("fails with STORAGE when the path is a directory", () => {
    const e = storageErrorFrom(() => openPersistence(dir));
    expect(e.message).toContain("EISDIR");
  });

  it("fails with STORAGE when the file is not a SQLite database", () => {
    const dbPath = path.join(dir, "junk.db");
    writeFileSync(dbPath, "this is plainly not a database, and it is long enough to have a header ".repeat(4));
    const e = storageErrorFrom(() => openPersistence(dbPath));
    expect(e.message).toContain(dbPath);
    expect(e.message).toContain("not a database");
    expect(e.message).toContain("CANDOR_DB");
  });
});

describe("decisionLogPath", () => {
  it("puts the log beside the database, named after it: one log per database (issue 8: a shared decisions.log mixed every database in the folder)", () => {
    expect(decisionLogPath("/var/lib/candor/candor.db")).toBe("/var/lib/candor/candor.db.decisions.log");
    expect(decisionLogPath(".candor/candor.db")).toBe(path.resolve(".candor", "candor.db.decisions.log"));
    expect(decisionLogPath("/data/a.db")).not.toBe(decisionLogPath("/data/b.db"));
    expect(decisionLogPath("/data/a.db")).not.toBe(decisionLogPath("/data/a.sqlite"));
  });
});
