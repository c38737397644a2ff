import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildReport, renderReport } from "../../src/transparency/report.js";
import { travelPlan } from "../fakes/toolkit-fixtures.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const README = readFileSync(path.join(ROOT, "README.md"), "utf8");

/** The first ```ts block after `marker` in the README. */
function blockAfter(marker: string): string {
  const at = README.indexOf(marker);
  expect(at, `README has "${marker}"`).toBeGreaterThanOrEqual(0);
  const open = README.indexOf("```ts\n", at);
  const close = README.indexOf("\n```", open);
  return README.slice(open + "```ts\n".length, close + 1);
}

describe("the README says what is true (issue 8 defect 11)", () => {
  // Regression: the README's "test you can copy" failed where the README said to put it (vitest only runs test/**).
  it("the test you can copy is test/graph/readme-example.test.ts, word for word, and the README says to put it under test/", () => {
    const file = readFileSync(path.join(ROOT, "test/graph/readme-example.test.ts"), "utf8");
    expect(blockAfter("A test you can copy")).toBe(file);
    expect(README).toMatch(/Put it under `test\/` \(vitest runs `test\/\*\*\/\*\.test\.ts` only\)/);
    const included = readFileSync(path.join(ROOT, "vitest.config.ts"), "utf8");
    expect(included).toContain('include: ["test/**/*.test.ts"]');
  });

  // Regression: how to run examples/embed was only in the file's header.
  it("says how to run examples/embed, with an npm script that runs it", () => {
    const scripts = (
      JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts["example:embed"]).toBe("tsx --conditions=candor-source examples/embed/app.ts");
    expect(existsSync(path.join(ROOT, "examples/embed/app.ts"))).toBe(true);
    expect(README).toContain("`npm run example:embed`");
  });

  // Regression: confidence reasons were said to be in `report --json` but were only in `run --json` and the logs.
  it("puts the plan's confidence reasons in the report (what report --json prints), and in its text", () => {
    const plan = {
      ...travelPlan("Plan a 10-day trip to Rome from Madrid"),
      confidenceReasons: ["matched by city names only", "a default origin was assumed"],
    };
    const report = buildReport({
      request: "r",
      plan,
      feedback: [],
      revisions: [],
      confidenceHistory: [],
      status: "completed",
      failureReason: null,
      lessons: [],
      startedAt: new Date().toISOString(),
    });
    expect(report.confidenceReasons).toEqual(["matched by city names only", "a default origin was assumed"]);
    expect(renderReport(report)).toContain("  Why: matched by city names only; a default origin was assumed");
    expect(README).toMatch(/confidence reasons in `report --json`/);
  });
});
