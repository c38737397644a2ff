import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PlanningRequest } from "../../src/domain/request.js";
import { planWithRules } from "../../src/planning/rules-planner.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { runStep } from "../../src/execution/run-step.js";
import { insideRoot, workspaceToolkit } from "../../src/tools/builtin/workspace.js";
import { generalToolkit } from "../../src/tools/general.js";

function workspace() {
  const root = mkdtempSync(join(tmpdir(), "candor-ws-"));
  writeFileSync(join(root, "notes.md"), "alpha beta beta gamma gamma gamma\nsecond line\n");
  return { root, registry: ToolRegistry.create([workspaceToolkit({ root }), generalToolkit()]) };
}

describe("workspace toolkit", () => {
  it("refuses paths that leave the workspace", () => {
    expect(() => insideRoot("/tmp/ws", "../etc/passwd")).toThrow(/outside the workspace/);
    expect(() => insideRoot("/tmp/ws", "/etc/passwd")).toThrow(/outside the workspace/);
    expect(insideRoot("/tmp/ws", "a/b.txt")).toBe("/tmp/ws/a/b.txt");
  });

  it("plans read → count → report from what each tool consumes and produces", () => {
    const { registry } = workspace();
    const plan = planWithRules(
      PlanningRequest.parse({ userIntent: "count the words in notes.md and write a report" }),
      registry,
    );
    expect(plan.steps.map((s) => [s.id, s.workerType, s.dependsOn])).toEqual([
      ["text", "reader", []],
      ["analysis", "analyzer", ["text"]],
      ["report", "reporter", ["analysis"]],
    ]);
    expect(plan.steps[0]?.params).toEqual({ path: "notes.md" });
  });

  it("runs the chain on real files and writes the report inside the workspace", async () => {
    const { root, registry } = workspace();
    const plan = planWithRules(
      PlanningRequest.parse({ userIntent: "count the words in notes.md and write a report" }),
      registry,
    );
    const [read, stats, report] = plan.steps;
    const text = await runStep({ step: read!, inputs: {}, registry, dispatch: 1 });
    expect(text.feedbackType).toBe("SUCCESS");
    const analysis = await runStep({ step: stats!, inputs: { text: text.outputs.result }, registry, dispatch: 1 });
    expect((analysis.outputs.result as { words: number }).words).toBe(8);
    const written = await runStep({
      step: report!,
      inputs: { analysis: analysis.outputs.result },
      registry,
      dispatch: 1,
    });
    const file = (written.outputs.result as { file: string }).file;
    expect(file.startsWith(join(root, ".candor", "reports"))).toBe(true);
    expect(readFileSync(file, "utf8")).toContain("8 words");
  });

  it("reports a missing file as a failure with the path, not a crash", async () => {
    const { registry } = workspace();
    const plan = planWithRules(PlanningRequest.parse({ userIntent: "read missing.txt" }), registry);
    const fb = await runStep({ step: plan.steps[0]!, inputs: {}, registry, dispatch: 1 });
    expect(fb.feedbackType).toBe("FAILURE");
    expect(fb.errors.join()).toContain('"missing.txt"');
  });
});
