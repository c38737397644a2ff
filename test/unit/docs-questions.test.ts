import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compileAgent } from "../../graphs/agent.js";
import { buildToolkits } from "../../src/cli/session.js";
import { CandorError } from "../../src/errors.js";
import { isQuestion, planWithRules } from "../../src/planning/rules-planner.js";
import { planOf } from "../../src/domain/plan-state.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { request } from "../fakes/toolkit-fixtures.js";

// Issue 26 item 4: a question about the user's own documents was refused with "no tool matches" when a docs folder
// was configured, because the question's travel words were read as the docs query and nothing else matched.
const scratch = mkdtempSync(path.join(tmpdir(), "candor-docs-q-"));
const docs = path.join(scratch, "docs");
mkdirSync(docs);
writeFileSync(
  path.join(docs, "travel-policy.md"),
  "# Travel policy\n\nFlight class: economy class for short flights under six hours; business class for longer flights.\n",
);
writeFileSync(path.join(docs, "expenses.md"), "# Expenses\n\nKeep every receipt.\n");
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const withDocs = () => buildToolkits([], { dir: docs, dbPath: path.join(scratch, "index.db") });
const QUESTIONS = [
  "what does our travel policy say about flight class for short flights?",
  "Is business class allowed on short flights?",
  "Tell me the flight class rule for short flights",
  "¿Qué clase de vuelo se permite en vuelos cortos?",
];

describe("questions go to the documents when a docs folder is configured", () => {
  it.each(QUESTIONS)("%s → search_docs alone", (q) => {
    const plan = planWithRules(request(q), ToolRegistry.create(withDocs()));
    expect(plan.steps.map((s) => s.tools[0])).toEqual(["search_docs"]);
  });

  it("a request that names a trip still plans the trip", () => {
    const plan = planWithRules(
      request("Plan a 3-day trip from Madrid to Paris for 2 people"),
      ToolRegistry.create(withDocs()),
    );
    expect(plan.steps.map((s) => s.tools[0])).toContain("search_flights");
    expect(plan.steps.map((s) => s.tools[0])).not.toContain("search_docs");
  });

  it("without a docs folder, a question nothing serves is refused with how to add one", () => {
    const err = (() => {
      try {
        planWithRules(request("What is the weather in Paris?"), ToolRegistry.create(buildToolkits([])));
      } catch (e) {
        return e;
      }
    })();
    expect(CandorError.hasCode(err, "NO_VALID_PLAN")).toBe(true);
    expect((err as Error).message).toMatch(
      /If the answer is in your own documents, give Candor their folder \(--docs <dir>, or CANDOR_DOCS\) and ask again\.$/,
    );
  });

  it("the graph answers the question from the policy file and cites it", async () => {
    const graph = compileAgent({ toolkits: withDocs() });
    const out = await graph.invoke({ request: { userIntent: QUESTIONS[0]!, userContext: { userId: "u" } } });
    expect(out.status).toBe("completed");
    expect(out.answer).toMatch(/Sources: travel-policy\.md\.$/);
    const result = JSON.stringify(planOf(out)!.steps[0]!.result);
    expect(result).toContain("economy class for short flights under six hours");
    expect(out.answer).not.toMatch(/expenses\.md/);
  });

  it.each([
    ["what is it?", true],
    ["How many lines are in README.md", true],
    ["Plan a trip to Rome", false],
    ["count the words in README.md", false],
  ])("isQuestion(%s) = %s", (text, yes) => {
    expect(isQuestion(text)).toBe(yes);
  });
});
