import { Command } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent } from "../../graphs/agent.js";
import type { AgentStateValue } from "../../nodes/state.js";
import { HitlRequest } from "../../src/domain/approval.js";
import { openPersistence } from "../../src/memory/persistence.js";
import {
  agentsOnTempDb,
  countingToolkits,
  EASY_TRIP,
  interruptValues,
  tempDir,
  threadConfig,
  tripInput,
} from "../fakes/graph-harness.js";

const { agent } = agentsOnTempDb();

describe("the graph answered the way agent-chat-ui answers (LangChain v1 {decisions: [...]})", () => {
  it("a plan approval carries the v1 request and {decisions: [{type: 'approve'}]} runs the plan", async () => {
    const a = agent();
    const config = threadConfig("v1-approve");
    const [payload] = interruptValues(await a.graph.invoke(tripInput(EASY_TRIP, { approvalThreshold: 0.99 }), config));
    const v1 = HitlRequest.parse(payload);
    expect(v1.review_configs).toEqual([
      { action_name: "approve_plan", allowed_decisions: ["approve", "edit", "reject"] },
    ]);
    const done = await a.graph.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
    expect(done.status).toBe("completed");
    expect(done.approval).toMatchObject({ kind: "plan_approval", decision: "approve" });
    expect(a.calls.total()).toBe(5);
  });

  it("a v1 reject of a plan rejects it, with its message as the reason", async () => {
    const a = agent();
    const config = threadConfig("v1-reject");
    interruptValues(await a.graph.invoke(tripInput(EASY_TRIP, { approvalThreshold: 0.99 }), config));
    const done = await a.graph.invoke(
      new Command({ resume: { decisions: [{ type: "reject", message: "not this week" }] } }),
      config,
    );
    expect(done.status).toBe("rejected");
    expect(done.approval).toMatchObject({ decision: "reject", comment: "not this week" });
    expect(a.calls.total()).toBe(0);
  });
});

describe("a tool approval answered with a v1 decision", () => {
  const tmp = tempDir();
  const persistence = openPersistence(tmp.dbPath);
  afterAll(() => {
    persistence.close();
    tmp.cleanup();
  });

  it("reject denies the call (never made), with the message as the reason; the run goes on without it", async () => {
    const { toolkits, calls } = countingToolkits([travelToolkit({ latencyMs: 5 })]);
    const graph = compileAgent({ toolkits, ledger: persistence.ledger }, persistence);
    const config = threadConfig("v1-deny");
    const out = await graph.invoke(tripInput(`${EASY_TRIP} and book it`), config);
    const [payload] = interruptValues(out);
    expect(HitlRequest.parse(payload).review_configs).toEqual([
      { action_name: "book_trip", allowed_decisions: ["approve", "reject"] },
    ]);
    await graph.invoke(
      new Command({ resume: { decisions: [{ type: "reject", message: "do not book yet" }] } }),
      config,
    );
    const state = (await graph.getState(config)).values as AgentStateValue;
    expect(calls.count("book_trip")).toBe(0);
    const denied = state.feedback.find((f) => f.tool === "book_trip");
    expect(denied).toMatchObject({ feedbackType: "FAILURE", failureClass: "policy_blocked" });
    expect(denied!.errors[0]).toContain("do not book yet");
  });
});
