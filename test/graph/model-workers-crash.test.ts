import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { compileAgent } from "../../graphs/agent.js";
import type { AgentStateValue } from "../../nodes/state.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { openEffectLedger } from "../../src/tools/effects.js";
import { countingToolkits, interruptValues, tempDir, threadConfig } from "../fakes/graph-harness.js";
import { notesToolkit, PlannedReasoner, PUBLISH_STEP } from "../fakes/notes-toolkit.js";
import { ScriptedChatModel } from "../fakes/scripted-chat-model.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** Starts child-agent-effects.ts and SIGKILLs it the moment it reports that publish_note is being called. */
function killDuringPublish(threadId: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "test/graph/child-agent-effects.ts", tmp.dbPath, threadId],
      { cwd: ROOT, env: { ...process.env, OPENAI_API_KEY: "" } },
    );
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the child never reached publish_note: ${out} ${err}`));
    }, 30_000);
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("CALLING publish_note")) child.kill("SIGKILL");
    });
    child.stderr.on("data", (d: Buffer) => void (err += d.toString()));
    child.on("exit", (_code, signal) => {
      clearTimeout(timer);
      if (signal === "SIGKILL" && out.includes("CALLING publish_note")) resolve(out);
      else reject(new Error(`the child exited without being killed mid-call (signal ${signal}): ${out} ${err}`));
    });
  });
}

describe("a crash in the middle of an approved call inside a model-driven loop", () => {
  it("after SIGKILL during publish_note, the resumed loop neither asks again nor calls again: a person is asked to check", async () => {
    const threadId = "killed-mid-publish";
    await killDuringPublish(threadId);

    const persistence = openPersistence(tmp.dbPath);
    try {
      const ledger = openEffectLedger(persistence.store.db);
      const { toolkits, calls } = countingToolkits([notesToolkit()]);
      // The model is not asked again: the loop's conversation was checkpointed before the call.
      const model = new ScriptedChatModel([]);
      const graph = compileAgent(
        { toolkits, ledger, reasoner: new PlannedReasoner([PUBLISH_STEP], model) },
        persistence,
      );
      const config = threadConfig(threadId);
      const rows = persistence.store.db.prepare("SELECT step_id, status FROM candor_effects").all();
      expect(rows).toEqual([{ step_id: "publish.call1", status: "started" }]);

      const [asked, ...more] = interruptValues(await graph.invoke(null, config));
      expect(more).toEqual([]);
      expect(asked).toMatchObject({ kind: "unknown_outcome", taskId: "publish" });
      expect(calls.count("publish_note")).toBe(0);
      const waiting = (await graph.getState(config)).values as AgentStateValue;
      const failed = waiting.feedback.find((f) => f.taskId === "publish")!;
      expect(failed).toMatchObject({
        feedbackType: "FAILURE",
        failureClass: "policy_blocked",
        errorType: "OUTCOME_UNKNOWN",
        tool: "publish_note",
      });
      expect(failed.errors[0]).toMatch(/publish_note may already have run.*a human must check/);
      expect(waiting.notifications.filter((n) => n.kind === "approval")).toEqual([]);
      model.assertConsumed();
    } finally {
      persistence.close();
    }
  }, 60_000);
});
