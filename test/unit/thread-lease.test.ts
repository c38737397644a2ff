import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import type { Session } from "../../src/cli/session.js";
import { whileHolding } from "../../src/cli/thread-lease.js";
import { acquireLease, leaseHolder, sqliteLeases } from "../../src/memory/lease.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

/** whileHolding needs only the session's leases; the rest of a Session is not touched. */
function sessionOnTempDb(): { session: Session; db: Database.Database } {
  const dir = mkdtempSync(path.join(tmpdir(), "candor-hold-"));
  const db = new Database(path.join(dir, "candor.db"));
  cleanups.push(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { session: { persistence: { leases: sqliteLeases(db) } } as unknown as Session, db };
}

function io(): CliIo & { errors: string[] } {
  const errors: string[] = [];
  return { errors, out: () => undefined, err: (t) => errors.push(t), env: {}, invokedAs: "candor" };
}

describe("whileHolding (one writer per thread, for every command that writes)", () => {
  it("runs the body holding the lease and gives it back when the body ends", async () => {
    const { session, db } = sessionOnTempDb();
    const during = await whileHolding<number | string | null>(
      session,
      "t1",
      io(),
      () => "busy",
      async (signal) => {
        expect(signal.aborted).toBe(false);
        return leaseHolder(db, "t1")?.pid ?? null;
      },
    );
    expect(during).toBe(process.pid);
    expect(leaseHolder(db, "t1")).toBeNull();
  });

  it("gives the lease back when the body throws, and lets the error through", async () => {
    const { session, db } = sessionOnTempDb();
    await expect(
      whileHolding(
        session,
        "t1",
        io(),
        () => "busy",
        async () => Promise.reject(new Error("boom")),
      ),
    ).rejects.toThrow("boom");
    expect(leaseHolder(db, "t1")).toBeNull();
  });

  it("when another process holds the thread, says so and returns busy() without running the body", async () => {
    const { session, db } = sessionOnTempDb();
    // A live process on this machine (a dead one's lease would be freed at once): this test's parent.
    const other = process.ppid;
    expect(acquireLease(db, "t1", 30_000, { pid: other }).acquired).toBe(true);
    const out = io();
    let ran = false;
    const result = await whileHolding(
      session,
      "t1",
      out,
      () => "busy",
      async () => {
        ran = true;
        return "ran";
      },
    );
    expect(result).toBe("busy");
    expect(ran).toBe(false);
    expect(out.errors.join("\n")).toMatch(new RegExp(`^Thread t1 is busy: another process \\(pid ${other}\\)`));
    expect(leaseHolder(db, "t1")?.pid).toBe(other);
  });
});
