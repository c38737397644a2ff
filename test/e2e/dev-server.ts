import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { childEnv, ROOT } from "./helpers.js";

/*
 * `langgraphjs dev` serving Candor from the repository, for the tests that talk to it as Studio, the SDK and the
 * chat clients do (test/e2e/studio.test.ts, test/browser/chat.browser.ts).
 */

/** Starting the dev server compiles the graph with tsx: allow for a loaded 2-core box. */
export const STARTUP_MS = 90_000;

/** A port nobody listens on (2024, the dev server's default, is taken on these machines). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/**
 * The dev server writes .langgraph_api/ and may edit .gitignore in the repository it serves; both are put back
 * as they were so a test run leaves nothing behind.
 */
function snapshotRepoFiles(): () => void {
  const gitignore = path.join(ROOT, ".gitignore");
  const api = path.join(ROOT, ".langgraph_api");
  const ignoreText = existsSync(gitignore) ? readFileSync(gitignore, "utf8") : null;
  const saved = existsSync(api) ? mkdtempSync(path.join(tmpdir(), "candor-lgapi-")) : null;
  if (saved) cpSync(api, saved, { recursive: true });
  return () => {
    if (ignoreText === null) rmSync(gitignore, { force: true });
    else if (readFileSync(gitignore, "utf8") !== ignoreText) writeFileSync(gitignore, ignoreText);
    rmSync(api, { recursive: true, force: true });
    if (saved) {
      cpSync(saved, api, { recursive: true });
      rmSync(saved, { recursive: true, force: true });
    }
  };
}

/** Stops a detached child and what it spawned: the whole process group, then SIGKILL if it lingers. */
async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, s);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ESRCH") throw e;
    }
  };
  signal("SIGTERM");
  const timer = setTimeout(() => signal("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
  // Children of the group may outlive the leader by a moment.
  signal("SIGKILL");
}

/** Polls `url` until it answers 2xx; throws with the child's last output when it exits or the time is up. */
async function waitUntilUp(url: string, child: ChildProcess, output: () => string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${output().slice(-2000)}`);
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${ms} ms:\n${output().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

export interface DevServer {
  apiUrl: string;
  /** Everything the server printed so far. */
  output(): string;
  /** Stops the server and puts the repository's files back. */
  stop(): Promise<void>;
}

/** Starts `langgraphjs dev` on a free port and waits until it answers. */
export async function startDevServer(): Promise<DevServer> {
  const restore = snapshotRepoFiles();
  let output = "";
  let server: ChildProcess | undefined;
  const stop = async () => {
    try {
      if (server) await stopGroup(server);
    } finally {
      restore();
    }
  };
  try {
    const port = await freePort();
    // detached: a process group of its own, so stop() ends the server's watcher and workers too.
    server = spawn(path.join(ROOT, "node_modules/.bin/langgraphjs"), ["dev", "--no-browser", "--port", String(port)], {
      cwd: ROOT,
      env: childEnv(),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    server.stdout?.on("data", (d: Buffer) => (output += d.toString()));
    server.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    const apiUrl = `http://localhost:${port}`;
    await waitUntilUp(`${apiUrl}/ok`, server, () => output, STARTUP_MS);
    return { apiUrl, output: () => output, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
