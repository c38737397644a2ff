import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach } from "vitest";

/** The repository root: the CLI runs from here, as `npm start` does. */
export const ROOT = path.resolve(import.meta.dirname, "../..");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The child's environment: the caller's, minus anything that would reach a model or another database, plus
 * `env`. Without OPENAI_API_KEY the CLI picks the offline rules reasoner.
 */
export function childEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const key of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "CANDOR_DB", "CANDOR_MODEL", "CANDOR_LOG_LEVEL"])
    delete base[key];
  return { ...base, ...env };
}

/** Starts `node --import tsx src/cli/main.ts ...args` in a new process. */
export function spawnCli(args: readonly string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Runs the CLI to completion and collects its output. */
export function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return collect(spawnCli(args, env));
}

/** Waits for a child started with piped stdout and stderr to end, and collects what it printed. */
export function collect(child: ChildProcess): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A fresh directory per test, removed by the returned cleanup. */
export function tempDir(prefix = "candor-cli-"): { dir: string; db: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, db: path.join(dir, "candor.db"), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Cleanup after each test of a file: `later(fn)` runs `fn` once the current test ends, and `freshDb()` gives a
 * database path in a new temp directory that is removed then.
 */
export function perTest(prefix?: string): { later: (fn: () => void) => void; freshDb: () => string } {
  let cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups) c();
    cleanups = [];
  });
  const later = (fn: () => void) => {
    cleanups.push(fn);
  };
  return {
    later,
    freshDb: () => {
      const t = tempDir(prefix);
      later(t.cleanup);
      return t.db;
    },
  };
}

/** A Node stack frame ("    at fn (file:1:2)"): never shown for bad input. */
export const STACK_LINE = /^\s{4}at /m;
