import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { decisionLogPath, openPersistence } from "../../src/memory/persistence.js";
import { tempDir } from "../fakes/graph-harness.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());
const MiB = 1024 * 1024;

/*
 * The bounds a database is opened with reach every part that keeps what a run made: the effect ledger keeps a tool
 * result up to maxToolResultBytes (a raised bound kept the result whole in the checkpoint but cut in the ledger, so
 * a resumed step reused a shorter result), and the decision log writes lines up to maxLogLineBytes.
 */
describe("openPersistence's bounds reach the ledger and the decision log", () => {
  const key = { threadId: "t", stepId: "read", dispatch: 1, attempt: 1 };
  const big = { text: "x".repeat(2 * MiB) };

  async function keptOf(file: string, bounds?: { maxToolResultBytes: number }) {
    const p = openPersistence(path.join(tmp.dir, file), bounds ? { bounds } : {});
    try {
      await p.ledger.recordStarted(key, "read_file", { path: "big.txt" });
      await p.ledger.recordDone(key, "read_file", { path: "big.txt" }, big);
      return (await p.ledger.lookup(key))?.result;
    } finally {
      p.close();
    }
  }

  it("the ledger keeps a result whole under a raised maxToolResultBytes, and cuts it under the default", async () => {
    expect(await keptOf("raised.db", { maxToolResultBytes: 4 * MiB })).toEqual(big);
    expect(await keptOf("default.db")).toMatchObject({ truncated: true });
  });

  it("the decision log writes a line up to a raised maxLogLineBytes, and cuts it at the default", async () => {
    const lineOf = async (file: string, maxLogLineBytes?: number) => {
      const dbPath = path.join(tmp.dir, file);
      const p = openPersistence(dbPath, maxLogLineBytes ? { bounds: { maxLogLineBytes } } : {});
      const log = p.decisions.open("info");
      log.record({ operation: "plan", planId: "p", input: "i", decision: "d", reasoning: "r".repeat(100_000) });
      await log.flush();
      p.close();
      return readFileSync(decisionLogPath(dbPath), "utf8").trim();
    };
    expect(Buffer.byteLength(await lineOf("log-raised.db", 256 * 1024))).toBeGreaterThan(100_000);
    expect(Buffer.byteLength(await lineOf("log-default.db"))).toBeLessThanOrEqual(64 * 1024);
  });
});
