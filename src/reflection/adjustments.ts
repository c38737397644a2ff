import type { Plan } from "../domain/plan.js";
import type { Adjustment, AdjustmentOp, AppliedAdjustment } from "../domain/reflection.js";
import type { Result } from "../result.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { KnobMatch } from "./diagnose.js";
import { knobFor, knobKey, show, type Knob } from "./knobs.js";

/**
 * Adjustments in words (what a reflection says, matching the seed's actionable patterns) and as typed operations
 * (what UNDERSTAND applies). The words are the interface with the model: whatever writes them, the same parser
 * decides what they do, and one that does not parse is kept as text and never applied.
 */

/** Seed 001's actionable forms: "Change X to Y", "Add constraint: Z", "Remove W", "Filter results where V". */
const ACTIONABLE_PATTERNS: readonly RegExp[] = [
  /^change\s+\S.*\bto\s+\S/i,
  /^add constraint:\s*\S/i,
  /^remove\s+\S/i,
  /^filter\s+(?:\S+\s+)?results?\s+where\s+\S/i,
];

/** Whether an adjustment is in one of the actionable forms. */
export function isActionable(text: string): boolean {
  return ACTIONABLE_PATTERNS.some((p) => p.test(text.trim()));
}

/** The words for a knob match, in the form `parseAdjustment` reads back. */
export function adjustmentText(m: KnobMatch): string {
  const { tool, param } = m.knob;
  switch (m.knob.learn.kind) {
    case "choice":
      return `Change ${param} of ${tool} from '${show(m.current)}' to '${String(m.value)}'`;
    case "minimum":
      return `Add constraint: ${tool}.${param} >= ${String(m.value)}`;
    case "flag":
      return `Add constraint: ${tool}.${param} = true`;
    case "exclude":
      return `Filter ${tool} results where ${m.knob.learn.field} != '${String(m.value)}'`;
  }
}

/** "Remove search_flights" for a tool that misbehaved, with the tool that replaces it. */
export function removeToolText(tool: string, instead: string): string {
  return `Remove ${tool} from plans for this user; plan ${instead} instead`;
}

/**
 * Pure. The typed operation an adjustment's words describe, checked against the tools: the tool must exist, the
 * parameter must be one feedback may steer (`learnable`), and the value must pass the parameter's schema.
 */
export function parseAdjustment(text: string, knobs: readonly Knob[], registry: ToolRegistry): Result<AdjustmentOp> {
  const t = text.trim();
  let m = /^change\s+(\w+)\s+of\s+(\w+)\s+(?:from\s+'([^']*)'\s+)?to\s+'?([^'\s]+)'?/i.exec(t);
  if (m) {
    const [, param, tool, from, to] = m as unknown as [string, string, string, string | undefined, string];
    return checked({ type: "change_priority", tool, param, from: from ?? null, to }, to, knobs, registry);
  }
  m = /^add constraint:\s*(\w+)\.(\w+)\s*(>=|<=|=)\s*(.+)$/i.exec(t);
  if (m) {
    const [, tool, param, op, raw] = m as unknown as [string, string, string, ">=" | "<=" | "=", string];
    const value = scalar(raw);
    return checked({ type: "add_constraint", tool, param, op, value }, value, knobs, registry);
  }
  m = /^filter\s+(\w+)\s+results?\s+where\s+(\w+)\s*(>=|<=|!=|=)\s*(.+)$/i.exec(t);
  if (m) {
    const [, tool, field, op, raw] = m as unknown as [string, string, string, ">=" | "<=" | "!=" | "=", string];
    const value = scalar(raw);
    const knob = knobs.find(
      (k) =>
        k.tool === tool &&
        ((op === "!=" && k.learn.kind === "exclude" && k.learn.field === field) ||
          (op === ">=" && k.learn.kind === "minimum" && k.learn.field === field)),
    );
    if (!knob) return { ok: false, reason: `${tool} has no setting that filters its results on ${field} ${op}` };
    const probe = knob.learn.kind === "exclude" ? [value] : value;
    return checked({ type: "filter", tool, param: knob.param, field, op, value }, probe, knobs, registry);
  }
  m = /^remove\s+(?:tool\s+)?(\w+)/i.exec(t);
  if (m) {
    const tool = m[1]!;
    if (!registry.tool(tool)) return { ok: false, reason: `there is no tool ${tool} to remove` };
    return { ok: true, value: { type: "remove_tool", tool } };
  }
  return {
    ok: false,
    reason: `"${t}" is not one of the forms Candor can apply ("Change <param> of <tool> from 'a' to 'b'", "Add constraint: <tool>.<param> >= n", "Filter <tool> results where <field> != 'v'", "Remove <tool>")`,
  };
}

function checked(
  op: Exclude<AdjustmentOp, { type: "remove_tool" }>,
  probe: unknown,
  knobs: readonly Knob[],
  registry: ToolRegistry,
): Result<AdjustmentOp> {
  if (!registry.tool(op.tool)) return { ok: false, reason: `there is no tool ${op.tool}` };
  const knob = knobFor(knobs, op.tool, op.param);
  if (!knob) return { ok: false, reason: `${op.tool}.${op.param} is not a setting feedback may change` };
  const parsed = knob.schema.safeParse(probe);
  if (!parsed.success)
    return {
      ok: false,
      reason: `${show(probe)} is not a valid ${knobKey(knob)}: ${parsed.error.issues[0]?.message ?? "invalid"}`,
    };
  return { ok: true, value: op };
}

function scalar(raw: string): string | number | boolean {
  const v = raw.trim().replace(/^['"]|['"]$/g, "");
  if (v === "true") return true;
  if (v === "false") return false;
  if (/^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  return v;
}

/** The parameter an operation sets and the value it sets, given what the step has (lists are extended). */
function paramValue(op: AdjustmentOp, current: unknown): { param: string; value: unknown } | null {
  switch (op.type) {
    case "change_priority":
      return { param: op.param, value: op.to };
    case "add_constraint":
      return { param: op.param, value: op.value };
    case "filter":
      if (op.op === "!=") {
        const list: unknown[] = Array.isArray(current) ? (current as unknown[]) : [];
        return { param: op.param, value: list.includes(op.value) ? list : [...list, op.value] };
      }
      return { param: op.param, value: op.value };
    case "remove_tool":
      return null;
  }
}

/** One adjustment in words for the plan and `candor memory`: "search_hotels priority → 'quality'". */
export function describeOp(op: AdjustmentOp): string {
  switch (op.type) {
    case "change_priority":
      return `${op.tool} ${op.param} '${op.from ?? "default"}' → '${op.to}'`;
    case "add_constraint":
      return `${op.tool} ${op.param} ${op.op} ${String(op.value)}`;
    case "filter":
      return `${op.tool} results where ${op.field} ${op.op} ${String(op.value)}`;
    case "remove_tool":
      return `no ${op.tool}`;
  }
}

/** Whether two operations set the same thing (the same parameter of the same tool, or remove the same tool). */
export function sameTarget(a: AdjustmentOp, b: AdjustmentOp): boolean {
  if (a.type === "remove_tool" || b.type === "remove_tool") return a.type === b.type && a.tool === b.tool;
  return a.tool === b.tool && a.param === b.param;
}

/** Another registered tool that produces everything `tool` produces, or null. */
export function alternativeTo(tool: string, registry: ToolRegistry): string | null {
  const spec = registry.tool(tool);
  if (!spec || spec.produces.length === 0) return null;
  const other = registry
    .producersOf(spec.produces)
    .find((t) => t.name !== tool && spec.produces.every((p) => t.produces.includes(p)));
  return other?.name ?? null;
}

/** What applying the user's active adjustments did to a plan, and what it could not do. */
export interface AppliedLearning {
  plan: Plan;
  /** One line per adjustment applied, for the plan's announcement. */
  notes: string[];
}

/**
 * Pure. The plan with the user's active adjustments applied to the steps that call their tools: the parameter set
 * (a list extended), checked with the tool's schema, recorded as an assumption of the understanding record and in
 * `plan.learned`. A value the request itself gave wins over a learned one (and the note says so). `remove_tool`
 * puts the step on a tool that produces the same thing (with its worker), when its parameters fit that tool.
 */
export function applyAdjustments(
  plan: Plan,
  adjustments: readonly Adjustment[],
  registry: ToolRegistry,
  revokeHint: (id: string) => string,
): AppliedLearning {
  const notes: string[] = [];
  const learned: AppliedAdjustment[] = [...plan.learned];
  const assumptions = [...plan.understanding.assumptions];
  let steps = plan.steps;
  for (const adj of adjustments) {
    if (adj.status !== "active") continue;
    const op = adj.op;
    const touched: string[] = [];
    const refused: string[] = [];
    steps = steps.map((s) => {
      if (op.type === "remove_tool") {
        if (s.tools[0] !== op.tool) return s;
        const instead = alternativeTo(op.tool, registry);
        const worker = instead ? registry.workerForTool(instead) : undefined;
        if (!instead || !worker || !registry.tool(instead)?.schema.safeParse(s.params).success) {
          refused.push(`${s.id}: no tool can stand in for ${op.tool} with these parameters`);
          return s;
        }
        touched.push(s.id);
        return {
          ...s,
          tools: [instead, ...s.tools.filter((t) => t !== instead && t !== op.tool)],
          workerType: worker.name,
        };
      }
      if (s.tools[0] !== op.tool) return s;
      const change = paramValue(op, s.params[op.param]);
      if (!change) return s;
      const fromRequest = plan.understanding.values.some((v) => v.name === change.param && v.stepIds.includes(s.id));
      if (fromRequest) {
        refused.push(`${s.id}: the request sets ${change.param} itself`);
        return s;
      }
      const params = { ...s.params, [change.param]: change.value };
      const tool = registry.tool(op.tool);
      const check = tool?.schema.safeParse(params);
      if (!check?.success) {
        refused.push(`${s.id}: ${check?.error.issues[0]?.message ?? `no tool ${op.tool}`}`);
        return s;
      }
      touched.push(s.id);
      return { ...s, params };
    });
    if (touched.length > 0) {
      const summary = describeOp(op);
      learned.push({ adjustmentId: adj.id, reflectionId: adj.reflectionId, stepIds: touched, summary });
      const change = paramValue(op, undefined);
      assumptions.push({
        name: change?.param ?? "tool",
        value: change?.value ?? `not ${op.tool}`,
        why: `learned from your feedback (reflection ${adj.reflectionId}, adjustment ${adj.id}): ${adj.why}`,
        stepIds: touched,
      });
      notes.push(
        `Applied from reflection ${adj.reflectionId}: ${summary} on ${touched.join(", ")} (${adj.why}). ${revokeHint(adj.id)}`,
      );
    }
    for (const r of refused) notes.push(`Not applied from reflection ${adj.reflectionId}: ${describeOp(op)} on ${r}.`);
  }
  if (learned.length === plan.learned.length && notes.length === 0) return { plan, notes };
  return { plan: { ...plan, steps, learned, understanding: { ...plan.understanding, assumptions } }, notes };
}
