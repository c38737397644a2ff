import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import type { BaseMessage } from "@langchain/core/messages";
import type { AgentStateValue } from "../../nodes/state.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { EASY_TRIP, agentsOnTempDb, interruptValues, threadConfig } from "../fakes/graph-harness.js";

/*
 * Issue 13 item 5: Candor in a chat client. A conversation is the input (the last human message is the request),
 * a reply while the thread waits is read as the decision, and Candor answers with AI messages as it goes.
 */
const { agent } = agentsOnTempDb();

const human = (content: string) => ({ messages: [{ type: "human", content }] });
const said = (messages: BaseMessage[]) => messages.map((m) => `${m.type}: ${m.text}`);
const aiAfterLastHuman = (messages: BaseMessage[]) => {
  const last = messages.findLastIndex((m) => m.type === "human");
  return messages.slice(last + 1).map((m) => {
    expect(m.type).toBe("ai");
    return m.text;
  });
};

describe("a conversation as input", () => {
  it("plans the last human message and answers with the plan, then the answer and where the report is", async () => {
    const a = agent();
    const state = (await a.graph.invoke(human(EASY_TRIP), threadConfig("chat-plain"))) as AgentStateValue;
    expect(state.status).toBe("completed");
    expect(state.request.userIntent).toBe(EASY_TRIP);
    const replies = aiAfterLastHuman(state.messages);
    expect(replies[0]).toMatch(/^\*\*Plan plan-\w+: 5 step\(s\), confidence 0\.\d\d\*\*/);
    expect(replies[0]).toContain("1. flight [flight_agent]");
    const last = replies.at(-1)!;
    expect(last).toContain(state.answer!);
    expect(last).toMatch(/\*\*Run completed/);
    expect(last).toContain("candor report chat-plain");
    // Nothing else than what the person needs: no step starts, successes or progress lines.
    expect(replies).toHaveLength(2);
  });

  it("refuses a conversation without a human message, with an error that says what to send", async () => {
    const a = agent();
    const run = a.graph.invoke({ messages: [{ type: "ai", content: "hello" }] }, threadConfig("chat-none"));
    await expect(run).rejects.toSatisfy(
      (e: unknown) =>
        CandorError.isInstance(e) && e.code === ErrorCode.INVALID_REQUEST && /Send a human message/.test(e.message),
    );
  });

  it("a `request` wins over the messages", async () => {
    const a = agent();
    const state = (await a.graph.invoke(
      { request: { userIntent: EASY_TRIP }, ...human("something else entirely") },
      threadConfig("chat-request"),
    )) as AgentStateValue;
    expect(state.request.userIntent).toBe(EASY_TRIP);
    expect(state.status).toBe("completed");
  });
});

describe("a reply while the thread waits for a decision", () => {
  it("'yes' approves the plan, and the reply says how it was read; the run finishes", async () => {
    const a = agent();
    const config = threadConfig("chat-yes");
    const first = await a.graph.invoke({ ...human(EASY_TRIP), settings: { approvalThreshold: 0.99 } }, config);
    expect(interruptValues(first)[0]).toMatchObject({ kind: "plan_approval" });
    const asked = aiAfterLastHuman((await a.graph.getState(config)).values.messages as BaseMessage[]);
    expect(asked.at(-1)).toMatch(/needs approval[\s\S]*reply here:[\s\S]*\*\*approve\*\*: run the plan as it is/);

    const state = (await a.graph.invoke(human("yes"), config)) as AgentStateValue;
    expect(state.status).toBe("completed");
    expect(state.approval).toMatchObject({ decision: "approve", by: "chat" });
    const replies = aiAfterLastHuman(state.messages);
    expect(replies[0]).toMatch(/^I read your message "yes" as \*\*approve\*\* \(run the plan as it is\)\./);
    expect(replies.at(-1)).toMatch(/\*\*Run completed/);
    // The plan was not made again: one plan message in the whole conversation.
    expect(said(state.messages).filter((m) => m.startsWith("ai: **Plan plan-") && m.includes("step(s)"))).toHaveLength(
      1,
    );
  });

  it("'reject too dear' rejects it with the rest as the comment; no step runs", async () => {
    const a = agent();
    const config = threadConfig("chat-reject");
    await a.graph.invoke({ ...human(EASY_TRIP), settings: { approvalThreshold: 0.99 } }, config);
    const state = (await a.graph.invoke(human("reject too dear"), config)) as AgentStateValue;
    expect(state.status).toBe("rejected");
    expect(state.approval).toMatchObject({ decision: "reject", comment: "too dear", by: "chat" });
    expect(state.feedback).toEqual([]);
    expect(aiAfterLastHuman(state.messages)[0]).toMatch(/^I read your message "reject too dear" as \*\*reject\*\*/);
  });

  it("other text is guidance: the plan is made again following it", async () => {
    const a = agent();
    const config = threadConfig("chat-guidance");
    await a.graph.invoke({ ...human(EASY_TRIP), settings: { approvalThreshold: 0.99 } }, config);
    const out = await a.graph.invoke(human("only 2 days please"), config);
    const state = (await a.graph.getState(config)).values as AgentStateValue;
    expect(state.approval).toMatchObject({ decision: "replan", guidance: "only 2 days please", by: "chat" });
    expect(aiAfterLastHuman(state.messages)[0]).toMatch(/^I read your message "only 2 days please" as \*\*replan\*\*/);
    // The plan made again still needs approval at 0.99: it asks again, and says so in the chat.
    expect(interruptValues(out)[0]).toMatchObject({ kind: "plan_approval" });
  });

  it("a message to a thread that already ran starts nothing and says so", async () => {
    const a = agent();
    const config = threadConfig("chat-done");
    await a.graph.invoke(human(EASY_TRIP), config);
    const state = (await a.graph.invoke(human("and Rome too"), config)) as AgentStateValue;
    expect(state.status).toBe("completed");
    expect(aiAfterLastHuman(state.messages)).toEqual([
      'This thread already ran (status: completed); your message "and Rome too" does not start another run. Start a new thread for a new request.',
    ]);
  });

  it("a message while a worker's tool call waits does not lose the approval: it is asked again and its answer still runs the call", async () => {
    // Bug this pins: the chat app's new message discarded the worker's pending interrupt, and the thread sat at
    // "executing" with nothing left to run and no question asked.
    const a = agent();
    const config = threadConfig("chat-tool");
    const first = await a.graph.invoke(human("Plan and book a 2-day trip from Paris to Rome for 1 person"), config);
    expect(interruptValues(first)[0]).toMatchObject({ kind: "tool_approval", tool: "book_trip" });
    const again = await a.graph.invoke(human("yes"), config);
    expect(interruptValues(again)[0]).toMatchObject({ kind: "tool_approval", tool: "book_trip" });
    const waiting = (await a.graph.getState(config)).values as AgentStateValue;
    expect(aiAfterLastHuman(waiting.messages)[0]).toMatch(
      /^Your message "yes" is not read as an answer: this run waits for a tool call's approval/,
    );
    const state = (await a.graph.invoke(new Command({ resume: { decision: "approve" } }), config)) as AgentStateValue;
    expect(state.status).toBe("completed");
    expect(a.calls.count("book_trip")).toBe(1);
  });
});
