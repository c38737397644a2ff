import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { acquireLease, leaseHolder, releaseLease, renewLease } from "../../src/memory/lease.js";

let dirs: string[] = [];
let dbs: Database.Database[] = [];
afterEach(() => {
  for (const db of dbs) if (db.open) db.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
  dbs = [];
});

function open(file?: string): { db: Database.Database; file: string } {
  let f = file;
  if (!f) {
    const dir = mkdtempSync(path.join(tmpdir(), "candor-lease-"));
    dirs.push(dir);
    f = path.join(dir, "candor.db");
  }
  const db = new Database(f, { timeout: 5000 });
  db.pragma("journal_mode = WAL");
  dbs.push(db);
  return { db, file: f };
}

const T0 = 1_800_000_000_000;
/** Fake pids are not running processes: say they are, unless a test is about dead holders. */
const alive = () => true;

describe("thread leases", () => {
  it("takes a free lease, refuses it while held (naming the holder's pid and expiry), and takes it after expiry", () => {
    const { db } = open();
    const a = acquireLease(db, "t1", 30_000, { pid: 111, now: T0, isAlive: alive });
    expect(a.acquired).toBe(true);
    const b = acquireLease(db, "t1", 30_000, { pid: 222, now: T0 + 29_999, isAlive: alive });
    expect(b).toEqual({
      acquired: false,
      heldBy: {
        holder: expect.stringMatching(/^111-[0-9a-f]{12}$/),
        pid: 111,
        host: expect.any(String),
        expiresAt: T0 + 30_000,
      },
    });
    const c = acquireLease(db, "t1", 30_000, { pid: 222, now: T0 + 30_000, isAlive: alive });
    expect(c.acquired).toBe(true);
    expect(leaseHolder(db, "t1", { now: T0 + 30_001, isAlive: alive })?.pid).toBe(222);
  });

  it("a holder on this host whose process is gone (kill -9) frees the lease before it expires; one on another host does not", () => {
    const { db } = open();
    expect(acquireLease(db, "t1", 30_000, { pid: 111, host: "here", now: T0 }).acquired).toBe(true);
    const dead = (pid: number) => pid !== 111;
    expect(acquireLease(db, "t1", 30_000, { pid: 222, host: "here", now: T0 + 1, isAlive: dead }).acquired).toBe(true);
    expect(
      acquireLease(db, "t1", 30_000, { pid: 333, host: "elsewhere", now: T0 + 2, isAlive: () => false }).acquired,
    ).toBe(false);
    // The real check: this test process is alive.
    expect(acquireLease(db, "t2", 30_000, { now: T0 }).acquired).toBe(true);
    expect(acquireLease(db, "t2", 30_000, { pid: 1, now: T0 + 1 }).acquired).toBe(false);
  });

  it("leases are per thread", () => {
    const { db } = open();
    expect(acquireLease(db, "t1", 30_000, { now: T0 }).acquired).toBe(true);
    expect(acquireLease(db, "t2", 30_000, { now: T0 }).acquired).toBe(true);
  });

  it("release frees the thread at once; releasing a lease another process has since taken leaves theirs alone", () => {
    const { db } = open();
    const a = acquireLease(db, "t1", 30_000, { now: T0 });
    if (!a.acquired) throw new Error("expected the lease");
    releaseLease(db, a.lease);
    expect(leaseHolder(db, "t1", { now: T0 })).toBeNull();
    const b = acquireLease(db, "t1", 30_000, { pid: 7, now: T0 });
    expect(b.acquired).toBe(true);
    releaseLease(db, a.lease);
    expect(leaseHolder(db, "t1", { now: T0, isAlive: alive })?.pid).toBe(7);
  });

  it("renew extends only a lease still held; a lost lease reports false", () => {
    const { db } = open();
    const a = acquireLease(db, "t1", 30_000, { now: T0 });
    if (!a.acquired) throw new Error("expected the lease");
    expect(renewLease(db, a.lease, 30_000, T0 + 20_000)).toBe(true);
    expect(a.lease.expiresAt).toBe(T0 + 50_000);
    expect(acquireLease(db, "t1", 30_000, { now: T0 + 40_000, pid: 5 }).acquired).toBe(false);
    expect(acquireLease(db, "t1", 30_000, { now: T0 + 50_000 }).acquired).toBe(true);
    expect(renewLease(db, a.lease, 30_000, T0 + 50_001)).toBe(false);
  });

  it("two connections to one file see each other's lease", () => {
    const first = open();
    const second = open(first.file);
    const now = Date.now();
    const a = acquireLease(first.db, "shared", 30_000, { now });
    expect(a.acquired).toBe(true);
    const b = acquireLease(second.db, "shared", 30_000, { now: now + 1 });
    expect(b.acquired).toBe(false);
    if (a.acquired) releaseLease(first.db, a.lease);
    expect(acquireLease(second.db, "shared", 30_000, { now: now + 2 }).acquired).toBe(true);
  });

  it("while one connection holds a write transaction, the other waits for it rather than reading a stale row", () => {
    const first = open();
    const second = open(first.file);
    second.db.pragma("busy_timeout = 50");
    leaseHolder(first.db, "t");
    first.db.exec("BEGIN IMMEDIATE");
    expect(() => acquireLease(second.db, "t", 30_000)).toThrow(/locked|busy/i);
    first.db.exec("COMMIT");
    expect(acquireLease(second.db, "t", 30_000).acquired).toBe(true);
  });
});
