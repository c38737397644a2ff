import { describe, expect, it } from "vitest";
import { nextAfterEdit, nextOf, type NextFields } from "../../src/domain/next.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { planWith } from "../fakes/graph-harness.js";

const plan = planWith([{ id: "a", description: "A", workerType: "w", tools: ["t"] }]);
const state = (fields: Partial<NextFields>): NextFields => ({ status: "executing", plan, next: null, ...fields });

describe("nextAfterEdit: where a run goes after an edit that cleared the question as human_interrupt", () => {
  it.each(["completed", "partial", "failed", "rejected", "aborted"] as const)("a run edited to %s ends", (status) => {
    expect(nextAfterEdit(status)).toEqual({ kind: "end" });
  });
  it("a run put back to replanning chooses a recovery for its failed step", () => {
    expect(nextAfterEdit("replanning")).toEqual({ kind: "choose_recovery" });
  });
  it("anything else runs the plan", () => {
    expect(nextAfterEdit("executing")).toEqual({ kind: "execute" });
    expect(nextAfterEdit("awaiting_approval")).toEqual({ kind: "execute" });
  });
});

describe("nextOf", () => {
  it("reads `next` when the state has it, whatever the status says", () => {
    expect(nextOf(state({ status: "completed", next: { kind: "execute" } }))).toEqual({ kind: "execute" });
  });
  it("ends a run that has no plan yet (nothing can run)", () => {
    expect(nextOf(state({ plan: null, status: "planning" }))).toEqual({ kind: "end" });
  });
  it("ends a run whose status says it ended", () => {
    expect(nextOf(state({ status: "completed" }))).toEqual({ kind: "end" });
  });
  it("refuses, with a code and what to do, a checkpoint from a build before `next` (a plan and no `next`)", () => {
    let thrown: unknown;
    try {
      nextOf(state({ status: "awaiting_approval" }));
    } catch (e) {
      thrown = e;
    }
    expect(CandorError.isInstance(thrown) && thrown.code).toBe(ErrorCode.UNSUPPORTED_CHECKPOINT);
    expect((thrown as Error).message).toMatch(/earlier build of Candor.*start a new thread with candor run/);
  });
});
