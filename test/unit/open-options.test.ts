import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { openDatabase, openPersistence } from "../../src/memory/persistence.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDb(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "candor-open-options-"));
  dirs.push(dir);
  return path.join(dir, "candor.db");
}

describe("openDatabase / openPersistence take the storage bounds", () => {
  it("bounds.maxStoredValueBytes reaches the SQLite store: a put over it is refused with the bound named", async () => {
    const p = await openDatabase(tempDb(), { bounds: { maxStoredValueBytes: 2048 } });
    try {
      await p.store.put(["u", "notes"], "small", { text: "x".repeat(1000) });
      await expect(p.store.put(["u", "notes"], "big", { text: "y".repeat(3000) })).rejects.toMatchObject({
        code: ErrorCode.LIMIT_EXCEEDED,
        message: expect.stringMatching(/^The value for "big" in \[u, notes\] is 3,011 bytes, over the 2,048 bytes/),
      });
      expect(await p.store.get(["u", "notes"], "big")).toBeNull();
      expect((await p.store.get(["u", "notes"], "small"))?.value).toEqual({ text: "x".repeat(1000) });
    } finally {
      await p.close();
    }
  });

  it("without options the default bound (16 MiB) holds, as before", async () => {
    const p = openPersistence(tempDb());
    try {
      await p.store.put(["u", "notes"], "mid", { text: "y".repeat(3000) });
      await expect(p.store.put(["u", "notes"], "big", { text: "y".repeat(17 * 1024 * 1024) })).rejects.toMatchObject({
        code: ErrorCode.LIMIT_EXCEEDED,
        details: { limit: 16 * 1024 * 1024 },
      });
    } finally {
      p.close();
    }
  });
});
