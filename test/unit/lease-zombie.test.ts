/**
 * Issue 8 item 3: a dead holder that is still a zombie held the thread's lease. Where PID 1 does not reap (a
 * container without an init), a SIGKILLed `candor` stays <defunct> and signal 0 calls it alive, so `resume`
 * said "busy" until the lease expired. A zombie, or a pid now used by a process that started at another time,
 * must count as dead; where there is no /proc, signal 0 still decides.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { acquireLease, holderAlive, leaseHolder, processStartTime, readProcessStat } from "../../src/memory/lease.js";

const HAS_PROC = existsSync("/proc/self/stat");

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function openDb(): Database.Database {
  const dir = mkdtempSync(path.join(tmpdir(), "candor-zombie-"));
  const db = new Database(path.join(dir, "candor.db"), { timeout: 5000 });
  cleanups.push(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return db;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls /proc until `pid` is in state `state` or gone; returns which. */
async function settle(pid: number, state: string): Promise<"reached" | "gone"> {
  for (;;) {
    const stat = readProcessStat(pid);
    if (stat.kind === "gone") return "gone";
    if (stat.kind === "found" && stat.state === state) return "reached";
    await pause(10);
  }
}

/** Starts `sh -c script`, whose first line of output is the pid of the background child it started. */
async function startParent(script: string): Promise<{ parent: ChildProcess; child: number }> {
  const parent = spawn("sh", ["-c", script], { stdio: ["pipe", "pipe", "inherit"] });
  const line = await new Promise<string>((resolve, reject) => {
    parent.once("error", reject);
    parent.stdout.once("data", (d: Buffer) => resolve(d.toString().trim()));
  });
  return { parent, child: Number(line) };
}

/**
 * A real zombie: a background `sleep` killed with SIGKILL while its parent does not wait for it. The parent is
 * a shell blocked in `read`, which reaps the child only when its stdin closes (cleanup), so nothing is left for
 * PID 1. A shell that reaps asynchronously (bash as sh) leaves no zombie; then the parent is `exec sleep`,
 * which never waits, and the zombie is left to PID 1 when the test ends.
 */
async function makeZombie(): Promise<{ pid: number; startTime: string }> {
  for (const script of ["sleep 60 & echo $!; read x; wait", "sleep 60 & echo $!; exec sleep 60"]) {
    const { parent, child } = await startParent(script);
    const exited = new Promise<void>((resolve) => parent.once("close", () => resolve()));
    cleanups.push(async () => {
      // End of input lets the shell's `wait` reap the zombie; the `exec sleep` parent has to be killed.
      parent.stdin?.end();
      if (script.includes("exec")) parent.kill("SIGKILL");
      await exited;
    });
    const startTime = processStartTime(child);
    if (startTime === null) throw new Error(`no start time for the child ${child}`);
    process.kill(child, "SIGKILL");
    if ((await settle(child, "Z")) === "reached") return { pid: child, startTime };
  }
  throw new Error("could not make a zombie process");
}

describe.skipIf(!HAS_PROC)("a lease held by a dead process (Linux /proc)", () => {
  it("a zombie holder (SIGKILLed, not reaped by its parent) is dead: its lease is free at once although signal 0 says it is alive", async () => {
    const zombie = await makeZombie();
    // What the old check saw: the zombie answers signal 0.
    expect(() => process.kill(zombie.pid, 0)).not.toThrow();
    expect(holderAlive(zombie.pid, zombie.startTime)).toBe(false);

    const db = openDb();
    const held = acquireLease(db, "t", 30_000, { pid: zombie.pid, startTime: zombie.startTime, host: hostname() });
    expect(held.acquired).toBe(true);
    expect(leaseHolder(db, "t")).toBeNull();
    const mine = acquireLease(db, "t", 30_000);
    expect(mine.acquired).toBe(true);
  });

  it("a lease row with a live pid but another start time (the pid was reused) is dead; with the holder's own start time it binds", () => {
    const db = openDb();
    const mine = processStartTime(process.pid);
    expect(mine).toMatch(/^\d+$/);
    const reused = String(Number(mine) + 1);
    expect(
      acquireLease(db, "reused", 30_000, { pid: process.pid, startTime: reused, holder: "old-holder" }).acquired,
    ).toBe(true);
    expect(leaseHolder(db, "reused")).toBeNull();
    expect(acquireLease(db, "reused", 30_000).acquired).toBe(true);

    expect(acquireLease(db, "same", 30_000, { pid: process.pid, holder: "first" }).acquired).toBe(true);
    const second = acquireLease(db, "same", 30_000, { holder: "second" });
    expect(second).toMatchObject({ acquired: false, heldBy: { holder: "first", pid: process.pid } });
  });

  it("reads state and start time past a command name with spaces and parentheses", () => {
    const stat = readProcessStat(process.pid);
    expect(stat).toMatchObject({
      kind: "found",
      state: expect.stringMatching(/^[A-Z]$/),
      startTime: expect.stringMatching(/^\d+$/),
    });
    const dir = mkdtempSync(path.join(tmpdir(), "candor-proc-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const fake = path.join(dir, "42");
    const fields = ["Z", ...Array.from({ length: 18 }, (_, i) => String(i)), "123456", "0"];
    mkdirSync(fake);
    writeFileSync(path.join(fake, "stat"), `42 (we (ird) name) ${fields.join(" ")}\n`);
    mkdirSync(path.join(dir, "self"));
    writeFileSync(path.join(dir, "self", "stat"), "1 (x) R\n");
    expect(readProcessStat(42, dir)).toEqual({ kind: "found", state: "Z", startTime: "123456" });
    expect(readProcessStat(43, dir)).toEqual({ kind: "gone" });
  });
});

describe("without /proc", () => {
  it("says nothing (unknown), so liveness falls back to signal 0", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "candor-noproc-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    expect(readProcessStat(process.pid, dir)).toEqual({ kind: "unknown" });
  });

  it("a lease from before start times were recorded (a table without the column) still binds its live holder, and gains the column", () => {
    const db = openDb();
    db.exec(
      `CREATE TABLE candor_leases (thread_id TEXT PRIMARY KEY, holder TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, expires_at INTEGER NOT NULL)`,
    );
    db.prepare(`INSERT INTO candor_leases VALUES ('old', 'h-1', ?, ?, ?)`).run(
      process.pid,
      hostname(),
      Date.now() + 30_000,
    );
    expect(leaseHolder(db, "old")).toMatchObject({ holder: "h-1", pid: process.pid });
    const columns = db.prepare(`PRAGMA table_info(candor_leases)`).all() as { name: string }[];
    expect(columns.map((c) => c.name)).toContain("pid_start");
  });
});
