/**
 * Issue 8 items 2, 5 and 9, below the CLI: where a database and its decision log may live, what a path that
 * cannot hold one says, and how a revision's confidence change is worded.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { decisionLogPath, openPersistence } from "../../src/memory/persistence.js";
import { ensureDirectory } from "../../src/paths.js";
import { confidenceChange } from "../../src/transparency/explain.js";
import { fileDecisionLog } from "../../src/transparency/decision-log.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "candor-defects-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function storageError(fn: () => unknown): CandorError {
  try {
    fn();
  } catch (e) {
    if (CandorError.hasCode(e, ErrorCode.STORAGE)) return e;
    throw e;
  }
  throw new Error("expected a STORAGE CandorError");
}

const LINUX = process.platform === "linux" && existsSync("/proc/self/stat");

describe("a --db path no database can live at fails at once (issue 8 item 2: recursive mkdir spun forever under /proc)", () => {
  it.skipIf(!LINUX).each(["/proc/self/nonexist/x.db", "/proc/foo/x.db", "/proc/x.db", "/sys/candor-test/x.db"])(
    "%s: STORAGE naming the kernel filesystem, nothing created",
    (dbPath) => {
      const e = storageError(() => openPersistence(dbPath));
      expect(e.message).toContain(dbPath);
      expect(e.message).toMatch(/is on (proc|sysfs), a kernel filesystem that cannot hold files/);
      expect(e.message).toContain("--db");
      expect(existsSync(path.dirname(dbPath))).toBe(dbPath === "/proc/x.db");
    },
  );

  it.skipIf(!LINUX)("a named pipe is refused instead of waiting forever for a reader", () => {
    const fifo = path.join(dir, "pipe.db");
    execFileSync("mkfifo", [fifo]);
    expect(storageError(() => openPersistence(fifo)).message).toContain(
      `"${fifo}" is a named pipe, not a regular file`,
    );
  });

  it("a character device is refused", () => {
    expect(storageError(() => openPersistence("/dev/null")).message).toContain(
      `"/dev/null" is a character device, not a regular file`,
    );
  });

  it("missing directories are made one level at a time below the nearest existing one", () => {
    const deep = path.join(dir, "a", "b", "c");
    ensureDirectory(deep);
    expect(existsSync(deep)).toBe(true);
    ensureDirectory(deep);
    writeFileSync(path.join(dir, "file"), "x");
    expect(() => ensureDirectory(path.join(dir, "file", "sub", "deeper"))).toThrow(
      `"${path.join(dir, "file")}" is a file, not a directory`,
    );
  });
});

describe("a database that is not one says so (issue 8 item 9: it was told to pass --db in a writable directory)", () => {
  it("a text file: not a SQLite file or corrupt, left as it is, and what to do", () => {
    const dbPath = path.join(dir, "notes.db");
    writeFileSync(dbPath, "these are my notes, not a database ".repeat(10));
    const e = storageError(() => openPersistence(dbPath));
    expect(e.message).toContain(`"${dbPath}" is not a usable Candor database`);
    expect(e.message).toContain("not a SQLite file or it is corrupt");
    expect(e.message).toContain("restore it from a backup");
    expect(e.message).not.toContain("directory you can write to");
  });
});

describe("the decision log (issue 8 items 5 and 9)", () => {
  it("two databases in one folder have two logs", () => {
    const a = fileDecisionLog(decisionLogPath(path.join(dir, "a.db")));
    const b = fileDecisionLog(decisionLogPath(path.join(dir, "b.db")));
    a.record({ operation: "plan", planId: "plan-a", input: "a", decision: "a", reasoning: "a" });
    b.record({ operation: "plan", planId: "plan-b", input: "b", decision: "b", reasoning: "b" });
    a.logger.flush();
    b.logger.flush();
    expect(existsSync(path.join(dir, "a.db.decisions.log"))).toBe(true);
    expect(existsSync(path.join(dir, "b.db.decisions.log"))).toBe(true);
    expect(existsSync(path.join(dir, "decisions.log"))).toBe(false);
  });

  it("a log path that is a directory is a STORAGE error that says what to do, not a bare EISDIR", () => {
    const file = decisionLogPath(path.join(dir, "candor.db"));
    mkdirSync(file);
    const e = storageError(() => fileDecisionLog(file));
    expect(e.message).toContain(`Cannot write the decision log "${file}": it is a directory (EISDIR), not a file`);
    expect(e.message).toContain("move what is at that path away, or pass --db");
  });
});

describe('a revision\'s confidence change (issue 8 item 9: "reduced from 0.85 to 0.85")', () => {
  it("says it stays when the shown values are equal, and says raised when it went up", () => {
    expect(confidenceChange(0.85, 0.85)).toBe("Plan confidence stays at 0.85.");
    expect(confidenceChange(0.851, 0.849)).toBe("Plan confidence stays at 0.85.");
    expect(confidenceChange(0.85, 0.75)).toBe("Plan confidence reduced from 0.85 to 0.75.");
    expect(confidenceChange(0.61, 0.85)).toBe("Plan confidence raised from 0.61 to 0.85.");
  });
});
