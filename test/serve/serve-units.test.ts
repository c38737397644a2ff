import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { checkToken, MIN_TOKEN_LENGTH, presentedToken, tokenMatches } from "../../src/serve/auth.js";
import { lastHumanText, startFrom, type QueuedStart } from "../../src/serve/queued-runs.js";
import { AIMessage } from "@langchain/core/messages";
import { formatSse, parseSse, toJson } from "../../src/serve/sse.js";
import {
  API_THREADS_NAMESPACE,
  metadataMatches,
  threadSaver,
  type ForeignThread,
  type ThreadView,
} from "../../src/serve/threads.js";

describe("the serve token", () => {
  it("is refused when short, spaced or with a control character, and says how to make one", () => {
    expect(() => checkToken("x".repeat(MIN_TOKEN_LENGTH - 1))).toThrow(/fewer than 16.*openssl rand/);
    expect(() => checkToken("a token with spaces!!")).toThrow(/white space/);
    expect(() => checkToken(`${"a".repeat(20)}\u0007`)).toThrow(/control character/);
    expect(checkToken("a".repeat(MIN_TOKEN_LENGTH))).toBe("a".repeat(MIN_TOKEN_LENGTH));
  });

  it("is read from a bearer header or x-api-key, and matched exactly", () => {
    const token = "0123456789abcdef0123";
    expect(presentedToken(new Headers({ authorization: `Bearer ${token}` }))).toBe(token);
    expect(presentedToken(new Headers({ authorization: `bearer   ${token}  ` }))).toBe(token);
    expect(presentedToken(new Headers({ "x-api-key": token }))).toBe(token);
    expect(presentedToken(new Headers({ authorization: `Basic ${token}` }))).toBeNull();
    expect(tokenMatches(token, token)).toBe(true);
    expect(tokenMatches(`${token}x`, token)).toBe(false);
    expect(tokenMatches(token.slice(1), token)).toBe(false);
    expect(tokenMatches(null, token)).toBe(false);
  });
});

describe("a queued run's start", () => {
  it("takes the last human message of a chat, in either of its shapes", () => {
    expect(
      lastHumanText([
        { type: "human", content: "first" },
        { type: "ai", content: "plan" },
        { role: "user", content: [{ type: "text", text: "second" }, { type: "image_url" }] },
      ]),
    ).toBe("second");
    expect(lastHumanText([{ type: "ai", content: "only the model" }])).toBeNull();
    expect(lastHumanText([{ type: "human", content: "   " }])).toBeNull();
  });

  it("reads Candor's request or a chat, with the context's settings under the input's own", () => {
    const fromRequest = startFrom(
      {
        request: { userIntent: "plan a trip", userContext: { userId: "ana" }, constraints: { tokenBudget: 500 } },
        settings: { approvalThreshold: 0.5 },
      },
      { approvalThreshold: 0.99, maxRevisions: 1, somethingElse: true },
    );
    expect(fromRequest.ok).toBe(true);
    const start = (fromRequest as { value: QueuedStart }).value;
    expect(start).toMatchObject({ request: "plan a trip", userId: "ana", tokenBudget: 500 });
    expect(start.settings).toMatchObject({ approvalThreshold: 0.5, maxRevisions: 1 });

    const fromChat = startFrom({ messages: [{ type: "human", content: "plan a trip" }] }, null);
    expect(fromChat).toMatchObject({ ok: true, value: { request: "plan a trip", userId: "default" } });
  });

  it("refuses an input with no request, and settings out of range, saying which", () => {
    expect(startFrom({ messages: [] }, null)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("no request"),
    });
    expect(startFrom("text", null)).toMatchObject({ ok: false, reason: expect.stringContaining("{messages}") });
    expect(startFrom({ request: { userIntent: "go" } }, { approvalThreshold: 7 })).toMatchObject({
      ok: false,
      reason: expect.stringContaining("settings are invalid"),
    });
  });
});

describe("server-sent events", () => {
  it("write a LangChain message as its fields and type, as the LangGraph server does (the chat apps read its id)", () => {
    const written = JSON.parse(toJson({ messages: [new AIMessage({ id: "m-1", content: "hello" })] })) as {
      messages: Record<string, unknown>[];
    };
    expect(written.messages[0]).toMatchObject({ type: "ai", id: "m-1", content: "hello" });
  });

  it("read back what was written, multi-line data included", () => {
    const body = formatSse("metadata", { run_id: "r" }) + formatSse("values", "a\nb") + ": keep-alive\n\n";
    expect(parseSse(body)).toEqual([
      { event: "metadata", data: '{"run_id":"r"}' },
      { event: "values", data: '"a\\nb"' },
    ]);
  });
});

describe("the API's threads over Candor's store", () => {
  const view = (status: ThreadView["status"]): ThreadView => ({
    status,
    values: { status: "completed" },
    interrupts: {},
    updatedAt: "2026-01-03T00:00:00.000Z",
  });
  const cli: ForeignThread = {
    threadId: "run-00000001",
    createdAt: "2026-01-01T00:00:00.000Z",
    metadata: { source: "cli" },
  };

  it("keeps its own threads in the store, lists the CLI's beside them, filters by metadata and pages", async () => {
    const store = new InMemoryStore();
    const threads = threadSaver({
      store,
      foreign: () => Promise.resolve([cli]),
      view: (id) => Promise.resolve(id === cli.threadId ? view("idle") : null),
    });
    await threads.set("t-1", { kind: "put", metadata: { team: "a" } });
    await threads.set("t-2", { kind: "put", metadata: { team: "b" } });
    await threads.set("t-2", { kind: "patch", metadata: { extra: 1 } });
    expect((await store.get(API_THREADS_NAMESPACE, "t-2"))?.value).toMatchObject({ metadata: { team: "b", extra: 1 } });

    const all = [];
    for await (const { thread, total } of threads.search({
      limit: 10,
      offset: 0,
      sortBy: "created_at",
      sortOrder: "asc",
    }))
      all.push({ id: thread.thread_id, total });
    expect(all).toEqual([
      { id: "run-00000001", total: 3 },
      { id: "t-1", total: 3 },
      { id: "t-2", total: 3 },
    ]);
    const teamB = [];
    for await (const { thread } of threads.search({
      metadata: { team: "b" },
      limit: 10,
      offset: 0,
      sortBy: "created_at",
      sortOrder: "desc",
    }))
      teamB.push(thread.thread_id);
    expect(teamB).toEqual(["t-2"]);
    // agent-chat-ui lists a graph's threads by {graph_id}: every thread here is the one graph's.
    const ofGraph = [];
    for await (const { thread } of threads.search({
      metadata: { graph_id: "candor" },
      limit: 10,
      offset: 0,
      sortBy: "created_at",
      sortOrder: "asc",
    }))
      ofGraph.push(thread.thread_id);
    expect(ofGraph).toEqual(["run-00000001", "t-1", "t-2"]);

    const fromCli = await threads.get("run-00000001");
    expect(fromCli).toMatchObject({ status: "idle", metadata: { graph_id: "candor", source: "cli" } });
    expect(fromCli.updated_at).toBe("2026-01-03T00:00:00.000Z");
    await expect(threads.get("nope")).rejects.toMatchObject({ message: "Thread nope not found" });
    await expect(threads.set("nope", { kind: "patch", metadata: {} })).rejects.toThrow(/not found/);
  });

  it("matches metadata by each filter key's JSON value", () => {
    expect(metadataMatches({ a: 1, b: { c: [2] } }, { b: { c: [2] } })).toBe(true);
    expect(metadataMatches({ a: 1 }, { a: "1" })).toBe(false);
    expect(metadataMatches({ a: 1 }, undefined)).toBe(true);
  });
});
