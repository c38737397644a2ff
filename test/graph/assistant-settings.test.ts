import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { Node } from "../../nodes/names.js";
import { HumanApprovalRequest } from "../../src/domain/approval.js";
import { CandorError } from "../../src/errors.js";
import { agentsOnTempDb, EASY_TRIP, interruptValues, threadConfig, tripInput } from "../fakes/graph-harness.js";

const { agent } = agentsOnTempDb();

/** The rules plan's confidence is 0.85: a threshold of 0.99 always asks, the default 0.5 never does. */
describe("settings from the assistant (LangGraph context / configurable), below the input's", () => {
  it("a threshold given only in `context` stops the plan for approval, and the thread keeps it", async () => {
    const a = agent();
    const config = { ...threadConfig("ctx"), context: { approvalThreshold: 0.99 } };
    const out = await a.graph.invoke(tripInput(EASY_TRIP), config);
    const request = HumanApprovalRequest.parse(interruptValues(out)[0]);
    expect(request).toMatchObject({ kind: "plan_approval", threshold: 0.99 });
    expect(out.settings).toMatchObject({ approvalThreshold: 0.99, maxRevisions: 3 });
    expect(out.planNotes).toContain("Settings from the assistant's configuration: approvalThreshold 0.99.");
    expect(a.calls.total()).toBe(0);
    const waiting = await a.graph.getState(threadConfig("ctx"));
    expect(waiting.next).toEqual([Node.HUMAN_INTERRUPT]);
    expect(waiting.values.settings.approvalThreshold).toBe(0.99);
    // Resumed under an assistant that now says otherwise: the thread's settings were fixed when it was planned.
    const done = await a.graph.invoke(new Command({ resume: { decision: "approve" } }), {
      ...threadConfig("ctx"),
      context: { approvalThreshold: 0.1 },
    });
    expect(done.status).toBe("completed");
    expect(done.settings.approvalThreshold).toBe(0.99);
  });

  it("a threshold given only in `configurable` does the same", async () => {
    const a = agent();
    const config = { configurable: { thread_id: "conf", approvalThreshold: 0.99 } };
    const out = await a.graph.invoke(tripInput(EASY_TRIP), config);
    expect(HumanApprovalRequest.parse(interruptValues(out)[0]).threshold).toBe(0.99);
  });

  it("the input's settings beat the assistant's, field by field", async () => {
    const a = agent();
    const config = { ...threadConfig("input-wins"), context: { approvalThreshold: 0.99, maxRevisions: 7 } };
    const out = await a.graph.invoke(tripInput(EASY_TRIP, { approvalThreshold: 0.5 }), config);
    expect(out.status).toBe("completed");
    expect(out.settings).toMatchObject({ approvalThreshold: 0.5, maxRevisions: 7 });
  });

  it("a bad assistant setting stops the run before any plan or tool, with a coded error in plain words", async () => {
    const a = agent();
    const config = { ...threadConfig("bad"), context: { approvalThreshold: 2 } };
    const failed = await a.graph.invoke(tripInput(EASY_TRIP), config).then(
      () => null,
      (e: unknown) => e,
    );
    expect(CandorError.hasCode(failed, "CONFIGURATION")).toBe(true);
    expect((failed as Error).message).toMatch(/context approvalThreshold is 2/);
    expect(a.calls.total()).toBe(0);
  });
});
