import { describe, expect, it } from "vitest";
import { runCli, perTest, STACK_LINE } from "./helpers.js";

const TRIP = "Plan a 2-day trip from Paris to Rome for 1 person";
const LONG = 120_000;
const { freshDb } = perTest();

describe("candor feedback (issue 12 item 1)", () => {
  it(
    "rejects a finished run with a reason, says it reflects at once, and refuses an unknown thread",
    { timeout: LONG },
    async () => {
      const db = freshDb();
      expect((await runCli(["run", TRIP, "--db", db, "--thread", "t1", "--user", "ana"])).code).toBe(0);
      const rejected = await runCli(["feedback", "t1", "--reject", "the hotel was shabby", "--db", db]);
      expect(rejected.code).toBe(0);
      expect(rejected.stdout).toContain("Recorded: you rejected run t1. Reflecting on it now…");
      expect(rejected.stdout).toMatch(/Reflection refl-\w+ \(rules, quality [\d.]+/);
      expect(rejected.stdout).toMatch(
        /Adjustment adj-\w+ is proposed: search_hotels priority 'recommended' → 'quality'/,
      );
      const unknown = await runCli(["feedback", "nope", "--accept", "--db", db]);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/There is no thread "nope"/);
      expect(unknown.stderr).not.toMatch(STACK_LINE);
      const both = await runCli(["feedback", "t1", "--db", db]);
      expect(both.code).toBe(2);
      expect(both.stderr).toMatch(/exactly one of --accept or --reject/);
    },
  );
});
