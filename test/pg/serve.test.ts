import type { ChildProcess } from "node:child_process";
import { hostname } from "node:os";
import { Client } from "@langchain/langgraph-sdk";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { runCli, spawnCli } from "../e2e/helpers.js";
import { startServe } from "../serve/serve-process.js";
import { postgresDatabase } from "./helpers.js";

const TRIP = "Plan a 3-day trip from Madrid to Paris for 2 people";
const BOOK = "Plan and book a 2-day trip from Paris to Rome for 1 person";
const TOKEN = "serve-on-postgres-token-0123456789";

interface Values {
  status: string;
  approval: { decision: string; kind?: string } | null;
}

interface QueueRow {
  thread_id: string;
  state: string;
  worker: string | null;
}

async function queueRows(url: string): Promise<QueueRow[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<QueueRow>("SELECT thread_id, state, worker FROM candor_runs ORDER BY thread_id")).rows;
  } finally {
    await client.end();
  }
}

/** Streams a run to its end and returns the events' names; a run the worker could not make fails the test. */
async function streamRun(client: Client, threadId: string, payload: Parameters<Client["runs"]["stream"]>[2]) {
  const events: string[] = [];
  for await (const chunk of client.runs.stream(threadId, "candor", payload)) {
    if (chunk.event === "error") throw new Error(`the run failed: ${JSON.stringify(chunk.data)}`);
    events.push(chunk.event);
  }
  return events;
}

describe("candor serve on PostgreSQL: the API's runs go to the workers' queue", () => {
  it(
    "two workers run the API's threads (stream to an approval, answered with a HumanResponse and with v1 decisions); a thread started by candor run is listed",
    { timeout: 600_000 },
    async () => {
      const url = postgresDatabase();
      const workers: ChildProcess[] = [spawnCli(["worker", "--db", url]), spawnCli(["worker", "--db", url])];
      const logs = workers.map(() => ({ text: "" }));
      workers.forEach((w, i) => w.stderr?.on("data", (d: Buffer) => (logs[i]!.text += d.toString())));
      const exited = workers.map((w) => new Promise<number | null>((resolve) => w.once("exit", resolve)));
      const server = await startServe(["--db", url, "--auth-token", TOKEN]);
      try {
        const client = new Client({ apiUrl: server.url, apiKey: TOKEN });
        const names = new Set(workers.map((w) => `${hostname()}:${w.pid}`));

        // Two threads at once, each stopping for plan approval: the workers take them from the queue.
        const [a, b] = await Promise.all([client.threads.create(), client.threads.create()]);
        const input = { request: { userIntent: TRIP }, settings: { approvalThreshold: 0.99 } };
        const streamed = await Promise.all([
          streamRun(client, a.thread_id, { input, streamMode: ["values"] }),
          streamRun(client, b.thread_id, {
            input: { messages: [{ type: "human", content: TRIP }] },
            context: { approvalThreshold: 0.99 },
          }),
        ]);
        for (const events of streamed) {
          expect(events[0]).toBe("metadata");
          expect(events).toContain("values");
        }
        for (const t of [a, b]) {
          const state = await client.threads.getState<Values>(t.thread_id);
          expect(state.next).toEqual(["human_interrupt"]);
          expect((await client.threads.get(t.thread_id)).status).toBe("interrupted");
        }
        const waiting = await queueRows(url);
        expect(waiting.map((r) => r.state)).toEqual(["waiting", "waiting"]);
        for (const r of waiting) expect(names.has(r.worker!), `${r.worker} is not one of the workers`).toBe(true);

        // A HumanResponse (Agent Inbox) and LangChain v1's decisions (agent-chat-ui), each run by a worker.
        await streamRun(client, a.thread_id, { command: { resume: [{ type: "accept", args: null }] } });
        const bDone = (await client.runs.wait(b.thread_id, "candor", {
          command: { resume: { decisions: [{ type: "approve" }] } },
        })) as unknown as Values;
        expect(bDone.status).toBe("completed");
        const aDone = await client.threads.getState<Values>(a.thread_id);
        expect(aDone.values.status).toBe("completed");
        expect(aDone.values.approval).toMatchObject({ decision: "approve" });
        expect((await queueRows(url)).map((r) => r.state)).toEqual(["done", "done"]);
        for (const r of await queueRows(url)) expect(names.has(r.worker!)).toBe(true);
        const history = await client.threads.getHistory<Values>(a.thread_id, { limit: 200 });
        expect(history[0]!.values.status).toBe("completed");
        expect(history.some((h) => h.next[0] === "human_interrupt")).toBe(true);

        // What the chat app create-agent-chat-app sends: messages with ids and no settings, its stream modes, and for
        // an approval (here a worker's tool approval, inside the worker subgraph) a HumanResponse list with input {}.
        const c = await client.threads.create();
        await streamRun(client, c.thread_id, {
          input: { messages: [{ id: "m-1", type: "human", content: BOOK }] },
          streamMode: ["values", "messages-tuple", "updates"],
        });
        const asks = await client.threads.getState(c.thread_id, undefined, { subgraphs: true });
        expect(asks.tasks.flatMap((t) => t.state?.tasks ?? []).flatMap((t) => t.interrupts)[0]?.value).toMatchObject({
          kind: "tool_approval",
          tool: "book_trip",
        });
        expect((await client.threads.get(c.thread_id)).status).toBe("interrupted");
        await streamRun(client, c.thread_id, {
          input: {},
          command: { resume: [{ type: "accept", args: null }] },
          streamMode: ["values", "messages-tuple", "updates"],
        });
        const booked = await client.threads.getState<Values>(c.thread_id);
        expect(booked.values.status).toBe("completed");
        expect(booked.values.approval).toMatchObject({ kind: "tool_approval", decision: "approve" });

        // A thread run by the CLI on the same database shows in the API.
        const cli = await runCli(["run", TRIP, "--db", url, "--thread", "run-cli00001", "--no-input"]);
        expect(cli.code, cli.stderr).toBe(0);
        const listed = await client.threads.search({ limit: 50 });
        expect(listed.find((t) => t.thread_id === "run-cli00001")?.metadata).toMatchObject({ source: "cli" });
        expect(listed.map((t) => t.thread_id)).toEqual(expect.arrayContaining([a.thread_id, b.thread_id]));
        expect((await client.threads.getState<Values>("run-cli00001")).values.status).toBe("completed");

        // `candor threads` lists the API's threads too: they were recorded as `submit` records them.
        const threads = JSON.parse((await runCli(["threads", "--db", url, "--json"])).stdout) as {
          threads: { threadId: string; status: string }[];
        };
        expect(threads.threads.find((t) => t.threadId === a.thread_id)?.status).toBe("completed");
      } finally {
        await server.stop();
        for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill("SIGTERM");
        await Promise.all(exited);
      }
    },
  );

  it(
    "a run sent while the thread's run is still queued is refused (409), and the queue keeps the first",
    {
      timeout: 300_000,
    },
    async () => {
      const url = postgresDatabase();
      const server = await startServe(["--db", url]);
      try {
        const client = new Client({ apiUrl: server.url, callerOptions: { maxRetries: 0 } });
        const thread = await client.threads.create();
        // No worker: the run stays queued.
        const run = await client.runs.create(thread.thread_id, "candor", { input: { request: { userIntent: TRIP } } });
        expect(run.status).toBe("pending");
        expect((await queueRows(url)).map((r) => r.state)).toEqual(["queued"]);
        await expect(
          client.runs.create(thread.thread_id, "candor", { input: { request: { userIntent: TRIP } } }),
        ).rejects.toThrow(/409/);
      } finally {
        await server.stop();
      }
    },
  );
});
