import { createServer } from "node:net";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HumanInterrupt } from "../../src/domain/approval.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { runCli, tempDir, type CliResult } from "../e2e/helpers.js";
import { SERVE_STARTUP_MS, startServe, type ServeProcess } from "./serve-process.js";

const LONG = 180_000;
const TRIP = "Plan a 3-day trip from Madrid to Paris for 2 people";
const TOKEN = "0123456789abcdef0123456789abcdef";

interface Values {
  status: string;
  approval: { decision: string } | null;
  messages?: { type: string; content: string }[];
  answer?: string | null;
}

/** The events of a streamed run, by name, and the interrupts the run stopped at. */
async function streamRun(client: Client, threadId: string, payload: Parameters<Client["runs"]["stream"]>[2]) {
  const events: string[] = [];
  for await (const chunk of client.runs.stream(threadId, "candor", { ...payload, streamMode: ["values", "updates"] })) {
    events.push(chunk.event);
    if (chunk.event === "error") throw new Error(`the run failed: ${JSON.stringify(chunk.data)}`);
  }
  return events;
}

const files = tempDir("candor-serve-");
let server: ServeProcess | undefined;
let client: Client;

beforeAll(async () => {
  server = await startServe(["--db", files.db, "--auth-token", TOKEN]);
  client = new Client({ apiUrl: server.url, apiKey: TOKEN });
}, SERVE_STARTUP_MS);

afterAll(async () => {
  const code = await server?.stop();
  files.cleanup();
  // SIGTERM is how a service manager stops it: a clean exit, not a crash.
  expect(code).toBe(0);
}, 30_000);

describe("candor serve on SQLite, through @langchain/langgraph-sdk", () => {
  it(
    "creates a thread, streams a run to the plan approval, resumes it with a HumanResponse, reads the history",
    { timeout: LONG },
    async () => {
      const thread = await client.threads.create({ metadata: { purpose: "serve-test" } });
      const events = await streamRun(client, thread.thread_id, {
        input: { request: { userIntent: TRIP }, settings: { approvalThreshold: 0.99 } },
      });
      expect(events[0]).toBe("metadata");
      expect(events).toContain("values");
      expect(events).toContain("updates");

      const waiting = await client.threads.getState<Values>(thread.thread_id);
      expect(waiting.next).toEqual(["human_interrupt"]);
      const payload = waiting.tasks.flatMap((t) => t.interrupts)[0]?.value;
      expect(HumanInterrupt.parse(payload).action_request.action).toBe("approve_plan");
      expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");

      // Agent Inbox's answer: a list with one HumanResponse.
      await streamRun(client, thread.thread_id, { command: { resume: [{ type: "accept", args: null }] } });
      const done = await client.threads.getState<Values>(thread.thread_id);
      expect(done.values.status).toBe("completed");
      expect(done.values.approval).toMatchObject({ decision: "approve" });
      expect((await client.threads.get(thread.thread_id)).status).toBe("idle");

      const history = await client.threads.getHistory<Values>(thread.thread_id, { limit: 100 });
      expect(history[0]!.values.status).toBe("completed");
      expect(history.some((h) => h.next.length === 1 && h.next[0] === "human_interrupt")).toBe(true);

      const found = await client.threads.search({ metadata: { purpose: "serve-test" } });
      expect(found.map((t) => t.thread_id)).toEqual([thread.thread_id]);
    },
  );

  it(
    "a chat run (messages in, context with the threshold) stops for approval; v1 `{decisions}` resumes it; runs.wait answers the values",
    { timeout: LONG },
    async () => {
      const thread = await client.threads.create();
      await streamRun(client, thread.thread_id, {
        input: { messages: [{ type: "human", content: TRIP }] },
        context: { approvalThreshold: 0.99 },
      });
      const waiting = await client.threads.getState<Values>(thread.thread_id);
      expect(waiting.tasks.flatMap((t) => t.interrupts)[0]?.value).toMatchObject({
        action_requests: [{ name: "approve_plan" }],
        review_configs: [{ action_name: "approve_plan" }],
      });

      const values = (await client.runs.wait(thread.thread_id, "candor", {
        command: { resume: { decisions: [{ type: "approve" }] } },
      })) as unknown as Values;
      expect(values.status).toBe("completed");
      expect(values.approval).toMatchObject({ decision: "approve" });
      expect(values.messages?.at(-1)?.content).toContain(values.answer!);
    },
  );

  it(
    "an assistant created with a context stops its runs for approval; the input's settings still win",
    { timeout: LONG },
    async () => {
      const cautious = await client.assistants.create({ graphId: "candor", context: { approvalThreshold: 0.99 } });
      expect((await client.assistants.search()).map((a) => a.assistant_id)).toEqual(["candor", cautious.assistant_id]);
      expect((await client.assistants.get(cautious.assistant_id)).context).toEqual({ approvalThreshold: 0.99 });
      const asks = await client.threads.create();
      await client.runs.wait(asks.thread_id, cautious.assistant_id, { input: { request: { userIntent: TRIP } } });
      expect((await client.threads.getState(asks.thread_id)).next).toEqual(["human_interrupt"]);
      const runs = await client.threads.create();
      const done = (await client.runs.wait(runs.thread_id, cautious.assistant_id, {
        input: { request: { userIntent: TRIP }, settings: { approvalThreshold: 0.5 } },
      })) as unknown as Values;
      expect(done.status).toBe("completed");
      const unknown = await fetch(`${server!.url}/threads/${runs.thread_id}/runs/wait`, {
        method: "POST",
        headers: { "x-api-key": TOKEN, "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "no-such-assistant", input: null }),
      });
      expect(unknown.status).toBe(404);
    },
  );

  it("a background run (runs.create) runs without anyone following it", { timeout: LONG }, async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "candor", {
      input: { request: { userIntent: TRIP }, settings: { approvalThreshold: 0.99 } },
    });
    expect(run).toMatchObject({ thread_id: thread.thread_id, status: "running", run_id: expect.any(String) });
    await expect
      .poll(async () => (await client.threads.get(thread.thread_id)).status, { timeout: LONG, interval: 250 })
      .toBe("interrupted");
    expect((await client.threads.getState(thread.thread_id)).next).toEqual(["human_interrupt"]);
  });

  it("a thread started by `candor run` on the same database is listed and readable", { timeout: LONG }, async () => {
    const run = await runCli(["run", TRIP, "--db", files.db, "--thread", "run-fromcli1", "--no-input"]);
    expect(run.code, run.stderr).toBe(0);
    const all = await client.threads.search({ limit: 100 });
    const fromCli = all.find((t) => t.thread_id === "run-fromcli1");
    expect(fromCli?.metadata).toMatchObject({ source: "cli", request: TRIP });
    expect(fromCli?.status).toBe("idle");
    const state = await client.threads.getState<Values>("run-fromcli1");
    expect(state.values.status).toBe("completed");
    const history = await client.threads.getHistory<Values>("run-fromcli1", { limit: 3 });
    expect(history).toHaveLength(3);
  });

  it("a run on a thread another process is running is refused (409) and leaves it alone", async () => {
    const thread = await client.threads.create();
    // This test's process takes the thread's lease, as `candor resume` would while it runs the thread.
    const other = openPersistence(files.db);
    const held = await other.leases.acquire(thread.thread_id);
    try {
      expect(held.acquired).toBe(true);
      const refusal = await fetch(`${server!.url}/threads/${thread.thread_id}/runs/stream`, {
        method: "POST",
        headers: { "x-api-key": TOKEN, "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "candor", input: { request: { userIntent: TRIP } } }),
      });
      expect(refusal.status).toBe(409);
      expect(await refusal.text()).toContain(`Thread ${thread.thread_id} is busy: another process (pid ${process.pid}`);
      expect((await client.threads.get(thread.thread_id)).status).toBe("busy");
      expect((await client.threads.getState(thread.thread_id)).values).toEqual({});
    } finally {
      if (held.acquired) await other.leases.release(held.lease);
      other.close();
    }
  });

  it("answers 401 to a request without the token or with another one", async () => {
    const bare = await fetch(`${server!.url}/threads/search`, { method: "POST", body: "{}" });
    expect(bare.status).toBe(401);
    const wrong = await fetch(`${server!.url}/ok`, { headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.status).toBe(401);
    const sdkWithout = new Client({ apiUrl: server!.url, apiKey: null, callerOptions: { maxRetries: 0 } });
    await expect(sdkWithout.threads.search()).rejects.toThrow(/401/);
    const bearer = await fetch(`${server!.url}/ok`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(bearer.status).toBe(200);
  });
});

/** A port some other program listens on. */
async function busyPort(): Promise<{ port: number; close: () => void }> {
  const other = createServer();
  await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
  const address = other.address();
  if (typeof address !== "object" || !address) throw new Error("no port");
  return { port: address.port, close: () => other.close() };
}

function refused(result: CliResult, message: RegExp): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr).toMatch(message);
  expect(result.stderr).not.toMatch(/^\s{4}at /m);
}

describe("candor serve refuses bad flags with what was wrong and what to do", () => {
  it(
    "a port in use, a short token, a public address without a token, a port out of range",
    { timeout: LONG },
    async () => {
      const db = tempDir("candor-serve-flags-");
      const other = await busyPort();
      try {
        refused(
          await runCli(["serve", "--db", db.db, "--port", String(other.port)]),
          new RegExp(`Port ${other.port} on 127\\.0\\.0\\.1 is already in use.*--port`),
        );
        refused(await runCli(["serve", "--db", db.db, "--auth-token", "short"]), /token is unusable.*fewer than 16/);
        refused(
          await runCli(["serve", "--db", db.db, "--host", "0.0.0.0"]),
          /reachable from other machines.*--auth-token/,
        );
        refused(
          await runCli(["serve", "--db", db.db, "--port", "70000"]),
          /--port must be a whole number from 0 to 65535/,
        );
        refused(
          await runCli(["serve", "--port", "0"], { CANDOR_DB: db.db, CANDOR_SERVE_TOKEN: "has a space in it!!" }),
          /white space/,
        );
      } finally {
        other.close();
        db.cleanup();
      }
    },
  );

  it("a PostgreSQL URL nobody answers at names the database and the fix", { timeout: LONG }, async () => {
    const closed = await busyPort();
    closed.close();
    const result = await runCli(["serve", "--db", `postgres://candor:secret@127.0.0.1:${closed.port}/candor`]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(new RegExp(`127\\.0\\.0\\.1:${closed.port}`));
    expect(result.stderr).not.toContain("secret");
    expect(result.stderr).not.toMatch(/^\s{4}at /m);
  });
});
