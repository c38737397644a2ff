import type { StructuredToolInterface } from "@langchain/core/tools";
import { loadMcpTools } from "@langchain/mcp-adapters";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CandorError, ErrorCode, errorMessage } from "../../errors.js";
import type { Toolkit } from "../types.js";
import type { McpServer } from "./config.js";
import { mcpToolkit } from "./toolkit.js";

/*
 * Starting, watching and stopping the MCP servers of a run. Each server has its own client (so a failure names
 * its server), is given a deadline to start and list its tools, and is watched: a server that exits during the run
 * turns every later call of its tools into a failure that names it and says why, never a hang.
 */

/** The servers of a run, as toolkits, with what stops them. */
export interface McpServers {
  toolkits: Toolkit[];
  /** Stops every server (bounded: a server that ignores the request is killed). Safe to call twice. */
  close(): Promise<void>;
  /** The process ids of the running stdio servers (diagnostics, and tests that stop one as a crash would). */
  pids(): number[];
}

/** Last characters of a server's stderr kept to say why it failed. */
const STDERR_TAIL = 600;
/** How long closing a server may take before Candor stops waiting for it. */
const CLOSE_TIMEOUT_MS = 5_000;

/** One running server: its client, and why it stopped when it has. */
class Connection {
  private stderr = "";
  /** Why the server is gone (set when its connection closed without Candor closing it). */
  down: string | null = null;
  private closing = false;
  readonly client = new Client({ name: "candor", version: "1" });
  readonly transport: Transport;

  constructor(readonly server: McpServer) {
    const { config } = server;
    if ("command" in config) {
      const stdio = new StdioClientTransport({
        // "node" is the Node running Candor: no PATH lookup, and the same version everywhere.
        command: config.command === "node" ? process.execPath : config.command,
        args: config.args,
        env: { ...getDefaultEnvironment(), ...config.env },
        ...(config.cwd ? { cwd: config.cwd } : {}),
        // Kept, not shown: a server's chatter would interleave with Candor's output; its last words explain a failure.
        stderr: "pipe",
      });
      stdio.stderr?.on("data", (chunk: Buffer) => {
        this.stderr = (this.stderr + chunk.toString()).slice(-STDERR_TAIL);
      });
      this.transport = stdio;
    } else {
      this.transport = new StreamableHTTPClientTransport(new URL(config.url), {
        ...(config.headers ? { requestInit: { headers: config.headers } } : {}),
      });
    }
    // Set before connect: the client keeps this handler and adds its own.
    this.transport.onclose = () => {
      if (!this.closing) this.down ??= `it exited${this.lastWords()}`;
    };
  }

  /** The server's last stderr lines, as a clause for messages (empty when it said nothing). */
  lastWords(): string {
    const text = this.stderr.trim().replace(/\s+/g, " ");
    return text ? ` (its last output: "${text.slice(-300)}")` : "";
  }

  async close(): Promise<void> {
    this.closing = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      // A server that fails while it is being stopped has nothing left to tell the run: it is gone either way.
      this.client.close().catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_TIMEOUT_MS);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
  }
}

/** Runs `work` with a deadline; at the deadline `onLate` runs and the promise rejects with `late`. */
async function withDeadline<T>(work: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Starts one server and lists its tools, within its startup deadline; on failure it is stopped and named. */
async function start(server: McpServer): Promise<{ connection: Connection; tools: StructuredToolInterface[] }> {
  const connection = new Connection(server);
  const { startupTimeoutMs } = server.config;
  const what =
    "command" in server.config ? `${server.config.command} ${server.config.args.join(" ")}`.trim() : server.config.url;
  const failed = (why: string, cause?: unknown) =>
    new CandorError(
      `MCP server "${server.name}" (${what}, from ${server.source}) could not start: ${why}. The run was not started; fix or remove its entry in ${server.source}.`,
      ErrorCode.CONFIGURATION,
      { cause, details: { server: server.name } },
    );
  try {
    const tools = await withDeadline(
      (async () => {
        await connection.client.connect(connection.transport, { timeout: startupTimeoutMs });
        return loadMcpTools(server.name, connection.client, { throwOnLoadError: true });
      })(),
      startupTimeoutMs,
      () => failed(`it did not answer within ${startupTimeoutMs} ms (startupTimeoutMs)${connection.lastWords()}`),
    );
    return { connection, tools };
  } catch (e) {
    const why = CandorError.isInstance(e)
      ? e
      : failed(connection.down ?? `${errorMessage(e)}${connection.lastWords()}`, e);
    await connection.close();
    throw why;
  }
}

/**
 * Starts every configured server (in parallel) and turns each one's tools into a toolkit. When any server fails
 * to start, the others are stopped and the error names the server and why: a run never starts with some of the
 * tools it was configured with silently missing.
 */
export async function openMcpServers(servers: readonly McpServer[]): Promise<McpServers> {
  const started = await Promise.allSettled(servers.map(start));
  const connections = started.flatMap((s) => (s.status === "fulfilled" ? [s.value.connection] : []));
  const closeAll = async () => {
    await Promise.all(connections.map((c) => c.close()));
  };
  const failure = started.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failure) {
    await closeAll();
    throw failure.reason;
  }
  try {
    const toolkits = started.map((s) => {
      const { connection, tools } = (s as PromiseFulfilledResult<Awaited<ReturnType<typeof start>>>).value;
      return mcpToolkit(connection.server, tools, (tool, args, signal) => callOn(connection, tool, args, signal));
    });
    let closed: Promise<void> | null = null;
    const pids = () =>
      connections.flatMap((c) =>
        c.transport instanceof StdioClientTransport && c.transport.pid ? [c.transport.pid] : [],
      );
    return { toolkits, close: () => (closed ??= closeAll()), pids };
  } catch (e) {
    await closeAll();
    throw e;
  }
}

/**
 * One call of a server's tool. A server that is gone fails the call with its name and why (classified as an
 * unavailable resource, so replanning looks elsewhere rather than retrying a dead server).
 */
async function callOn(
  connection: Connection,
  tool: StructuredToolInterface,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<unknown> {
  const down = (cause?: unknown) =>
    new CandorError(
      `MCP server "${connection.server.name}" is not running: ${connection.down}, so ${tool.name} was not run. The step fails and is replanned; start Candor again to restart the server.`,
      ErrorCode.TOOL_FAILED,
      { cause, details: { failureClass: "resource_unavailable", server: connection.server.name } },
    );
  if (connection.down) throw down();
  try {
    return await tool.invoke(args, { signal });
  } catch (e) {
    if (connection.down) throw down(e);
    throw e;
  }
}
