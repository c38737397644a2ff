import { describe, expect, it } from "vitest";
import { AgentState } from "../../nodes/state.js";
import { RunSettings } from "../../src/domain/request.js";
import type { PlanDefinition } from "../../src/domain/plan.js";
import { planFields, planView, runsOf } from "../../src/domain/plan-state.js";
import { checkEditedPlan } from "../../src/replanning/plan-edit.js";
import { parseAssignments, stateFieldsOf, updateFromAssignments } from "../../src/replay.js";
import { request, stepOf, travelPlan, travelRegistry, withSteps } from "../fakes/toolkit-fixtures.js";

const TRIP = "Plan a 3-day trip from Paris to Rome for 1 person";
const registry = travelRegistry();
const plan = travelPlan(TRIP, registry);
const fields = stateFieldsOf(AgentState);
/** A checkpoint's values right after planning: the plan's definition, and its steps' run-state apart. */
const base = {
  request: request(TRIP),
  settings: RunSettings.parse({}),
  ...planFields(plan),
  feedback: [],
  revisionCount: 0,
  status: "executing",
};
const update = (...sets: string[]) => updateFromAssignments(base, sets, fields);
const refusal = (...sets: string[]) => {
  try {
    update(...sets);
  } catch (e) {
    return (e as Error).message;
  }
  return "accepted";
};

describe("fork --set checks paths and values against the state's shape (issue 8 defect 7)", () => {
  // Regression: a path that does not exist was written into the fork and ignored by every node, so the fork ran
  // unchanged while saying it had applied the edit; `__proto__` segments were walked like any other key.
  it.each([
    [
      "a field the state does not have",
      ["nosuch.path=1"],
      /^--set refused, nothing was changed: nosuch: the state has no such field; its fields are request, settings, plan/,
    ],
    [
      "a field inside one that does not exist",
      ["request.foo=1"],
      /request.foo: no such field; the fields here are userIntent, userContext, constraints\.$/,
    ],
    [
      "a path below a number",
      ["settings.maxRevisions.x=1"],
      /settings.maxRevisions.x: no such field: the value above it is a number/,
    ],
    [
      "a step index past the end of the plan",
      ["plan.steps.9.params.x=1"],
      /plan.steps.9: the list has 5 item\(s\) at this checkpoint \(0-4\)/,
    ],
    ["a list indexed by name", ["plan.steps.hotel.params.nights=3"], /plan.steps.hotel: a list is indexed by number/],
    [
      "a list the run appends to",
      ["feedback=[]"],
      /feedback: the run only appends to this list \(its history\), so a fork cannot replace it/,
    ],
    [
      "a value its schema refuses",
      ["settings.maxRevisions=-1"],
      /settings.maxRevisions: Too small: expected number to be >=0\.$/,
    ],
    ["a plan that would not parse", ["plan.steps.0.timeoutMs=soon"], /plan.steps.0.timeoutMs: /],
  ])("refuses %s in plain words, never zod's JSON", (_what, sets, error) => {
    const message = refusal(...sets);
    expect(message).toMatch(error);
    expect(message).not.toMatch(/\[\{"|"code":/);
  });

  it.each([
    ["__proto__.polluted=1"],
    ["constructor.prototype.polluted=1"],
    ["settings.prototype=1"],
    ["plan.steps.0.__proto__.x=1"],
  ])(
    "always refuses a segment that reaches a prototype (%s), with or without a schema, before anything is opened",
    (set) => {
      expect(() => parseAssignments([set])).toThrow(/reaches an object's prototype, never a field/);
      expect(() => updateFromAssignments({}, [set])).toThrow(/reaches an object's prototype, never a field/);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );

  it("names every problem at once", () => {
    expect(refusal("nosuch=1", "request.foo=2")).toMatch(/nosuch: .*; request.foo: /);
  });

  it("accepts paths that exist, including free-form data below a record (a step's params)", () => {
    expect(update("settings.maxRevisions=1").settings).toEqual({ ...base.settings, maxRevisions: 1 });
    const edited = update("plan.steps.1.params.nights=3").plan as PlanDefinition;
    expect(edited.steps.find((s) => s.id === "hotel")!.params.nights).toBe(3);
    expect(update("request.constraints.budget=900").request).toMatchObject({ constraints: { budget: 900 } });
  });

  it("refuses to reach into a field that is empty at this checkpoint, saying how to set it", () => {
    expect(updateFromAssignmentsMessage({ ...base, plan: null }, "plan.steps.0.params.nights=3")).toMatch(
      /plan: is empty \(null\) at this checkpoint, so plan.steps.0.params.nights cannot be set/,
    );
  });
});

function updateFromAssignmentsMessage(values: Record<string, unknown>, set: string): string {
  try {
    updateFromAssignments(values, [set], fields);
  } catch (e) {
    return (e as Error).message;
  }
  return "accepted";
}

describe("fork --set on a plan step is checked against the step's tool (issue 8 defect 7)", () => {
  // Regression: `plan.steps.N.params.nights=-3` was accepted and failed at run time.
  // What a fork edits is the stored definition; it is checked as the plan it makes with the steps' run-state.
  const edited = (sets: string[], at = plan) =>
    planView(updateFromAssignments({ ...base, ...planFields(at) }, sets, fields).plan as PlanDefinition, runsOf(at));
  const check = (sets: string[], at = plan) => checkEditedPlan(at, edited(sets, at), request(TRIP), registry);

  it("refuses a value the tool would refuse, naming the step", () => {
    expect(check(["plan.steps.1.params.nights=-3"])).toMatchObject({
      ok: false,
      reason: expect.stringMatching(
        /^plan.steps.1 \(hotel\): search_hotels would refuse these parameters \(nights: Too small/,
      ),
    });
    expect(check(["plan.steps.1.params.nightz=3"])).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/search_hotels has no parameter "nightz"/),
    });
    expect(check(['plan.steps.1.tools=["search_flights"]'])).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/worker "hotel_agent" may not use tool "search_flights"/),
    });
    expect(check(['plan.steps.0.dependsOn=["itinerary"]'])).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^plan: Plan has a dependency cycle/),
    });
  });

  it("accepts a valid edit and writes the step's description again from its params", () => {
    const r = check(["plan.steps.1.params.nights=3"]);
    if (!r.ok) throw new Error(r.reason);
    expect(stepOf(r.value, "hotel").description).toBe("Find a hotel in Rome for 3 night(s)");
  });

  it("says when an edit cannot change what already ran: a finished step's params", () => {
    const ran = withSteps(plan, { hotel: { status: "done", result: { total: 1 } } });
    expect(check(["plan.steps.1.params.nights=3"], ran)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(
        /plan.steps.1 \(hotel\): has already run \(status done\) at this checkpoint, so .* would never be used; fork from a checkpoint before it ran/,
      ),
    });
  });
});

describe("the same refusal where a person types parameters at the terminal", () => {
  // Typed at the prompt, such a name is refused too, and asked again instead of ending the session.
  it("parseParams answers a prototype segment with an error to ask again", async () => {
    const { parseParams } = await import("../../src/cli/interactive.js");
    expect(parseParams("__proto__.polluted=1")).toEqual({
      ok: false,
      error: expect.stringMatching(/"__proto__" reaches an object's prototype, never a field/),
    });
  });
});
