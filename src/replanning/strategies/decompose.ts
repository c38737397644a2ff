import type { FailureClass } from "../../domain/feedback.js";
import type { Plan, TaskStep } from "../../domain/plan.js";
import { assignOrder } from "../../planning/validate.js";
import { requiredInputs, type ToolSpec } from "../../tools/types.js";
import { freshId } from "../plan-edit.js";
import { paramsFor } from "./swap-tool.js";
import { paramNames } from "../../tools/args.js";
import { schemaProblem, successorFor, neededOutputs, workerFor } from "./hint.js";
import {
  revise,
  successorOf,
  type Strategy,
  type StrategyHint,
  type StrategyInput,
  type StrategyOutcome,
} from "./types.js";

/** Longest chain DECOMPOSE builds: seed 000 scenario 5 asks for 2–4 smaller steps. */
const MAX_SUBSTEPS = 4;

/**
 * The shortest chain of 2–4 tools that gets from what the step has (its dependencies' outputs) to what it must
 * produce: each tool needs only what is available so far, each after the first uses something an earlier one
 * made (that is what makes them steps of one task rather than unrelated calls), and the last produces every
 * expected output. Breadth-first, so the shortest chain wins; ties go to the grant's order.
 */
function findChain(tools: readonly ToolSpec[], have: ReadonlySet<string>, goal: readonly string[]): ToolSpec[] | null {
  let frontier: ToolSpec[][] = tools.filter((t) => requiredInputs(t).every((c) => have.has(c))).map((t) => [t]);
  for (let length = 1; length < MAX_SUBSTEPS && frontier.length > 0; length++) {
    const next: ToolSpec[][] = [];
    for (const chain of frontier) {
      const made = new Set(chain.flatMap((t) => t.produces));
      const available = new Set([...have, ...made]);
      for (const tool of tools) {
        if (chain.includes(tool)) continue;
        if (!requiredInputs(tool).every((c) => available.has(c)) || !tool.consumes.some((c) => made.has(c))) continue;
        const candidate = [...chain, tool];
        if (goal.every((o) => tool.produces.includes(o))) return candidate;
        next.push(candidate);
      }
    }
    frontier = next;
  }
  return null;
}

/** Why smaller steps help, by the failure class DECOMPOSE was chosen for (select.ts); too_complex is the default. */
const WHY_SMALLER: Partial<Record<FailureClass, (id: string, error: string) => string>> = {
  timeout: (id, error) =>
    `${id} did not finish in time as one call (${error}), and each smaller call has the whole time limit`,
  agent_unavailable: (id, error) =>
    `${id} failed on its tool (${error}), and smaller steps on other tools do without it`,
};

/**
 * DECOMPOSE (seed 000 scenario 5, seed 003): a step too big for one call becomes 2–4 smaller steps, chained by
 * their dependencies, found from the failed step's own structure: tools in its worker's grant that together lead
 * from the step's inputs to its expected outputs, each estimated shorter than the step. The original is removed,
 * the last substep produces its expected outputs and takes over its dependents. Confidence −0.05.
 *
 * Not done: splitting an array parameter (several cities, items) into chunks. Dependents receive inputs keyed by
 * output name, so chunks producing the same output would overwrite one another; merging them needs a contract
 * on the tool (which chunk outputs a merge tool reads) that ToolSpec does not have yet.
 *
 * With a model's hint the substeps are the ones it lists, checked one by one: a registered tool a worker may use,
 * parameters its schema accepts, no side effect the failed step did not have, the inputs it needs from the step's
 * own inputs or an earlier part, and a last part that produces the step's outputs.
 */
export const decompose: Strategy = (input) => {
  if (input.hint) return intoHintedSubsteps(input, input.hint);
  const { plan, failure, registry } = input;
  const failed = failure.step;
  const goal =
    failed.expectedOutputs.length > 0 ? failed.expectedOutputs : (registry.tool(failed.tools[0] ?? "")?.produces ?? []);
  if (goal.length === 0)
    return {
      applies: false,
      reason: `${failed.id} declares no output, so there is nothing for smaller steps to build towards`,
    };
  const have = new Set(plan.steps.filter((s) => failed.dependsOn.includes(s.id)).flatMap((s) => s.expectedOutputs));
  const tried = new Set(failure.history.map((f) => f.tool).filter((t): t is string => t !== null));
  const tools = registry
    .grant(failed.workerType)
    .filter(
      (t) => !tried.has(t.name) && t.name !== failed.tools[0] && t.estimates.durationMs < failed.estimates.durationMs,
    );
  const chain = findChain(tools, have, goal);
  if (!chain) {
    return {
      applies: false,
      reason: `No chain of 2–${MAX_SUBSTEPS} tools in ${failed.workerType}'s grant, each shorter than ${failed.id}, leads from ${[...have].join(", ") || "its inputs"} to ${goal.join(", ")}`,
    };
  }
  const substeps: TaskStep[] = [];
  let taken: Plan = plan;
  for (const [i, tool] of chain.entries()) {
    const accepted = paramsFor(input, tool);
    if (!accepted)
      return {
        applies: false,
        reason: `${tool.name} (substep ${i + 1} of ${failed.id}) does not accept the step's parameters`,
      };
    // Each part keeps only the parameters its own tool takes: the step and its log then show what that call used.
    // Defaults are not written in: a parameter left out stays left out, so the recorded value (a title the request
    // gave) or the worker fills it, and a default used is named, never made to look chosen.
    const parsed = tool.schema.safeParse(accepted);
    const given = new Set(paramNames(tool).filter((name) => name in accepted));
    const params = parsed.success
      ? Object.fromEntries(Object.entries(parsed.data as Record<string, unknown>).filter(([name]) => given.has(name)))
      : accepted;
    const last = i === chain.length - 1;
    const feeders = [
      ...substeps.filter((s) => s.expectedOutputs.some((o) => tool.consumes.includes(o))).map((s) => s.id),
    ];
    const upstream = plan.steps
      .filter((s) => failed.dependsOn.includes(s.id) && s.expectedOutputs.some((o) => tool.consumes.includes(o)))
      .map((s) => s.id);
    const sub = successorOf(
      failed,
      freshId(
        taken,
        failed.id,
        `part${i + 1}`,
        input.feedback.map((f) => f.taskId),
      ),
      {
        description: `${tool.describeStep?.(params) ?? tool.description} (part ${i + 1} of ${chain.length} of ${failed.id})`,
        tools: [tool.name],
        params,
        dependsOn: [...upstream, ...feeders],
        expectedOutputs: last ? goal : tool.produces.filter((o) => !goal.includes(o)),
        estimates: tool.estimates,
      },
    );
    substeps.push(sub);
    taken = { ...taken, steps: [...taken.steps, sub] };
  }
  const final = substeps[substeps.length - 1]!;
  const steps = plan.steps.flatMap((s) =>
    s.id === failed.id
      ? substeps
      : s.dependsOn.includes(failed.id)
        ? [{ ...s, dependsOn: s.dependsOn.map((d) => (d === failed.id ? final.id : d)) }]
        : [s],
  );
  return revise(
    input,
    "DECOMPOSE",
    { ...plan, steps: assignOrder(steps) },
    {
      rationale: `${WHY_SMALLER[failure.failureClass]?.(failed.id, failure.error) ?? `${failed.id} was too much for one call (${failure.error})`}; ${chain.map((t) => t.name).join(" → ")} do the same work in ${chain.length} smaller steps, the last producing ${goal.join(", ")}.`,
      changes: [
        `Decompose task ${failed.id} into ${substeps.map((s) => s.id).join(" → ")} (${chain.map((t) => t.name).join(" → ")}); ${final.id} produces ${goal.join(", ")}`,
      ],
      newStepIds: substeps.map((s) => s.id),
      removedStepIds: [failed.id],
    },
  );
};

/** DECOMPOSE into the substeps a model suggested. */
function intoHintedSubsteps(input: StrategyInput, hint: StrategyHint): StrategyOutcome {
  const { failure, registry, plan } = input;
  const failed = failure.step;
  const refuse = (reason: string): StrategyOutcome => ({ applies: false, reason });
  const subs = hint.substeps;
  if (subs === null || subs.length < 2 || subs.length > MAX_SUBSTEPS)
    return refuse(
      `DECOMPOSE needs 2 to ${MAX_SUBSTEPS} substeps, and ${subs === null ? "none were" : `${subs.length} ${subs.length === 1 ? "was" : "were"}`} given`,
    );
  const parts: TaskStep[] = [];
  for (const [i, sub] of subs.entries()) {
    const n = i + 1;
    const tool = registry.tool(sub.tool);
    if (!tool) return refuse(`DECOMPOSE substep ${n} names tool "${sub.tool}", which is not registered`);
    if (sub.description.trim().length === 0) return refuse(`DECOMPOSE substep ${n} has no description`);
    const invalid = schemaProblem(tool, sub.params, `substep ${n}: `);
    if (invalid) return refuse(`DECOMPOSE ${invalid}`);
    const worker = workerFor(input, tool, null);
    if (!worker) return refuse(`DECOMPOSE substep ${n} uses ${tool.name}, which no worker type may use`);
    // A recovery may split a step, never add an action no one asked for: a step that only read cannot become a
    // booking, however the model words it.
    if (tool.sideEffect !== "none" && !failed.tools.some((t) => registry.tool(t)?.sideEffect === tool.sideEffect)) {
      return refuse(
        `DECOMPOSE substep ${n} uses ${tool.name}, which has a ${tool.sideEffect} side effect the failed step ${failed.id} does not have`,
      );
    }
    // Each part must get what it cannot run without: from the failed step's own inputs or an earlier part.
    const available = new Set([
      ...plan.steps.filter((s) => failed.dependsOn.includes(s.id)).flatMap((s) => s.expectedOutputs),
      ...parts.flatMap((p) => p.expectedOutputs),
    ]);
    const lacking = requiredInputs(tool).filter((c) => !available.has(c));
    if (lacking.length > 0)
      return refuse(
        `DECOMPOSE substep ${n} uses ${tool.name}, which needs ${lacking.join(", ")} that neither the failed step's inputs nor an earlier substep provide`,
      );
    const last = n === subs.length;
    if (last) {
      const missing = neededOutputs(failed, registry).filter((o) => !tool.produces.includes(o));
      if (missing.length > 0)
        return refuse(`DECOMPOSE's last substep uses ${tool.name}, which does not produce ${missing.join(", ")}`);
    }
    const previous = parts[parts.length - 1];
    parts.push({
      ...successorFor(input, `part${n}`, {
        workerType: worker,
        tools: [tool.name],
        params: sub.params,
        estimates: tool.estimates,
        description: sub.description.trim(),
        expectedOutputs: last ? failed.expectedOutputs : tool.produces,
      }),
      // Later parts keep the original's dependencies too, since a step receives inputs only from what it depends on.
      dependsOn: previous ? [...failed.dependsOn, previous.id] : failed.dependsOn,
    });
  }
  const lastId = parts[parts.length - 1]!.id;
  const steps = plan.steps.flatMap((s) =>
    s.id === failed.id
      ? parts
      : s.dependsOn.includes(failed.id)
        ? [{ ...s, dependsOn: s.dependsOn.map((d) => (d === failed.id ? lastId : d)) }]
        : [s],
  );
  const ids = parts.map((p) => p.id);
  return revise(
    input,
    "DECOMPOSE",
    { ...plan, steps: assignOrder(steps) },
    {
      rationale: hint.rationale,
      changes: [
        `Split task ${failed.id} into ${ids.join(" → ")}; ${lastId} produces ${failed.expectedOutputs.join(", ") || "its result"}`,
      ],
      newStepIds: ids,
      removedStepIds: [failed.id],
    },
  );
}
