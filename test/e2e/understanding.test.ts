import { describe, expect, it } from "vitest";
import { perTest, runCli } from "./helpers.js";

const LONG = 120_000;
const { freshDb } = perTest();

describe("the CLI never exits 0 while part of a request was dropped, changed or not understood", () => {
  it.each([
    ["find flights from Madrid to Paris and translate the restaurant menu into German", /no tool can translate/],
    ["Rome from Paris for -2 people, 3 days", /-2 travellers cannot travel/],
    ["3 days in Rome from Paris, 2000 pesos", /names more than one currency/],
  ])(
    "asks first (exit 3, the part named), and an approved run ends partial (exit 4): %s",
    { timeout: LONG },
    async (text, named) => {
      const db = freshDb();
      const asked = await runCli(["run", text, "--db", db, "--thread", "t", "--no-input", "--json"]);
      expect(asked.code, asked.stderr).toBe(3);
      const out = JSON.parse(asked.stdout) as {
        understanding: { by: string; parts: unknown[] };
        waitingFor: { kind: string; openQuestions: string[] };
      };
      expect(out.understanding.by).toBe("rules");
      expect(out.waitingFor.kind).toBe("plan_approval");
      expect(out.waitingFor.openQuestions.join(" ")).toMatch(named);
      const approved = await runCli(["resume", "t", "--approve", "--db", db]);
      // A refused value makes its steps fail (they are never run with a changed value): the run ends not completed.
      expect(approved.code, approved.stderr).not.toBe(0);
      expect([3, 4]).toContain(approved.code);
    },
  );

  it.each([
    ["summarize README.md", /Summary of README\.md \(\d+ section\(s\)\):\n\s+Candor — /],
    ["3 days in Paris from Madrid for 2, no hotel", /Understood "no hotel": no hotel, so no step does it/],
    [
      "4 days in Rome from London, €1,500",
      /Changed budget: 1500 EUR → \$1,705 \(€1,500 taken as \$1,705 at the table's rate of 1 EUR = 1\.1368 USD \(rates of 2025-06-02/,
    ],
  ])(
    "a request understood whole completes (exit 0) and says how it read it: %s",
    { timeout: LONG },
    async (text, shown) => {
      const r = await runCli(["run", text, "--db", freshDb(), "--no-input"]);
      expect(r.code, r.stderr).toBe(0);
      expect(`${r.stderr}\n${r.stdout}`).toMatch(shown);
    },
  );
});
