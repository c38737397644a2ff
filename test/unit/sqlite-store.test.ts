import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import type {
  GetOperation,
  ListNamespacesOperation,
  PutOperation,
  SearchOperation,
} from "@langchain/langgraph-checkpoint";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { SqliteStore } from "../../src/memory/sqlite-store.js";

let dir: string;
let dbFile: string;
const opened: { close(): void }[] = [];

function openStore(source: string | Database.Database = dbFile): SqliteStore {
  const store = new SqliteStore(source);
  opened.push(store);
  return store;
}

function expectStorageError(fn: () => unknown, fragment: string): void {
  try {
    fn();
  } catch (e) {
    expect(CandorError.hasCode(e, ErrorCode.STORAGE)).toBe(true);
    expect((e as Error).message).toContain(fragment);
    return;
  }
  throw new Error("expected a STORAGE CandorError");
}

async function expectStorageRejection(p: Promise<unknown>, fragment: string): Promise<void> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(CandorError.hasCode(e, ErrorCode.STORAGE)).toBe(true);
  expect((e as Error).message).toContain(fragment);
}

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "candor-store-"));
  dbFile = path.join(dir, "store.db");
});

afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("SqliteStore get/put/delete", () => {
  it("round-trips an item with its namespace, key, value and Date timestamps", async () => {
    const store = openStore();
    const before = Date.now();
    await store.put(["u1", "notes"], "n1", { text: "hello", tags: ["a"], nested: { n: 1 } });
    const item = await store.get(["u1", "notes"], "n1");
    expect(item).not.toBeNull();
    expect(item?.namespace).toEqual(["u1", "notes"]);
    expect(item?.key).toBe("n1");
    expect(item?.value).toEqual({ text: "hello", tags: ["a"], nested: { n: 1 } });
    expect(item?.createdAt).toBeInstanceOf(Date);
    expect(item?.updatedAt).toBeInstanceOf(Date);
    expect(item?.createdAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(await store.get(["u1", "notes"], "missing")).toBeNull();
    expect(await store.get(["u1"], "n1")).toBeNull();
  });

  it("keeps createdAt and advances updatedAt on overwrite", async () => {
    const store = openStore();
    await store.put(["u1"], "k", { v: 1 });
    const first = await store.get(["u1"], "k");
    await new Promise((r) => setTimeout(r, 5));
    await store.put(["u1"], "k", { v: 2 });
    const second = await store.get(["u1"], "k");
    expect(second?.value).toEqual({ v: 2 });
    expect(second?.createdAt.getTime()).toBe(first?.createdAt.getTime());
    expect(second?.updatedAt.getTime()).toBeGreaterThan(first?.updatedAt.getTime() ?? Infinity);
  });

  it("deletes with delete() and with a null put value in batch()", async () => {
    const store = openStore();
    await store.put(["u1"], "a", { v: 1 });
    await store.put(["u1"], "b", { v: 2 });
    await store.delete(["u1"], "a");
    await store.batch([{ namespace: ["u1"], key: "b", value: null }]);
    expect(await store.get(["u1"], "a")).toBeNull();
    expect(await store.get(["u1"], "b")).toBeNull();
    await store.delete(["u1"], "never-existed");
  });

  it("runs a batch in order, so a get sees an earlier put of the same batch", async () => {
    const store = openStore();
    const ops: [PutOperation, GetOperation, SearchOperation, ListNamespacesOperation] = [
      { namespace: ["u1", "x"], key: "k", value: { v: 1 } },
      { namespace: ["u1", "x"], key: "k" },
      { namespacePrefix: ["u1"], limit: 10, offset: 0 },
      { limit: 10, offset: 0 },
    ];
    const [putResult, got, found, namespaces] = await store.batch(ops);
    expect(putResult).toBeUndefined();
    expect(got?.value).toEqual({ v: 1 });
    expect(found.map((i) => i.key)).toEqual(["k"]);
    expect(namespaces).toEqual([["u1", "x"]]);
  });

  it("rejects empty labels, labels containing the separator and empty put namespaces with STORAGE", async () => {
    const store = openStore();
    await expectStorageRejection(store.batch([{ namespace: ["u1", ""], key: "k", value: { v: 1 } }]), "non-empty");
    await expectStorageRejection(store.batch([{ namespace: ["a.b"], key: "k", value: { v: 1 } }]), 'contains "."');
    await expectStorageRejection(store.batch([{ namespace: [], key: "k", value: { v: 1 } }]), "cannot be empty");
    await expectStorageRejection(store.batch([{ namespacePrefix: ["a.b"] }]), 'contains "."');
  });

  it("rolls back the whole batch when one operation fails", async () => {
    const store = openStore();
    await expectStorageRejection(
      store.batch([
        { namespace: ["u1"], key: "k", value: { v: 1 } },
        { namespace: ["bad.label"], key: "k", value: { v: 1 } },
      ]),
      "bad.label",
    );
    expect(await store.get(["u1"], "k")).toBeNull();
  });
});

describe("SqliteStore search", () => {
  async function seed(store: SqliteStore): Promise<void> {
    // Written oldest to newest: search must return them newest first.
    await store.put(["u1", "episodes"], "e1", { status: "completed", cost: 1, ok: true });
    await store.put(["u1", "episodes"], "e2", { status: "failed", cost: 2, ok: false });
    await store.put(["u1", "episodes"], "e3", { status: "completed", cost: 3, ok: true, note: null });
    await store.put(["u1", "episodes", "archive"], "e0", { status: "completed", cost: 1, ok: true });
    await store.put(["u1x", "episodes"], "other-user", { status: "completed", cost: 1 });
    await store.put(["u2", "episodes"], "u2e1", { status: "completed", cost: "1" });
  }

  it("matches the prefix exactly label by label, newest write first", async () => {
    const store = openStore();
    await seed(store);
    const u1 = await store.search(["u1"]);
    expect(u1.map((i) => i.key)).toEqual(["e0", "e3", "e2", "e1"]);
    const episodes = await store.search(["u1", "episodes"]);
    expect(episodes.map((i) => i.key)).toEqual(["e0", "e3", "e2", "e1"]);
    expect((await store.search(["u1", "episodes", "archive"])).map((i) => i.key)).toEqual(["e0"]);
    expect((await store.search([], { limit: 100 })).length).toBe(6);
    expect(await store.search(["nobody"])).toEqual([]);
  });

  it("orders by the latest write, so an updated item moves to the front", async () => {
    const store = openStore();
    await seed(store);
    await store.put(["u1", "episodes"], "e1", { status: "completed", cost: 10, ok: true });
    const keys = (await store.search(["u1", "episodes"])).map((i) => i.key);
    expect(keys[0]).toBe("e1");
  });

  it("treats % and _ in labels literally", async () => {
    const store = openStore();
    await store.put(["a_b"], "k1", { v: 1 });
    await store.put(["axb"], "k2", { v: 2 });
    await store.put(["a%"], "k3", { v: 3 });
    expect((await store.search(["a_b"])).map((i) => i.key)).toEqual(["k1"]);
    expect((await store.search(["a%"])).map((i) => i.key)).toEqual(["k3"]);
  });

  it("filters on top-level fields by equality with the JSON type respected", async () => {
    const store = openStore();
    await seed(store);
    const completed = await store.search(["u1", "episodes"], { filter: { status: "completed" } });
    expect(completed.map((i) => i.key)).toEqual(["e0", "e3", "e1"]);
    const both = await store.search(["u1"], { filter: { status: "completed", cost: 3 } });
    expect(both.map((i) => i.key)).toEqual(["e3"]);
    const eq = await store.search(["u1"], { filter: { cost: { $eq: 2 } } });
    expect(eq.map((i) => i.key)).toEqual(["e2"]);
    expect((await store.search(["u1"], { filter: { ok: false } })).map((i) => i.key)).toEqual(["e2"]);
    // A missing field is not null, and the string "1" is not the number 1.
    expect((await store.search([], { filter: { note: null } })).map((i) => i.key)).toEqual(["e3"]);
    expect((await store.search(["u2"], { filter: { cost: 1 } })).map((i) => i.key)).toEqual([]);
    expect((await store.search(["u2"], { filter: { cost: "1" } })).map((i) => i.key)).toEqual(["u2e1"]);
  });

  it("refuses filters it cannot honour instead of silently ignoring them", async () => {
    const store = openStore();
    await seed(store);
    await expectStorageRejection(store.search(["u1"], { filter: { cost: { $gt: 1 } } }), "equality");
    await expectStorageRejection(store.search(["u1"], { filter: { tags: ["a"] } }), "equality");
  });

  it("paginates with limit and offset", async () => {
    const store = openStore();
    for (let i = 0; i < 25; i += 1) await store.put(["u1", "log"], `k${String(i).padStart(2, "0")}`, { i });
    const first = await store.search(["u1", "log"], { limit: 10 });
    const second = await store.search(["u1", "log"], { limit: 10, offset: 10 });
    const third = await store.search(["u1", "log"], { limit: 10, offset: 20 });
    expect(first.map((i) => i.value.i)).toEqual([24, 23, 22, 21, 20, 19, 18, 17, 16, 15]);
    expect(second.map((i) => i.value.i)).toEqual([14, 13, 12, 11, 10, 9, 8, 7, 6, 5]);
    expect(third.map((i) => i.value.i)).toEqual([4, 3, 2, 1, 0]);
    expect(await store.search(["u1", "log"], { limit: 10, offset: 30 })).toEqual([]);
    expect((await store.search(["u1", "log"])).length).toBe(10);
    await expectStorageRejection(store.search(["u1", "log"], { limit: -1 }), "non-negative integer");
  });

  it("ignores query rather than pretending to rank", async () => {
    const store = openStore();
    await seed(store);
    const plain = await store.search(["u1", "episodes"]);
    const queried = await store.search(["u1", "episodes"], { query: "something unrelated" });
    expect(queried.map((i) => i.key)).toEqual(plain.map((i) => i.key));
  });
});

describe("SqliteStore listNamespaces", () => {
  async function seed(store: SqliteStore): Promise<void> {
    await store.put(["u1", "episodes"], "k", { v: 1 });
    await store.put(["u1", "config"], "agent", { v: 1 });
    await store.put(["u2", "episodes"], "k", { v: 1 });
    await store.put(["u2", "episodes", "archive"], "k", { v: 1 });
    await store.put(["shared"], "k", { v: 1 });
  }

  it("lists every namespace in sorted order", async () => {
    const store = openStore();
    await seed(store);
    expect(await store.listNamespaces()).toEqual([
      ["shared"],
      ["u1", "config"],
      ["u1", "episodes"],
      ["u2", "episodes"],
      ["u2", "episodes", "archive"],
    ]);
  });

  it("matches prefix and suffix conditions, with * as a wildcard label", async () => {
    const store = openStore();
    await seed(store);
    expect(await store.listNamespaces({ prefix: ["u1"] })).toEqual([
      ["u1", "config"],
      ["u1", "episodes"],
    ]);
    expect(await store.listNamespaces({ suffix: ["episodes"] })).toEqual([
      ["u1", "episodes"],
      ["u2", "episodes"],
    ]);
    expect(await store.listNamespaces({ prefix: ["*", "episodes"] })).toEqual([
      ["u1", "episodes"],
      ["u2", "episodes"],
      ["u2", "episodes", "archive"],
    ]);
    expect(await store.listNamespaces({ prefix: ["u2"], suffix: ["archive"] })).toEqual([
      ["u2", "episodes", "archive"],
    ]);
  });

  it("truncates to maxDepth and removes the duplicates that creates", async () => {
    const store = openStore();
    await seed(store);
    expect(await store.listNamespaces({ maxDepth: 1 })).toEqual([["shared"], ["u1"], ["u2"]]);
    expect(await store.listNamespaces({ prefix: ["u2"], maxDepth: 2 })).toEqual([["u2", "episodes"]]);
  });

  it("paginates with limit and offset", async () => {
    const store = openStore();
    await seed(store);
    expect(await store.listNamespaces({ limit: 2 })).toEqual([["shared"], ["u1", "config"]]);
    expect(await store.listNamespaces({ limit: 2, offset: 2 })).toEqual([
      ["u1", "episodes"],
      ["u2", "episodes"],
    ]);
    expect(await store.listNamespaces({ limit: 2, offset: 4 })).toEqual([["u2", "episodes", "archive"]]);
  });

  it("forgets a namespace once its last item is deleted", async () => {
    const store = openStore();
    await store.put(["gone"], "k", { v: 1 });
    await store.delete(["gone"], "k");
    expect(await store.listNamespaces()).toEqual([]);
  });
});

describe("SqliteStore on a file", () => {
  it("keeps items across closing and reopening the file", async () => {
    const first = new SqliteStore(dbFile);
    await first.put(["u1", "config"], "agent", { model: "m1" });
    first.close();
    expect(first.db.open).toBe(false);

    const second = openStore();
    const item = await second.get(["u1", "config"], "agent");
    expect(item?.value).toEqual({ model: "m1" });
    expect(second.db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(second.db.pragma("busy_timeout", { simple: true })).toBe(5000);
  });

  it("lets two stores on the same file see each other's writes", async () => {
    const a = openStore();
    const b = openStore();
    await a.put(["u1"], "from-a", { v: "a" });
    await b.put(["u1"], "from-b", { v: "b" });
    expect((await b.get(["u1"], "from-a"))?.value).toEqual({ v: "a" });
    expect((await a.search(["u1"])).map((i) => i.key)).toEqual(["from-b", "from-a"]);
    await a.delete(["u1"], "from-b");
    expect(await b.get(["u1"], "from-b")).toBeNull();
  });

  it("makes a writer in another process wait for the lock instead of failing with SQLITE_BUSY", async () => {
    const store = openStore();
    await store.put(["u1"], "parent", { v: 1 });
    const child = spawnChildWriter(dbFile);
    await child.ready;
    // Hold the write lock from before the child's put until well after it starts; busy_timeout must carry it.
    store.db.exec("BEGIN IMMEDIATE");
    child.go();
    await child.trying;
    await new Promise((r) => setTimeout(r, 300));
    store.db.exec("COMMIT");
    const waitedMs = await child.done;
    expect(waitedMs).toBeGreaterThanOrEqual(150);
    expect((await store.get(["u1"], "child"))?.value).toEqual({ from: "child" });
    expect((await store.search(["u1"])).map((i) => i.key)).toEqual(["child", "parent"]);
  });

  it("leaves a connection it was given open on close()", async () => {
    const db = new Database(dbFile);
    opened.push(db);
    const store = new SqliteStore(db);
    await store.put(["u1"], "k", { v: 1 });
    store.close();
    expect(db.open).toBe(true);
    expect(db.prepare("SELECT count(*) AS n FROM candor_store").get()).toEqual({ n: 1 });
  });

  it("throws STORAGE when the file cannot be opened", () => {
    expectStorageError(() => new SqliteStore(path.join(dir, "no", "such", "dir", "x.db")), "x.db");
  });
});

const STORE_MODULE = fileURLToPath(new URL("../../src/memory/sqlite-store.ts", import.meta.url));

/**
 * A second process on the same file. It prints "ready" once open; on any stdin input it prints "trying"
 * (synchronously, since the put then blocks its event loop), puts one item, and prints the milliseconds the put took.
 */
function spawnChildWriter(file: string) {
  const code = `
import { writeSync } from "node:fs";
import { SqliteStore } from ${JSON.stringify(STORE_MODULE)};
const store = new SqliteStore(${JSON.stringify(file)});
writeSync(1, "ready\\n");
process.stdin.once("data", async () => {
  writeSync(1, "trying\\n");
  const t0 = Date.now();
  await store.put(["u1"], "child", { from: "child" });
  store.close();
  writeSync(1, "waited " + (Date.now() - t0) + "\\n");
  process.exit(0);
});`;
  const proc = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
    cwd: fileURLToPath(new URL("../..", import.meta.url)),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const waiters: { line: string; resolve: () => void }[] = [];
  const lineSeen = (line: string) => new Promise<void>((resolve) => waiters.push({ line, resolve }));
  const ready = lineSeen("ready");
  const trying = lineSeen("trying");
  proc.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    const lines = stdout.split("\n");
    for (const w of waiters) if (lines.includes(w.line)) w.resolve();
  });
  proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<number>((resolve, reject) => {
    proc.on("error", reject);
    proc.on("exit", (code) => {
      const waited = /waited (\d+)/.exec(stdout)?.[1];
      if (code === 0 && waited !== undefined) resolve(Number(waited));
      else reject(new Error(`child exited with ${String(code)}: ${stderr || stdout}`));
    });
  });
  return { ready, trying, done, go: () => proc.stdin.write("go\n") };
}
