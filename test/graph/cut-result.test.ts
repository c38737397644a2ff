import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compileAgent } from "../../graphs/agent.js";
import type { AgentStateValue } from "../../nodes/state.js";
import { planOf } from "../../src/domain/plan-state.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { workspaceToolkit } from "../../src/tools/builtin/workspace.js";
import { tempDir, threadConfig, tripInput } from "../fakes/graph-harness.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

/*
 * A tool result over the bound on kept results (maxToolResultBytes) is kept cut. The step that made it is said done
 * with its result not whole, where it is said done; a step that consumes the cut result is not called on it (it
 * would fail on its shape, or work from part of it unsaid): it fails as a limit Candor keeps, naming the bound, and
 * is skipped rather than "repaired" by re-running the step before, which would cut the same result again.
 */
describe("a result cut at the bound on kept results", () => {
  it("is said not whole where its step is done, and the step that needs it is refused naming the bound", async () => {
    const root = tmp.dir;
    writeFileSync(path.join(root, "notes.md"), `${"A sentence about the project that goes on. ".repeat(200)}\n`);
    const persistence = openPersistence(path.join(root, "candor.db"));
    const graph = compileAgent(
      {
        toolkits: [workspaceToolkit({ root })],
        reasoner: new RulesReasoner(),
        bounds: { maxToolResultBytes: 1024 },
      },
      persistence,
    );
    try {
      const done = (await graph.invoke(
        tripInput("Summarize notes.md", { approvalThreshold: 0 }),
        threadConfig("cut"),
      )) as AgentStateValue;
      const plan = planOf(done)!;
      const read = plan.steps.find((s) => s.tools.includes("read_file"))!;
      const summary = plan.steps.find((s) => s.tools.includes("summarize_text"))!;
      expect(read.status).toBe("done");
      expect(read.limits.join(" ")).toMatch(/over the 1,024 bytes kept of one tool result \(maxToolResultBytes/);
      const readDone = done.notifications.find((n) => n.kind === "step_succeeded" && n.taskId === read.id)!;
      expect(readDone.severity).toBe("WARNING");
      expect(readDone.title).toMatch(/done in \d+ ms, but its result is not whole: .*maxToolResultBytes/);
      expect(summary.status).toBe("skipped");
      const failed = done.feedback.filter((f) => f.taskId === summary.id && f.failureClass !== null);
      expect(failed.map((f) => f.failureClass)).toEqual(["policy_blocked"]);
      expect(failed[0]!.errors[0]).toMatch(
        /^summarize_text was not called: its input "text" from \w+ is not whole.*maxToolResultBytes.*Raise the bound/,
      );
      expect(done.revisions.map((r) => r.strategy)).toEqual(["SKIP"]);
      expect(done.status).toBe("partial");
    } finally {
      persistence.close();
    }
  });
});
