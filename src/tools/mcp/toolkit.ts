import type { StructuredToolInterface } from "@langchain/core/tools";
import { z } from "zod";
import { CandorError, ErrorCode } from "../../errors.js";
import { defineTool, type ToolSpec, type Toolkit } from "../types.js";
import { SIDE_EFFECTS, type McpServer } from "./config.js";

/*
 * One MCP server's tools as a Candor toolkit: each tool gets a snake_case name with the server's prefix, the
 * category and side effect the configuration declares, its JSON Schema as its argument validation, and a result
 * shape the rest of Candor can read. Pure: the connection is passed in as `call`.
 */

/** What an MCP tool call returns to Candor: the text blocks joined, anything else as it came. */
export const McpResult = z.object({
  server: z.string(),
  tool: z.string(),
  text: z.string(),
  /** The tool's structured result, when it declares one. */
  structured: z.unknown().optional(),
  /** Blocks that are not text (images, audio, embedded resources), unchanged. */
  content: z.array(z.unknown()).optional(),
  summary: z.string(),
});
export type McpResult = z.infer<typeof McpResult>;

/** Calls one tool on the server (by its name there) and returns what the adapter returned. */
export type McpCall = (
  tool: StructuredToolInterface,
  args: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<unknown>;

/** A server's tool name as Candor names it: the prefix, then the name in snake_case. */
export function candorToolName(prefix: string, name: string): string {
  const snake = name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/_+/g, "_")
    .replace(/^_|_$/g, "");
  return `${prefix}${snake}`;
}

/**
 * A tool's JSON Schema as a zod schema, so the worker validates a call's arguments (a rules plan's, a model's)
 * before it reaches the server, and a model is offered the same schema back. A schema zod cannot read is
 * accepted as any object: the adapter still checks the arguments against the JSON Schema when the tool runs.
 */
export function inputSchema(jsonSchema: unknown): z.ZodType {
  if (!jsonSchema || typeof jsonSchema !== "object") return z.looseObject({});
  try {
    return z.fromJSONSchema(jsonSchema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    // Unreadable by zod (e.g. a remote $ref): validated by the adapter's JSON Schema check at call time instead.
    return z.looseObject({});
  }
}

/** The adapter's output (a string, a content block, or a list of blocks) as an McpResult. */
export function mcpResult(server: string, tool: string, output: unknown): McpResult {
  const blocks = Array.isArray(output) ? output : [output];
  const texts: string[] = [];
  const other: unknown[] = [];
  let structured: unknown;
  for (const block of blocks) {
    if (typeof block === "string") texts.push(block);
    else if (isTextBlock(block)) {
      texts.push(block.text);
      if (block.structuredContent !== undefined) structured = block.structuredContent;
    } else if (block !== undefined && block !== null) other.push(block);
  }
  const text = texts.join("\n");
  const oneLine = text.replace(/\s+/g, " ").trim();
  const gist = oneLine.length > 160 ? `${oneLine.slice(0, 160)}…` : oneLine || "no text";
  return {
    server,
    tool,
    text,
    ...(structured !== undefined ? { structured } : {}),
    ...(other.length > 0 ? { content: other } : {}),
    // The step's description already names the tool and server; the summary is what it said.
    summary: `${gist}${other.length > 0 ? ` (+${other.length} non-text block(s))` : ""}`,
  };
}

function isTextBlock(b: unknown): b is { type: "text"; text: string; structuredContent?: unknown } {
  return (
    typeof b === "object" &&
    b !== null &&
    (b as { type?: unknown }).type === "text" &&
    typeof (b as { text?: unknown }).text === "string"
  );
}

/**
 * The toolkit of one server: its tools and one worker type named after the server that grants their categories.
 * A `tools` entry of the configuration that names no tool of the server is CONFIGURATION (a typo would silently
 * leave a write tool with the server's default).
 */
export function mcpToolkit(server: McpServer, tools: readonly StructuredToolInterface[], call: McpCall): Toolkit {
  const { name, config } = server;
  if (tools.length === 0) {
    throw new CandorError(
      `MCP server "${name}" (from ${server.source}) started but offers no tools, so it would add nothing to a run. Check its arguments, or remove it from ${server.source}.`,
      ErrorCode.CONFIGURATION,
    );
  }
  const known = new Set(tools.map((t) => t.name));
  const unknown = Object.keys(config.tools).filter((t) => !known.has(t));
  if (unknown.length > 0) {
    throw new CandorError(
      `The MCP configuration ${server.source} declares tool(s) ${unknown.join(", ")} for server "${name}", which has no such tool (it has: ${[...known].join(", ") || "none"}). Fix the names under mcpServers.${name}.tools.`,
      ErrorCode.CONFIGURATION,
    );
  }
  const prefix = config.prefix ?? `${name}_`;
  const specs: ToolSpec[] = tools.map((tool) => {
    const declared = config.tools[tool.name] ?? {};
    const effect = SIDE_EFFECTS[declared.sideEffect ?? config.sideEffect ?? "irreversible"];
    const toolName = candorToolName(prefix, tool.name);
    return defineTool({
      name: toolName,
      description: tool.description || `${tool.name} (tool of the MCP server ${name})`,
      category: declared.category ?? config.category ?? name,
      keywords: declared.keywords ?? [],
      consumes: [],
      produces: [toolName],
      ...effect,
      schema: inputSchema(tool.schema),
      outputSchema: McpResult,
      estimates: { durationMs: 500, cost: 0 },
      describeStep: (p) =>
        `${tool.name} on ${name}${Object.keys(p).length > 0 ? ` ${JSON.stringify(p).slice(0, 80)}` : ""}`,
      run: async (args, ctx) =>
        mcpResult(name, tool.name, await call(tool, (args ?? {}) as Record<string, unknown>, ctx.signal)),
    });
  });
  const categories = [...new Set(specs.map((t) => t.category))];
  return {
    name: `mcp:${name}`,
    tools: specs,
    workers: [
      {
        name,
        description: `Uses the tools of the MCP server "${name}"`,
        categories,
        keywords: [],
      },
    ],
  };
}
