import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { describe, expect, it } from "vitest";
import { Plan, TaskStep } from "../../src/domain/plan.js";
import { PlanningRequest } from "../../src/domain/request.js";
import { openQuestions } from "../../src/domain/understanding.js";
import { checkModelUnderstanding } from "../../src/planning/check-understanding.js";
import { analyzeRequest } from "../../src/planning/lexicon.js";
import { toPlanResult } from "../../src/planning/parse.js";
import { restatedSpans } from "../../src/planning/understanding.js";
import type { WorkerModel } from "../../src/reasoning/types.js";
import { travelToolkit } from "../../examples/travel/index.js";
import { workspaceToolkit } from "../../src/tools/builtin/workspace.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { countingTool } from "../fakes/toolkit-fixtures.js";
import { modelStep, workspaceModelPlan } from "../fakes/model-plans.js";
import { workerPrompt } from "../../prompts/worker.js";

// Regression: a model's plan for "Publish the weekly report" over a toolkit whose tools have no keywords
// ("prepare", "publish") was overruled as "no tool can post", so every such plan was asked about.
describe("a model's record over tools without keywords", () => {
  const prepare = countingTool("prepare_data", { category: "ops", produces: ["report_data"] }).spec;
  const publish = countingTool("publish", { category: "ops", consumes: ["report_data"], produces: ["published"] }).spec;
  const registry = ToolRegistry.create([
    { name: "ops", tools: [prepare, publish], workers: [{ name: "ops", description: "ops", categories: ["ops"] }] },
  ]);
  const request = PlanningRequest.parse({ userIntent: "Publish the weekly report" });
  const steps = [
    { id: "prepare", tools: ["prepare_data"], params: {}, description: "Prepare the data" },
    { id: "publish", tools: ["publish"], params: {}, description: "Publish it" },
  ];
  const claimed = (stepIds: string[]) => ({
    parts: [
      {
        text: "Publish the weekly report",
        description: "publish the report",
        kind: "task",
        status: "served",
        stepIds,
        why: null,
      },
    ],
    values: [],
    assumptions: [],
    changes: [],
  });

  it("credits a planned tool with what its own name says it does", () => {
    const { understanding } = checkModelUnderstanding(
      request,
      planOf(steps),
      registry,
      claimed(["prepare", "publish"]),
    );
    expect(openQuestions(understanding)).toEqual([]);
  });

  it("still overrules a claim when no tool of the plan does the verb", () => {
    const { understanding } = checkModelUnderstanding(
      request,
      planOf(steps.slice(0, 1)),
      registry,
      claimed(["prepare"]),
    );
    expect(openQuestions(understanding).join(" ")).toMatch(/publish/i);
  });
});

/** A model's plan with these steps, one after the other. */
function planOf(steps: { id: string; tools: string[]; params: Record<string, unknown>; description: string }[]): Plan {
  const parsed = steps.map((st, i) =>
    TaskStep.parse({ ...st, workerType: "ops", dependsOn: i === 0 ? [] : [steps[i - 1]!.id] }),
  );
  return Plan.parse({
    planId: "plan-test",
    objective: "Publish the weekly report",
    steps: parsed,
    confidence: 0.8,
    createdBy: "llm",
  });
}

// Regression: a model plan whose reading step left its arguments to the worker's model ("Read the three largest
// files in src/") still had "three" named as used by no step, so the run asked for approval and ended partial.
describe("a model-driven step accounts for what its description restates", () => {
  const registry = ToolRegistry.create([workspaceToolkit({ root: "/nonexistent-workspace", reportsDir: "reports" })]);
  const workers: WorkerModel = { model: {} as unknown as BaseChatModel, maxModelCalls: 6, prompt: workerPrompt };
  const REQUEST = "read the three largest files in src/ and write a report on what they do";
  /** The bench's workspace plan: s2's path is left to the worker's model unless given. */
  const planFor = workspaceModelPlan;
  const check = (userIntent: string, plan: unknown, w: WorkerModel | null = workers) =>
    toPlanResult(plan, PlanningRequest.parse({ userIntent }), registry, "llm", w ?? undefined).plan;

  it("credits the number, the folder and the words the reading step restates: nothing is left open", () => {
    const plan = check(REQUEST, planFor("Read the three largest files in src/", null));
    expect(plan.understanding.unaccounted).toEqual([]);
    expect(openQuestions(plan.understanding)).toEqual([]);
    expect(plan.confidence).toBe(0.9);
  });

  it('matches a number however it is written: "3" in the step serves "three" in the request, and back', () => {
    expect(check(REQUEST, planFor("Read the 3 largest files in src/", null)).understanding.unaccounted).toEqual([]);
    const digits = REQUEST.replace("three", "3");
    expect(check(digits, planFor("Read the three largest files in src/", null)).understanding.unaccounted).toEqual([]);
  });

  it("still names a number no model-driven step restates", () => {
    const plan = check(REQUEST.replace("three", "five"), planFor("Read the three largest files in src/", null));
    expect(plan.understanding.unaccounted).toEqual([{ text: "five", kind: "number", why: "no step uses this number" }]);
    expect(plan.confidence).toBeLessThan(0.9);
  });

  it("still names a word of the clause the step does not restate", () => {
    const plan = check(REQUEST.replace("largest", "oldest"), planFor("Read the three largest files in src/", null));
    expect(plan.understanding.unaccounted.map((u) => u.text)).toEqual(["oldest"]);
  });

  it("judges a determined step by its params: a number its call ignores is still named", () => {
    const plan = check(REQUEST, planFor("Read the three largest files in src/", { path: "src/engine.ts" }));
    expect(plan.understanding.unaccounted.map((u) => u.text)).toEqual(["three"]);
  });

  it("credits nothing when no model runs the workers (the step is a direct call then)", () => {
    const plan = check(REQUEST, planFor("Read the three largest files in src/", null), null);
    expect(plan.understanding.unaccounted.map((u) => u.text)).toEqual(["three"]);
  });

  it("credits a step that names no tool with its worker's grant, and what it restates", () => {
    const plan = planFor("Read the three largest files in src/", null);
    const noTool = { ...plan, steps: plan.steps.map((s) => (s.id === "s2" ? { ...s, tools: [] } : s)) };
    const checked = check(REQUEST, noTool);
    expect(checked.understanding.parts.find((p) => p.text.startsWith("read the three"))?.stepIds).toContain("s2");
    expect(checked.understanding.unaccounted).toEqual([]);
    // Without a worker model the step runs no loop: nothing reads, and "three" is used by no step.
    expect(check(REQUEST, noTool, null).understanding.unaccounted.map((u) => u.text)).toEqual(["read", "three"]);
  });
});

// Regression: a model's direct call that names the right tool but leaves out the value the request gave ("src/")
// runs the tool's default (list_files lists "."), and the check counted "src/" as served because list_files was in
// the plan: the listing of the wrong folder would have been presented as the answer.
describe("a value the request gives counts only where a step takes it", () => {
  const registry = ToolRegistry.create([workspaceToolkit({ root: "/nonexistent-workspace", reportsDir: "reports" })]);
  const listing = (params: Record<string, unknown> | null) => ({
    objective: "List the files in src/",
    contextSummary: null,
    confidence: 0.9,
    steps: [modelStep("s1", "List the files", "reader", "list_files", [], params, "file_list")],
    understanding: null,
  });
  const open = (params: Record<string, unknown> | null) =>
    toPlanResult(
      listing(params),
      PlanningRequest.parse({ userIntent: "list the files in src/" }),
      registry,
      "llm",
    ).plan.understanding.unaccounted.map((u) => u.text);

  it("names the folder when the direct call runs the tool's default, or another folder", () => {
    expect(open({})).toEqual(["src"]);
    expect(open({ dir: "lib" })).toEqual(["src"]);
  });

  it("takes the folder as given however it is written", () => {
    expect(open({ dir: "src" })).toEqual([]);
    expect(open({ dir: "./src/" })).toEqual([]);
  });

  it("reads a place as a person would, and leaves a tool that takes it under another name to its own parameters", () => {
    const travel = ToolRegistry.create([travelToolkit({ latencyMs: 0 })]);
    const unread = (userIntent: string, tool: string, workerType: string, params: Record<string, unknown>) =>
      toPlanResult(
        {
          objective: userIntent,
          contextSummary: null,
          confidence: 0.9,
          steps: [modelStep("s1", "Search", workerType, tool, [], params, "out")],
          understanding: null,
        },
        PlanningRequest.parse({ userIntent }),
        travel,
        "llm",
      ).plan.understanding.unaccounted.map((u) => u.text);
    const flights = "find flights from Madrid to Paris";
    expect(
      unread(flights, "search_flights", "flight_agent", { origin: "Madrid, Spain", destination: "Paris" }),
    ).toEqual([]);
    expect(unread(flights, "search_flights", "flight_agent", { origin: "Madrid", destination: "Rome" })).toEqual([
      "Paris",
    ]);
    // A hotel search takes the destination as its `city`: "Paris, France" is Paris.
    const hotel = "find a hotel in Paris for 2 nights";
    expect(unread(hotel, "search_hotels", "hotel_agent", { city: "Paris, France", nights: 2 })).toEqual([]);
  });
});

describe("restatedSpans", () => {
  const spans = (request: string, said: string) => restatedSpans(analyzeRequest(request), said).map((s) => s.text);

  it("folds case and accents for names and words, and plurals for words", () => {
    expect(spans("two nights in Málaga", "Book a hotel in MALAGA for 2 night")).toEqual(["two", "nights", "Málaga"]);
  });

  it("never matches a number of another value, nor a word the step does not say", () => {
    expect(spans("the four oldest files", "the three newest file")).toEqual(["files"]);
  });
});

// Regression (honesty bench W1): "How many lines and words are in notes/todo.txt?" planned by a model as read_file
// then text_stats, whose description says it counts "the words, lines and …", was stopped for a person because the
// offline reader knows no keyword for "lines": "no tool does \"lines\"".
describe("a part the reader finds no keyword for, served by a step whose tool says it does it", () => {
  const registry = ToolRegistry.create([workspaceToolkit()]);
  const request = PlanningRequest.parse({ userIntent: "How many lines and words are in notes/todo.txt?" });
  const plan = (statsTool: string) =>
    Plan.parse({
      planId: "plan-lines",
      objective: "Count lines and words",
      confidence: 0.9,
      createdBy: "llm",
      steps: [
        TaskStep.parse({
          id: "s1",
          description: "Read notes/todo.txt",
          workerType: "reader",
          tools: ["read_file"],
          params: { path: "notes/todo.txt" },
        }),
        TaskStep.parse({
          id: "s2",
          description: "Count the lines and words",
          workerType: "analyzer",
          tools: [statsTool],
          dependsOn: ["s1"],
        }),
      ],
    });
  const claimed = {
    parts: [
      {
        text: "How many lines and words are in notes/todo.txt?",
        kind: "task",
        status: "served",
        stepIds: ["s1", "s2"],
      },
    ],
  };

  it("is carried: no open question, the model's plan runs", () => {
    const { understanding } = checkModelUnderstanding(request, plan("text_stats"), registry, claimed);
    expect(openQuestions(understanding)).toEqual([]);
  });

  it("is still unsupported when the named step's tool does not say it (a summary does not count lines)", () => {
    const { understanding } = checkModelUnderstanding(request, plan("summarize_text"), registry, claimed);
    expect(openQuestions(understanding).join(" ")).toMatch(/lines/);
  });
});

// Regression (issue 23): a model's record was taken on its word wherever its parts covered the request — a part
// "suitable for children under 10" served by a hotel step that carries nothing about children, a value quoted from
// words the request does not say, "2 people" read as 3 — and its values, recorded with no step, reached no call.
describe("a model's record is verified, not trusted", () => {
  const travel = ToolRegistry.create([travelToolkit({ latencyMs: 0 })]);
  const workers: WorkerModel = { model: {} as unknown as BaseChatModel, maxModelCalls: 6 } as WorkerModel;
  const REQUEST = "Find a hotel in Rome for 3 nights for 2 people, as cheap as possible";
  const part = (text: string, kind: string, stepIds: string[], status = "served", why: string | null = null) => ({
    text,
    description: text,
    kind,
    status,
    stepIds,
    why,
  });
  const value = (name: string, v: string, source: string, stepIds: string[] = ["s1"]) => ({
    name,
    value: v,
    source,
    stepIds,
  });
  const SOUND = {
    parts: [
      part("Find a hotel in Rome for 3 nights", "task", ["s1"]),
      part("for 2 people", "constraint", ["s1"]),
      part("as cheap as possible", "constraint", ["s1"]),
    ],
    values: [
      value("city", "Rome", "in Rome"),
      value("nights", "3", "3 nights"),
      value("travellers", "2", "2 people"),
      value("priority", "price", "as cheap as possible"),
    ],
    assumptions: [],
    changes: [],
  };
  /** The model's one-step plan: the hotel search left to its worker (no tool named), with this record. */
  const check = (understanding: unknown, userIntent = REQUEST) =>
    toPlanResult(
      {
        objective: "A hotel",
        contextSummary: null,
        confidence: 0.9,
        steps: [
          {
            id: "s1",
            description: "Find a hotel",
            workerType: "hotel_agent",
            tools: [],
            paramsJson: null,
            dependsOn: [],
            expectedOutputs: ["hotel"],
          },
        ],
        understanding,
      },
      PlanningRequest.parse({ userIntent }),
      travel,
      "llm",
      workers,
    );

  it("runs a sound record on a step that names no tool: nothing open, values bound to the step, typed for its tool", () => {
    const { plan } = check(SOUND);
    expect(openQuestions(plan.understanding)).toEqual([]);
    expect(plan.confidence).toBe(0.9);
    const recorded = plan.understanding.values.filter((v) => v.stepIds.includes("s1"));
    expect(recorded.map((v) => [v.name, v.value])).toEqual(
      expect.arrayContaining([
        ["nights", 3],
        ["travellers", 2],
        ["priority", "price"],
      ]),
    );
  });

  it("names a quote the request does not say, and a number the reader reads otherwise; neither value is kept", () => {
    const { plan, notes } = check({
      ...SOUND,
      values: [value("travellers", "3", "2 people"), value("checkin", "2024-05-01", "on May 1st")],
    });
    expect(plan.understanding.disputed).toEqual([
      {
        text: "2 people",
        why: 'the model read travellers = "3", but 3 is not what "2 people" says (the reader finds 2)',
      },
      {
        text: "on May 1st",
        why: 'the model read checkin = "2024-05-01" from these words, but the request does not say them',
      },
    ]);
    expect(plan.understanding.values.some((v) => v.value === "3" || v.name === "checkin")).toBe(false);
    expect(openQuestions(plan.understanding).join(" ")).toMatch(/reading of "2 people" does not hold/);
    expect(notes.join(" ")).toMatch(/does not hold for "on May 1st"/);
  });

  it("names a part quoted in words the request does not have", () => {
    const { plan } = check({ ...SOUND, parts: [...SOUND.parts, part("with a pool", "constraint", ["s1"])] });
    expect(plan.understanding.disputed.map((d) => d.text)).toEqual(["with a pool"]);
    expect(plan.confidence).toBeLessThan(0.5);
  });

  it("serves a constraint only through a value a step takes: no value, or one no tool takes, is unsupported", () => {
    const pets = "Find a hotel in Rome for 3 nights for 2 people, pet-friendly";
    const withPets = check(
      { ...SOUND, parts: [...SOUND.parts.slice(0, 2), part("pet-friendly", "constraint", ["s1"])] },
      pets,
    ).plan.understanding;
    const petFriendly = withPets.parts.find((p) => p.text === "pet-friendly")!;
    expect(petFriendly).toMatchObject({ status: "unsupported", stepIds: [] });
    expect(petFriendly.why).toMatch(/no step carries it/);

    const children = "Find a hotel in Rome for 3 nights for 2 people, suitable for children under 10";
    const kids = check(
      {
        ...SOUND,
        parts: [...SOUND.parts.slice(0, 2), part("suitable for children under 10", "constraint", ["s1"])],
        values: [...SOUND.values.slice(0, 3), value("children", "under 10", "children under 10")],
      },
      children,
    ).plan.understanding;
    expect(kids.parts.find((p) => p.text.includes("children"))).toMatchObject({ status: "unsupported" });
    expect(openQuestions(kids).join(" ")).toMatch(/suitable for children under 10/);
  });

  it("disputes a direct call that passes another value than the record's", () => {
    const { plan } = toPlanResult(
      {
        objective: "A hotel",
        contextSummary: null,
        confidence: 0.9,
        steps: [
          modelStep(
            "s1",
            "Find a hotel",
            "hotel_agent",
            "search_hotels",
            [],
            { city: "Rome", nights: 3, travellers: 1 },
            "hotel",
          ),
        ],
        understanding: { ...SOUND, parts: SOUND.parts.slice(0, 2), values: SOUND.values.slice(0, 3) },
      },
      PlanningRequest.parse({ userIntent: "Find a hotel in Rome for 3 nights for 2 people" }),
      travel,
      "llm",
    );
    expect(plan.understanding.disputed.map((d) => d.why)).toEqual([
      "the record says travellers = 2, but step s1 calls its tool with 1",
    ]);
  });
});

// A value bound to a step left to its worker is told to the worker (its prompt lists the step's values): a figure the
// model read ("three" largest files) is carried so, though no parameter takes it — but never a constraint.
describe("a value a model-driven step's worker is told", () => {
  const registry = ToolRegistry.create([workspaceToolkit({ root: "/nonexistent-workspace", reportsDir: "reports" })]);
  const workers = { model: {} as unknown as BaseChatModel, maxModelCalls: 6 } as WorkerModel;
  const REQUEST = "read the three largest files in src/ and write a report on what they do";
  const record = (stepIds: string[]) => ({
    parts: [
      {
        text: "read the three largest files in src/",
        description: "read",
        kind: "task",
        status: "served",
        stepIds: ["s1", "s2"],
        why: null,
      },
      {
        text: "write a report on what they do",
        description: "report",
        kind: "task",
        status: "served",
        stepIds: ["s3", "s4"],
        why: null,
      },
    ],
    values: [{ name: "count", value: "3", source: "three", stepIds }],
    assumptions: [],
    changes: [],
  });
  /** What the plan leaves open about the request's words, one question a line. */
  const open = (stepIds: string[], w: WorkerModel | null = workers) =>
    openQuestions(
      toPlanResult(
        { ...workspaceModelPlan("Read the largest files"), understanding: record(stepIds) },
        PlanningRequest.parse({ userIntent: REQUEST }),
        registry,
        "llm",
        w ?? undefined,
      ).plan.understanding,
    ).join("\n");

  it("carries the figure to the loop it is bound to", () => {
    expect(open(["s2"])).toBe("");
  });

  it("carries nothing bound to a direct call whose tool takes no such parameter, nor without a worker model", () => {
    expect(open(["s1"])).toMatch(/"three" \(number\) served nothing/);
    expect(open(["s2"], null)).toMatch(/"three" \(number\) served nothing/);
  });
});
