import type { ChildProcess } from "node:child_process";
import { z } from "zod";
import { spawnCli } from "../e2e/helpers.js";

/** `candor serve` as a user starts it: its own process, until `stop()`. */
export interface ServeProcess {
  url: string;
  /** Everything it wrote to stderr so far. */
  output(): string;
  /** SIGTERM, as `kill` sends it, and waits for the exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Loading the graph with tsx on a loaded 2-core box. */
export const SERVE_STARTUP_MS = 90_000;

const Listening = z.object({ url: z.string(), db: z.string(), auth: z.boolean() });

/** Starts `candor serve --port 0 --json …args` and resolves once it printed where it listens. */
export function startServe(args: readonly string[], env: Record<string, string> = {}): Promise<ServeProcess> {
  const child: ChildProcess = spawnCli(["serve", "--port", "0", "--json", ...args], env);
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    return exited;
  };
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString();
      // Complete lines only: a chunk may end mid-line.
      const line = stdout
        .split("\n")
        .slice(0, -1)
        .find((l) => l.startsWith("{"));
      if (!line) return;
      const listening = Listening.safeParse(JSON.parse(line));
      if (listening.success) resolve({ url: listening.data.url, output: () => stderr, stop });
      else reject(new Error(`candor serve did not start: ${line}`));
    });
    void exited.then((code) => reject(new Error(`candor serve exited with ${code} before listening:\n${stderr}`)));
  });
}
