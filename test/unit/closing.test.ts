import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { closeAfterFailure, closeInTurn, closing, takeSecondaryFailures } from "../../src/cli/closing.js";
import { runCli } from "../../src/cli/program.js";
import { readEnv } from "../../src/env.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { openPersistence } from "../../src/memory/persistence.js";

/*
 * Issue 24: `finally { await session.close() }` let a failure while closing replace the error the command had
 * failed with, so the user was told about the close and never about what went wrong first.
 */

const control = vi.hoisted(() => ({ failClose: false, closed: 0 }));

// Every database the CLI opens in this file closes with a failure while `control.failClose` is set.
vi.mock("../../src/memory/persistence.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/memory/persistence.js")>();
  return {
    ...real,
    openDatabase: async (...args: Parameters<typeof real.openDatabase>) => {
      const p = await real.openDatabase(...args);
      const close = p.close.bind(p);
      return Object.assign(p, {
        close: async () => {
          await close();
          control.closed += 1;
          if (control.failClose) throw new Error("simulated: the connection would not close");
        },
      });
    },
  };
});

const dirs: string[] = [];
afterEach(() => {
  control.failClose = false;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function existingDb(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "candor-closing-"));
  dirs.push(dir);
  const db = path.join(dir, "candor.db");
  openPersistence(db).close();
  return db;
}

async function cli(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(
    argv,
    { out: (t) => void (stdout += `${t}\n`), err: (t) => void (stderr += `${t}\n`), invokedAs: "candor" },
    () => readEnv({}),
  );
  return { code, stdout, stderr };
}

const failingClose = () => ({
  close: () => Promise.reject(new Error("simulated: the connection would not close")),
});

describe("closing", () => {
  it("rethrows the body's own error, the close failure riding with it as a secondary failure", async () => {
    const first = new CandorError("the body failed", ErrorCode.INVALID_REQUEST);
    const thrown = await closing(failingClose(), () => Promise.reject(first), { where: "/x/candor.db" }).catch(
      (e: unknown) => e,
    );
    expect(thrown).toBe(first);
    const also = takeSecondaryFailures(first);
    expect(also.map((e) => e.code)).toEqual([ErrorCode.STORAGE_CLOSE_FAILED]);
    expect(also[0]?.message).toMatch(
      /^Closing the database \(\/x\/candor\.db\) failed after the command's work: simulated/,
    );
    expect(takeSecondaryFailures(first)).toEqual([]);
  });

  it("a close failure alone is thrown as what it is: a storage fault when it is one, else STORAGE_CLOSE_FAILED", async () => {
    await expect(closing(failingClose(), async () => 42)).rejects.toMatchObject({
      code: ErrorCode.STORAGE_CLOSE_FAILED,
    });
    const full = { close: () => Promise.reject(Object.assign(new Error("no space left"), { code: "ENOSPC" })) };
    await expect(closing(full, async () => 42, { where: "/x/candor.db" })).rejects.toMatchObject({
      code: ErrorCode.STORAGE_FULL,
    });
    await expect(closing({ close: () => undefined }, async () => 42)).resolves.toBe(42);
  });

  it("closeAfterFailure closes and rethrows the error it was given", async () => {
    let closed = false;
    const first = new Error("opened, then failed");
    await expect(closeAfterFailure({ close: () => void (closed = true) }, first)).rejects.toBe(first);
    expect(closed).toBe(true);
  });
});

describe("a command whose database fails to close", () => {
  it("after the command failed: its own error is said and decides the exit; the close failure follows it", async () => {
    const db = existingDb();
    control.failClose = true;
    const out = await cli(["memory", "revoke", "adj-missing", "--db", db, "--json"]);
    expect(out.code).toBe(2);
    const [first, also] = out.stderr.trim().split("\n");
    expect(first).toMatch(/^There is no adjustment "adj-missing"/);
    expect(also).toMatch(/^Also: Closing the database \(.*candor\.db\) failed after the command's work: simulated/);
    expect(JSON.parse(out.stdout)).toMatchObject({
      error: { code: ErrorCode.INVALID_REQUEST, also: [{ code: ErrorCode.STORAGE_CLOSE_FAILED }] },
    });
  });

  it("after the command succeeded: the close failure is said with its own message, exit 5", async () => {
    const db = existingDb();
    control.failClose = true;
    const closedBefore = control.closed;
    const out = await cli(["metrics", "--db", db]);
    expect(control.closed).toBe(closedBefore + 1);
    expect(out.stdout).toMatch(/^Metrics for 0 users/);
    expect(out.code).toBe(5);
    expect(out.stderr.trim()).toMatch(
      /^Closing the database \(.*candor\.db\) failed after the command's work: simulated/,
    );
  });

  it("closing without a failure changes nothing", async () => {
    const out = await cli(["metrics", "--db", existingDb()]);
    expect(out.code).toBe(0);
    expect(out.stderr).toBe("");
  });
});

describe("closeInTurn (a session's parts: the decision log, the MCP servers, the database)", () => {
  it("closes every part in order whatever the ones before did, and throws the first failure with the later ones riding", async () => {
    const order: string[] = [];
    const part = (name: string, fails: boolean) => ({
      what: name,
      close: async () => {
        order.push(name);
        if (fails) throw new Error(`${name} would not close`);
      },
    });
    const thrown = await closeInTurn([
      part("the decision log", true),
      part("the MCP servers", false),
      part("the database", true),
    ]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(order).toEqual(["the decision log", "the MCP servers", "the database"]);
    expect(thrown).toMatchObject({ code: ErrorCode.STORAGE_CLOSE_FAILED });
    expect((thrown as Error).message).toMatch(
      /^Closing the decision log failed after the command's work: the decision log would not close/,
    );
    expect(takeSecondaryFailures(thrown).map((e) => e.message)).toEqual([
      expect.stringMatching(/^Closing the database failed after the command's work: the database would not close/),
    ]);
  });

  it("is not wrapped a second time when what holds the parts is closed by `closing`", async () => {
    const session = {
      close: () => closeInTurn([{ what: "the MCP servers", close: () => Promise.reject(new Error("stuck")) }]),
    };
    const thrown = await closing(session, async () => "done").then(
      () => null,
      (e: unknown) => e,
    );
    expect((thrown as Error).message).toMatch(/^Closing the MCP servers failed after the command's work: stuck\./);
  });
});
