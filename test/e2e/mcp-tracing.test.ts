import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, spawnCli, STACK_LINE, tempDir } from "./helpers.js";

const FS_SERVER = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
const REQUEST = "count the words of README.md";
const LONG = 120_000;

const tmp = tempDir("candor-mcp-");
afterAll(() => tmp.cleanup());

/** Writes a configuration file into the temp folder and returns its path. */
function config(name: string, content: unknown): string {
  const file = path.join(tmp.dir, name);
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

describe("candor run --mcp", () => {
  it(
    "plans over an MCP tool given keywords, and a resume in a new process starts the same server to run it",
    async () => {
      const files = path.join(tmp.dir, "files");
      mkdirSync(files, { recursive: true });
      const file = config("fs.json", {
        mcpServers: {
          fs: {
            command: "node",
            args: [FS_SERVER, files],
            tools: { list_allowed_directories: { sideEffect: "read", keywords: ["allowed", "directories"] } },
          },
        },
      });
      const db = path.join(tmp.dir, "ok.db");
      // A server left running would keep the CLI alive (its pipes are open): that each command returns says it stopped.
      const asked = await runCli([
        "run",
        "show the allowed directories",
        "--mcp",
        file,
        "--db",
        db,
        "--approval-threshold",
        "0.95",
        "--json",
      ]);
      expect(asked.code).toBe(3);
      expect(asked.stderr).toContain(`mcp:       ${file}`);
      const { threadId, plan } = JSON.parse(asked.stdout) as {
        threadId: string;
        plan: { steps: { tools: string[] }[] };
      };
      expect(plan.steps.map((s) => s.tools)).toEqual([["fs_list_allowed_directories"]]);
      // No --mcp here: the thread remembers its configuration.
      const done = await runCli(["resume", threadId, "--approve", "--db", db, "--json"]);
      expect(done.code).toBe(0);
      expect((JSON.parse(done.stdout) as { answer: string }).answer).toContain(`Allowed directories: ${files}`);
    },
    LONG,
  );

  it(
    "refuses a configuration that does not fit, saying where and what to do, exit 2",
    async () => {
      const file = config("bad.json", { mcpServers: { fs: { command: "node", sideEffect: "write" } } });
      const r = await runCli(["run", REQUEST, "--mcp", file, "--db", path.join(tmp.dir, "bad.db")]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toMatch(
        new RegExp(
          `^The MCP configuration ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is invalid at mcpServers\\.fs\\.sideEffect: sideEffect must be "read"`,
        ),
      );
      expect(r.stderr).not.toMatch(STACK_LINE);
    },
    LONG,
  );

  it(
    "names a server (from CANDOR_MCP) that exits at once, with its last output, exit 2",
    async () => {
      const file = config("dead.json", {
        mcpServers: { broken: { command: "node", args: ["-e", "console.error('no folder given'); process.exit(1)"] } },
      });
      const r = await runCli(["run", REQUEST, "--db", path.join(tmp.dir, "dead.db")], { CANDOR_MCP: file });
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toMatch(
        /^MCP server "broken" \(.*\) could not start: it exited \(its last output: "no folder given"\)\. The run was not started/,
      );
    },
    LONG,
  );
});

/** A LangSmith endpoint on 127.0.0.1 that records what it is sent (or never answers, with `silent`). */
async function fakeLangSmith(silent = false) {
  const received: { at: number; method: string; url: string; body: string }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({
        at: Date.now(),
        method: req.method ?? "",
        url: req.url ?? "",
        body: Buffer.concat(chunks).toString(),
      });
      if (silent) return;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(req.url?.startsWith("/info") ? JSON.stringify({ version: "0.0.0" }) : "{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Runs the CLI with tracing on towards `endpoint`, returning its result and when it exited. */
function tracedRun(endpoint: string, db: string) {
  const child = spawnCli(["run", REQUEST, "--db", db, "--no-input"], {
    LANGSMITH_TRACING: "true",
    LANGSMITH_API_KEY: "test-key",
    LANGSMITH_PROJECT: "candor-test",
    LANGSMITH_ENDPOINT: endpoint,
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise<{ code: number | null; stderr: string; exitedAt: number }>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => {
      const exitedAt = Date.now();
      child.on("close", () => resolve({ code, stderr, exitedAt }));
    });
  });
}

describe("tracing to LangSmith", () => {
  it(
    "posts the graph's runs to LANGSMITH_ENDPOINT before the CLI exits",
    async () => {
      const ls = await fakeLangSmith();
      try {
        const r = await tracedRun(ls.url, path.join(tmp.dir, "traced.db"));
        expect(r.code).toBe(0);
        const posts = ls.received.filter((q) => q.method === "POST" && q.url.startsWith("/runs"));
        expect(posts.length).toBeGreaterThan(0);
        // The graph's own run, and its nodes, with the key and project from the environment.
        const sent = posts.map((p) => p.body).join("\n");
        expect(sent).toMatch(/"name":"candor"/);
        expect(sent).toMatch(/"name":"understand"/);
        expect(sent).toContain("candor-test");
        expect(Math.max(...posts.map((p) => p.at))).toBeLessThanOrEqual(r.exitedAt);
      } finally {
        await ls.close();
      }
    },
    LONG,
  );

  it(
    "an endpoint that never answers delays the exit by the flush bound at most, and says the trace may be incomplete",
    async () => {
      const ls = await fakeLangSmith(true);
      try {
        const r = await tracedRun(ls.url, path.join(tmp.dir, "silent.db"));
        expect(r.code).toBe(0);
        expect(r.stderr).toContain("LangSmith traces were not all sent within 10 s; the trace may be incomplete.");
      } finally {
        await ls.close();
      }
    },
    LONG,
  );
});
