import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openPersistence } from "../../src/memory/persistence.js";
import { childEnv, collect, ROOT, tempDir } from "./helpers.js";

/*
 * Fast start (issue 25) holds because of what a command does not import: `--help` answers from the command tree
 * alone, and `threads` on an empty database reads thread records without the checkpoint packages. Timing lives in
 * bench/startup.ts; this pins the structure, by the modules a CLI process actually loaded.
 */

const tmp = tempDir("candor-startup-imports-");
afterAll(() => tmp.cleanup());

// A module-loading hook that appends every URL it loads to the file MODULE_LOG names.
const hooks = path.join(tmp.dir, "hooks.mjs");
writeFileSync(
  hooks,
  `import { appendFileSync } from "node:fs";
export async function load(url, context, next) {
  appendFileSync(process.env.MODULE_LOG, url + "\\n");
  return next(url, context);
}
`,
);
const register = path.join(tmp.dir, "register.mjs");
writeFileSync(register, `import { register } from "node:module";\nregister(${JSON.stringify(`file://${hooks}`)});\n`);

/** Runs the CLI from source and returns its exit code and the URLs of the modules it loaded. */
async function loaded(name: string, args: string[]): Promise<{ code: number | null; urls: string[]; stderr: string }> {
  const log = path.join(tmp.dir, `${name}.log`);
  writeFileSync(log, "");
  const child = spawn(process.execPath, ["--import", register, "--import", "tsx", "src/cli/main.ts", ...args], {
    cwd: ROOT,
    env: childEnv({ MODULE_LOG: log }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const { code, stderr } = await collect(child);
  return { code, stderr, urls: readFileSync(log, "utf8").split("\n").filter(Boolean) };
}

const from = (urls: string[], fragment: string) => urls.filter((u) => u.includes(fragment));

describe("what a command loads before it does anything", () => {
  it("--help loads neither zod nor LangChain, SQLite or the travel toolkit", async () => {
    const { code, urls, stderr } = await loaded("help", ["--help"]);
    expect(code, stderr).toBe(0);
    expect(from(urls, "/node_modules/commander/").length).toBeGreaterThan(0);
    for (const heavy of [
      "/node_modules/zod/",
      "/node_modules/@langchain/",
      "/node_modules/better-sqlite3/",
      "/examples/",
    ])
      expect(from(urls, heavy), heavy).toEqual([]);
  });

  it("threads on a database with no threads reads it without the checkpoint packages, LangSmith or the agent", async () => {
    openPersistence(tmp.db).close();
    const { code, urls, stderr } = await loaded("threads", ["threads", "--db", tmp.db]);
    expect(code, stderr).toBe(0);
    expect(from(urls, "/node_modules/better-sqlite3/").length).toBeGreaterThan(0);
    for (const heavy of [
      "/node_modules/@langchain/",
      "/node_modules/langsmith/",
      "/graphs/",
      "/nodes/state",
      "/examples/",
    ])
      expect(from(urls, heavy), heavy).toEqual([]);
  });
});
