import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { HumanApprovalRequest, ToolApprovalRequest } from "../../src/domain/approval.js";
import { Plan } from "../../src/domain/plan.js";
import { decisionChoices, parseEdits, parseParams, pickDecision } from "../../src/cli/interactive.js";
import { lineReader } from "../../src/cli/io.js";
import { requestLines, resumeCommands } from "../../src/cli/render.js";

const plan = Plan.parse({
  planId: "p1",
  objective: "trip",
  confidence: 0.8,
  steps: [
    {
      id: "flight",
      description: "Find flights",
      workerType: "flight_agent",
      tools: ["search_flights"],
      params: { origin: "Madrid" },
      order: 0,
    },
    {
      id: "hotel",
      description: "Find a hotel",
      workerType: "hotel_agent",
      tools: ["search_hotels"],
      params: { nights: 2 },
      order: 1,
    },
    {
      id: "itinerary",
      description: "Build it",
      workerType: "itinerary_agent",
      dependsOn: ["flight", "hotel"],
      order: 2,
    },
  ],
});

const approval: HumanApprovalRequest = {
  kind: "plan_approval",
  planId: "p1",
  confidence: 0.8,
  threshold: 0.9,
  reasons: ["one tool failed recently"],
  recommendedAction: "REVIEW_AND_ADJUST",
  plan,
  decisions: ["approve", "reject", "adjust"],
  question: "Approve it?",
};

const toolCall: ToolApprovalRequest = {
  kind: "tool_approval",
  planId: "p1",
  taskId: "booking",
  tool: "book_trip",
  args: { tripId: "t-1" },
  sideEffect: "irreversible",
  question: "Approve or deny this call?",
  decisions: ["approve", "deny"],
};

describe("the decisions offered at the prompt", () => {
  it("gives each decision its own key, the same one whatever asks", () => {
    expect(decisionChoices(approval).map((c) => [c.key, c.decision])).toEqual([
      ["a", "approve"],
      ["r", "reject"],
      ["e", "adjust"],
    ]);
    expect(decisionChoices(toolCall).map((c) => c.key)).toEqual(["a", "d"]);
    const escalation = { ...toolCall, decisions: ["skip", "retry", "replan", "abort"] };
    expect(decisionChoices(escalation).map((c) => c.key)).toEqual(["s", "t", "p", "x"]);
  });

  it("a decision without a fixed key gets a free letter of its own", () => {
    expect(decisionChoices({ ...toolCall, decisions: ["approve", "amend"] }).map((c) => c.key)).toEqual(["a", "m"]);
  });

  it("reads a key, the word, or a prefix that fits one choice; anything else says what to type", () => {
    const choices = decisionChoices(approval);
    expect(pickDecision(" A ", choices)).toEqual({ ok: true, decision: "approve" });
    expect(pickDecision("Reject", choices)).toEqual({ ok: true, decision: "reject" });
    expect(pickDecision("adj", choices)).toEqual({ ok: true, decision: "adjust" });
    expect(pickDecision("deny", choices)).toEqual({
      ok: false,
      error: `"deny" is not one of the choices. Type one of a, r, e (or the word: approve, reject, adjust).`,
    });
    expect(pickDecision("", choices).ok).toBe(false);
  });
});

describe("follow-up answers", () => {
  it("edits: bad JSON, an unknown step and a field nobody may change are refused with the reason; a good list passes", () => {
    const notJson = parseEdits("[{taskId: hotel}", plan);
    expect(notJson.ok).toBe(false);
    if (!notJson.ok) {
      expect(notJson.error).toMatch(/^The edits are not valid JSON \(.*\)\. Example: \[\{"taskId":"s2"/);
      expect(notJson.error).not.toContain("--adjust");
    }
    expect(parseEdits(`[{"taskId":"car","field":"params.x","newValue":1}]`, plan)).toEqual({
      ok: false,
      error: `Edit 1: the plan has no step "car". Steps: flight, hotel, itinerary.`,
    });
    expect(parseEdits(`[{"taskId":"hotel","field":"status","newValue":"done"}]`, plan)).toMatchObject({
      ok: false,
      error: expect.stringContaining(`"status" is not a field a person can change`),
    });
    expect(parseEdits(`[{"taskId":"hotel","field":"params.","newValue":3}]`, plan).ok).toBe(false);
    expect(parseEdits(`[{"taskId":"hotel","field":"params.nights","newValue":3}]`, plan)).toEqual({
      ok: true,
      value: [{ taskId: "hotel", field: "params.nights", newValue: 3 }],
    });
  });

  it("parameters: key=value pairs with JSON values, quoted text with spaces, blank for none", () => {
    expect(parseParams("   ")).toEqual({ ok: true, value: null });
    expect(parseParams(`maxPrice=300 cabin=economy city="New York"`)).toEqual({
      ok: true,
      value: { maxPrice: 300, cabin: "economy", city: "New York" },
    });
    expect(parseParams("a..b=1")).toMatchObject({
      ok: false,
      error: expect.stringContaining(`"a..b=1" is not key=value`),
    });
    expect(parseParams("maxPrice 300")).toEqual({
      ok: false,
      error: `"maxPrice" is not key=value. Example: maxPrice=300 cabin=economy (blank for no new parameters).`,
    });
  });
});

describe("showing a request", () => {
  it("a plan approval lists each step with its worker, tools, parameters and dependencies", () => {
    const lines = requestLines(approval, true).join("\n");
    expect(lines).toContain(" 1. flight         Find flights\n");
    expect(lines).toContain(`worker flight_agent · tools search_flights · params {"origin":"Madrid"}`);
    expect(lines).toContain("worker itinerary_agent · after flight, hotel");
    expect(lines).toContain("    - one tool failed recently");
  });

  it("a tool approval shows the exact call and its side effect", () => {
    expect(requestLines(toolCall, true)).toEqual([
      "  Step booking",
      `  Call: book_trip({"tripId":"t-1"})`,
      "  Side effect: irreversible (it cannot be undone)",
    ]);
  });

  it("the resume command for replan carries a guidance placeholder, so it is a valid command once filled in", () => {
    const [cmd] = resumeCommands(
      "t1",
      { ...toolCall, decisions: ["replan"] },
      { commandPrefix: "candor", dbArg: null },
    );
    expect(cmd?.command).toBe(`candor resume t1 --replan "<guidance>"`);
  });
});

describe("lineReader", () => {
  function streams() {
    const input = new PassThrough();
    const output = new PassThrough();
    let written = "";
    output.on("data", (d: Buffer) => (written += d.toString()));
    return { input, output, written: () => written };
  }

  it("answers each question with the next line, keeps lines typed ahead, and gives null at end of input", async () => {
    const { input, output, written } = streams();
    const reader = lineReader(input, output);
    input.write("first\nsecond\n");
    expect(await reader.ask("Q1: ")).toBe("first");
    expect(await reader.ask("Q2: ")).toBe("second");
    input.end();
    expect(await reader.ask("Q3: ")).toBeNull();
    expect(await reader.ask("Q4: ")).toBeNull();
    reader.close();
    // A line typed ahead is shown after its question, so the transcript reads in order.
    expect(written()).toContain("Q2: second\n");
  });

  it("gives null to a pending question when the signal aborts (Ctrl-C)", async () => {
    const { input, output } = streams();
    const controller = new AbortController();
    const reader = lineReader(input, output, controller.signal);
    const pending = reader.ask("Q: ");
    controller.abort();
    expect(await pending).toBeNull();
    reader.close();
  });
});
