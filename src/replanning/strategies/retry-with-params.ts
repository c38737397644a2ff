import { z } from "zod";
import { requestFacts } from "../../planning/rules-planner.js";
import type { ToolSpec } from "../../tools/types.js";
import { freshId, replaceStep } from "../plan-edit.js";
import { sameParams, schemaProblem, successorFor } from "./hint.js";
import {
  revise,
  successorOf,
  type Strategy,
  type StrategyHint,
  type StrategyInput,
  type StrategyOutcome,
} from "./types.js";

/** One corrected parameter: its new value (undefined: dropped) and where the value came from. */
interface ParamFix {
  key: string;
  value: unknown;
  why: string;
}

const show = (v: unknown) => (v === undefined ? "unset" : JSON.stringify(v));

/** The zod schema of one top-level parameter, when the tool's schema is an object. */
function fieldSchema(tool: ToolSpec, key: string): z.ZodType | undefined {
  return tool.schema instanceof z.ZodObject ? (tool.schema.shape as Record<string, z.ZodType>)[key] : undefined;
}

/**
 * A replacement for a parameter the tool refused, in order of trust: what the user's request says (the tool's
 * own `extractParams`), then the schema's default (an optional parameter is dropped so its default applies).
 */
function replacementFor(input: StrategyInput, tool: ToolSpec, key: string, current: unknown): ParamFix | null {
  const fromRequest =
    input.request && tool.extractParams
      ? tool.extractParams(requestFacts(input.request, input.registry))[key]
      : undefined;
  if (fromRequest !== undefined && JSON.stringify(fromRequest) !== JSON.stringify(current))
    return { key, value: fromRequest, why: "from the request" };
  const field = fieldSchema(tool, key);
  const fallback = field?.safeParse(undefined);
  if (fallback?.success && current !== undefined) {
    return fallback.data === undefined
      ? { key, value: undefined, why: "dropped: it is optional" }
      : { key, value: fallback.data, why: "the tool's default" };
  }
  return null;
}

/** A numeric bound the value broke, as the nearest value inside it (exclusive bounds only for integers). */
function clamp(issue: z.core.$ZodIssue, value: unknown): number | null {
  if (issue.code !== "too_big" && issue.code !== "too_small") return null;
  if (issue.origin !== "number" || typeof value !== "number") return null;
  const bound = Number(issue.code === "too_big" ? issue.maximum : issue.minimum);
  if (issue.inclusive !== false) return bound;
  if (!Number.isInteger(value)) return null;
  return issue.code === "too_big" ? bound - 1 : bound + 1;
}

/** Derives fixes from the schema's own verdict on the failed parameters; lists what cannot be fixed. */
function deriveFixes(
  input: StrategyInput,
  tool: ToolSpec,
  params: Record<string, unknown>,
): { fixes: ParamFix[]; unresolved: string[] } {
  const fixes: ParamFix[] = [];
  const unresolved: string[] = [];
  const parsed = tool.schema.safeParse(params);
  if (parsed.success) {
    // The schema accepted them, yet the tool refused one at run time and named it (e.g. origin = destination).
    const named = input.failure.outputs.param;
    if (typeof named !== "string")
      return { fixes, unresolved: ["the error names no parameter and the schema accepts them all"] };
    const fix = replacementFor(input, tool, named, params[named]);
    if (fix) fixes.push(fix);
    else unresolved.push(`${named} (the tool refused ${show(params[named])} and the request offers nothing else)`);
    return { fixes, unresolved };
  }
  for (const issue of parsed.error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) fixes.push({ key, value: undefined, why: "dropped: the tool does not know it" });
      continue;
    }
    const key = issue.path[0];
    if (typeof key !== "string" || issue.path.length !== 1) {
      unresolved.push(`${issue.path.join(".") || "(arguments)"}: ${issue.message}`);
      continue;
    }
    const clamped = clamp(issue, params[key]);
    const fix =
      clamped !== null
        ? { key, value: clamped, why: `clamped: ${issue.message}` }
        : replacementFor(input, tool, key, params[key]);
    if (fix) fixes.push(fix);
    else unresolved.push(`${key}: ${issue.message}`);
  }
  return { fixes, unresolved };
}

/**
 * RETRY_WITH_PARAMS (seed 003): the same tool, corrected parameters. The fixes come from the tool's own schema
 * (re-validating what was sent says exactly which field is wrong and how): a missing or invalid field is taken
 * from the request or the schema's default, an unknown key is dropped, a number out of range is clamped. The
 * corrected step `<id>_params` replaces the failed one. Confidence −0.05. Not applicable when nothing can be
 * corrected, or when the corrected parameters still fail the schema.
 *
 * With a model's hint the hint's parameters are the correction: they must fit the tool's schema and differ from
 * the ones that failed.
 */
export const retryWithParams: Strategy = (input) => {
  if (input.hint) return withHintedParams(input, input.hint);
  const { plan, failure, registry } = input;
  const failed = failure.step;
  const tool = registry.tool(failed.tools[0] ?? "");
  if (!tool) return { applies: false, reason: `${failed.id} names no known tool whose parameters could be corrected` };
  const { fixes, unresolved } = deriveFixes(input, tool, failed.params);
  if (fixes.length === 0)
    return {
      applies: false,
      reason: `Nothing in ${failed.id}'s parameters can be corrected: ${unresolved.join("; ")}`,
    };
  const params: Record<string, unknown> = { ...failed.params };
  for (const fix of fixes) {
    if (fix.value === undefined) delete params[fix.key];
    else params[fix.key] = fix.value;
  }
  const check = tool.schema.safeParse(params);
  if (!check.success || unresolved.length > 0) {
    const left =
      unresolved.length > 0
        ? unresolved
        : check.success
          ? []
          : check.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    return {
      applies: false,
      reason: `The corrected parameters of ${failed.id} would still be invalid: ${left.join("; ")}`,
    };
  }
  const step = successorOf(
    failed,
    freshId(
      plan,
      failed.id,
      "params",
      input.feedback.map((f) => f.taskId),
    ),
    { params, description: tool.describeStep?.(params) ?? failed.description },
  );
  const listed = fixes.map((f) => `${f.key} ${show(failed.params[f.key])} → ${show(f.value)} (${f.why})`);
  return revise(input, "RETRY_WITH_PARAMS", replaceStep(plan, failed.id, step), {
    rationale: `${tool.name} refused the parameters of ${failed.id} (${failure.error}); the same tool should work with ${listed.length === 1 ? "this correction" : "these corrections"}.`,
    changes: [`Retry task ${failed.id} with corrected parameters as ${step.id}: ${listed.join("; ")}`],
    newStepIds: [step.id],
    removedStepIds: [failed.id],
  });
};

/** RETRY_WITH_PARAMS with the parameters a model suggested or a person set, on the tool that failed. */
function withHintedParams(input: StrategyInput, hint: StrategyHint): StrategyOutcome {
  const { failure } = input;
  const failed = failure.step;
  const name = failure.tool ?? failed.tools[0];
  const tool = name === undefined ? undefined : input.registry.tool(name);
  const refuse = (reason: string): StrategyOutcome => ({ applies: false, reason });
  if (!tool)
    return refuse(
      `RETRY_WITH_PARAMS needs the failed step's tool, but ${name ?? "the step has none"}${name ? " is not registered" : ""}`,
    );
  const params = hint.params;
  if (params === null) return refuse(`RETRY_WITH_PARAMS needs new parameters for ${tool.name}, and none were given`);
  const invalid = schemaProblem(tool, params);
  if (invalid) return refuse(invalid);
  if (sameParams(params, failure.params))
    return refuse(`RETRY_WITH_PARAMS proposes the parameters that already failed (${JSON.stringify(params)})`);
  // What the user reads is what runs: the tool describes the step with its new parameters.
  const description = tool.describeStep?.(params) ?? failed.description;
  const byPerson = hint.by === "person";
  const step = successorFor(input, byPerson ? "retry" : "params", { tools: [tool.name], params, description });
  const change = byPerson
    ? `Retry task ${failed.id} as ${step.id} with parameters set by a person: ${changedParams(failed.params, params)}`
    : `Retry task ${failed.id} with ${tool.name} and new parameters ${JSON.stringify(params)} as ${step.id}`;
  return revise(input, "RETRY_WITH_PARAMS", replaceStep(input.plan, failed.id, step), {
    rationale: hint.rationale,
    changes: [change],
    newStepIds: [step.id],
    removedStepIds: [failed.id],
  });
}

/** The parameters a person changed, as "key old → new" (the retry's change line). */
function changedParams(before: Record<string, unknown>, after: Record<string, unknown>): string {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]),
  );
  return keys.map((k) => `${k} ${show(before[k])} → ${show(after[k])}`).join("; ");
}
