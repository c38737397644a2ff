import { describe, expect, it } from "vitest";
import { Plan, type TaskStepInput } from "../../src/domain/plan.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { RulesReasoner, resultLine } from "../../src/reasoning/rules.js";
import { checkAnswer, type AnswerCheckInput, type ToolFacts } from "../../src/transparency/answer-check.js";
import { figuresOf } from "../../src/transparency/answer-figures.js";

// Issue 22 item 3: the answer says only what the evidence shows. A model's answer with an invented figure, a claim
// of a side effect no call made, a missing part presented as done, or no result at all was printed as it was.

const TOOLS: ToolFacts[] = [
  { name: "search_flights", sideEffect: "none", produces: ["flight"] },
  { name: "check_budget", sideEffect: "none", produces: ["budget_status"] },
  { name: "book_trip", sideEffect: "irreversible", produces: ["booking"], effectWords: ["booked", "reserved"] },
  { name: "publish_note", sideEffect: "irreversible", produces: ["receipt"] },
  { name: "write_report", sideEffect: "reversible", produces: ["report"], effectWords: ["report written"] },
];

const FLIGHT = { flightNumber: "IB895", airline: "Iberia", cost: 356, summary: "IB895 Madrid → Paris, $356 for 2" };
const BUDGET = { total: 2181.6, budget: 3000, withinBudget: true };

function step(id: string, tool: string, extra: Partial<TaskStepInput> = {}): TaskStepInput {
  return { id, description: `Run ${tool}`, workerType: "travel", tools: [tool], ...extra };
}

/** Flights found, the budget checked, the booking as given (failed unless said otherwise). */
function tripPlan(booking: Partial<TaskStepInput> = { status: "failed" }): Plan {
  return Plan.parse({
    planId: "plan-1",
    objective: "Trip Madrid → Paris for 2 under $3000",
    confidence: 0.9,
    steps: [
      step("flight", "search_flights", { description: "Flights Madrid → Paris", status: "done", result: FLIGHT }),
      step("budget", "check_budget", {
        description: "Check the budget",
        dependsOn: ["flight"],
        status: "done",
        result: BUDGET,
      }),
      step("book", "book_trip", { description: "Book the trip", dependsOn: ["budget"], ...booking }),
    ],
  });
}

function input(answer: string, over: Partial<AnswerCheckInput> = {}): AnswerCheckInput {
  return {
    answer,
    request: PlanningRequest.parse({ userIntent: "Plan a trip from Madrid to Paris for 2 people under $3000" }),
    plan: tripPlan(),
    missing: [],
    feedback: [],
    tools: TOOLS,
    grants: { travel: ["search_flights", "check_budget", "book_trip"], general: TOOLS.map((t) => t.name) },
    resultLine,
    ...over,
  };
}

describe("figures: a number no result, request or record holds takes its sentence out", () => {
  it("an invented total is taken out and named; the rounded real total, the request's figures and counts stay", () => {
    const answer = [
      "Flight IB895 costs $356 for 2 people.",
      "The total is $2,500, well under your budget.",
      "The total is $2,182, under the $3,000 budget.",
      "I found 1 flight.",
    ].join(" ");
    const out = checkAnswer(input(answer));
    expect(out.corrections).toHaveLength(1);
    expect(out.corrections[0]).toMatchObject({
      kind: "figure",
      sentence: "The total is $2,500, well under your budget.",
    });
    expect(out.corrections[0]!.text).toBe(
      "removed a sentence with the figure 2,500: it is in no step's result, in the request or in what was understood of it.",
    );
    expect(out.answer).not.toContain("well under");
    expect(out.answer).toContain("The total is $2,182, under the $3,000 budget.");
    expect(out.answer).toContain("I found 1 flight.");
    expect(out.answer.split("\n").at(-1)).toBe(`Corrected: ${out.corrections[0]!.text}`);
  });

  it("a decimal comma and a percentage are read as the tool's values; a ratio the tool returned backs its percent", () => {
    const plan = tripPlan();
    plan.steps[1]!.result = { ...BUDGET, share: 0.727 };
    const out = checkAnswer(input("The total is 2.181,6 USD, 72.7% of the budget.", { plan }));
    expect(out.corrections).toEqual([]);
  });

  it("a worker model's own words are not evidence: a figure only its answer said is taken out", () => {
    const feedback = [{ taskId: "flight", dispatch: 1, evidence: null, outputs: { result: FLIGHT, answer: "$999" } }];
    const out = checkAnswer(input("Flight IB895 costs $999.", { feedback }));
    expect(out.corrections.map((c) => c.kind)).toEqual(["figure", "unanswered"]);
    expect(out.corrections[0]!.text).toContain("999");
  });

  it("dates, times, identifiers and a list's numbering are not figures", () => {
    expect(figuresOf("1. Flight IB895 (CND-0EJX) leaves 2026-12-01 at 09:10, file2.txt, 3rd, Nov 28, 2026")).toEqual(
      [],
    );
    expect(figuresOf("It costs $1,234.50 or 12%").map((f) => f.text)).toEqual(["1,234.50", "12%"]);
    const out = checkAnswer(input("Flight IB895 leaves on 2026-12-01 at 09:10 from gate B12. Total: $2,182."));
    expect(out.corrections).toEqual([]);
  });
});

describe("side effects: a sentence claiming an effect no call made is taken out", () => {
  it("'Your trip is booked' after the booking step failed is taken out and the step named", () => {
    const out = checkAnswer(input("The total is $2,182. Your trip is booked: enjoy Paris!"));
    expect(out.corrections).toHaveLength(1);
    expect(out.corrections[0]).toMatchObject({ kind: "effect", sentence: "Your trip is booked: enjoy Paris!" });
    expect(out.corrections[0]!.text).toBe(
      'removed a sentence saying book_trip took effect: no call of book_trip succeeded in this run (step book, "Book the trip", failed).',
    );
    // The claim is not repeated in the correction: nothing in the answer says the trip is booked.
    expect(out.answer).toBe(`The total is $2,182.\nCorrected: ${out.corrections[0]!.text}`);
  });

  it("the same sentence stands when the booking step succeeded", () => {
    const plan = tripPlan({ status: "done", result: { bookingRef: "CND-1" } });
    const out = checkAnswer(input("Flight IB895 costs $356. Your trip is booked: CND-1.", { plan }));
    expect(out.corrections).toEqual([]);
  });

  it("a sentence that says the effect did not happen, or asks, stands", () => {
    const out = checkAnswer(
      input("The total is $2,182. The trip was not booked because the service failed. Shall I book it again?"),
    );
    expect(out.corrections).toEqual([]);
  });

  it("an effect no step was planned for: the tool's own words, or the past tense of its name's verb", () => {
    const out = checkAnswer(input("The total is $2,182. Report written to reports/trip.md. The note was published."));
    expect(out.corrections.map((c) => [c.kind, c.sentence])).toEqual([
      ["effect", "Report written to reports/trip.md."],
      ["effect", "The note was published."],
    ]);
    expect(out.corrections[0]!.text).toContain("write_report was not called in this run");
  });

  it("a sentence reporting what a tool returned stands, though its words are those of an effect", () => {
    const plan = tripPlan();
    plan.steps[0]!.result = { ...FLIGHT, note: "Iberia has a report written after each flight" };
    const answer = "The airline says a report is written after each flight. The total is $2,182.";
    expect(checkAnswer(input(answer, { plan })).corrections).toEqual([]);
    expect(checkAnswer(input(answer)).corrections.map((c) => c.kind)).toEqual(["effect"]);
  });

  it("a finished step that could call several tools leaves their claims standing: the plan cannot tell", () => {
    const plan = Plan.parse({
      planId: "plan-r",
      objective: "reactive",
      confidence: 0.5,
      steps: [
        {
          id: "reactive",
          description: "the request",
          workerType: "general",
          tools: [],
          status: "done",
          // A reactive step's result is by tool (src/execution/evidence.ts).
          result: { search_flights: FLIGHT },
        },
      ],
    });
    const out = checkAnswer(input("Flight IB895 costs $356. Your trip is booked.", { plan }));
    expect(out.corrections).toEqual([]);
  });
});

describe("missing parts: a sentence presenting a missing item as done is taken out, and the item listed", () => {
  const missing = [{ id: "p2", description: '"translate the menu"', reason: "no tool can translate" }];

  it("'The menu was translated' is taken out; the item is listed as missing", () => {
    const out = checkAnswer(input("The total is $2,182. The menu was translated into German.", { missing }));
    expect(out.corrections.map((c) => c.kind)).toEqual(["part"]);
    expect(out.corrections[0]!.text).toBe(
      'removed a sentence presenting "translate the menu" as done: it is missing (no tool can translate).',
    );
    expect(out.answer).toBe(
      [
        "The total is $2,182.",
        "Missing from this answer:",
        '- "translate the menu" (p2): no tool can translate',
        `Corrected: ${out.corrections[0]!.text}`,
      ].join("\n"),
    );
  });

  it("saying it was not done, or listing it under a heading that says so, stands", () => {
    const said = checkAnswer(input("The total is $2,182. The menu could not be translated.", { missing }));
    expect(said.corrections).toEqual([]);
    const listed = checkAnswer(
      input("The total is $2,182.\nNot done:\n- translate the menu, for lack of a tool", { missing }),
    );
    expect(listed.corrections).toEqual([]);
  });
});

describe("an answer that gives no result gets the results from the steps themselves", () => {
  it.each(["Done, everything looks good.", "", "I could not complete this step.", "The cheap"])(
    "%j gets the rules' template appended",
    (answer) => {
      const out = checkAnswer(input(answer));
      expect(out.corrections.map((c) => c.kind)).toEqual(["unanswered"]);
      expect(out.answer).toContain(resultLine({ description: "Flights Madrid → Paris" }, FLIGHT));
      expect(out.answer).toContain(resultLine({ description: "Check the budget" }, BUDGET));
      expect(out.answer).toContain("Trip Madrid → Paris for 2 under $3000");
      expect(out.answer.startsWith(answer)).toBe(true);
    },
  );

  it("an answer that leaves out a final step's result gets that step's line", () => {
    const out = checkAnswer(input("Flight IB895 costs $356."));
    expect(out.corrections).toHaveLength(1);
    expect(out.corrections[0]!.text).toContain('leaves out what "Check the budget" (budget) produced');
    expect(out.answer).toBe(
      [
        "Flight IB895 costs $356.",
        "From the results:",
        resultLine({ description: "Check the budget" }, BUDGET),
        `Corrected: ${out.corrections[0]!.text}`,
      ].join("\n"),
    );
  });

  it("repeating what a final step was built from does not give its result (a budget check's breakdown)", () => {
    const plan = tripPlan();
    plan.steps[1]!.result = { ...BUDGET, breakdown: [{ item: "IB895", cost: 356 }] };
    const out = checkAnswer(input("Flight IB895 costs $356.", { plan }));
    expect(out.corrections.map((c) => c.text)).toEqual([
      `the answer as written leaves out what "Check the budget" (budget) produced, so it is listed from the steps' own results.`,
    ]);
  });

  it("an intermediate result need not be repeated when the final one is given", () => {
    expect(checkAnswer(input("The total is $2,182.")).corrections).toEqual([]);
  });

  it("the rules' own template passes unchanged, its missing list included", async () => {
    const plan = tripPlan({ status: "skipped", skipReason: "denied by a person", skipCause: "failed" });
    const missing = [{ id: "book", description: "Book the trip", reason: "denied by a person" }];
    const results = { flight: FLIGHT, budget: BUDGET };
    const request = PlanningRequest.parse({ userIntent: "Plan a trip from Madrid to Paris for 2 people and book it" });
    const written = await new RulesReasoner().synthesize({ request, plan, results, missing });
    const out = checkAnswer(input(written, { plan, missing, request }));
    expect(out).toEqual({ answer: written, corrections: [] });
  });
});

describe("a reactive step's result, one piece per tool", () => {
  const BOOKING = { reference: "CND-7Q2X", summary: "Booked: reference CND-7Q2X" };
  const reactive = () =>
    Plan.parse({
      planId: "plan-r2",
      objective: "Plan and book a trip",
      confidence: 0.5,
      createdBy: "reactive",
      steps: [
        {
          id: "reactive",
          description: "Plan and book a trip",
          workerType: "general",
          tools: [],
          status: "done",
          result: { search_flights: FLIGHT, book_trip: BOOKING },
        },
      ],
    });

  it("an answer that gives the searches but not the booking gets the booking's line, the searches' left out", () => {
    const out = checkAnswer(input("Flight IB895 with Iberia costs $356 for 2.", { plan: reactive() }));
    expect(out.answer).toContain("  - book_trip: Booked: reference CND-7Q2X");
    expect(out.answer).not.toContain("  - search_flights:");
    expect(out.corrections.map((c) => c.kind)).toEqual(["unanswered"]);
  });

  it("an answer that gives each tool's result stands as written", () => {
    const out = checkAnswer(input("Flight IB895 costs $356 for 2; booked, reference CND-7Q2X.", { plan: reactive() }));
    expect(out.corrections).toEqual([]);
  });

  it("the rules' line shows each tool's summary whole, on its own line", () => {
    const step = reactive().steps[0]!;
    expect(resultLine(step, step.result).split("\n")).toEqual([
      "- Plan and book a trip:",
      `  - search_flights: ${FLIGHT.summary}`,
      "  - book_trip: Booked: reference CND-7Q2X",
    ]);
  });
});

describe("the request restated claims nothing", () => {
  // Regression: "read link.txt", refused (a hard link), answered by the rules' template, whose first line is the
  // request: the check took that line for a claim that the missing read was done, and said it removed it.
  it("a line that only restates the request or the objective stands, with no correction", () => {
    const plan = Plan.parse({
      planId: "plan-restated",
      objective: "read link.txt",
      confidence: 0.85,
      steps: [
        { id: "text", description: "Read link.txt", workerType: "reader", tools: ["read_file"], status: "skipped" },
      ],
    });
    const missing = [{ id: "text", description: "Read link.txt", reason: "Skipped after it failed: refused" }];
    const request = PlanningRequest.parse({ userIntent: "read link.txt" });
    const out = checkAnswer(input("read link.txt", { plan, missing, request }));
    expect(out.corrections).toEqual([]);
    expect(out.answer).toContain("- Read link.txt (text): Skipped after it failed: refused");
  });
});
