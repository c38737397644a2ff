import { spawn } from "node:child_process";
import { copyFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { childEnv, collect, perTest, ROOT, STACK_LINE, type CliResult } from "./helpers.js";

/**
 * The README's "Try it" block, run as written (issue 25 item 5): `--help`, the first run that completes, the first
 * that stops for a person and `threads` each exit as the block's comment says, on a fresh database, in a fresh
 * folder holding a copy of the README (so nothing a command writes lands in the repository). Only those four, as
 * each command is a new process of a few seconds; test/unit/docs-pages.test.ts checks every command of the README
 * and docs/ statically, against the CLI's own definition.
 */

const README = readFileSync(path.join(ROOT, "README.md"), "utf8");
const TSX = import.meta.resolve("tsx");
const MAIN = path.join(ROOT, "src/cli/main.ts");
const LONG = 120_000;

const { freshDb } = perTest("candor-docs-");

/** The `npm start -- …` lines of the README's "Try it" block, with the exit code each one's comment gives. */
function tryIt(): { line: string; args: string[]; exit: number }[] {
  const section = README.slice(README.indexOf("## Try it"));
  const block = /```bash\n([\s\S]*?)\n```/.exec(section)?.[1] ?? "";
  return block
    .split("\n")
    .filter((l) => l.startsWith("npm start -- "))
    .map((line) => {
      const [command = "", comment = ""] = line.split(/\s+#\s+/);
      const args = [...command.slice("npm start -- ".length).matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
      return { line, args, exit: /exit (\d)/.exec(comment) ? Number(/exit (\d)/.exec(comment)![1]) : 0 };
    });
}

/** `--help`, the first run that completes, the first that waits for a person, and `threads`, in the block's order. */
function sample(): ReturnType<typeof tryIt> {
  const lines = tryIt();
  const runs = lines.filter((l) => l.args[0] === "run");
  const picked = new Set([
    lines.find((l) => l.args[0] === "--help"),
    runs.find((l) => l.exit === 0),
    runs.find((l) => l.exit === 3),
    lines.find((l) => l.args[0] === "threads"),
  ]);
  return lines.filter((l) => picked.has(l));
}

/** Runs the CLI from the source in `cwd`, as `npm start --` does from the clone. */
function cliIn(cwd: string, args: readonly string[]): Promise<CliResult> {
  const child = spawn(process.execPath, ["--import", TSX, MAIN, ...args], {
    cwd,
    env: childEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  return collect(child);
}

describe("the README's first commands work as written", () => {
  it("finds them: help, a run, one that stops for approval, threads", () => {
    expect(sample().map((l) => l.args[0])).toEqual(["--help", "run", "run", "threads"]);
    expect(sample().map((l) => l.exit)).toEqual([0, 0, 3, 0]);
  });

  it("each exits with the code its comment says, offline, on a fresh database", { timeout: 5 * LONG }, async () => {
    const db = freshDb();
    const dir = path.dirname(db);
    copyFileSync(path.join(ROOT, "README.md"), path.join(dir, "README.md"));
    for (const { line, args, exit } of sample()) {
      const r = await cliIn(dir, args[0] === "--help" ? args : [...args, "--db", db]);
      expect(r.code, `${line}\n${r.stderr.slice(-2000)}`).toBe(exit);
      expect(r.stderr).not.toMatch(STACK_LINE);
      if (args[0] === "--help") expect(r.stdout).toContain("Usage: candor");
      if (args[0] === "threads") expect(r.stdout).toContain("plan_approval");
    }
  });
});
