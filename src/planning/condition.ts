import type { StepCondition } from "../domain/plan.js";

export interface ConditionContext {
  anyDependencyFailed: boolean;
  /** Results of finished steps by id. */
  results: Record<string, unknown>;
}

/**
 * Evaluates a step condition without `eval`: an expression is `<path> <op> <literal>` joined by `&&` / `||`,
 * where path is `stepId.field.field`, op one of == != > >= < <=, literal a number, true/false/null or a quoted
 * string — e.g. `budget.withinBudget == true`. Anything else is refused (the step is skipped with the reason).
 */
export function evaluateCondition(condition: StepCondition, ctx: ConditionContext): { run: boolean; reason: string } {
  switch (condition.type) {
    case "success":
      return ctx.anyDependencyFailed
        ? { run: false, reason: "a dependency failed" }
        : { run: true, reason: "dependencies succeeded" };
    case "failure":
      return ctx.anyDependencyFailed
        ? { run: true, reason: "a dependency failed" }
        : {
            run: false,
            reason: "Condition 'failure' not met: every dependency succeeded, so this fallback step was not needed",
          };
    case "always":
      return { run: true, reason: "always runs" };
    case "expression": {
      const expression = condition.expression ?? "";
      try {
        const value = evaluateExpression(expression, ctx.results);
        return value
          ? { run: true, reason: `${expression} is true` }
          : { run: false, reason: `Condition not met: ${expression} is false` };
      } catch (e) {
        return { run: false, reason: `Condition "${expression}" could not be evaluated: ${(e as Error).message}` };
      }
    }
  }
}

const COMPARISON = /^\s*([A-Za-z0-9_.-]+)\s*(==|!=|>=|<=|>|<)\s*(.+?)\s*$/;

function literal(text: string): unknown {
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (text === "true") return true;
  if (text === "false") return false;
  if (text === "null") return null;
  const quoted = /^(['"])(.*)\1$/.exec(text);
  if (quoted) return quoted[2];
  throw new Error(`"${text}" is not a number, true/false/null or a quoted string`);
}

function lookup(path: string, results: Record<string, unknown>): unknown {
  const [head, ...rest] = path.split(".");
  let value: unknown = head === undefined ? undefined : results[head];
  for (const key of rest)
    value = value && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

export function evaluateExpression(expression: string, results: Record<string, unknown>): boolean {
  if (expression.trim() === "") throw new Error("the expression is empty");
  return expression.split("||").some((alt) =>
    alt.split("&&").every((part) => {
      const m = COMPARISON.exec(part);
      if (!m) throw new Error(`"${part.trim()}" is not of the form <step.field> <op> <value>`);
      const [, path, op, raw] = m;
      const left = lookup(path!, results);
      const right = literal(raw!);
      switch (op) {
        case "==":
          return left === right;
        case "!=":
          return left !== right;
        case ">":
          return typeof left === "number" && typeof right === "number" && left > right;
        case ">=":
          return typeof left === "number" && typeof right === "number" && left >= right;
        case "<":
          return typeof left === "number" && typeof right === "number" && left < right;
        default:
          return typeof left === "number" && typeof right === "number" && left <= right;
      }
    }),
  );
}
