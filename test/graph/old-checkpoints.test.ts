import { Command, type BaseCheckpointSaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { Node } from "../../nodes/names.js";
import type { AgentStateValue } from "../../nodes/state.js";
import { EASY_TRIP, agentsOnTempDb, interruptValues, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { planOf } from "../../src/domain/plan-state.js";
import { ErrorCode } from "../../src/errors.js";

/*
 * Threads checkpointed before the state had `next`: they carry `pendingStrategy` and `guidance` and no `next`.
 * Each test writes its thread's latest checkpoint back in that shape, then resumes it with today's graph. What
 * today's graph can do without guessing, it does (a node that sets `next` itself, a run that ended); where it would
 * have to guess where the run was, it stops with UNSUPPORTED_CHECKPOINT and says what to do (issue 22 item 8:
 * compatibility branches for earlier builds of this 0.x package go; an old thread gets a clear error).
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

  it("waiting for a plan approval: a chat message is refused with a clear error, nothing run", async () => {
    const a = agent();
    const config = threadConfig("old-chat");
    interruptValues(await a.graph.invoke(tripInput(EASY_TRIP, ASK), config));
    await asWrittenBeforeNext(a.persistence.checkpointer, "old-chat", NONE);
    const before = a.calls.total();
    await expect(a.graph.invoke({ messages: [{ type: "human", content: "no" }] }, config)).rejects.toMatchObject({
      code: ErrorCode.UNSUPPORTED_CHECKPOINT,
      message: expect.stringMatching(/earlier build of Candor.*start a new thread with candor run/),
    });
    expect(a.calls.total()).toBe(before);
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

  it("stopped between a person's `replan` of a plan approval and the replan: refused with a clear error, nothing planned", async () => {
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
    // Where the run was (the guidance's question) is only in a field this build no longer reads: it says so.
    await expect(a.graph.invoke(null, config)).rejects.toMatchObject({ code: ErrorCode.UNSUPPORTED_CHECKPOINT });
    expect(
      planOf((await a.graph.getState(config)).values as AgentStateValue)!.steps.find((s) => s.id === "hotel")!.params
        .city,
    ).not.toBe("Rome");
  });
});
