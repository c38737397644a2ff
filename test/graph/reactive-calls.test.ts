import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compileAgent } from "../../graphs/agent.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { workspaceToolkit } from "../../src/tools/builtin/workspace.js";
import { tempDir, threadConfig } from "../fakes/graph-harness.js";
import { PlannedReasoner } from "../fakes/notes-toolkit.js";
import { ScriptedChatModel } from "../fakes/scripted-chat-model.js";

// Regression: a reactive run that must end in a listing and a report (what the offline reader's plan of the request ends in) gave
// every call of its loop the run's own outputs to produce, so the reads came back as {"file_list": …, "report": …}
// and the count after them found no text ("text_stats needs the text of an earlier read_file step"): the run failed.
// Each call of a loop produces what its own tool produces.

const tmp = tempDir();
const closers: (() => void)[] = [];
afterAll(() => {
  for (const close of closers) close();
  tmp.cleanup();
});

describe("the calls of a reactive loop that must end in a report", () => {
  it("list, read, read, count and report: each call's result is its tool's own, and the run completes with the report", async () => {
    const root = path.join(tmp.dir, "workspace");
    mkdirSync(path.join(root, "src"), { recursive: true });
    writeFileSync(path.join(root, "src", "a.ts"), "export const a = 1;\n");
    writeFileSync(path.join(root, "src", "b.ts"), "export const b = 2;\nexport const c = 3;\n");
    const model = new ScriptedChatModel([
      { calls: [["list_files", { dir: "src" }]] },
      { calls: [["read_file", { path: "src/a.ts" }]] },
      { calls: [["read_file", { path: "src/b.ts" }]] },
      { calls: [["text_stats", {}]] },
      { calls: [["write_report", { title: "Two files" }]] },
      "Counted src/b.ts and wrote the report.",
    ]);
    const persistence = openPersistence(tmp.dbPath);
    closers.push(() => persistence.close());
    const app = compileAgent(
      {
        toolkits: [workspaceToolkit({ root, reportsDir: "reports" })],
        reasoner: new PlannedReasoner([], model, 10),
      },
      persistence,
    );
    const out = await app.invoke(
      {
        request: { userIntent: "read the files in src/ and write a report on them" },
        settings: { planner: false, approvalThreshold: 0 },
      },
      threadConfig("reactive-report"),
    );
    model.assertConsumed();
    const replies = model.seen
      .at(-1)!
      .filter((m) => m.type === "tool")
      .map((m) => m.text);
    expect(JSON.parse(replies[2]!)).toMatchObject({
      path: "src/b.ts",
      text: "export const b = 2;\nexport const c = 3;\n",
    });
    expect(JSON.parse(replies[3]!)).toMatchObject({ words: 10, lines: 2 });
    expect(out.status).toBe("completed");
    expect(readFileSync(path.join(root, "reports", "two-files.md"), "utf8")).toContain("10 words, 2 lines");
  });
});
