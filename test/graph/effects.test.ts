import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Command } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent } from "../../graphs/agent.js";
import type { AgentStateValue } from "../../nodes/state.js";
import {
  countingToolkits,
  effectRows,
  interruptValues,
  openTestDatabase,
  tempDir,
  threadConfig,
} from "../fakes/graph-harness.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** Starts child-effects.ts and SIGKILLs it the moment it reports that book_trip is being called. */
function killDuringBooking(threadId: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/graph/child-effects.ts", tmp.dbPath, threadId], {
      cwd: ROOT,
      env: { ...process.env, OPENAI_API_KEY: "" },
    });
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the child never reached book_trip: ${out} ${err}`));
    }, 30_000);
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("CALLING book_trip")) child.kill("SIGKILL");
    });
    child.stderr.on("data", (d: Buffer) => void (err += d.toString()));
    child.on("exit", (_code, signal) => {
      clearTimeout(timer);
      if (signal === "SIGKILL" && out.includes("CALLING book_trip")) resolve(out);
      else reject(new Error(`the child exited without being killed mid-call (signal ${signal}): ${out} ${err}`));
    });
  });
}

describe("a crash in the middle of an irreversible call (issue 4 item 4)", () => {
  it("after SIGKILL during book_trip, the resumed run does not call it again: a person is asked to check, and may retry it", async () => {
    const threadId = "killed-mid-booking";
    await killDuringBooking(threadId);

    const persistence = openTestDatabase(tmp.dbPath);
    try {
      const { toolkits, calls } = countingToolkits([travelToolkit({ latencyMs: 5 })]);
      const graph = compileAgent({ toolkits, ledger: persistence.ledger }, persistence);
      const config = threadConfig(threadId);
      const started = await effectRows(persistence);
      expect(started.map((r) => r.status)).toEqual(["started"]);

      // The approval was checkpointed before the call, so resuming continues with act; the call's outcome is
      // unknown, so it is not made again and no rule decides: a person is asked to check.
      const out = await graph.invoke(null, config);
      const [asked] = interruptValues(out);
      const waiting = (await graph.getState(config)).values as AgentStateValue;
      expect(calls.count("book_trip")).toBe(0);
      const failed = waiting.feedback.find((f) => f.tool === "book_trip")!;
      expect(failed).toMatchObject({
        feedbackType: "FAILURE",
        failureClass: "policy_blocked",
        errorType: "OUTCOME_UNKNOWN",
        taskId: started[0]!.step_id,
      });
      expect(failed.errors[0]).toMatch(/book_trip may already have run.*a human must check/);
      expect(asked).toMatchObject({
        kind: "unknown_outcome",
        taskId: started[0]!.step_id,
        decisions: ["retry", "skip", "abort"],
      });
      expect(waiting.revisions).toEqual([]);
      // The searches finished before the crash and are not repeated either (their writes were checkpointed).
      expect(calls.count("search_flights")).toBe(0);

      // It did not happen: retry runs the step on a new dispatch, which asks for its approval again, then books once.
      const again = interruptValues(await graph.invoke(new Command({ resume: "retry" }), config));
      expect(again[0]).toMatchObject({ kind: "tool_approval", tool: "book_trip" });
      const done = (await graph.invoke(new Command({ resume: "approve" }), config)) as AgentStateValue;
      expect(done.status).toBe("completed");
      expect(calls.count("book_trip")).toBe(1);
    } finally {
      await persistence.close();
    }
  }, 60_000);
});
