import { describe, expect, it } from "vitest";
import { travelToolkit } from "../../examples/travel/index.js";
import type { Plan } from "../../src/domain/plan.js";
import { PlanningRequest } from "../../src/domain/request.js";
import {
  coverageOf,
  judgeReview,
  partsToReview,
  unansweredByUnderstanding,
  withMissingListed,
} from "../../src/planning/coverage.js";
import { reviewPrompt } from "../../prompts/synthesize.js";
import { planWithRules } from "../../src/planning/rules-planner.js";
import { finalStatus } from "../../src/reflection/reflect.js";
import { summarizeText } from "../../src/tools/builtin/summarize.js";
import { ToolRegistry } from "../../src/tools/registry.js";

const registry = ToolRegistry.create([travelToolkit({ latencyMs: 0 })]);
const plan = (userIntent: string) => planWithRules(PlanningRequest.parse({ userIntent }), registry);
/** The plan as if every step had run: done, or the given ones skipped after failing. */
const ran = (p: Plan, skipped: string[] = []): Plan => ({
  ...p,
  steps: p.steps.map((s) =>
    skipped.includes(s.id)
      ? { ...s, status: "skipped" as const, skipCause: "failed" as const, skipReason: "gave up" }
      : { ...s, status: "done" as const, result: { summary: `${s.id} ok` } },
  ),
});

describe("a run is completed only when every requested part was served by a step that succeeded", () => {
  it.each([
    "find flights from Madrid to Paris and translate the restaurant menu into German",
    "book me a flight from Paris to London and email the confirmation to my boss",
    "3 days in Paris from Madrid next Friday",
  ])("every step succeeded, yet the run is partial and the gap is named: %s", (text) => {
    const done = ran(plan(text));
    expect(done.steps.every((s) => s.status === "done")).toBe(true);
    expect(finalStatus("reflecting", done)).toBe("partial");
    expect(unansweredByUnderstanding(done).length).toBeGreaterThan(0);
  });

  it("a fully understood plan whose steps all succeeded is completed; excluded parts count as honoured", () => {
    expect(
      finalStatus("reflecting", ran(plan("Plan a 3-day trip from Madrid to Paris for 2 people under $2000"))),
    ).toBe("completed");
    const noHotel = ran(plan("3 days in Paris from Madrid for 2, no hotel"));
    expect(coverageOf(noHotel).parts.map((p) => p.answered)).toEqual([true, true]);
    expect(finalStatus("reflecting", noHotel)).toBe("completed");
  });

  it("a served part whose step (or its replacement) was given up on is unanswered, with the step named", () => {
    const p = ran(plan("Plan a 3-day trip from Madrid to Paris for 2 people"), ["hotel"]);
    const [part] = coverageOf(p).parts;
    expect(part).toMatchObject({ answered: false });
    expect(part!.why).toMatch(/\(hotel\) was skipped: gave up/);
  });

  it("a plan from an old checkpoint (no record) is judged by its steps alone", () => {
    const old = {
      ...ran(plan("Plan a 3-day trip from Madrid to Paris")),
      understanding: {
        parts: [],
        values: [],
        assumptions: [],
        changes: [],
        refused: [],
        unaccounted: [],
        disputed: [],
        by: "none" as const,
      },
    };
    expect(finalStatus("reflecting", old)).toBe("completed");
  });
});

describe("a model's review of the answer is weighed against the record", () => {
  const p = ran(plan("find flights from Madrid to Paris and translate the restaurant menu into German"));
  const served = p.understanding.parts.find((x) => x.status === "served")!;
  const missing = p.understanding.parts.find((x) => x.status === "unsupported")!;

  it("a model that claims a part no step served is overruled", () => {
    const verdict = judgeReview(p, {
      parts: [
        { partId: missing.id, answered: true, why: null },
        { partId: served.id, answered: true, why: null },
      ],
    });
    expect(verdict.overruled).toEqual([
      {
        partId: missing.id,
        text: missing.text,
        why: expect.stringMatching(/^the model said it is answered, but no tool can translate/),
      },
    ]);
    expect(verdict.incomplete).toEqual([]);
  });

  it("a served part the model finds unanswered sends its last step back as incomplete", () => {
    const verdict = judgeReview(p, { parts: [{ partId: served.id, answered: false, why: "no price is given" }] });
    expect(verdict.incomplete).toEqual([
      { partId: served.id, text: served.text, stepId: "flight", why: "no price is given" },
    ]);
  });

  it("an answer that leaves out a missing item gets it listed", () => {
    const answer = withMissingListed("Here are your flights. The menu was translated.", [
      { id: "p2", description: '"translate the menu"', reason: "no tool can translate" },
    ]);
    expect(answer).toBe(
      'Here are your flights. The menu was translated.\nMissing from this answer:\n- "translate the menu" (p2): no tool can translate',
    );
    expect(
      withMissingListed(answer, [{ id: "p2", description: '"translate the menu"', reason: "no tool can translate" }]),
    ).toBe(answer);
  });
});

describe("summarize_text (the workspace's offline summary)", () => {
  it("gives the headings with the lead sentence under each, skipping code, lists and tables", () => {
    const text = [
      "# Title",
      "",
      "First sentence here. Second one.",
      "",
      "## Usage",
      "",
      "```bash",
      "npm start",
      "```",
      "",
      "- a list item",
      "",
      "Run it like this. Then more.",
      "",
      "Setext heading",
      "--------------",
      "Lead of setext.",
    ].join("\n");
    const out = summarizeText("doc.md", text);
    expect(out.sections).toEqual([
      { heading: "Title", lead: "First sentence here." },
      { heading: "Usage", lead: "Run it like this." },
      { heading: "Setext heading", lead: "Lead of setext." },
    ]);
    expect(out.summary).toBe(
      "Summary of doc.md (3 section(s)):\nTitle — First sentence here.\nUsage — Run it like this.\nSetext heading — Lead of setext.",
    );
  });

  it("a text without headings gives its first sentences", () => {
    expect(summarizeText("notes.txt", "One. Two! Three? Four.").summary).toBe("notes.txt: One. Two! Three?");
  });
});

// Regression: the model was asked to review parts whose only step was skipped; whatever it said was overruled, so
// the call (tokens, time) bought nothing, and a run whose steps all failed still paid for a review.
describe("the model's review is asked only about parts a step answered", () => {
  const text = "find flights from Madrid to Paris and a hotel in Paris";
  const p = plan(text);
  const flight = p.steps.find((s) => s.tools.includes("search_flights"))!;
  const partOf = (planned: Plan, stepId: string) =>
    planned.understanding.parts.find((part) => part.stepIds.includes(stepId))!;

  it("leaves out a part whose step was skipped, keeps the ones whose steps succeeded", () => {
    const someSkipped = ran(p, [flight.id]);
    const asked = partsToReview(someSkipped).map((part) => part.id);
    expect(asked).not.toContain(partOf(someSkipped, flight.id).id);
    expect(asked.length).toBeGreaterThan(0);
    const prompt = reviewPrompt({
      request: PlanningRequest.parse({ userIntent: text }),
      plan: someSkipped,
      results: {},
      missing: [],
    });
    expect(prompt).not.toContain(`- ${partOf(someSkipped, flight.id).id} [`);
  });

  it("has nothing to ask when no step answered", () => {
    expect(
      partsToReview(
        ran(
          p,
          p.steps.map((s) => s.id),
        ),
      ),
    ).toEqual([]);
    expect(partsToReview(ran(p)).length).toBe(p.understanding.parts.filter((x) => x.status === "served").length);
  });
});
