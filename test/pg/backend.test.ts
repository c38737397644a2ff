import { createServer } from "node:net";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { openDatabase, type PostgresPersistence } from "../../src/memory/persistence.js";
import { decodeLabel, encodeLabel } from "../../src/memory/postgres-store.js";
import { redactUrl } from "../../src/memory/postgres-url.js";
import { postgresDatabase } from "./helpers.js";

const opened: PostgresPersistence[] = [];
afterAll(async () => {
  for (const p of opened) await p.close();
});

async function open(url = postgresDatabase()): Promise<PostgresPersistence> {
  const p = await openDatabase(url);
  if (p.backend !== "postgres") throw new Error("expected PostgreSQL");
  opened.push(p);
  return p;
}

async function query(url: string, sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

async function storageError(p: Promise<unknown>): Promise<CandorError> {
  try {
    await p;
  } catch (e) {
    if (CandorError.hasCode(e, ErrorCode.STORAGE)) return e;
    throw e;
  }
  throw new Error("expected a STORAGE CandorError");
}

describe("the store on PostgreSQL (Candor's namespace rules)", () => {
  it("labels round-trip exactly, underscores and the encoding's own characters included", () => {
    for (const label of ["ana_example_com", "100%", "a\\b", "x~21", "wow!", "plain"]) {
      expect(decodeLabel(encodeLabel(label))).toBe(label);
      expect(encodeLabel(label)).not.toMatch(/[%_\\]/);
    }
  });

  it("a user id with an underscore works, as on SQLite (PostgresStore alone refuses it)", async () => {
    const { store } = await open();
    await store.put(["ana_example_com", "episodes"], "e1", { n: 1 });
    expect((await store.get(["ana_example_com", "episodes"], "e1"))?.value).toEqual({ n: 1 });
    const found = await store.search(["ana_example_com", "episodes"]);
    expect(found.map((i) => [i.namespace, i.key])).toEqual([[["ana_example_com", "episodes"], "e1"]]);
  });

  it("a prefix matches whole labels: bob's search never returns bobby's or b_b's items", async () => {
    const { store } = await open();
    await store.put(["bob", "episodes"], "mine", { who: "bob" });
    await store.put(["bobby", "episodes"], "theirs", { who: "bobby" });
    await store.put(["b_b", "episodes"], "other", { who: "b_b" });
    await store.put(["bxb", "episodes"], "another", { who: "bxb" });
    expect((await store.search(["bob"])).map((i) => i.key)).toEqual(["mine"]);
    expect((await store.search(["b_b"])).map((i) => i.key)).toEqual(["other"]);
    // Through batch too, which is what LangGraph's nodes use.
    const [viaBatch] = await store.batch([{ namespacePrefix: ["bob"], limit: 10, offset: 0 }]);
    expect(viaBatch?.map((i) => i.key)).toEqual(["mine"]);
    expect(await store.listNamespaces({ prefix: ["bob"] })).toEqual([["bob", "episodes"]]);
    expect(await store.listNamespaces({ maxDepth: 1 })).toEqual([["b_b"], ["bob"], ["bobby"], ["bxb"]]);
  });

  it("keeps createdAt across updates, deletes, and refuses the labels BaseStore refuses", async () => {
    const { store } = await open();
    await store.put(["u", "config"], "k", { v: 1 });
    const first = await store.get(["u", "config"], "k");
    await store.put(["u", "config"], "k", { v: 2 });
    const second = await store.get(["u", "config"], "k");
    expect(second?.value).toEqual({ v: 2 });
    expect(second?.createdAt.getTime()).toBe(first?.createdAt.getTime());
    await store.delete(["u", "config"], "k");
    expect(await store.get(["u", "config"], "k")).toBeNull();
    await expect(store.put(["a.b"], "k", {})).rejects.toThrow(/periods/);
  });
});

describe("the effect ledger on PostgreSQL", () => {
  it("records started, failed and done per attempt and gives the same verdicts as SQLite, across connections", async () => {
    const url = postgresDatabase();
    const a = await open(url);
    const key = { threadId: "t1", stepId: "pay", dispatch: 1 };
    expect(await a.ledger.verdict(key)).toEqual({ kind: "call" });
    await a.ledger.recordFailed({ ...key, attempt: 1 }, "pay", { n: 1 }, "503");
    expect(await a.ledger.verdict(key)).toEqual({ kind: "call" });
    await a.ledger.recordStarted({ ...key, attempt: 2 }, "pay", { n: 1 });
    const b = await open(url);
    expect(await b.ledger.verdict(key)).toMatchObject({ kind: "unknown", record: { attempt: 2, status: "started" } });
    await b.ledger.recordDone({ ...key, attempt: 2 }, "pay", { n: 1 }, { ref: "R1" });
    expect(await a.ledger.verdict(key)).toMatchObject({ kind: "done", record: { attempt: 2, result: { ref: "R1" } } });
    expect(await a.ledger.lookup({ ...key, attempt: 1 })).toMatchObject({ status: "failed", result: "503" });
    expect((await a.ledger.recordsFor(key)).map((r) => r.attempt)).toEqual([1, 2]);
  });
});

describe("leases on PostgreSQL", () => {
  const T0 = 1_700_000_000_000;
  const alive = () => true;

  it("one holder at a time until expiry; renewal extends it; a lost lease cannot be renewed or released", async () => {
    const { leases } = await open();
    const a = await leases.acquire("t1", 30_000, { pid: 111, host: "m1", now: T0 });
    expect(a.acquired).toBe(true);
    if (!a.acquired) return;
    const busy = await leases.acquire("t1", 30_000, { pid: 222, host: "m2", now: T0 + 29_999, isAlive: alive });
    expect(busy).toEqual({
      acquired: false,
      heldBy: { holder: a.lease.holder, pid: 111, host: "m1", expiresAt: T0 + 30_000 },
    });
    expect(await leases.renew(a.lease, 30_000, T0 + 20_000)).toBe(true);
    expect(a.lease.expiresAt).toBe(T0 + 50_000);
    expect(
      (await leases.acquire("t1", 30_000, { pid: 222, host: "m2", now: T0 + 49_999, isAlive: alive })).acquired,
    ).toBe(false);
    // A holder on another machine that died frees the thread when its lease expires, not before.
    const b = await leases.acquire("t1", 30_000, { pid: 222, host: "m2", now: T0 + 50_000, isAlive: alive });
    expect(b.acquired).toBe(true);
    expect(await leases.renew(a.lease, 30_000, T0 + 50_001)).toBe(false);
    await leases.release(a.lease);
    expect(await leases.holder("t1", { now: T0 + 50_001, isAlive: alive, host: "m3" })).toMatchObject({ pid: 222 });
  });

  it("a dead holder on this machine frees the thread at once; one on another machine is not judged by this one's pids", async () => {
    const { leases } = await open();
    const dead = () => false;
    expect((await leases.acquire("t2", 30_000, { pid: 111, host: "here", now: T0 })).acquired).toBe(true);
    expect((await leases.acquire("t2", 30_000, { pid: 222, host: "here", now: T0 + 1, isAlive: dead })).acquired).toBe(
      true,
    );
    expect(
      (await leases.acquire("t2", 30_000, { pid: 333, host: "elsewhere", now: T0 + 2, isAlive: dead })).acquired,
    ).toBe(false);
  });

  it("expiry is on the database server's clock, so a machine whose clock is off agrees with the others", async () => {
    const url = postgresDatabase();
    const { leases } = await open(url);
    const got = await leases.acquire("t3", 30_000);
    expect(got.acquired).toBe(true);
    if (!got.acquired) return;
    const [row] = await query(url, "SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS now");
    const serverNow = Number(row!.now);
    expect(got.lease.expiresAt).toBeGreaterThan(serverNow + 25_000);
    expect(got.lease.expiresAt).toBeLessThanOrEqual(serverNow + 30_000);
    expect(await leases.holder("t3")).toMatchObject({ pid: process.pid });
    await leases.release(got.lease);
    expect(await leases.holder("t3")).toBeNull();
  });

  it("many acquisitions of one free thread at once: exactly one wins", async () => {
    const url = postgresDatabase();
    const all = await Promise.all(Array.from({ length: 6 }, () => open(url)));
    const results = await Promise.all(
      all.map((p, i) => p.leases.acquire("contended", 30_000, { pid: 1000 + i, host: "far", isAlive: alive })),
    );
    expect(results.filter((r) => r.acquired)).toHaveLength(1);
  });
});

describe("checkpoints on PostgreSQL", () => {
  it("a fork from an earlier checkpoint keeps its own values (PostgresSaver alone reuses version numbers and reads the original branch's)", async () => {
    const { checkpointer } = await open();
    const State = Annotation.Root({ city: Annotation<string>, visits: Annotation<number> });
    const graph = new StateGraph(State)
      .addNode("go", (s) => ({ visits: s.visits + 1 }))
      .addNode("stay", (s) => ({ visits: s.visits + 10 }))
      .addEdge(START, "go")
      .addEdge("go", "stay")
      .addEdge("stay", END)
      .compile({ checkpointer });
    const config = { configurable: { thread_id: "fork" } };
    await graph.invoke({ city: "Paris", visits: 0 }, config);
    const history = [];
    for await (const s of graph.getStateHistory(config)) history.push(s);
    const afterGo = history.find((s) => s.next[0] === "stay")!;
    const fork = await graph.updateState(afterGo.config, { city: "Rome", visits: 100 });
    const forked = await graph.invoke(null, fork);
    expect(forked).toEqual({ city: "Rome", visits: 110 });
    expect((await graph.getState(config)).values).toEqual({ city: "Rome", visits: 110 });
    // The original branch is intact.
    expect(history[0]!.values).toEqual({ city: "Paris", visits: 11 });
  });
});

describe("the decision log on PostgreSQL", () => {
  it("records decisions in order as the file log's JSON lines, and reads them back", async () => {
    const p = await open();
    expect(await p.decisions.read()).toBeNull();
    const log = p.decisions.open("info");
    log.record({ operation: "plan", planId: "p1", threadId: "t1", input: "trip", decision: "5 steps", reasoning: "r" });
    log.record({
      operation: "dispatch",
      planId: "p1",
      taskId: "s1",
      threadId: "t1",
      input: "s1",
      decision: "go",
      reasoning: "",
    });
    await log.flush();
    const lines = (await p.decisions.read())!.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        app: "candor",
        operation: "plan",
        taskId: null,
        cost: 0,
        msg: "plan: 5 steps",
      }),
      expect.objectContaining({ operation: "dispatch", taskId: "s1" }),
    ]);
    expect(p.decisions.where).toBe(`table candor_decisions in ${p.dbPath}`);
  });

  it("a decision that cannot be written is not dropped silently: flush fails with the count and the reason", async () => {
    const url = postgresDatabase();
    const p = await open(url);
    await query(url, "DROP TABLE candor_decisions");
    const log = p.decisions.open("info");
    log.record({ operation: "plan", planId: "p1", input: "", decision: "d", reasoning: "" });
    const e = await storageError(log.flush());
    expect(e.message).toMatch(
      /^1 decision could not be written to the decision log \(table candor_decisions in postgres:/,
    );
    expect(e.message).toContain('relation "candor_decisions" does not exist');
  });

  it("writes nothing at a log level above info, as the file log does", async () => {
    const p = await open();
    const log = p.decisions.open("warn");
    log.record({ operation: "plan", planId: "p1", input: "", decision: "d", reasoning: "" });
    await log.flush();
    expect(await p.decisions.read()).toBeNull();
  });
});

describe("opening a PostgreSQL database", () => {
  it("an unreachable server is one STORAGE error naming the database without its password, and what to check", async () => {
    // A port nobody listens on: bind one, note it, close it.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const url = `postgres://candor:s3cret@127.0.0.1:${port}/nowhere`;
    const e = await storageError(openDatabase(url));
    expect(e.message).toContain(`postgres://candor:***@127.0.0.1:${port}/nowhere`);
    expect(e.message).not.toContain("s3cret");
    expect(e.message).toMatch(/ECONNREFUSED.*Check the URL in --db or CANDOR_DB/);
    expect(redactUrl("postgresql://u@h/db")).toBe("postgresql://u@h/db");
  });

  it("a database migrated by a newer Candor is refused: upgrade Candor", async () => {
    const url = postgresDatabase();
    await query(url, "INSERT INTO candor_schema_migrations (v) VALUES (99)");
    const e = await storageError(openDatabase(url));
    expect(e.message).toMatch(/has Candor's schema version 100, newer than this Candor's \d+: .*Upgrade Candor/);
  });
});

describe("a server that drops idle connections", () => {
  it("does not kill the process: the next operations of the store, ledger and leases open new connections", async () => {
    const url = postgresDatabase();
    const p = await open(url);
    await p.store.put(["u", "config"], "k", { v: 1 });
    await p.ledger.verdict({ threadId: "t", stepId: "s", dispatch: 1 });
    // Both pools now hold an idle connection; the server ends every one of them (as a restart would).
    const ended = await query(
      url,
      "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = 'candor' AND pid <> pg_backend_pid()",
    );
    expect(ended.length).toBeGreaterThanOrEqual(2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await p.store.get(["u", "config"], "k"))?.value).toEqual({ v: 1 });
    expect(await p.ledger.verdict({ threadId: "t", stepId: "s", dispatch: 1 })).toEqual({ kind: "call" });
  });
});
