import { describe, expect, it } from "vitest";
import { perTest, runCli } from "./helpers.js";

const LONG = 120_000;
const { freshDb } = perTest();

describe("the CLI on the workspace: counting questions, named folders, and folders outside it", () => {
  // Bug: "how many lines …" answered with a character count; "list the files in src" listed the workspace root.
  it.each([
    ["how many lines are in README.md?", /README\.md[\s\S]*\d+ words, \d+ lines/],
    ["list the files in the src folder", /entries in src: [^\n]*execution\//],
  ])("%s: exit 0 with the asked answer", { timeout: LONG }, async (text, shown) => {
    const r = await runCli(["run", text, "--db", freshDb(), "--no-input"]);
    expect(r.code, r.stderr).toBe(0);
    expect(`${r.stderr}\n${r.stdout}`).toMatch(shown);
  });

  it("a folder outside the workspace is refused before anything runs: exit 3, named", { timeout: LONG }, async () => {
    const r = await runCli(["run", "show me what's in ../", "--db", freshDb(), "--no-input", "--json"]);
    expect(r.code, r.stderr).toBe(3);
    const out = JSON.parse(r.stdout) as { waitingFor: { openQuestions: string[] } };
    expect(out.waitingFor.openQuestions.join(" ")).toMatch(/"\.\.\/" leads outside the workspace/);
  });
});

describe("the CLI never completes a request it did not fully understand (issue 9 gaps)", () => {
  it.each([
    ["5 days in El Dorado from Lima", /El Dorado, Sinaloa, Mexico/],
    ["book flights from Madrid to Oslo and get travel insurance", /travel insurance/],
  ])("%s: exit 3 with the part named", { timeout: LONG }, async (text, named) => {
    const r = await runCli(["run", text, "--db", freshDb(), "--no-input", "--json"]);
    expect(r.code, r.stderr).toBe(3);
    const out = JSON.parse(r.stdout) as { waitingFor: { openQuestions: string[] } };
    expect(out.waitingFor.openQuestions.join(" ")).toMatch(named);
  });

  it("'--abort-below' above the plan's confidence stops before anything runs: exit 3", { timeout: LONG }, async () => {
    const r = await runCli([
      "run",
      "Plan a 3-day trip from Madrid to Paris for 2 people",
      "--db",
      freshDb(),
      "--no-input",
      "--json",
      "--approval-threshold",
      "0.1",
      "--abort-below",
      "0.9",
    ]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toMatch(/below the abort threshold 0\.90/);
  });
});
