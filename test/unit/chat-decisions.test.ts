import { describe, expect, it } from "vitest";
import { decisionFromMessage } from "../../src/domain/decisions.js";

/* Issue 13 item 5: a chat reply read as the decision the waiting request offers, for every kind of request. */
const plan = { kind: "plan_approval" as const, decisions: ["approve", "reject", "adjust", "replan"] };
const escalation = { kind: "max_revisions" as const, decisions: ["skip", "retry", "replan", "abort"] };
const check = { kind: "unknown_outcome" as const, decisions: ["retry", "skip", "abort"] };
const tool = { kind: "tool_approval" as const, decisions: ["approve", "deny"] };

const read = (text: string, request: typeof plan | typeof escalation | typeof check | typeof tool) => {
  const r = decisionFromMessage(text, request);
  return r.ok ? r.value.decision : r.reason;
};

describe("decisionFromMessage", () => {
  it("reads yes and no as the request's own approve and reject", () => {
    expect(read("Yes!", plan)).toEqual({ decision: "approve", comment: null, by: "chat" });
    expect(read("ok", escalation)).toMatchObject({ decision: "retry" });
    expect(read("no", escalation)).toMatchObject({ decision: "skip" });
    expect(read("approve", tool)).toMatchObject({ decision: "approve" });
    expect(read("no thanks", tool)).toMatchObject({ decision: "deny", comment: "thanks" });
  });

  it("keeps the words after the decision as its comment, and reads stop as abort where offered", () => {
    expect(read("reject too dear", plan)).toMatchObject({ decision: "reject", comment: "too dear" });
    expect(read("stop", escalation)).toMatchObject({ decision: "abort" });
    expect(read("stop", plan)).toMatchObject({ decision: "reject" });
    expect(read("skip", check)).toMatchObject({ decision: "skip" });
  });

  it("reads other text as guidance where a replan is offered, as a denial's reason for a tool call", () => {
    expect(read("replan fly on Sunday", plan)).toEqual({
      decision: "replan",
      guidance: "fly on Sunday",
      comment: null,
      by: "chat",
    });
    expect(read("a budget of 5000 is fine", escalation)).toMatchObject({
      decision: "replan",
      guidance: "a budget of 5000 is fine",
    });
    expect(read("not this card", tool)).toMatchObject({ decision: "deny", comment: "not this card" });
  });

  it("says what to type when the text answers nothing the request offers", () => {
    expect(read("maybe later", check)).toBe(
      '"maybe later" does not answer "check whether a call took effect": reply with one of retry, skip, abort',
    );
    expect(read("   ", plan)).toBe("the message is empty");
  });
});
