import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { connectPostgres } from "../../src/memory/postgres.js";
import { limitsOf } from "../../src/tools/limits.js";
import { postgresDatabase } from "./helpers.js";

describe("bounds on stored data hold on PostgreSQL too", () => {
  it("a store value over the bound is refused, and the ledger keeps only the head of a large result, marked truncated", async () => {
    const p = connectPostgres(postgresDatabase());
    try {
      await expect(p.store.put(["u", "notes"], "big", { text: "y".repeat(17 * 1024 * 1024) })).rejects.toMatchObject({
        code: ErrorCode.LIMIT_EXCEEDED,
        message: expect.stringMatching(
          /^The value for "big" in \[u, notes\] is 17,825,803 bytes, over the 16,777,216 bytes a stored value may have/,
        ),
      });
      expect(await p.store.get(["u", "notes"], "big")).toBeNull();
      const key = { threadId: "t", stepId: "s", dispatch: 0, attempt: 1 };
      await p.ledger.recordDone(key, "fetch_data", {}, { text: "z".repeat(2 * 1024 * 1024) });
      const kept = (await p.ledger.lookup(key))?.result;
      expect(limitsOf(kept)).toHaveLength(1);
      expect(limitsOf(kept)[0]?.message).toMatch(
        /^the tool's result was 2,097,163 bytes, over the 1,048,576 bytes kept/,
      );
    } finally {
      await p.close();
    }
  });
});

describe("the bound on stored values is settable when PostgreSQL is opened", () => {
  it("connectPostgres's bounds.maxStoredValueBytes reaches the store", async () => {
    const p = connectPostgres(postgresDatabase(), { bounds: { maxStoredValueBytes: 2048 } });
    try {
      await p.store.put(["u", "notes"], "small", { text: "x".repeat(1000) });
      await expect(p.store.put(["u", "notes"], "big", { text: "y".repeat(3000) })).rejects.toMatchObject({
        code: ErrorCode.LIMIT_EXCEEDED,
        details: { limit: 2048 },
      });
      await expect(
        p.store.batch([{ namespace: ["u", "notes"], key: "big2", value: { text: "y".repeat(3000) } }]),
      ).rejects.toMatchObject({ code: ErrorCode.LIMIT_EXCEEDED, details: { limit: 2048 } });
      expect(await p.store.get(["u", "notes"], "big")).toBeNull();
    } finally {
      await p.close();
    }
  });
});
