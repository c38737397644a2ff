import { Command } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent } from "../../graphs/agent.js";
import { ToolApprovalRequest } from "../../src/domain/approval.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { openEffectLedger } from "../../src/tools/effects.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { countingToolkits, interruptValues, tempDir, threadConfig, tripInput } from "../fakes/graph-harness.js";

const BOOK_TRIP = "Plan a 3-day trip from Madrid to Paris for 2 people and book it";

const tmp = tempDir();
const closers: (() => void)[] = [];
afterAll(() => {
  for (const close of closers) close();
  tmp.cleanup();
});

/** The travel agent on a real SQLite file with the effect ledger on the store's connection, every tool call counted. */
function agent() {
  const persistence = openPersistence(tmp.dbPath);
  closers.push(() => persistence.close());
  const { toolkits, calls } = countingToolkits([travelToolkit({ latencyMs: 5 })]);
  const ledger = openEffectLedger(persistence.store.db);
  const decisionLog = memoryDecisionLog();
  const graph = compileAgent({ toolkits, decisionLog, ledger }, persistence);
  return { graph, calls, ledger, decisionLog };
}

type Agent = ReturnType<typeof agent>;

/** Runs the booking request to the tool approval and returns the request and the interrupt's id. */
async function runToApproval(a: Agent, threadId: string) {
  const config = threadConfig(threadId);
  const out = await a.graph.invoke(tripInput(BOOK_TRIP), config);
  const [payload, ...more] = interruptValues(out);
  expect(more).toEqual([]);
  return { config, payload: payload!, request: ToolApprovalRequest.parse(payload) };
}

describe("approval before an irreversible call (issue 4 item 3)", () => {
  it("stops before book_trip with the exact call, visible through getState with subgraphs", async () => {
    const a = agent();
    const { config, payload, request } = await runToApproval(a, "ask");
    const state = await a.graph.getState(config);
    const plan = (
      state.values as {
        plan: { planId: string; steps: { id: string; tools: string[]; params: Record<string, unknown> }[] };
      }
    ).plan;
    const book = plan.steps.find((s) => s.tools[0] === "book_trip")!;
    expect(request).toMatchObject({
      kind: "tool_approval",
      planId: plan.planId,
      taskId: book.id,
      tool: "book_trip",
      args: book.params,
      sideEffect: "irreversible",
      decisions: ["approve", "deny"],
    });
    // The HumanInterrupt convention: the exact call as the action request, editing not offered.
    expect(payload).toMatchObject({
      action_request: { action: "book_trip", args: book.params },
      config: { allow_accept: true, allow_edit: false, allow_ignore: true },
    });
    // book_trip takes no arguments: what it books is the itinerary it consumes, so the request shows that too.
    expect(request.inputs).toEqual({ itinerary: expect.stringMatching(/itinerary .* total \$/) });
    expect(request.question).toContain(`on itinerary: ${request.inputs!.itinerary}`);
    expect(a.calls.count("book_trip")).toBe(0);
    expect(a.calls.count("build_itinerary")).toBe(1);
    // The parent's pendingInterrupt is for the main graph's own requests; the worker's is on its task.
    expect((state.values as { pendingInterrupt: unknown }).pendingInterrupt).toBeNull();
    const withSubgraphs = await a.graph.getState(config, { subgraphs: true });
    const worker = withSubgraphs.tasks.filter((t) => t.name === "worker");
    expect(worker.flatMap((t) => t.interrupts.map((i) => i.value))).toEqual([payload]);
    const inner = worker[0]!.state as { tasks: { name: string; interrupts: { value: unknown }[] }[] };
    expect(inner.tasks.find((t) => t.name === "gate")!.interrupts[0]!.value).toEqual(payload);
  });

  it("approve: book_trip is called exactly once and the run completes", async () => {
    const a = agent();
    const { config } = await runToApproval(a, "approve");
    const done = await a.graph.invoke(new Command({ resume: { decision: "approve", by: "ops" } }), config);
    expect(done.status).toBe("completed");
    expect(a.calls.count("book_trip")).toBe(1);
    expect(done.feedback.find((f) => f.tool === "book_trip")).toMatchObject({ feedbackType: "SUCCESS" });
    expect(done.notifications.some((n) => n.kind === "approval" && /approved book_trip/.test(n.title))).toBe(true);
    expect(a.decisionLog.entries.some((d) => d.operation === "human_decision" && d.decision === "approve")).toBe(true);
    // The parent records the worker's tool approval as the thread's latest human decision.
    expect(done.approval).toMatchObject({ kind: "tool_approval", decision: "approve", by: "ops" });
  });

  it("a malformed answer re-asks with an error, and the tool stays uncalled", async () => {
    const a = agent();
    const { config } = await runToApproval(a, "malformed");
    const again = await a.graph.invoke(new Command({ resume: { decision: "reject" } }), config);
    const [payload] = interruptValues(again);
    expect(payload).toMatchObject({ kind: "tool_approval", tool: "book_trip" });
    expect(String(payload!.error)).toMatch(/does not answer a tool_approval request.*approve, deny/);
    expect(a.calls.count("book_trip")).toBe(0);
    const done = await a.graph.invoke(new Command({ resume: { type: "accept", args: null } }), config);
    expect(done.status).toBe("completed");
    expect(a.calls.count("book_trip")).toBe(1);
  });

  it("deny: book_trip is never called, the step fails as policy_blocked, SKIP follows, the run ends partial and says why", async () => {
    const a = agent();
    const { config, request } = await runToApproval(a, "deny");
    const done = await a.graph.invoke(new Command({ resume: { decision: "deny", comment: "not this week" } }), config);
    expect(a.calls.count("book_trip")).toBe(0);
    const failed = done.feedback.find((f) => f.taskId === request.taskId)!;
    expect(failed).toMatchObject({
      feedbackType: "FAILURE",
      failureClass: "policy_blocked",
      tool: "book_trip",
      attempt: 0,
    });
    expect(failed.errors[0]).toMatch(/^A human denied book_trip\(\{.*\}\) \(not this week\)/);
    expect(done.revisions.map((r) => r.strategy)).toEqual(["SKIP"]);
    expect(done.approval).toMatchObject({ kind: "tool_approval", decision: "deny", comment: "not this week" });
    expect(done.status).toBe("partial");
    expect(JSON.stringify(done.report)).toMatch(/A human denied book_trip/);
  });

  it("replaying the completed run from an earlier checkpoint reuses the ledger's booking instead of booking again", async () => {
    const a = agent();
    const { config } = await runToApproval(a, "replay");
    const done = await a.graph.invoke(new Command({ resume: { decision: "approve" } }), config);
    expect(done.status).toBe("completed");
    expect(a.calls.count("book_trip")).toBe(1);
    const booked = done.feedback.find((f) => f.tool === "book_trip")!.outputs.result;

    const history = [];
    for await (const s of a.graph.getStateHistory(config)) history.push(s);
    const afterUnderstand = history.find(
      (s) => s.next.length === 1 && s.next[0] === "execute" && s.metadata?.step === 1,
    )!;
    const searchesBefore = a.calls.count("search_flights");
    const replayed = await a.graph.invoke(null, afterUnderstand.config);
    // The replay ran the plan again (read-only tools are called again) but did not ask or book a second time.
    expect(replayed.status).toBe("completed");
    expect(a.calls.count("search_flights")).toBe(searchesBefore + 1);
    expect(a.calls.count("book_trip")).toBe(1);
    expect(replayed.feedback.find((f) => f.tool === "book_trip")!.outputs.result).toEqual(booked);
    expect(
      a.decisionLog.entries.some(
        (d) => d.operation === "step_result" && /not called again: the effect ledger/.test(d.reasoning),
      ),
    ).toBe(true);
  });
});
