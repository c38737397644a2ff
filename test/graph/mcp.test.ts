import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Command } from "@langchain/langgraph";
import { McpServer as SdkServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileAgent } from "../../graphs/agent.js";
import { ToolApprovalRequest } from "../../src/domain/approval.js";
import type { PlanInput } from "../../src/domain/plan.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { openEffectLedger } from "../../src/tools/effects.js";
import { parseMcpConfig, type McpServer } from "../../src/tools/mcp/config.js";
import { openMcpServers, type McpServers } from "../../src/tools/mcp/servers.js";
import { workspaceToolkit } from "../../src/tools/builtin/workspace.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { interruptValues, tempDir, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { PlannedReasoner } from "../fakes/notes-toolkit.js";
import { ScriptedChatModel } from "../fakes/scripted-chat-model.js";
import { planOf } from "../../src/domain/plan-state.js";

/** The filesystem MCP server from npm (a dev dependency), started by these tests with the Node running them. */
const FS_SERVER = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/dist/index.js");

const tmp = tempDir();
const files = path.join(tmp.dir, "files");
const closers: (() => Promise<void> | void)[] = [];
let servers: McpServers;

/** A configuration of the filesystem server on the temp folder: reading declared, writing left at its default. */
function fsConfig(extra: Record<string, unknown> = {}): McpServer[] {
  const tools = { list_directory: { sideEffect: "read" }, read_text_file: { sideEffect: "read" } };
  return parseMcpConfig(
    JSON.stringify({ mcpServers: { fs: { command: "node", args: [FS_SERVER, files], tools, ...extra } } }),
    "mcp.json",
  );
}

beforeAll(async () => {
  mkdirSync(files, { recursive: true });
  writeFileSync(path.join(files, "notes.txt"), "MCP tools are Candor tools.\n");
  writeFileSync(path.join(files, "todo.md"), "- test the server\n");
  servers = await openMcpServers(fsConfig());
  closers.push(() => servers.close());
}, 30_000);

afterAll(async () => {
  for (const close of closers) await close();
  tmp.cleanup();
});

function agent(steps: PlanInput["steps"], model: ScriptedChatModel) {
  const persistence = openPersistence(tmp.dbPath);
  closers.push(() => persistence.close());
  const ledger = openEffectLedger(persistence.store.db);
  const reasoner = new PlannedReasoner(steps, model);
  const toolkits = [workspaceToolkit({ root: tmp.dir }), ...servers.toolkits];
  const graph = compileAgent({ toolkits, decisionLog: memoryDecisionLog(), ledger, reasoner }, persistence);
  return { graph, ledger };
}

describe("an MCP server's tools as a Candor toolkit", () => {
  it("names the tools with the server's prefix, takes their JSON Schema as argument validation, and declares side effects", () => {
    const kit = servers.toolkits[0]!;
    const tool = (name: string) => kit.tools.find((t) => t.name === name)!;
    expect(kit.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["fs_list_directory", "fs_read_text_file"]));
    // read_file exists in the workspace toolkit too: the prefix keeps the two apart.
    expect(tool("fs_read_file")).toBeDefined();
    expect(tool("fs_read_text_file").schema.safeParse({}).success).toBe(false);
    expect(tool("fs_read_text_file").schema.safeParse({ path: "x", head: "ten" }).success).toBe(false);
    expect(tool("fs_read_text_file").schema.safeParse({ path: "x", head: 10 }).success).toBe(true);
    expect(tool("fs_list_directory")).toMatchObject({ category: "fs", sideEffect: "none", needsApproval: false });
    // Not declared: a write waits for a person.
    expect(tool("fs_write_file")).toMatchObject({ sideEffect: "irreversible", needsApproval: true });
    expect(kit.workers).toEqual([expect.objectContaining({ name: "fs", categories: ["fs"] })]);
  });

  it("lists a folder with a planned call and reads a file in a model-driven step, through the server", async () => {
    const model = new ScriptedChatModel([
      { calls: [["fs_read_text_file", { path: path.join(files, "notes.txt") }]] },
      "notes.txt says MCP tools are Candor tools.",
    ]);
    const steps = [
      {
        id: "list",
        description: "List the files",
        workerType: "fs",
        tools: ["fs_list_directory"],
        params: { path: files },
        expectedOutputs: ["fs_list_directory"],
      },
      {
        id: "read",
        description: "Read notes.txt",
        workerType: "fs",
        tools: [],
        dependsOn: ["list"],
        expectedOutputs: ["fs_read_text_file"],
      },
    ];
    const a = agent(steps, model);
    const done = await a.graph.invoke(tripInput("list the files and read the notes"), threadConfig("mcp-read"));
    model.assertConsumed();
    expect(done.status).toBe("completed");
    // The result is in the step's run-state, and stored only there (its feedback does not repeat it).
    const listed = planOf(done)!.steps.find((s) => s.id === "list")!.result;
    expect(done.feedback.find((f) => f.taskId === "list")!.outputs).not.toHaveProperty("result");
    expect(listed).toMatchObject({ server: "fs", tool: "list_directory" });
    expect((listed as { text: string }).text).toMatch(/\[FILE\] notes\.txt[\s\S]*\[FILE\] todo\.md/);
    // The planned call needed no model; the model was offered only the fs worker's tools.
    expect(model.offered[0]!.every((n) => n.startsWith("fs_"))).toBe(true);
    expect(planOf(done)!.steps.find((s) => s.id === "read")!.result).toMatchObject({
      text: "MCP tools are Candor tools.\n",
    });
  });

  it("a write tool with no declared side effect asks for approval first, and writes once when approved", async () => {
    const target = path.join(files, "out.txt");
    const a = agent(
      [
        {
          id: "write",
          description: "Write out.txt",
          workerType: "fs",
          tools: ["fs_write_file"],
          params: { path: target, content: "written through MCP" },
          expectedOutputs: ["fs_write_file"],
        },
      ],
      new ScriptedChatModel([]),
    );
    const config = threadConfig("mcp-write");
    const [payload] = interruptValues(await a.graph.invoke(tripInput("write out.txt"), config));
    expect(ToolApprovalRequest.parse(payload)).toMatchObject({
      kind: "tool_approval",
      tool: "fs_write_file",
      sideEffect: "irreversible",
    });
    expect(existsSync(target)).toBe(false);
    const done = await a.graph.invoke(new Command({ resume: { decision: "approve" } }), config);
    expect(done.status).toBe("completed");
    expect(readFileSync(target, "utf8")).toBe("written through MCP");
    expect(await a.ledger.verdict({ threadId: "mcp-write", stepId: "write", dispatch: 1 })).toMatchObject({
      kind: "done",
    });
  });

  it("a tool error from the server fails the step with the server's message", async () => {
    const kit = servers.toolkits[0]!;
    const list = kit.tools.find((t) => t.name === "fs_list_directory")!;
    const ctx = { signal: new AbortController().signal, inputs: {}, stepId: "s", attempt: 1 };
    await expect(list.run({ path: "/etc" }, ctx)).rejects.toThrow(/outside allowed directories/);
  });
});

/** A stateless Streamable HTTP MCP server on 127.0.0.1 with one tool, `shout`, that upper-cases its text. */
async function httpServer() {
  const server = http.createServer((req, res) => {
    const mcp = new SdkServer({ name: "shouter", version: "1.0.0" });
    mcp.registerTool(
      "shout",
      { description: "Upper-case a text", inputSchema: { text: z.string().min(1) } },
      ({ text }) => ({ content: [{ type: "text", text: text.toUpperCase() }] }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void transport.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("an MCP server over Streamable HTTP", () => {
  it("offers its tools with their schema and runs them", async () => {
    const web = await httpServer();
    closers.push(web.close);
    const opened = await openMcpServers(
      parseMcpConfig(JSON.stringify({ mcpServers: { web: { url: web.url, sideEffect: "read" } } }), "mcp.json"),
    );
    closers.push(() => opened.close());
    const shout = opened.toolkits[0]!.tools.find((t) => t.name === "web_shout")!;
    expect(shout).toMatchObject({ category: "web", sideEffect: "none", needsApproval: false });
    expect(shout.schema.safeParse({ text: "" }).success).toBe(false);
    const ctx = { signal: new AbortController().signal, inputs: {}, stepId: "s", attempt: 1 };
    await expect(shout.run({ text: "hello" }, ctx)).resolves.toMatchObject({
      server: "web",
      tool: "shout",
      text: "HELLO",
    });
  });
});

describe("MCP servers that fail", () => {
  it("a server that exits at once is named, with its last output", async () => {
    const config = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          broken: { command: "node", args: ["-e", "console.error('no folder given'); process.exit(3)"] },
        },
      }),
      "mcp.json",
    );
    await expect(openMcpServers(config)).rejects.toMatchObject({
      code: "CONFIGURATION",
      message: expect.stringMatching(
        /^MCP server "broken" \(.*, from mcp\.json\) could not start: .*no folder given.*The run was not started; fix or remove its entry in mcp\.json\.$/,
      ),
    });
  });

  it("an HTTP server nobody listens at is named, with why", async () => {
    const config = parseMcpConfig(
      JSON.stringify({ mcpServers: { web: { url: "http://127.0.0.1:1/mcp", startupTimeoutMs: 5000 } } }),
      "mcp.json",
    );
    await expect(openMcpServers(config)).rejects.toMatchObject({
      code: "CONFIGURATION",
      message: expect.stringMatching(
        /^MCP server "web" \(http:\/\/127\.0\.0\.1:1\/mcp, from mcp\.json\) could not start: .+\. The run was not started/,
      ),
    });
  });

  it("a server that never answers is given up on at its startup deadline, not waited for", async () => {
    const config = parseMcpConfig(
      JSON.stringify({
        mcpServers: { silent: { command: "node", args: ["-e", "setInterval(() => {}, 1000)"], startupTimeoutMs: 300 } },
      }),
      "mcp.json",
    );
    await expect(openMcpServers(config)).rejects.toThrow(
      /MCP server "silent" .* could not start: it did not answer within 300 ms \(startupTimeoutMs\)/,
    );
  });

  it("a server that dies during the run fails its tools' calls with its name and why, classified unavailable", async () => {
    const own = await openMcpServers(fsConfig());
    closers.push(() => own.close());
    const list = own.toolkits[0]!.tools.find((t) => t.name === "fs_list_directory")!;
    const ctx = { signal: new AbortController().signal, inputs: {}, stepId: "s", attempt: 1 };
    await expect(list.run({ path: files }, ctx)).resolves.toMatchObject({ tool: "list_directory" });
    const read = own.toolkits[0]!.tools.find((t) => t.name === "fs_read_text_file")!;
    // As a crash would: whether the call is made before or after Candor hears of the exit, it fails the same way.
    for (const pid of own.pids()) process.kill(pid, "SIGKILL");
    await expect(read.run({ path: path.join(files, "notes.txt") }, ctx)).rejects.toMatchObject({
      code: "TOOL_FAILED",
      details: { failureClass: "resource_unavailable", server: "fs" },
      message: expect.stringMatching(/^MCP server "fs" is not running: it exited.*so read_text_file was not run\./),
    });
  });
});
