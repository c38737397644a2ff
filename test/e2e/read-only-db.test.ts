import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, ROOT, runCli, tempDir } from "./helpers.js";

/*
 * Issue 24: a database this user may not write (a read-only file, a read-only folder) was refused by every command,
 * the reading ones too. The commands that only read read it, writing nothing beside it; the ones that write exit 5
 * and say the database is read-only. chmod binds nobody as root, so as root each command runs as `nobody` (setpriv);
 * where that is not possible the test is skipped, saying why.
 */

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
const NOBODY = 65534;
/** util-linux's tool to run a command as another user, as test/fakes/postgres.ts runs PostgreSQL with runuser. */
const [dropTo, ...dropArgs] = ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"];
const canDropToNobody = !isRoot || spawnSync(dropTo, ["--version"]).status === 0;

/** Runs the CLI from source as a user whom the chmods bind: this one, or `nobody` when this one is root. */
function asReader(args: string[]): SpawnSyncReturns<string> {
  const node = [process.execPath, "--import", "tsx", "src/cli/main.ts", ...args];
  const [command, ...argv] = isRoot ? [dropTo, ...dropArgs, ...node] : node;
  return spawnSync(command!, argv, { cwd: ROOT, env: childEnv(), encoding: "utf8", timeout: 120_000 });
}

const tmp = tempDir("candor-read-only-");
afterAll(() => {
  // Writable again, so the cleanup can remove it.
  for (const dir of [tmp.dir, path.join(tmp.dir, "ro-dir")]) if (existsSync(dir)) chmodSync(dir, 0o755);
  tmp.cleanup();
});

const THREAD = "ro-thread-1";
/** A database whose folder is read-only (and the file too), and one whose file alone is. */
const roDir = path.join(tmp.dir, "ro-dir");
const roDirDb = path.join(roDir, "candor.db");
const roFileDb = path.join(tmp.dir, "ro-file.db");

beforeAll(async () => {
  // mkdtemp makes the folder for its owner alone; the reader (nobody, as root) must be able to reach the files.
  chmodSync(tmp.dir, 0o755);
  mkdirSync(roDir);
  for (const db of [roDirDb, roFileDb]) {
    const made = await runCli([
      "run",
      "Plan a 2-day trip from Paris to Rome for 1 person",
      "--db",
      db,
      "--thread",
      THREAD,
      "--no-input",
    ]);
    expect(made.code, made.stderr).toBe(0);
  }
  chmodSync(roFileDb, 0o444);
  for (const f of readdirSync(roDir)) chmodSync(path.join(roDir, f), 0o444);
  chmodSync(roDir, 0o555);
  // The folder holding the read-only file stays writable: the file alone is read-only there.
}, 240_000);

const reading: [name: string, args: string[], expected: RegExp][] = [
  ["threads", ["threads"], new RegExp(`${THREAD}\\s+completed`)],
  ["history", ["history", THREAD], /Checkpoints of thread ro-thread-1, newest first/],
  ["report", ["report", THREAD], /Outcome: Completed: every step succeeded/],
  ["logs", ["logs", "--thread", THREAD], /plan\s+plan-/],
  ["metrics", ["metrics"], /Planning:\s+1 plans/],
  ["memory", ["memory"], /Memory of user default/],
];

describe.skipIf(!canDropToNobody)("a database this user may not write", () => {
  for (const [label, db] of [
    ["in a read-only folder", roDirDb],
    ["a read-only file", roFileDb],
  ] as const) {
    describe(label, () => {
      it.each(reading)("%s reads it and changes nothing", (_name, args, expected) => {
        const before = snapshot(path.dirname(db));
        const out = asReader([...args, "--db", db]);
        expect(out.status, out.stderr).toBe(0);
        expect(out.stdout).toMatch(expected);
        expect(snapshot(path.dirname(db))).toEqual(before);
      });

      it("a command that writes exits 5 and says the database is read-only", () => {
        const out = asReader([
          "run",
          "Plan a 2-day trip from Paris to Rome for 1 person",
          "--db",
          db,
          "--no-input",
          "--json",
        ]);
        expect(out.status, out.stderr).toBe(5);
        expect(out.stderr).toMatch(/is read-only for this process .*so Candor cannot record anything in it/);
        expect(JSON.parse(out.stdout)).toMatchObject({ error: { code: "STORAGE_READ_ONLY" } });
      });
    });
  }
});

/** The files of a folder with their sizes and modification times: what a command that only reads leaves as it was. */
function snapshot(dir: string): Record<string, [number, number]> {
  return Object.fromEntries(
    readdirSync(dir).map((f) => {
      const s = statSync(path.join(dir, f));
      return [f, [s.size, s.mtimeMs]];
    }),
  );
}
