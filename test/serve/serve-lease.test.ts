import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Annotation, InMemoryStore, MemorySaver, StateGraph } from "@langchain/langgraph";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { sqliteLeases, type ThreadLeases } from "../../src/memory/lease.js";
import { parseSse } from "../../src/serve/sse.js";
import { serveHandler, type ServeDeps } from "../../src/serve/server.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

const State = Annotation.Root({
  visited: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

/** Five steps of 80 ms each: long enough for several renewals of a lease renewed every 20 ms. */
function slowGraph() {
  const step = (name: string) => async () => {
    await new Promise((r) => setTimeout(r, 80));
    return { visited: [name] };
  };
  return new StateGraph(State)
    .addNode("s1", step("s1"))
    .addNode("s2", step("s2"))
    .addNode("s3", step("s3"))
    .addNode("s4", step("s4"))
    .addNode("s5", step("s5"))
    .addEdge("__start__", "s1")
    .addEdge("s1", "s2")
    .addEdge("s2", "s3")
    .addEdge("s3", "s4")
    .addEdge("s4", "s5")
    .addEdge("s5", "__end__")
    .compile({ checkpointer: new MemorySaver() });
}

function leasesOnTempDb(): ThreadLeases {
  const dir = mkdtempSync(path.join(tmpdir(), "candor-serve-lease-"));
  const db = new Database(path.join(dir, "candor.db"));
  cleanups.push(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return sqliteLeases(db);
}

async function streamRun(deps: Partial<ServeDeps> & Pick<ServeDeps, "leases">) {
  const graph = slowGraph();
  const notices: string[] = [];
  const handler = serveHandler({
    graph: graph,
    checkpointer: graph.checkpointer as ServeDeps["checkpointer"],
    store: new InMemoryStore(),
    foreign: async () => [],
    token: null,
    version: "test",
    onNotice: (m) => notices.push(m),
    leaseTiming: { ttlMs: 1_000, renewMs: 20 },
    ...deps,
  });
  const threadId = randomUUID();
  const created = await handler(
    new Request("http://127.0.0.1/threads", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ thread_id: threadId }),
    }),
  );
  expect(created.status).toBe(200);
  const streamed = await handler(
    new Request(`http://127.0.0.1/threads/${threadId}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "candor", input: { visited: [] }, stream_mode: ["values"] }),
    }),
  );
  const events = parseSse(await streamed.text());
  const state = await graph.getState({ configurable: { thread_id: threadId } });
  return { events, notices, visited: (state.values as { visited?: string[] }).visited ?? [], threadId };
}

describe("candor serve keeps a run's lease as the CLI does", () => {
  it("runs to the end while every renewal holds", async () => {
    const { events, notices, visited } = await streamRun({ leases: leasesOnTempDb() });
    expect(events.some((e) => e.event === "error")).toBe(false);
    expect(notices).toEqual([]);
    expect(visited).toEqual(["s1", "s2", "s3", "s4", "s5"]);
  });

  it("stops the run and says so when a renewal finds the lease taken by another process", async () => {
    const real = leasesOnTempDb();
    const { events, notices, visited, threadId } = await streamRun({
      leases: { ...real, renew: async () => false },
    });
    expect(notices).toEqual([expect.stringMatching(/^Lost the lease on thread .*another process took it/)]);
    expect(notices[0]).toContain(threadId);
    const error = events.find((e) => e.event === "error");
    // The API client is told why its run ended, in the stream's own error event.
    expect(JSON.parse(error?.data ?? "{}")).toMatchObject({ message: notices[0] });
    expect(visited.length).toBeLessThan(5);
  });

  it("stops the run and says why when a renewal fails", async () => {
    const real = leasesOnTempDb();
    const { notices, visited } = await streamRun({
      leases: { ...real, renew: async () => Promise.reject(new Error("disk I/O error")) },
    });
    expect(notices).toEqual([expect.stringMatching(/^Could not renew the lease .*\(disk I\/O error\)/)]);
    expect(visited.length).toBeLessThan(5);
  });
});

describe("a background run (runs.create) that nobody streams", () => {
  it("says on the server's side that it failed, and why", async () => {
    const graph = new StateGraph(State)
      .addNode("boom", () => {
        throw new Error("the tool service is down");
      })
      .addEdge("__start__", "boom")
      .addEdge("boom", "__end__")
      .compile({ checkpointer: new MemorySaver() });
    const notices: string[] = [];
    const handler = serveHandler({
      graph: graph,
      checkpointer: graph.checkpointer as ServeDeps["checkpointer"],
      store: new InMemoryStore(),
      leases: leasesOnTempDb(),
      foreign: async () => [],
      token: null,
      version: "test",
      onNotice: (m) => notices.push(m),
    });
    const threadId = randomUUID();
    const post = (path: string, body: unknown) =>
      handler(
        new Request(`http://127.0.0.1${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
      );
    expect((await post("/threads", { thread_id: threadId })).status).toBe(200);
    const created = await post(`/threads/${threadId}/runs`, { assistant_id: "candor", input: { visited: [] } });
    expect(created.status).toBe(200);
    expect(await created.json()).toMatchObject({ run_id: expect.any(String), status: "running" });
    await expect
      .poll(() => notices, { timeout: 5_000 })
      .toEqual([
        expect.stringMatching(
          new RegExp(`^The background run on thread ${threadId} failed: .*the tool service is down`),
        ),
      ]);
  });
});
