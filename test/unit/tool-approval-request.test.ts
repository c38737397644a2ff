import { describe, expect, it } from "vitest";
import { ToolApprovalRequest, toolApprovalRequest } from "../../src/domain/approval.js";

describe("toolApprovalRequest (the question a call that needs a person waits on)", () => {
  const call = {
    planId: "p1",
    taskId: "book",
    tool: { name: "book_trip", sideEffect: "irreversible" as const },
    args: { hotel: "H1" },
    inputs: { flight: "FL-1 Madrid→Rome, $210" },
  };

  it("names the step, the exact call, what it consumes and that it cannot be undone, and offers approve or deny", () => {
    const request = toolApprovalRequest(call);
    expect(ToolApprovalRequest.parse(request)).toEqual(request);
    expect(request).toMatchObject({
      kind: "tool_approval",
      taskId: "book",
      tool: "book_trip",
      decisions: ["approve", "deny"],
    });
    expect(request.question).toBe(
      'Step book wants to call book_trip({"hotel":"H1"}) on flight: FL-1 Madrid→Rome, $210, which cannot be undone. Approve or deny this call?',
    );
  });

  it("says why a call the ledger already holds is asked again, and that a reversible call only needs approval", () => {
    const request = toolApprovalRequest({
      ...call,
      tool: { name: "write_report", sideEffect: "reversible" },
      inputs: {},
      why: "The request changed since this call was approved.",
    });
    expect(request.question).toBe(
      'The request changed since this call was approved. Step book wants to call write_report({"hotel":"H1"}), which needs a person\'s approval. Approve or deny this call?',
    );
  });
});
