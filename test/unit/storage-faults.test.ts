import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { emptyCheckpoint } from "@langchain/langgraph-checkpoint";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/program.js";
import { readEnv } from "../../src/env.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { openPersistence, sqliteDecisionJournal } from "../../src/memory/persistence.js";
import { storageFault } from "../../src/memory/storage-faults.js";
import { runCli as runCliProcess } from "../e2e/helpers.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDb(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "candor-faults-"));
  dirs.push(dir);
  return path.join(dir, "candor.db");
}

/** `candor …` in this process, its output collected. */
async function candor(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    args,
    { out: (t) => void out.push(t), err: (t) => void err.push(t), invokedAs: "candor" },
    () => readEnv({}),
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/** A database of a few hundred KB: store items and checkpoints, as runs leave them. */
async function filledDatabase(file: string): Promise<void> {
  const p = openPersistence(file);
  try {
    for (let i = 0; i < 150; i++) await p.store.put(["u", "episodes"], `e${i}`, { text: "x".repeat(2000), i });
    await p.checkpointer.put({ configurable: { thread_id: "t1", checkpoint_ns: "" } }, emptyCheckpoint(), {
      source: "input",
      step: -1,
      parents: {},
    });
  } finally {
    p.close();
  }
  // Fold the WAL into the file, so the damage below lands on pages the database reads.
  const db = new Database(file);
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
}

/** Writes 16 KB of garbage in the middle of the file, as the issue's attack did. */
function damage(file: string): void {
  const middle = Math.floor(statSync(file).size / 2 / 4096) * 4096;
  const fd = openSync(file, "r+");
  try {
    const garbage = Buffer.alloc(16 * 1024);
    for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 7919 + 13) & 0xff;
    writeSync(fd, garbage, 0, garbage.length, middle);
  } finally {
    closeSync(fd);
  }
}

/**
 * A real full disk: a tmpfs of `size` mounted on a temp folder, or null when this process may not mount one (not
 * root, or a container without CAP_SYS_ADMIN), in which case the tests that need it are skipped.
 */
function tinyDisk(size: string): { dir: string; grow(size: string): void; unmount(): void } | null {
  const dir = mkdtempSync(path.join(tmpdir(), "candor-full-"));
  dirs.push(dir);
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "ignore" });
  } catch {
    return null; // no permission to mount: the caller skips
  }
  return {
    dir,
    grow: (to) => execFileSync("mount", ["-o", `remount,size=${to}`, dir], { stdio: "ignore" }),
    // Lazy: a file the test left open (a log's descriptor) must not keep the mount busy.
    unmount: () => execFileSync("umount", ["-l", dir], { stdio: "ignore" }),
  };
}

const probe = tinyDisk("4k");
probe?.unmount();
const TRIP = "Plan a 3-day trip from Madrid to Paris for 2 people";

describe.skipIf(probe === null)("a real full disk (a small tmpfs; needs permission to mount)", () => {
  it("a run that fills the disk exits 5 with STORAGE_FULL; once there is room, threads lists it and resume finishes it", async () => {
    // Regression: "Internal error: database or disk is full".
    const disk = tinyDisk("220k")!;
    try {
      const db = path.join(disk.dir, "candor.db");
      const run = await runCliProcess(["run", TRIP, "--db", db, "--thread", "full-1", "--no-input", "--json"]);
      expect(run.code, run.stderr).toBe(5);
      expect(JSON.parse(run.stdout)).toMatchObject({ error: { code: ErrorCode.STORAGE_FULL } });
      expect(run.stderr).toContain(`The database "${db}" cannot grow: the disk is full`);
      expect(run.stderr).not.toContain("Internal error");
      disk.grow("20m");
      const threads = await runCliProcess(["threads", "--db", db]);
      expect(threads.code, threads.stderr).toBe(0);
      expect(threads.stdout).toContain("full-1");
      const resumed = await runCliProcess(["resume", "full-1", "--db", db, "--no-input"]);
      expect(resumed.code, resumed.stderr).toBe(0);
    } finally {
      disk.unmount();
    }
  });

  it("a decision-log line that does not fit on the disk is STORAGE_FULL naming the log, not an internal error", () => {
    const disk = tinyDisk("8k")!;
    try {
      const db = path.join(disk.dir, "candor.db");
      const journal = sqliteDecisionJournal(db);
      const log = journal.open("info");
      const fill = openSync(path.join(disk.dir, "filler"), "w");
      try {
        writeSync(fill, Buffer.alloc(64 * 1024));
      } catch {
        // the disk is full now, which is the point
      } finally {
        closeSync(fill);
      }
      let thrown: unknown;
      try {
        log.record({ operation: "plan", planId: "p", input: "x".repeat(8192), decision: "d", reasoning: "r" });
      } catch (e) {
        thrown = e;
      }
      expect(CandorError.hasCode(thrown, ErrorCode.STORAGE_FULL), String(thrown)).toBe(true);
      expect((thrown as Error).message).toMatch(
        /^The decision log ".*candor\.db\.decisions\.log" cannot grow: the disk is full/,
      );
    } finally {
      disk.unmount();
    }
  });

  it("a disk too full for SQLite's shared-memory file: its bare 'disk I/O error' is said to be the full disk it is", async () => {
    const disk = tinyDisk("12k")!;
    try {
      const run = await runCliProcess(["run", TRIP, "--db", path.join(disk.dir, "candor.db"), "--no-input"]);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stderr).toMatch(/cannot grow: the disk is full \(disk I\/O error, with \d+ bytes free on its disk\)/);
    } finally {
      disk.unmount();
    }
  });
});

describe("storage faults are named, with exit 5, and a damaged database is not written to", () => {
  it("16 KB of garbage in the middle of the file: every command exits 5 with STORAGE_DAMAGED and the file is left as it was", async () => {
    // Regression: `run` wrote into such a file and exited 0, and other commands said "Internal error: database disk image is malformed".
    const file = tempDb();
    await filledDatabase(file);
    damage(file);
    const before = readFileSync(file);
    for (const args of [
      ["threads", "--db", file],
      ["run", "count the words in README.md", "--db", file, "--no-input"],
      ["history", "t1", "--db", file],
      ["memory", "--db", file],
    ]) {
      const r = await candor([...args, "--json"]);
      expect(r.code, `${args[0]}: ${r.err}`).toBe(5);
      expect(r.err).toMatch(
        /^The database ".*candor\.db" is damaged \(SQLite's quick_check found this when it was opened, before Candor wrote anything to it: /,
      );
      expect(r.err).toContain(
        "Restore it from a backup, or save what SQLite can still read with `sqlite3 <file> .recover",
      );
      expect(r.err).not.toContain("Internal error");
      expect(JSON.parse(r.out)).toMatchObject({ error: { code: ErrorCode.STORAGE_DAMAGED } });
    }
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it("a full disk during a checkpoint write is STORAGE_FULL naming the file and saying how to continue", async () => {
    const file = tempDb();
    const p = openPersistence(file);
    try {
      const ledger = p.ledger; // its table made while there is room
      // SQLite's own size cap gives the same SQLITE_FULL a full disk does.
      p.store.db.pragma(`max_page_count = ${p.store.db.pragma("page_count", { simple: true }) as number}`);
      const big = { ...emptyCheckpoint(), channel_values: { blob: "y".repeat(200_000) } };
      const write = p.checkpointer.put({ configurable: { thread_id: "t", checkpoint_ns: "" } }, big, {
        source: "input",
        step: -1,
        parents: {},
      });
      const e = await write.then(
        () => null,
        (x: unknown) => x,
      );
      expect(CandorError.hasCode(e, ErrorCode.STORAGE_FULL), String(e)).toBe(true);
      expect((e as Error).message).toContain(
        `The database "${file}" cannot grow: the disk is full (database or disk is full)`,
      );
      expect((e as Error).message).toContain("candor resume <thread>");
      // The store and the ledger say the same.
      await expect(p.store.put(["u"], "k", { v: "z".repeat(200_000) })).rejects.toMatchObject({
        code: ErrorCode.STORAGE_FULL,
      });
      await expect(
        ledger.recordDone({ threadId: "t", stepId: "s", dispatch: 0, attempt: 0 }, "x", {}, "r".repeat(200_000)),
      ).rejects.toMatchObject({ code: ErrorCode.STORAGE_FULL });
    } finally {
      p.close();
    }
  });

  it("a read-only database is STORAGE_READ_ONLY, with what to make writable", () => {
    const file = tempDb();
    new Database(file).exec("CREATE TABLE t (x)");
    const ro = new Database(file, { readonly: true });
    let raw: unknown;
    try {
      ro.exec("INSERT INTO t VALUES (1)");
    } catch (e) {
      raw = e;
    } finally {
      ro.close();
    }
    const fault = storageFault(raw, file);
    expect(fault?.code).toBe(ErrorCode.STORAGE_READ_ONLY);
    expect(fault?.message).toMatch(
      /^The database ".*" is read-only for this process \(attempt to write a readonly database\)/,
    );
    expect(fault?.message).toContain("-wal and -shm files beside it writable");
  });

  it("a lock held past the busy timeout is STORAGE_BUSY, and a disk error STORAGE_IO_ERROR, each naming the file", () => {
    const file = tempDb();
    const holder = new Database(file);
    holder.exec("CREATE TABLE t (x)");
    holder.exec("BEGIN EXCLUSIVE");
    const waiter = new Database(file, { timeout: 0 });
    let raw: unknown;
    try {
      waiter.exec("INSERT INTO t VALUES (1)");
    } catch (e) {
      raw = e;
    } finally {
      waiter.close();
      holder.exec("ROLLBACK");
      holder.close();
    }
    const busy = storageFault(raw, file);
    expect(busy?.code).toBe(ErrorCode.STORAGE_BUSY);
    expect(busy?.message).toBe(
      `The database "${file}" stayed locked by another process for longer than Candor waits (database is locked). Try again once the other command is done; an unfinished thread continues with \`candor resume <thread>\`.`,
    );
    const io = storageFault(Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_READ" }), file);
    expect(io?.code).toBe(ErrorCode.STORAGE_IO_ERROR);
    expect(io?.message).toMatch(
      /^The database ".*" could not be read or written: the disk reported an error \(disk I\/O error\)/,
    );
    const nospc = storageFault(Object.assign(new Error("disk full"), { code: "SQLITE_IOERR_NOSPC" }), file);
    expect(nospc?.code).toBe(ErrorCode.STORAGE_FULL);
  });

  it("a PostgreSQL query left unanswered past the pool's query_timeout (a network partition) is a lost connection", () => {
    // pg's own error when the server stops answering without closing the socket: the pools set query_timeout and
    // keepAlive (src/memory/postgres.ts), so a partition ends the command instead of hanging it.
    const where = "postgres://candor@db.internal:5432/candor";
    const lost = storageFault(new Error("Query read timeout"), where);
    expect(lost?.code).toBe(ErrorCode.STORAGE_CONNECTION_LOST);
    expect(lost?.message).toContain(where);
  });

  it("an OS error code away from a database call (a tool's EACCES, a model's ECONNRESET) is not called a database fault", () => {
    const eacces = Object.assign(new Error("EACCES: permission denied, open 'notes.txt'"), { code: "EACCES" });
    const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    expect(storageFault(eacces)).toBeNull();
    expect(storageFault(reset)).toBeNull();
    expect(
      storageFault(new CandorError("cannot read the prices file", ErrorCode.CONFIGURATION, { cause: eacces })),
    ).toBeNull();
    // At a database call they are.
    expect(storageFault(eacces, "/x/candor.db")?.code).toBe(ErrorCode.STORAGE_READ_ONLY);
    expect(storageFault(reset, "postgres://u@h/db")?.code).toBe(ErrorCode.STORAGE_CONNECTION_LOST);
  });
});
