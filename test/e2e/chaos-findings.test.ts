import { describe, expect, it } from "vitest";
import { perTest, runCli, STACK_LINE } from "./helpers.js";

// Regression tests for defects the chaos suite's long run found (bench/CHAOS.md, findings D and E).
const { freshDb } = perTest();

describe("chaos findings", () => {
  it("D: a request starting with a dash says how to pass it (after --, flags first), and that command works", async () => {
    const db = freshDb();
    const refused = await runCli(["run", "-7 days in Lisbon from Madrid", "--db", db]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`run --db ${db} -- "-7 days in Lisbon from Madrid"`);
    expect(refused.stderr).not.toMatch(STACK_LINE);
    const taken = await runCli(["run", "--db", db, "--no-input", "--", "-7 days in Lisbon from Madrid"]);
    expect([3, 4]).toContain(taken.code);
    expect(taken.stderr).toContain("request:   -7 days in Lisbon from Madrid");
  });

  it("E: resume of a finished thread with --json prints the outcome as one JSON object on stdout", async () => {
    const db = freshDb();
    expect(
      (await runCli(["run", "Plan a 2-day trip from Paris to Rome for 1 person", "--thread", "done", "--db", db])).code,
    ).toBe(0);
    const again = await runCli(["resume", "done", "--json", "--db", db]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ threadId: "done", status: "completed" });
  });
});
