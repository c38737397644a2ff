import { DynamicStructuredTool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { tracingEnabled } from "../../src/cli/tracing.js";
import { parseMcpConfig } from "../../src/tools/mcp/config.js";
import { candorToolName, inputSchema, mcpResult, mcpToolkit } from "../../src/tools/mcp/toolkit.js";
import { ToolRegistry } from "../../src/tools/registry.js";

const refused = (config: unknown) => () => parseMcpConfig(JSON.stringify(config), "mcp.json");

describe("the MCP configuration", () => {
  it("reads stdio and HTTP servers, with defaults left to the toolkit", () => {
    const servers = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          fs: {
            command: "node",
            args: ["server.js"],
            sideEffect: "read",
            tools: { write_file: { sideEffect: "irreversible" } },
          },
          web: { url: "http://127.0.0.1:3000/mcp", category: "web" },
        },
      }),
      "/etc/candor/mcp.json",
    );
    expect(servers.map((s) => s.name)).toEqual(["fs", "web"]);
    expect(servers[0]!.config).toMatchObject({ command: "node", args: ["server.js"], startupTimeoutMs: 15_000 });
    expect(servers[1]!.config).toMatchObject({ url: "http://127.0.0.1:3000/mcp", category: "web", tools: {} });
  });

  it.each([
    ["not JSON", "{mcpServers", /^The MCP configuration mcp\.json is not JSON \(.*\)\. Write it as \{"mcpServers"/],
    ["no server", { mcpServers: {} }, /invalid at mcpServers: mcpServers lists no server\./],
    ["neither command nor url", { mcpServers: { fs: { args: [] } } }, /at mcpServers\.fs: each server needs "command"/],
    ["both", { mcpServers: { fs: { command: "node", url: "http://x" } } }, /at mcpServers\.fs: give either "command"/],
    [
      "a side effect it does not know",
      { mcpServers: { fs: { command: "node", sideEffect: "write" } } },
      /at mcpServers\.fs\.sideEffect: sideEffect must be "read"/,
    ],
    [
      "a per-tool one",
      { mcpServers: { fs: { command: "node", tools: { rm: { sideEffect: "none" } } } } },
      /at mcpServers\.fs\.tools\.rm\.sideEffect:/,
    ],
    [
      "a server name that is not snake_case",
      { mcpServers: { "My Server": { command: "node" } } },
      /a server name must be snake_case/,
    ],
    [
      "a key it does not know",
      { mcpServers: { fs: { command: "node", sideeffect: "read" } } },
      /at mcpServers\.fs: Unrecognized key: "sideeffect"/,
    ],
    [
      "a url that is not one",
      { mcpServers: { web: { url: "localhost:3000" } } },
      /at mcpServers\.web\.url: url must be a full http\(s\) URL/,
    ],
  ])("refuses %s, saying where and what to do", (_, config, message) => {
    const parse = typeof config === "string" ? () => parseMcpConfig(config, "mcp.json") : refused(config);
    expect(parse).toThrow(expect.objectContaining({ code: "CONFIGURATION", message: expect.stringMatching(message) }));
    expect(parse).toThrow(/\.$/);
  });

  it("takes a relative cwd from the configuration file's folder", () => {
    const [fs] = parseMcpConfig(
      JSON.stringify({ mcpServers: { fs: { command: "node", cwd: "servers" } } }),
      "/etc/candor/mcp.json",
    );
    expect(fs!.config).toMatchObject({ cwd: "/etc/candor/servers" });
  });
});

/** An MCP tool as the adapter hands it over: a LangChain tool whose schema is the server's JSON Schema. */
function adapterTool(name: string, schema: Record<string, unknown>): DynamicStructuredTool {
  return new DynamicStructuredTool({
    name,
    description: `${name} from the server`,
    schema,
    func: () => Promise.resolve(""),
  });
}

describe("an MCP server's tools as Candor tools", () => {
  const schema = { type: "object", properties: { path: { type: "string" } }, required: ["path"] };
  const server = (extra: Record<string, unknown> = {}) =>
    parseMcpConfig(JSON.stringify({ mcpServers: { docs: { command: "node", ...extra } } }), "mcp.json")[0]!;

  it("names tools snake_case behind the server's prefix", () => {
    expect(candorToolName("gh_", "createPullRequest")).toBe("gh_create_pull_request");
    expect(candorToolName("fs_", "read-file")).toBe("fs_read_file");
    expect(candorToolName("", "search.files")).toBe("search_files");
  });

  it("a tool nobody declared asks before each call; a declaration per server or per tool changes that", () => {
    const tools = [adapterTool("get_page", schema), adapterTool("delete_page", schema)];
    const call = () => Promise.resolve("ok");
    const byDefault = mcpToolkit(server(), tools, call);
    expect(byDefault.tools.map((t) => [t.name, t.category, t.sideEffect, t.needsApproval])).toEqual([
      ["docs_get_page", "docs", "irreversible", true],
      ["docs_delete_page", "docs", "irreversible", true],
    ]);
    const declared = mcpToolkit(
      server({
        sideEffect: "read",
        category: "files",
        prefix: "",
        tools: { delete_page: { sideEffect: "reversible", category: "notes" } },
      }),
      tools,
      call,
    );
    expect(declared.tools.map((t) => [t.name, t.category, t.sideEffect, t.needsApproval])).toEqual([
      ["get_page", "files", "none", false],
      ["delete_page", "notes", "reversible", false],
    ]);
    // The server's worker type grants exactly its tools' categories, and the registry accepts the toolkit.
    expect(declared.workers).toEqual([expect.objectContaining({ name: "docs", categories: ["files", "notes"] })]);
    expect(
      ToolRegistry.create([declared])
        .grant("docs")
        .map((t) => t.name),
    ).toEqual(["get_page", "delete_page"]);
  });

  it("refuses a declaration for a tool the server does not have (a typo would leave a write tool at the default)", () => {
    expect(() =>
      mcpToolkit(server({ tools: { delete_pages: { sideEffect: "read" } } }), [adapterTool("get_page", schema)], () =>
        Promise.resolve(""),
      ),
    ).toThrow(
      expect.objectContaining({
        code: "CONFIGURATION",
        message: expect.stringMatching(
          /declares tool\(s\) delete_pages for server "docs", which has no such tool \(it has: get_page\)/,
        ),
      }),
    );
  });

  it("refuses a server that offers no tools (its worker type would grant nothing)", () => {
    expect(() => mcpToolkit(server(), [], () => Promise.resolve(""))).toThrow(
      /^MCP server "docs" \(from mcp\.json\) started but offers no tools, so it would add nothing to a run\./,
    );
  });

  it("validates arguments with the tool's JSON Schema and offers the same schema back", () => {
    const zod = inputSchema({
      ...schema,
      properties: { ...schema.properties, limit: { type: "integer", minimum: 1 } },
    });
    expect(zod.safeParse({ path: "a" }).success).toBe(true);
    expect(zod.safeParse({}).success).toBe(false);
    expect(zod.safeParse({ path: "a", limit: 0 }).success).toBe(false);
    expect(z.toJSONSchema(zod, { io: "input" })).toMatchObject({
      required: ["path"],
      properties: { path: { type: "string" } },
    });
  });

  it("turns the adapter's output into text, structured content and other blocks, with a summary", () => {
    expect(mcpResult("fs", "read", "hello")).toEqual({
      server: "fs",
      tool: "read",
      text: "hello",
      summary: "hello",
    });
    expect(
      mcpResult("fs", "stat", [
        { type: "text", text: "size 3", structuredContent: { size: 3 } },
        { type: "image", data: "AAA", mimeType: "image/png" },
      ]),
    ).toEqual({
      server: "fs",
      tool: "stat",
      text: "size 3",
      structured: { size: 3 },
      content: [{ type: "image", data: "AAA", mimeType: "image/png" }],
      summary: "size 3 (+1 non-text block(s))",
    });
  });

  it("runs a call through the connection with the step's signal and returns the result shape", async () => {
    const seen: unknown[] = [];
    const kit = mcpToolkit(server({ sideEffect: "read" }), [adapterTool("get_page", schema)], (tool, args, signal) => {
      seen.push([tool.name, args, signal.aborted]);
      return Promise.resolve({ type: "text", text: "page text" });
    });
    const signal = new AbortController().signal;
    await expect(
      kit.tools[0]!.run({ path: "a" }, { signal, inputs: {}, stepId: "s", attempt: 1 }),
    ).resolves.toMatchObject({
      text: "page text",
    });
    expect(seen).toEqual([["get_page", { path: "a" }, false]]);
  });
});

describe("tracing", () => {
  it("is on when LangChain's own variables say so, and only then", () => {
    expect(tracingEnabled({})).toBe(false);
    expect(tracingEnabled({ LANGSMITH_TRACING: "false" })).toBe(false);
    expect(tracingEnabled({ LANGSMITH_TRACING: "true" })).toBe(true);
    expect(tracingEnabled({ LANGCHAIN_TRACING_V2: "TRUE" })).toBe(true);
  });
});
