import { describe, expect, it } from "vitest";
import { evaluateCondition, evaluateExpression } from "../../src/planning/condition.js";

const ok = { anyDependencyFailed: false, results: {} };
const broken = { anyDependencyFailed: true, results: {} };
const expr = (expression: string) => ({ type: "expression" as const, expression });

describe("evaluateCondition: success / failure / always", () => {
  it("success runs only when every dependency succeeded", () => {
    expect(evaluateCondition({ type: "success", expression: null }, ok).run).toBe(true);
    const verdict = evaluateCondition({ type: "success", expression: null }, broken);
    expect(verdict.run).toBe(false);
    expect(verdict.reason).toMatch(/dependency failed/);
  });

  it("failure runs only when a dependency failed, and says why it did not run otherwise", () => {
    expect(evaluateCondition({ type: "failure", expression: null }, broken).run).toBe(true);
    const verdict = evaluateCondition({ type: "failure", expression: null }, ok);
    expect(verdict.run).toBe(false);
    expect(verdict.reason).toMatch(/^Condition 'failure' not met/);
  });

  it("always runs either way", () => {
    expect(evaluateCondition({ type: "always", expression: null }, ok).run).toBe(true);
    expect(evaluateCondition({ type: "always", expression: null }, broken).run).toBe(true);
  });
});

describe("evaluateCondition: expressions over earlier results", () => {
  const results = {
    budget_status: { withinBudget: true, total: 1850, budget: 2000, breakdown: { flight: 720 } },
    hotel: { name: "Grand Hotel", stars: 4, preferred: false, note: null },
  };
  const run = (expression: string) => evaluateCondition(expr(expression), { anyDependencyFailed: false, results });

  it.each([
    ["budget_status.withinBudget == true", true],
    ["budget_status.withinBudget == false", false],
    ["budget_status.total < 2000", true],
    ["budget_status.total <= 1850", true],
    ["budget_status.total > 1850", false],
    ["budget_status.total >= 1850", true],
    ["budget_status.breakdown.flight == 720", true],
    ["hotel.name == 'Grand Hotel'", true],
    ['hotel.name != "Grand Hotel"', false],
    ["hotel.note == null", true],
    ["hotel.stars >= 4 && budget_status.withinBudget == true", true],
    ["hotel.stars >= 5 && budget_status.withinBudget == true", false],
    ["hotel.stars >= 5 || budget_status.total < 2000", true],
    ["budget_status.total == -1", false],
    ["hotel.stars>=4", true],
  ])("%s → %s", (expression, expected) => {
    const verdict = run(expression);
    expect(verdict.run).toBe(expected);
    expect(verdict.reason).toContain(expression);
  });

  it("a path that does not exist compares as undefined (never equal to a value, never ordered)", () => {
    expect(run("nothing.here == 1").run).toBe(false);
    expect(run("hotel.missing > 0").run).toBe(false);
    expect(run("hotel.missing != 1").run).toBe(true);
  });

  it("orders only numbers: a string is never greater than a number", () => {
    expect(run("hotel.name > 0").run).toBe(false);
  });

  it("compares strictly: the number 4 is not the string '4'", () => {
    expect(run("hotel.stars == '4'").run).toBe(false);
    expect(run("hotel.stars == 4").run).toBe(true);
  });
});

describe("evaluateCondition refuses what it cannot read, without eval", () => {
  it.each([
    ["budget_status.total = 3", /not of the form/],
    ["budget_status.total == maybe", /not a number, true\/false\/null or a quoted string/],
    ["process.exit(1)", /not of the form/],
    ["(() => true)()", /not of the form/],
  ])("%s is skipped with the reason", (expression, why) => {
    const verdict = evaluateCondition(expr(expression), ok);
    expect(verdict.run).toBe(false);
    expect(verdict.reason).toContain(`Condition "${expression}" could not be evaluated`);
    expect(verdict.reason).toMatch(why);
  });

  it("an expression condition without an expression is refused as empty", () => {
    const verdict = evaluateCondition({ type: "expression", expression: null }, ok);
    expect(verdict.run).toBe(false);
    expect(verdict.reason).toMatch(/empty/);
  });

  it("evaluateExpression throws for malformed input instead of guessing", () => {
    expect(() => evaluateExpression("", {})).toThrow(/empty/);
    expect(() => evaluateExpression("a.b ==", {})).toThrow();
  });
});
