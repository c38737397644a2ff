import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PlanningRequest } from "../../src/domain/request.js";
import { openQuestions } from "../../src/domain/understanding.js";
import { planWithRules } from "../../src/planning/rules-planner.js";
import { summarizeText, summarizeTextTool } from "../../src/tools/builtin/summarize.js";
import { workspaceToolkit } from "../../src/tools/builtin/workspace.js";
import { ToolRegistry } from "../../src/tools/registry.js";

// Regression (issue 23 item 6): "what does src/cli/main.ts do?", "explain package.json" and "compare a.ts and b.ts"
// were refused with "no tool matches", though reading and summarizing serve them.
const root = mkdtempSync(path.join(tmpdir(), "candor-explain-"));
mkdirSync(path.join(root, "src"), { recursive: true });
mkdirSync(path.join(root, "docs"), { recursive: true });
writeFileSync(
  path.join(root, "src", "engine.ts"),
  '/** Runs the steps in order. */\nimport x from "y";\nexport function run() {}\nexport class Engine {}\nexport function run() {}\n',
);
writeFileSync(path.join(root, "src", "parser.ts"), "// Splits text into words.\nexport const parse = () => [];\n");
writeFileSync(path.join(root, "package.json"), '{ "name": "demo" }\n');
writeFileSync(path.join(root, "docs", "guide.md"), "# Guide\n\nHow to use it.\n");
afterAll(() => rmSync(root, { recursive: true, force: true }));

const registry = ToolRegistry.create([workspaceToolkit({ root, reportsDir: "reports" })]);
const plan = (userIntent: string) => planWithRules(PlanningRequest.parse({ userIntent }), registry);
const calls = (userIntent: string) => plan(userIntent).steps.map((s) => [s.tools[0], s.params]);

describe("a request that asks what a file or folder does is served by reading it", () => {
  it.each([
    ["what does src/engine.ts do?", "src/engine.ts"],
    ["explain package.json", "package.json"],
    ["Describe src/parser.ts for me", "src/parser.ts"],
    ["¿Qué hace src/engine.ts?", "src/engine.ts"],
    ["Que fait src/engine.ts ?", "src/engine.ts"],
    ["Was macht package.json?", "package.json"],
    ["What does src/engine.ts export?", "src/engine.ts"],
    ["What does package.json contain?", "package.json"],
  ])("%s: read it, then summarize it, nothing left open", (request, file) => {
    expect(calls(request)).toEqual([
      ["read_file", { path: file }],
      ["summarize_text", {}],
    ]);
    expect(openQuestions(plan(request).understanding)).toEqual([]);
  });

  it("compares two files: one read each, and one summary of both", () => {
    const p = plan("compare src/engine.ts and src/parser.ts");
    expect(p.steps.map((s) => [s.id, s.tools[0], s.params])).toEqual([
      ["text_1", "read_file", { path: "src/engine.ts" }],
      ["text_2", "read_file", { path: "src/parser.ts" }],
      ["summary", "summarize_text", {}],
    ]);
    expect(p.steps[2]!.dependsOn).toEqual(["text_1", "text_2"]);
    expect(openQuestions(p.understanding)).toEqual([]);
  });

  it("lists a folder it is asked about", () => {
    expect(calls("what is in the docs folder for?")).toEqual([["list_files", { dir: "docs" }]]);
    expect(calls("explain docs")).toEqual([["list_files", { dir: "docs" }]]);
  });

  it("reads a named file that is not there, so the read names it, instead of refusing the request", () => {
    expect(calls("what does src/missing.ts do?")).toEqual([
      ["read_file", { path: "src/missing.ts" }],
      ["summarize_text", {}],
    ]);
  });

  it("still refuses a path outside the workspace, and a question naming no file", () => {
    expect(openQuestions(plan("what does ../secret.ts do?").understanding).join(" ")).toMatch(/outside the workspace/);
    expect(() => plan("what does the weather do?")).toThrow(/No tool matches/);
  });
});

describe("summarize_text on source code and on several reads", () => {
  it("says what a source file says it is and the names it defines, each once", () => {
    expect(
      summarizeText(
        "src/engine.ts",
        "/** Runs the steps in order. */\nexport function run() {}\nexport class Engine {}\nexport function run() {}\n",
      ).summary,
    ).toBe("src/engine.ts: Runs the steps in order. Defines run, Engine.");
    expect(summarizeText("a.py", "# Reads the config.\ndef load():\n    pass\n").summary).toBe(
      "a.py: Reads the config. Defines load.",
    );
  });

  it("summarizes each of several reads, in order, with the paths", async () => {
    const tool = summarizeTextTool();
    const read = (p: string, text: string) => ({ path: p, text, truncated: false, summary: "" });
    const out = (await tool.run({}, {
      inputs: {
        text: [read("a.ts", "/** First. */\nexport const a = 1;\n"), read("b.md", "# B\n\nSecond one.\n")],
      },
    } as never)) as { path: string; summary: string; sections: { heading: string }[] };
    expect(out.path).toBe("a.ts, b.md");
    expect(out.summary).toBe("a.ts: First. Defines a.\n\nSummary of b.md (1 section(s)):\nB — Second one.");
    expect(out.sections.map((s) => s.heading)).toEqual(["b.md: B"]);
  });
});
