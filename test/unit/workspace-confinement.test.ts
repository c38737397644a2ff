import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { TaskStep } from "../../src/domain/plan.js";
import { ConfinedRoot } from "../../src/tools/builtin/confine.js";
import { workspaceToolkit } from "../../src/tools/builtin/workspace.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { runStep } from "../../src/execution/run-step.js";

// Regression tests for issue 8 item 1: the workspace tools followed symlinks out of the working directory, for
// reading and for writing, because the path was checked as text and not on disk at the moment of use.

const SECRET = "top secret outside the workspace";
const dirs: string[] = [];
afterEach(() => {
  // Retried: a link made by a process that was just killed can still land while the folder is removed.
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});

/** A workspace and, beside it, an outside directory with a secret file in it. */
function setup() {
  const base = mkdtempSync(join(tmpdir(), "candor-confine-"));
  dirs.push(base);
  const root = join(base, "ws");
  const outside = join(base, "outside");
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), SECRET);
  writeFileSync(join(root, "notes.md"), "inside the workspace\n");
  const registry = ToolRegistry.create([workspaceToolkit({ root })]);
  return { root, outside, registry };
}

function step(tool: string, params: Record<string, unknown>): TaskStep {
  return {
    id: "s1",
    description: tool,
    workerType: tool === "write_report" ? "reporter" : "reader",
    tools: [tool],
    params,
    dependsOn: [],
    expectedOutputs: [],
    estimates: { durationMs: 10, cost: 0 },
    timeoutMs: 5000,
    retry: { maxAttempts: 1, backoffMs: [] },
    order: 0,
  } as unknown as TaskStep;
}

const ANALYSIS = { words: 3, lines: 1, characters: 10, topWords: [], summary: "3 words" };

describe("workspace confinement by real path", () => {
  it("refuses to read a symlink to a file outside, without returning its contents", async () => {
    const { root, outside, registry } = setup();
    symlinkSync(join(outside, "secret.txt"), join(root, "link.txt"));
    const fb = await runStep({ step: step("read_file", { path: "link.txt" }), inputs: {}, registry, dispatch: 1 });
    expect(fb.feedbackType).toBe("FAILURE");
    expect(JSON.stringify(fb)).not.toContain(SECRET);
    expect(fb.errors.join()).toMatch(/outside the workspace/);
  });

  it("refuses to list or read through a symlinked directory (etclink -> outside)", async () => {
    const { root, outside, registry } = setup();
    symlinkSync(outside, join(root, "etclink"));
    const listed = await runStep({ step: step("list_files", { dir: "etclink" }), inputs: {}, registry, dispatch: 1 });
    expect(listed.feedbackType).toBe("FAILURE");
    expect(JSON.stringify(listed)).not.toContain("secret.txt");
    const read = await runStep({
      step: step("read_file", { path: "etclink/secret.txt" }),
      inputs: {},
      registry,
      dispatch: 1,
    });
    expect(read.feedbackType).toBe("FAILURE");
    expect(JSON.stringify(read)).not.toContain(SECRET);
  });

  it("lists a symlink in the workspace by its name only, marked, without following it", async () => {
    const { root, outside, registry } = setup();
    symlinkSync(outside, join(root, "etclink"));
    const listed = await runStep({ step: step("list_files", { dir: "." }), inputs: {}, registry, dispatch: 1 });
    expect(listed.feedbackType).toBe("SUCCESS");
    expect((listed.outputs.result as { files: string[] }).files).toEqual(["etclink@", "notes.md"]);
  });

  it("still reads a symlink that stays inside the workspace", async () => {
    const { root, registry } = setup();
    symlinkSync(join(root, "notes.md"), join(root, "alias.md"));
    const fb = await runStep({ step: step("read_file", { path: "alias.md" }), inputs: {}, registry, dispatch: 1 });
    expect(fb.feedbackType).toBe("SUCCESS");
    expect((fb.outputs.result as { text: string }).text).toBe("inside the workspace\n");
  });

  it("writes beside a symlink planted at the report's path, never through it or over it", async () => {
    const { root, outside, registry } = setup();
    mkdirSync(join(root, ".candor", "reports"), { recursive: true });
    symlinkSync(join(outside, "secret.txt"), join(root, ".candor", "reports", "candor-report.md"));
    const fb = await runStep({
      step: step("write_report", { title: "Candor report" }),
      inputs: { analysis: ANALYSIS },
      registry,
      dispatch: 1,
    });
    expect(fb.feedbackType).toBe("SUCCESS");
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe(SECRET);
    // The planted link is left as it was (an existing name is never replaced); the report takes the next name.
    expect(lstatSync(join(root, ".candor", "reports", "candor-report.md")).isSymbolicLink()).toBe(true);
    const written = join(root, ".candor", "reports", "candor-report-2.md");
    expect(lstatSync(written).isSymbolicLink()).toBe(false);
    expect(readFileSync(written, "utf8")).toContain("3 words");
    expect((fb.outputs.result as { summary: string }).summary).toContain("candor-report-2.md");
  });

  it("refuses to write through a symlinked directory on the way to the reports folder", async () => {
    const { root, outside, registry } = setup();
    symlinkSync(outside, join(root, ".candor"));
    const fb = await runStep({
      step: step("write_report", { title: "Candor report" }),
      inputs: { analysis: ANALYSIS },
      registry,
      dispatch: 1,
    });
    expect(fb.feedbackType).toBe("FAILURE");
    expect(fb.errors.join()).toMatch(/outside the workspace/);
    expect(readdirSync(outside)).toEqual(["secret.txt"]);
  });

  it("classifies a confinement refusal as policy_blocked, so no recovery tries to get around it", async () => {
    const { root, outside, registry } = setup();
    symlinkSync(join(outside, "secret.txt"), join(root, "link.txt"));
    const fb = await runStep({ step: step("read_file", { path: "link.txt" }), inputs: {}, registry, dispatch: 1 });
    expect(fb.failureClass).toBe("policy_blocked");
  });

  it("keeps refusing ../ and absolute paths", async () => {
    const { registry } = setup();
    for (const path of ["../outside/secret.txt", "/etc/passwd"]) {
      const fb = await runStep({ step: step("read_file", { path }), inputs: {}, registry, dispatch: 1 });
      expect(fb.feedbackType).toBe("FAILURE");
      expect(fb.errors.join()).toMatch(/outside the workspace/);
    }
  });
});

/** Runs a shell loop that keeps swapping `link` between two targets until stopped. */
function swapper(link: string, a: string, b: string) {
  // Its own process group: killing the shell alone left an `ln` it had started running, which made a link after
  // afterEach began removing the folder (ENOTEMPTY) on a loaded machine. The whole group is killed.
  const child = spawn("sh", ["-c", `while :; do ln -sfn "${a}" "${link}"; ln -sfn "${b}" "${link}"; done`], {
    stdio: "ignore",
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return async () => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      child.kill("SIGKILL");
    }
    await exited;
  };
}

describe("a symlink swapped between check and use", () => {
  it("never reads the outside file while a link flips between inside and outside", async () => {
    const { root, outside } = setup();
    const confined = await ConfinedRoot.open(root);
    const stop = swapper(join(root, "flip.txt"), join(root, "notes.md"), join(outside, "secret.txt"));
    const outcomes = { inside: 0, refused: 0 };
    try {
      for (let i = 0; i < 300; i++) {
        try {
          const text = await confined.readText("flip.txt");
          expect(text).not.toContain(SECRET);
          outcomes.inside++;
        } catch (e) {
          expect(String(e)).not.toContain(SECRET);
          outcomes.refused++;
        }
      }
    } finally {
      await stop();
    }
    expect(outcomes.inside + outcomes.refused).toBe(300);
  });

  it("never writes outside while the reports directory flips between a real folder and a symlink out", async () => {
    const { root, outside } = setup();
    mkdirSync(join(root, ".candor"));
    mkdirSync(join(root, ".candor", "real-reports"));
    const confined = await ConfinedRoot.open(root);
    const stop = swapper(join(root, ".candor", "reports"), join(root, ".candor", "real-reports"), outside);
    try {
      for (let i = 0; i < 200; i++)
        await confined.writeText(".candor/reports", `r${i}.md`, "report").catch(() => undefined);
    } finally {
      await stop();
    }
    expect(readdirSync(outside)).toEqual(["secret.txt"]);
    expect(existsSync(join(root, ".candor", "real-reports"))).toBe(true);
  });
});

describe("files a tool should not load whole or wait on", () => {
  it("refuses a FIFO at once instead of waiting for a writer", async () => {
    const { root } = setup();
    const made = spawnSync("mkfifo", [join(root, "pipe")]);
    expect(made.status).toBe(0);
    const confined = await ConfinedRoot.open(root);
    await expect(confined.readText("pipe")).rejects.toThrow(/not a regular file/);
  });

  it("reads at most the limit of a big file and says it was cut", async () => {
    const { root, registry } = setup();
    writeFileSync(join(root, "big.txt"), "x".repeat(300_000));
    const fb = await runStep({ step: step("read_file", { path: "big.txt" }), inputs: {}, registry, dispatch: 1 });
    const result = fb.outputs.result as { text: string; truncated: boolean; summary: string };
    expect(result.text.length).toBe(200_000);
    expect(result.truncated).toBe(true);
    expect(result.summary).toContain("300000 bytes");
  });
});
