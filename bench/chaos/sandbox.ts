/**
 * The directory a chaos run works in: a workspace the file tools may use (the CLI's working directory), files
 * outside it holding a marker that must never show up in any output, symlinks from inside to outside, and one
 * directory per run for its database and decision log.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export interface Sandbox {
  root: string;
  /** The working directory of every command: the workspace tools' root. */
  workspace: string;
  /** Written only in files outside the workspace: seeing it in an output means a tool read outside. */
  marker: string;
  /** A fresh directory for one run's database. */
  runDir(label: string): string;
  cleanup(): void;
}

export function createSandbox(prefix = "candor-chaos-"): Sandbox {
  const root = mkdtempSync(path.join(tmpdir(), prefix));
  const workspace = path.join(root, "workspace");
  const outsideDir = path.join(root, "outside-dir");
  const marker = `CHAOS-OUTSIDE-${path.basename(root).replace(/[^A-Za-z0-9]/g, "")}`;
  mkdirSync(path.join(workspace, "data"), { recursive: true });
  mkdirSync(outsideDir, { recursive: true });
  mkdirSync(path.join(root, "runs"), { recursive: true });
  writeFileSync(
    path.join(workspace, "README.md"),
    "# Chaos workspace\n\nA small workspace the chaos suite's file requests read, count and report on.\nIt has notes and a log under data.\n",
  );
  writeFileSync(
    path.join(workspace, "notes.md"),
    Array.from(
      { length: 40 },
      (_, i) => `Note ${i + 1}: candor plans, fails, recovers and reports every failure it meets.`,
    ).join("\n"),
  );
  writeFileSync(
    path.join(workspace, "data", "log.txt"),
    Array.from(
      { length: 200 },
      (_, i) => `2024-01-${String((i % 28) + 1).padStart(2, "0")} INFO step ${i} finished`,
    ).join("\n"),
  );
  writeFileSync(path.join(root, "outside.txt"), `secret outside the workspace: ${marker}\n`);
  writeFileSync(path.join(outsideDir, "secret.txt"), `another secret: ${marker}\n`);
  // A file link and a directory link that lead out of the workspace (issue 8 item 1).
  symlinkSync(path.join(root, "outside.txt"), path.join(workspace, "link-out.txt"));
  symlinkSync(outsideDir, path.join(workspace, "linkdir"));
  let runs = 0;
  return {
    root,
    workspace,
    marker,
    runDir(label) {
      const dir = path.join(
        root,
        "runs",
        `${String(runs++).padStart(5, "0")}-${label.replace(/[^A-Za-z0-9_-]/g, "_")}`,
      );
      mkdirSync(dir, { recursive: true });
      return dir;
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}
