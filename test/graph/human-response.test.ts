import { Command } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import { compileAgent } from "../../graphs/agent.js";
import { Node } from "../../nodes/names.js";
import { HumanInterrupt, InterruptRequest } from "../../src/domain/approval.js";
import { openPersistence, type SqlitePersistence } from "../../src/memory/persistence.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import {
  EASY_TRIP,
  interruptValues,
  notificationsOf,
  tempDir,
  threadConfig,
  tripInput,
} from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";

const tmp = tempDir();
const opened: SqlitePersistence[] = [];
afterAll(() => {
  for (const p of opened) p.close();
  tmp.cleanup();
});

/** The travel agent on a real SQLite file; the rules plan's confidence is 0.85, so a 0.99 threshold always asks. */
function agent() {
  const persistence = openPersistence(tmp.dbPath);
  opened.push(persistence);
  const decisionLog = memoryDecisionLog();
  const graph = compileAgent({ toolkits: [travelToolkit({ latencyMs: 5 })], decisionLog }, persistence);
  return { graph, decisionLog };
}
const ASK = { approvalThreshold: 0.99 };

async function waitingThread(id: string) {
  const a = agent();
  const config = threadConfig(id);
  const [payload] = interruptValues(await a.graph.invoke(tripInput(EASY_TRIP, ASK), config));
  return { ...a, config, payload: payload! };
}

describe("plan approval answered with LangGraph's HumanResponse (Agent Inbox, agent-chat-ui, Studio)", () => {
  it("the payload is a HumanInterrupt carrying Candor's request; accept approves and the run completes", async () => {
    const { graph, config, payload } = await waitingThread("hr-accept");
    const human = HumanInterrupt.parse(payload);
    expect(human.action_request.action).toBe("approve_plan");
    expect(human.config).toEqual({ allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true });
    expect(human.description).toMatch(/Approve it to run, adjust it, replan it with your guidance, or reject it\?/);
    expect(human.description).toMatch(/respond plans it again following your text, ignore rejects it/);
    expect(InterruptRequest.parse(payload.candor)).toMatchObject({
      kind: "plan_approval",
      decisions: ["approve", "reject", "adjust", "replan"],
    });
    // The state keeps Candor's own request (the CLI reads it); only the interrupt payload gains the convention.
    expect((await graph.getState(config)).values.pendingInterrupt).toEqual(payload.candor);

    const done = await graph.invoke(new Command({ resume: [{ type: "accept", args: null }] }), config);
    expect(done.status).toBe("completed");
    expect(done.approval).toMatchObject({ kind: "plan_approval", decision: "approve", adjustments: null });
    expect(done.feedback.map((f) => f.feedbackType)).toEqual(Array(5).fill("SUCCESS"));
  });

  it("edit runs the adjusted plan and records the adjustment, the human-made plan and the decision", async () => {
    const { graph, config, payload, decisionLog } = await waitingThread("hr-edit");
    const { action_request: shown } = HumanInterrupt.parse(payload);
    const steps = structuredClone(shown.args.steps) as Record<string, { params: Record<string, unknown> }>;
    steps.hotel!.params = { ...steps.hotel!.params, nights: 3 };

    const done = await graph.invoke(
      new Command({ resume: { type: "edit", args: { action: shown.action, args: { ...shown.args, steps } } } }),
      config,
    );
    expect(done.status).toBe("completed");
    const hotel = planOf(done)!.steps.find((s) => s.id === "hotel")!;
    expect(hotel.params.nights).toBe(3);
    expect(hotel.result).toMatchObject({ nights: 3 });
    expect(planOf(done)!.createdBy).toBe("human");
    expect(done.approval).toMatchObject({
      decision: "adjust",
      adjustments: [{ taskId: "hotel", field: "params", newValue: steps.hotel!.params }],
    });
    expect(notificationsOf(done, "approval").at(-1)!.title).toMatch(/adjusted by a human \(1 change\(s\)\)/);
    expect(done.confidenceHistory.map((c) => c.reason)).toContain("plan adjusted by a human (1 change(s))");
    expect(decisionLog.entries.find((d) => d.operation === "human_decision")).toMatchObject({
      decision: "adjust",
      reasoning: expect.stringContaining("hotel.params: "),
    });
  });

  it("Candor's own adjust decision with params.<key> runs the adjusted plan", async () => {
    const { graph, config } = await waitingThread("hr-adjust");
    const done = await graph.invoke(
      new Command({
        resume: {
          decision: "adjust",
          adjustments: [{ taskId: "hotel", field: "params.nights", newValue: 4 }],
          by: "ops",
        },
      }),
      config,
    );
    expect(done.status).toBe("completed");
    expect(planOf(done)!.steps.find((s) => s.id === "hotel")!.result).toMatchObject({ nights: 4 });
    expect(done.approval).toMatchObject({
      decision: "adjust",
      by: "ops",
      adjustments: [{ taskId: "hotel", field: "params.nights", newValue: 4 }],
    });
  });

  it("a bad adjustment (unknown step, then a dependency cycle) keeps the thread waiting with an error naming it", async () => {
    const { graph, config } = await waitingThread("hr-bad");
    const [unknown] = interruptValues(
      await graph.invoke(
        new Command({
          resume: { decision: "adjust", adjustments: [{ taskId: "spa", field: "description", newValue: "relax" }] },
        }),
        config,
      ),
    );
    expect(unknown!.error).toMatch(/the plan has no step "spa"/);
    expect(HumanInterrupt.safeParse(unknown).success).toBe(true);

    const cycle = {
      decision: "adjust",
      adjustments: [{ taskId: "flight", field: "dependsOn", newValue: ["itinerary"] }],
    };
    const [cyclic] = interruptValues(await graph.invoke(new Command({ resume: cycle }), config));
    expect(cyclic!.error).toMatch(/The adjusted plan is not valid: Plan has a dependency cycle/);

    const waiting = await graph.getState(config);
    expect(waiting.tasks.map((t) => t.name)).toEqual([Node.HUMAN_INTERRUPT]);
    expect(waiting.values.status).toBe("awaiting_approval");
    expect(planOf(waiting.values)!.createdBy).toBe("rules");
    expect(waiting.values.feedback).toEqual([]);

    // Still resumable: ignore rejects the plan.
    const done = await graph.invoke(new Command({ resume: { type: "ignore", args: null } }), config);
    expect(done.status).toBe("rejected");
    expect(done.feedback).toEqual([]);
  });

  it("response makes the plan again with the text as guidance, and a plan still below the threshold is asked about again", async () => {
    const { graph, config } = await waitingThread("hr-respond");
    const again = await graph.invoke(new Command({ resume: { type: "response", args: "We are 4 people" } }), config);
    const [payload] = interruptValues(again);
    // The guidance reached the plan; nothing ran, and guidance is not an approval (0.85 is still below 0.99).
    expect(again.request.userIntent).toBe(`We are 4 people. ${EASY_TRIP}`);
    expect(planOf(again)!.steps.find((s) => s.id === "flight")!.params.travellers).toBe(4);
    expect(again.feedback).toEqual([]);
    expect(payload).toMatchObject({
      kind: "plan_approval",
      planId: planOf(again)!.planId,
      plan: {
        steps: expect.arrayContaining([
          expect.objectContaining({ params: expect.objectContaining({ travellers: 4 }) }),
        ]),
      },
    });
    expect(again.approval).toMatchObject({ decision: "replan", guidance: "We are 4 people" });
    const done = await graph.invoke(new Command({ resume: { type: "accept", args: null } }), config);
    expect(done.status).toBe("completed");
  });

  it("ignore rejects, naming no reason beyond that it was ignored", async () => {
    const { graph, config } = await waitingThread("hr-ignore-plan");
    const done = await graph.invoke(new Command({ resume: { type: "ignore", args: null } }), config);
    expect(done.status).toBe("rejected");
    expect(done.failureReason).toMatch(/rejected by a human: ignored/);
  });
});
