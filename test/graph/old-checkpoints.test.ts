import { Command, type BaseCheckpointSaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { Node } from "../../nodes/names.js";
import type { AgentStateValue } from "../../nodes/state.js";
import { EASY_TRIP, agentsOnTempDb, interruptValues, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";

/*
 * Threads checkpointed before the state had `next`: they carry `pendingStrategy` and `guidance` and no `next`.
 * Each test writes its thread's latest checkpoint back in that shape, then resumes it with today's graph.
 */
const { agent } = agentsOnTempDb();
/** The rules plan's confidence is 0.85, so this threshold always asks. */
const ASK = { approvalThreshold: 0.99 };

/** Rewrites the thread's latest checkpoint as a version before `next` wrote it: no `next`, the two older fields. */
async function asWrittenBeforeNext(
  saver: BaseCheckpointSaver,
  threadId: string,
  older: { pendingStrategy: unknown; guidance: unknown },
): Promise<void> {
  const tuple = (await saver.getTuple(threadConfig(threadId)))!;
  const { next: _value, ...values } = tuple.checkpoint.channel_values;
  const { next: _version, ...versions } = tuple.checkpoint.channel_versions;
  const version = Object.values(versions)[0]!;
  await saver.put(
    tuple.parentConfig ?? threadConfig(threadId),
    {
      ...tuple.checkpoint,
      channel_values: { ...values, ...older },
      channel_versions: { ...versions, pendingStrategy: version, guidance: version },
    },
    tuple.metadata!,
    {},
  );
}

const NONE = { pendingStrategy: null, guidance: null };

describe("a thread checkpointed before `next` existed", () => {
  it("waiting for a plan approval: the approval resumes it to completion", async () => {
    const a = agent();
    const config = threadConfig("old-approve");
    interruptValues(await a.graph.invoke(tripInput(EASY_TRIP, ASK), config));
    await asWrittenBeforeNext(a.persistence.checkpointer, "old-approve", NONE);
    const old = await a.graph.getState(config);
    expect(old.values.next).toBeNull();
    expect(old.next).toEqual([Node.HUMAN_INTERRUPT]);

    const done = await a.graph.invoke(new Command({ resume: { decision: "approve" } }), config);
    expect(done.status).toBe("completed");
    expect(done.feedback.map((f) => f.feedbackType)).toEqual(Array(5).fill("SUCCESS"));
    expect(done.next).toEqual({ kind: "end" });
  });

  it("waiting for a plan approval: a chat message is read as the answer (the request it shows says it waits)", async () => {
    const a = agent();
    const config = threadConfig("old-chat");
    interruptValues(await a.graph.invoke(tripInput(EASY_TRIP, ASK), config));
    await asWrittenBeforeNext(a.persistence.checkpointer, "old-chat", NONE);
    const done = (await a.graph.invoke({ messages: [{ type: "human", content: "no" }] }, config)) as AgentStateValue;
    expect(done.status).toBe("rejected");
    expect(done.approval).toMatchObject({ decision: "reject", by: "chat" });
  });

  it("that ended: a chat message starts nothing", async () => {
    const a = agent();
    const config = threadConfig("old-ended");
    expect((await a.graph.invoke(tripInput(EASY_TRIP), config)).status).toBe("completed");
    await asWrittenBeforeNext(a.persistence.checkpointer, "old-ended", NONE);
    const before = a.calls.total();
    const after = (await a.graph.invoke(
      { messages: [{ type: "human", content: "and Rome?" }] },
      config,
    )) as AgentStateValue;
    expect(after.status).toBe("completed");
    expect(after.messages.at(-1)!.text).toMatch(/already ran \(status: completed\)/);
    expect(a.calls.total()).toBe(before);
  });

  it("stopped between a person's `replan` of a plan approval and the replan: plans again with the guidance", async () => {
    const a = agent();
    const config = threadConfig("old-replan");
    interruptValues(await a.graph.invoke(tripInput("Plan a 4-day trip to Atlantis from Paris"), config));
    // The checkpoint after human_interrupt took the replan: written as today's graph writes it, then as before.
    const waiting = (await a.graph.getState(config)).values as AgentStateValue;
    const answered = await a.graph.updateState(
      config,
      {
        status: "replanning",
        pendingInterrupt: null,
        approval: {
          kind: "plan_approval",
          decision: "replan",
          comment: null,
          by: "cli",
          at: new Date().toISOString(),
          confidence: planOf(waiting)!.confidence,
          adjustments: null,
          params: null,
          guidance: "Go to Rome instead",
        },
        next: { kind: "replan", taskId: null, text: "Go to Rome instead", request: waiting.pendingInterrupt! },
      },
      Node.HUMAN_INTERRUPT,
    );
    expect((await a.graph.getState(answered)).next).toEqual([Node.REPLAN_WITH_GUIDANCE]);
    await asWrittenBeforeNext(a.persistence.checkpointer, "old-replan", {
      pendingStrategy: null,
      guidance: { taskId: null, text: "Go to Rome instead", request: waiting.pendingInterrupt },
    });
    const done = await a.graph.invoke(null, config);
    expect(done.status).toBe("completed");
    expect(done.request.userIntent).toBe("Go to Rome instead. Plan a 4-day trip to Atlantis from Paris");
    expect(planOf(done)!.steps.find((s) => s.id === "hotel")!.params.city).toBe("Rome");
  });
});
