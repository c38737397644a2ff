import path from "node:path";
import { z } from "zod";
import { CandorError, ErrorCode, errorMessage } from "../../errors.js";
import { readGivenFile } from "../../safe-read.js";
import type { SideEffect } from "../types.js";

/*
 * The MCP configuration file (`--mcp <file>` / CANDOR_MCP): the servers whose tools Candor offers, in the
 * `mcpServers` shape other MCP clients use, plus what Candor must know and a server cannot be trusted to say —
 * which worker category each tool belongs to, and what it does to the world.
 */

/**
 * What a tool does to the world, as the configuration declares it. A server's own hints (readOnlyHint) are not
 * trusted: a tool nobody declared is taken as irreversible, so every call waits for a person's approval.
 */
export const McpSideEffect = z.enum(["read", "reversible", "irreversible"], {
  error: 'sideEffect must be "read" (no effect), "reversible" or "irreversible" (asks for approval before each call)',
});
export type McpSideEffect = z.infer<typeof McpSideEffect>;

/** How a declared side effect maps onto a tool's metadata (the approval gate and the effect ledger read these). */
export const SIDE_EFFECTS: Record<McpSideEffect, { sideEffect: SideEffect; needsApproval: boolean }> = {
  read: { sideEffect: "none", needsApproval: false },
  reversible: { sideEffect: "reversible", needsApproval: false },
  irreversible: { sideEffect: "irreversible", needsApproval: true },
};

const SNAKE = /^[a-z][a-z0-9_]*$/;

/** Worker categories and server names are snake_case, as tool names are. */
const Snake = (what: string) =>
  z.string().regex(SNAKE, `${what} must be snake_case (lowercase letters, digits and "_"), e.g. files`);

/** What the configuration says about one of a server's tools (by its name on the server). */
const McpToolSettings = z.strictObject({
  category: Snake("category").optional(),
  sideEffect: McpSideEffect.optional(),
  /** Words that make the rules planner choose this tool (none by default: only a model plans over MCP tools). */
  keywords: z.array(z.string().min(1)).optional(),
});

const Timeouts = {
  /** How long the server may take to start and list its tools. */
  startupTimeoutMs: z.number().int().min(100).max(600_000).default(15_000),
};

const Common = {
  /** The worker category of the server's tools (worker types grant categories); default: the server's name. */
  category: Snake("category").optional(),
  /** The side effect of every tool of the server not declared under `tools`; default: irreversible. */
  sideEffect: McpSideEffect.optional(),
  /** Put before each tool's name, so two servers (or a built-in tool) never clash; default: "<server>_". */
  prefix: z
    .string()
    .regex(/^([a-z][a-z0-9_]*)?$/, 'prefix must be empty or snake_case, e.g. "fs_"')
    .optional(),
  tools: z.record(z.string(), McpToolSettings).default({}),
  ...Timeouts,
};

const StdioServer = z.strictObject({
  /** The program to start; "node" means the Node running Candor. */
  command: z.string().min(1, "command must name the program that starts the server, e.g. node"),
  args: z.array(z.string()).default([]),
  /** Added to a minimal environment (PATH, HOME …): the server does not see Candor's secrets unless given here. */
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
  ...Common,
});

const HttpServer = z.strictObject({
  /** A Streamable HTTP endpoint. */
  url: z.url({ protocol: /^https?$/, error: "url must be a full http(s) URL, e.g. http://127.0.0.1:3000/mcp" }),
  headers: z.record(z.string(), z.string()).optional(),
  ...Common,
});

type McpServerConfig = z.infer<typeof StdioServer> | z.infer<typeof HttpServer>;

/** The file's outer shape; each server is then read by the schema its transport needs (see serverSchema). */
const McpConfigFile = z.strictObject({
  mcpServers: z
    .record(z.string(), z.record(z.string(), z.unknown(), { error: "each server is a JSON object" }))
    .refine((s) => Object.keys(s).length > 0, "mcpServers lists no server"),
});

/**
 * The schema one server entry is read with, chosen by its transport, so a mistake is reported against the
 * transport the entry meant (a union would only say that neither fits).
 */
function serverSchema(entry: Record<string, unknown>): z.ZodType<McpServerConfig> | string {
  if ("command" in entry && "url" in entry) return 'give either "command" (stdio) or "url" (HTTP), not both';
  if ("command" in entry) return StdioServer;
  if ("url" in entry) return HttpServer;
  return 'each server needs "command" (a program started over stdio) or "url" (a Streamable HTTP endpoint)';
}

/** A server as Candor starts it: its name, its settings with defaults, and where the configuration came from. */
export interface McpServer {
  name: string;
  config: McpServerConfig;
  /** The file it was read from, for messages. */
  source: string;
}

const EXAMPLE = `{"mcpServers": {"fs": {"command": "node", "args": ["server.js", "/tmp/dir"], "sideEffect": "read"}}}`;

/**
 * Parses an MCP configuration. A file that is not JSON, or does not fit, is CONFIGURATION with the place and the
 * problem; relative `cwd`s are taken from the file's folder.
 */
export function parseMcpConfig(text: string, source: string): McpServer[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new CandorError(
      `The MCP configuration ${source} is not JSON (${errorMessage(e)}). Write it as ${EXAMPLE}.`,
      ErrorCode.CONFIGURATION,
      { cause: e },
    );
  }
  const file = McpConfigFile.safeParse(raw);
  if (!file.success) throw invalid(source, file.error.issues[0]);
  const dir = path.dirname(path.resolve(source));
  return Object.entries(file.data.mcpServers).map(([name, entry]) => {
    // Checked here rather than by the record's key schema, whose error would not say which name or why.
    if (!SNAKE.test(name))
      throw invalid(source, {
        path: ["mcpServers", name],
        message: `a server name must be snake_case (lowercase letters, digits and "_"), e.g. fs: it names the server's worker type and prefixes its tools`,
      });
    const schema = serverSchema(entry);
    if (typeof schema === "string") throw invalid(source, { path: ["mcpServers", name], message: schema });
    const parsed = schema.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalid(source, { path: ["mcpServers", name, ...(issue?.path ?? [])], message: issue?.message ?? "" });
    }
    const config = parsed.data;
    return {
      name,
      config: "command" in config && config.cwd ? { ...config, cwd: path.resolve(dir, config.cwd) } : config,
      source,
    };
  });
}

function invalid(source: string, issue: { path: PropertyKey[]; message: string } | undefined): CandorError {
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.map(String).join(".")}` : "";
  return new CandorError(
    `The MCP configuration ${source} is invalid${where}: ${issue?.message || "invalid"}. Fix it (e.g. ${EXAMPLE}), or leave out --mcp and CANDOR_MCP.`,
    ErrorCode.CONFIGURATION,
  );
}

/**
 * Reads and parses the MCP configuration file; a missing or unreadable file, or one that is not a regular file (a
 * FIFO would hang the run), is CONFIGURATION.
 */
export function loadMcpConfig(file: string): McpServer[] {
  const text = readGivenFile(file, {
    what: "The MCP configuration (--mcp or CANDOR_MCP)",
    code: ErrorCode.CONFIGURATION,
  });
  return parseMcpConfig(text, file);
}
