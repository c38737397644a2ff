import { z } from "zod";
import type { Plan, TaskStep } from "../domain/plan.js";
import type { PlanningRequest } from "../domain/request.js";
import { openQuestions, Understanding, type RequestPart, type Unaccounted } from "../domain/understanding.js";
import type { WorkerModel } from "../reasoning/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { Interpretation } from "../tools/types.js";
import { isModelDriven, loopTools } from "../tools/model-driven.js";
import { escapeRegExp, foldCase, overlaps, within, withoutInvisible, type Span } from "./lexicon.js";
import { abilitiesOf, OPEN_QUESTION_CONFIDENCE, requestFacts, toolWords } from "./rules-planner.js";
import { paramNames } from "../tools/args.js";
import { locateQuote, misread } from "./record-claims.js";
import {
  accountFor,
  genericKeywords,
  keywordHits,
  negationExclusions,
  restatedSpans,
  unsupportedVerbClauses,
  type ModelDrivenStep,
} from "./understanding.js";

/**
 * The understanding record of a plan someone else made (a model, the one-step fallback), checked against the
 * request itself: the record a model gives is taken as its claim, and the generic reading of the request still
 * finds what no step serves. A part claimed as served without a step of the plan becomes unsupported; meaningful
 * text no part or step accounts for is named; a step that produces what the request rules out is named too.
 */

/** Step ids as a model writes them (numbers too); absent or null: none. */
const StepIds = z.array(z.union([z.string(), z.number()]).transform(String)).nullish();

/** A model's record, read tolerantly (strict-mode models send ModelUnderstanding; others something close). */
const LooseRecord = z.object({
  parts: z
    .array(
      z.object({
        text: z.string(),
        description: z.string().nullish(),
        kind: z.enum(["task", "exclusion", "constraint"]).catch("task"),
        status: z.enum(["served", "excluded", "unsupported", "not_understood"]).catch("served"),
        stepIds: z.array(z.union([z.string(), z.number()]).transform(String)).nullish(),
        why: z.string().nullish(),
      }),
    )
    .nullish(),
  values: z
    .array(z.object({ name: z.string(), value: z.unknown(), source: z.string().nullish(), stepIds: StepIds }))
    .nullish(),
  assumptions: z
    .array(z.object({ name: z.string(), value: z.unknown(), why: z.string().nullish(), stepIds: StepIds }))
    .nullish(),
  changes: z
    .array(
      z.object({
        name: z.string(),
        from: z.unknown(),
        to: z.unknown(),
        source: z.string().nullish(),
        why: z.string().nullish(),
        stepIds: StepIds,
      }),
    )
    .nullish(),
});
type LooseRecord = z.infer<typeof LooseRecord>;

/** Where the text of a claim sits in the request (see locateQuote), or null when it is not there. */
function locate(request: string, _norm: string, text: string): Span | null {
  return locateQuote(request, text);
}

/**
 * The record for `steps` from the request and the registry alone: keywords of the plan's tools, the toolkits'
 * interpretations, parameter values found in the text, exclusions by negation. What the rules planner builds,
 * without its choices (which tools to drop). A step left to its worker's model (`workers` set, its call not
 * determined: see isModelDriven) is credited with every tool its loop may call and with what its description and
 * outputs restate of the request, since that text is the loop's task; a direct call answers for its params alone.
 */
function recordForSteps(
  request: PlanningRequest,
  steps: readonly TaskStep[],
  registry: ToolRegistry,
  workers: WorkerModel | undefined,
): Understanding {
  const facts = requestFacts(request, registry);
  const analysis = facts.analysis!;
  const words = toolWords(registry);
  const modelDriven = new Map<string, ModelDrivenStep>(
    steps
      .filter((s) => isModelDriven(s, registry, workers))
      .map((s) => [
        s.id,
        {
          tools: loopTools(s, registry).map((t) => t.name),
          restated: restatedSpans(analysis, [s.description, ...s.expectedOutputs.map(wordsOf)].join(". "), words),
        },
      ]),
  );
  const inPlan = new Set([...steps.flatMap((s) => s.tools), ...[...modelDriven.values()].flatMap((m) => m.tools)]);
  // A tool the plan uses is also named by its own name's words ("publish_report" publishes): a toolkit need not
  // repeat them as keywords for a model's plan to be credited with what its tools plainly do.
  const tools = [...registry.tools.values()].map((t) =>
    inPlan.has(t.name) ? { ...t, keywords: [...t.keywords, ...t.name.split("_").filter((w) => w.length > 2)] } : t,
  );
  const hits = keywordHits(tools, analysis);
  const generic = genericKeywords(tools);
  const exclusions = negationExclusions(analysis, hits, generic, (name) => registry.tool(name)?.produces ?? []);
  return accountFor({
    analysis,
    steps,
    tools: registry.tools,
    hits: hits.filter(
      (h) =>
        !h.negated &&
        !within(
          h,
          unsupportedVerbClauses(
            analysis,
            hits,
            (name) => `${name.replace(/_/g, " ")} ${registry.tool(name)?.description ?? ""}`,
          ),
        ),
    ),
    exclusions,
    interpretations: registry.interpreters
      .filter((i) => i.tools.some((t) => inPlan.has(t)))
      .map((i) => i.interpret(facts))
      .map((read) => ({ ...read, values: read.values.filter((v) => honoured(v, steps, modelDriven, registry)) })),
    dropped: new Map(),
    onlyCues: [],
    abilities: abilitiesOf(tools),
    generic,
    modelDriven,
  });
}

/**
 * Whether the plan uses a value a toolkit read in the request ("src/" → list_files `dir`). A model's plan may name
 * the right tool and leave the value out: the direct call then runs the tool's default (`list_files` lists "."),
 * and the request's value is silently not honoured. So a value counts only where a step that may use it takes it:
 * a model-driven step (its loop reads the task, and is credited by what it restates), a direct call whose
 * parameter of that name carries it, or a direct call whose tool takes it under another name (a hotel search's
 * `city` for a trip's destination: not judged here; its parameters still account for their own text).
 */
function honoured(
  value: Interpretation["values"][number],
  steps: readonly TaskStep[],
  modelDriven: ReadonlyMap<string, ModelDrivenStep>,
  registry: ToolRegistry,
): boolean {
  return steps.some((s) => {
    const loop = modelDriven.get(s.id);
    if (loop) return loop.tools.some((t) => value.tools.includes(t));
    const uses = s.tools.filter((t) => value.tools.includes(t));
    if (uses.length === 0) return false;
    if (
      uses.some((t) => {
        const tool = registry.tool(t);
        return !tool || !paramNames(tool).includes(value.name);
      })
    )
      return true;
    return sameValue(s.params[value.name], value.value);
  });
}

/**
 * Whether a parameter carries a value read from the request, compared as a person would: case and accents, "./"
 * and a trailing "/" aside, and either one holding the other's words ("Madrid, Spain" carries "Madrid"; "lib"
 * does not carry "src"). A missing parameter carries nothing: the tool's default runs.
 */
function sameValue(param: unknown, value: unknown): boolean {
  if (param === undefined) return false;
  const words = (x: unknown): string[] =>
    (typeof x === "string" ? foldCase(x.trim()).replace(/^\.\//, "").replace(/\/+$/, "") || "." : JSON.stringify(x))
      .split(/[^\p{L}\p{N}.]+/u)
      .filter((w) => w.length > 0);
  const within = (inner: string[], outer: string[]) => inner.length > 0 && inner.every((w) => outer.includes(w));
  const carries = (p: unknown) => {
    const [a, b] = [words(p), words(value)];
    return within(b, a) || within(a, b);
  };
  return Array.isArray(param) && !Array.isArray(value) ? param.some(carries) : carries(param);
}

/** An output's name as words ("file_list" → "file list"). */
const wordsOf = (name: string) => name.replace(/[_-]+/g, " ");

/**
 * A model's plan with its understanding checked: the model's record is its claim, and Candor verifies it. Each quoted
 * source must be in the request (a quote that is not is named as disputed); each value's figures and dates must be
 * what the deterministic reader reads in its source (a misread value is named, and never applied); each part's
 * steps must exist (a served part left with none becomes unsupported), and a constraint is served only by a step
 * that carries it — a value recorded for a parameter its tools take, or a parameter of its call holding it.
 * What the generic reading finds open is added: meaningful text nothing carries (a number, place, amount or date
 * counts as carried only by a value bound to a step that takes it, by a parameter, or by a model-driven step's
 * description; a task verb only by a tool of the plan), and excluded outputs a step still produces. `workers`: the
 * model that runs steps whose call the plan leaves open (absent: every step is a direct call, judged by its params).
 * Returns the record and notes on every correction.
 */
export function checkModelUnderstanding(
  request: PlanningRequest,
  plan: Plan,
  registry: ToolRegistry,
  claimed: unknown,
  workers?: WorkerModel,
): { understanding: Understanding; notes: string[] } {
  const notes: string[] = [];
  const base = recordForSteps(request, plan.steps, registry, workers);
  // Quotes are found in the text as read: invisible characters removed, as the reader removed them.
  const text = withoutInvisible(request.userIntent).text;
  const norm = foldCase(text);
  const read = LooseRecord.safeParse(claimed ?? {});
  if (claimed !== null && claimed !== undefined && !read.success)
    notes.push("The model's understanding record was unreadable; the request was read again without it.");
  const model: LooseRecord = read.success ? read.data : {};
  const stepIds = new Set(plan.steps.map((s) => s.id));
  const toolsOf = (ids: readonly string[]) =>
    plan.steps
      .filter((s) => ids.includes(s.id))
      .flatMap((s) =>
        isModelDriven(s, registry, workers) ? loopTools(s, registry) : s.tools.flatMap((t) => registry.tool(t) ?? []),
      );
  /** Whether the tools of these steps (a model-driven step's: every tool its loop may call) name every word of `what`. */
  const saidByTools = (what: string, ids: readonly string[]): boolean => {
    const said = new Set(toolsOf(ids).flatMap((t) => stemsOf(`${t.name.replace(/_/g, " ")} ${t.description}`)));
    const asked = stemsOf(what);
    return asked.length > 0 && asked.every((w) => said.has(w));
  };

  const disputed: Understanding["disputed"] = [];
  const dispute = (what: string, why: string) => {
    disputed.push({ text: what, why });
    notes.push(`The model's record does not hold for "${what}": ${why}.`);
  };
  const parts: (Omit<RequestPart, "id"> & { at: Span | null })[] = [];
  for (const p of model.parts ?? []) {
    const given = (p.stepIds ?? []).filter((id) => stepIds.has(id));
    const unknown = (p.stepIds ?? []).filter((id) => !stepIds.has(id));
    let status = p.status;
    let why = p.why ?? null;
    if (status === "served" && given.length === 0) {
      status = "unsupported";
      why =
        unknown.length > 0
          ? `the model said steps ${unknown.join(", ")} serve it, but the plan has no such step`
          : "the model said it is served, but named no step of the plan that does it";
      notes.push(
        `The model claimed "${p.text}" is served without a step of the plan that does it: marked unsupported.`,
      );
    }
    const at = locate(text, norm, p.text);
    if (at === null && p.text.trim() !== "")
      dispute(p.text, "the model quoted it as the request's words, but the request does not say it");
    parts.push({
      at,
      text: p.text,
      description: p.description ?? p.text,
      kind: p.kind,
      status,
      stepIds: status === "served" ? given : [],
      why,
    });
  }
  const claims = checkValues(model, plan, registry, workers, text, parts, dispute);
  // What the deterministic reader read and bound to steps that take it carries its words too (it is applied to the
  // calls as the model's values are), unless the model recorded that value itself.
  for (const v of base.values.filter((v) => !claims.values.some((m) => m.name === v.name))) {
    const at = locate(text, norm, v.source);
    const takers = v.stepIds.filter((id) => parameterOf(plan, registry, workers, id, v.name) !== null);
    if (at && takers.length > 0) claims.carried.push({ span: at, stepIds: takers });
  }
  const carried = claims.carried.map((c) => c.span);

  // A constraint is served only by a step that carries it: a value bound to one of its steps, or a parameter of
  // one of its direct calls holding the constraint's own words ("under $2000" and a budget of 2000).
  for (const q of parts.filter((q) => q.status === "served" && q.kind === "constraint")) {
    const byValue = q.at !== null && claims.carried.some((c) => overlaps(c.span, [q.at!]));
    const byParam = q.at !== null && paramCarries(plan.steps, q.stepIds, q.at.text);
    if (byValue || byParam) continue;
    notes.push(`"${q.text}": the model said ${q.stepIds.join(", ")} serves it, but no step carries it.`);
    Object.assign(q, {
      status: "unsupported",
      stepIds: [],
      why: `no step carries it: the record names no parameter of ${q.stepIds.join(", ")} that takes it, and no call of theirs holds it`,
    });
  }

  // The model's own parts (what the reading adds below accounts for nothing the reading did not).
  const claimedParts = [...parts];
  // The generic reading of what the model's parts leave out or claim wrongly.
  if (parts.length === 0) {
    for (const p of base.parts) parts.push({ ...stripId(p), at: locate(text, norm, p.text) });
  } else {
    for (const bp of base.parts) {
      if (bp.status === "served") continue;
      const at = locate(text, norm, bp.text);
      const over = at ? parts.filter((q) => q.at !== null && overlaps(q.at, [at])) : [];
      const inside = over.filter((q) => at !== null && q.at !== null && q.at.start >= at.start && q.at.end <= at.end);
      // A part the reader found no tool for, within a part the model serves by steps whose tools say it, or carried
      // by a value bound to a step that takes it ("as cheap as possible" → a search's `priority`): carried.
      if (
        bp.status === "unsupported" &&
        (over.some((q) => q.status === "served" && saidByTools(bp.description, q.stepIds)) ||
          (at !== null && carried.some((c) => within(c, [at]) || within(at, [c]))))
      )
        continue;
      if (bp.status === "unsupported" && inside.some((q) => q.status === "served")) {
        // The model says a step does what no tool of the plan can do: it is overruled, unless the tools of the steps
        // it names say, in their own names and descriptions, what the reader found no keyword for ("how many lines"
        // and a tool that counts "words, lines and …"): the reader's keywords are not all a tool can do.
        for (const q of inside.filter((q) => q.status === "served" && !saidByTools(bp.description, q.stepIds))) {
          notes.push(
            `"${q.text}": the model said ${q.stepIds.join(", ")} serves it, but no tool of the plan can (${bp.why ?? "no tool serves it"}).`,
          );
          Object.assign(q, {
            status: "unsupported",
            stepIds: [],
            why: `${bp.why ?? "no tool serves it"}; the model's claim that ${q.stepIds.join(", ")} serves it was overruled`,
          });
        }
      } else if (over.every((q) => q.status === "served") && (bp.status !== "excluded" || over.length === 0)) {
        parts.push({ ...stripId(bp), at });
      }
    }
  }
  // Meaningful text the reader found nothing carrying. A figure, place or date is carried only by a value bound to a
  // step that takes it (a part that merely quotes it carries nothing: "children under 10" in a hotel search's part);
  // a task verb only by a tool of the plan (a model cannot serve "translate" by saying so); other words by a part
  // the model accounts for them in that no check above overruled.
  const heldBy = (kind: Unaccounted["kind"]): Span[] =>
    kind === "task"
      ? []
      : RESTATABLE_KINDS.has(kind)
        ? [...carried, ...claims.told]
        : [
            ...carried,
            ...claimedParts.filter((q) => q.at !== null && q.status !== "unsupported").map((q) => q.at!),
            ...claims.sources,
          ];
  const unaccounted: Unaccounted[] = base.unaccounted.filter((u) => {
    const at = locate(text, norm, u.text);
    return !at || !overlaps(at, heldBy(u.kind));
  });
  // Something the request rules out that a step still produces.
  for (const ex of base.parts.filter((p) => p.kind === "exclusion" && p.why?.includes("no step produces the"))) {
    const outputs = ex.description.replace(/^no /, "").split(", ");
    const offending = plan.steps.filter((s) => s.expectedOutputs.some((o) => outputs.includes(o)));
    if (offending.length > 0)
      unaccounted.push({
        text: ex.text,
        kind: "negation",
        why: `the request rules it out, yet step ${offending.map((s) => s.id).join(", ")} produces it`,
      });
  }

  const understanding = Understanding.parse({
    parts: parts
      .sort((x, y) => (x.at?.start ?? Number.MAX_SAFE_INTEGER) - (y.at?.start ?? Number.MAX_SAFE_INTEGER))
      .map(({ at: _, ...p }, i) => ({ ...p, id: `p${i + 1}` })),
    values: [...claims.values, ...base.values.filter((v) => !claims.values.some((m) => m.name === v.name))],
    assumptions: [
      ...claims.assumptions,
      ...base.assumptions.filter((a) => !claims.assumptions.some((m) => m.name === a.name)),
    ],
    changes: [...claims.changes, ...base.changes.filter((c) => !claims.changes.some((m) => m.name === c.name))],
    refused: base.refused,
    unaccounted,
    disputed,
    by: "llm",
  });
  return { understanding, notes };
}

/** Kinds of meaningful text only a value or a parameter can carry: a part that quotes them carries nothing. */
const RESTATABLE_KINDS: ReadonlySet<Unaccounted["kind"]> = new Set(["number", "place", "amount", "date"]);

/** The model's values, assumptions and changes as checked: what is recorded, and what carries which words. */
interface CheckedClaims {
  values: Understanding["values"];
  assumptions: Understanding["assumptions"];
  changes: Understanding["changes"];
  /** The request's words a value carries to a step that takes it. */
  carried: { span: Span; stepIds: string[] }[];
  /**
   * The request's words a value bound to a model-driven step tells its worker (its prompt lists the step's values),
   * though no parameter takes it: "three" in "read the three largest files". Enough for a figure, not for a
   * constraint, which only a parameter carries.
   */
  told: Span[];
  /** Every source a kept value or change quotes, carried or not. */
  sources: Span[];
}

/**
 * The model's values checked against the request and the plan. A value whose source is not in the request, or whose
 * figures or date the reader reads otherwise (see misread), is disputed and dropped: it is never applied to a call.
 * A value is bound to the steps the model names, or else to the steps of the served parts its source lies in; it
 * carries its words to those of them whose tools take a parameter of its name (a direct call's own parameter must
 * hold it: another value there is disputed). Numeric text becomes a number where the parameter wants one, so the
 * call gets the value recorded.
 */
function checkValues(
  model: LooseRecord,
  plan: Plan,
  registry: ToolRegistry,
  workers: WorkerModel | undefined,
  text: string,
  parts: readonly { at: Span | null; status: string; stepIds: string[] }[],
  dispute: (what: string, why: string) => void,
): CheckedClaims {
  const known = new Set(plan.steps.map((s) => s.id));
  const changed = new Set((model.changes ?? []).map((c) => c.name));
  const out: CheckedClaims = { values: [], assumptions: [], changes: [], carried: [], told: [], sources: [] };
  const paramOf = (stepId: string, name: string) => parameterOf(plan, registry, workers, stepId, name);
  for (const v of model.values ?? []) {
    const source = v.source?.trim() ?? "";
    const at = source ? locateQuote(text, source) : null;
    if (source && !at) {
      dispute(
        source,
        `the model read ${v.name} = ${show(v.value)} from these words, but the request does not say them`,
      );
      continue;
    }
    const wrong = at && !changed.has(v.name) ? misread(at.text, v.value) : null;
    if (at && wrong) {
      dispute(at.text, `the model read ${v.name} = ${show(v.value)}, but ${wrong}`);
      continue;
    }
    const named = (v.stepIds ?? []).filter((id) => known.has(id));
    const bound =
      named.length > 0 || !at
        ? named
        : unique(parts.filter((p) => p.status === "served" && p.at && overlaps(p.at, [at])).flatMap((p) => p.stepIds));
    const takers = bound.filter((id) => paramOf(id, v.name) !== null);
    const value = typed(
      v.value,
      takers.map((id) => paramOf(id, v.name)!),
    );
    const differs = takers.filter((id) => {
      const step = plan.steps.find((s) => s.id === id)!;
      return (
        !isModelDriven(step, registry, workers) &&
        step.params[v.name] !== undefined &&
        !sameValue(step.params[v.name], value)
      );
    });
    for (const id of differs)
      dispute(
        at?.text ?? v.name,
        `the record says ${v.name} = ${show(value)}, but step ${id} calls its tool with ${show(plan.steps.find((s) => s.id === id)!.params[v.name])}`,
      );
    out.values.push({ name: v.name, value, source: at?.text ?? source, stepIds: bound });
    if (at) out.sources.push(at);
    if (at && takers.length > differs.length)
      out.carried.push({ span: at, stepIds: takers.filter((id) => !differs.includes(id)) });
    const steps = plan.steps.filter((s) => bound.includes(s.id));
    if (at && steps.some((s) => isModelDriven(s, registry, workers))) out.told.push(at);
  }
  for (const a of model.assumptions ?? [])
    out.assumptions.push({
      name: a.name,
      value: a.value,
      why: a.why ?? "",
      stepIds: (a.stepIds ?? []).filter((id) => known.has(id)),
    });
  for (const c of model.changes ?? []) {
    const source = c.source?.trim() ?? "";
    const at = source ? locateQuote(text, source) : null;
    if (source && !at) {
      dispute(source, `the model changed ${c.name} from these words, but the request does not say them`);
      continue;
    }
    if (at) out.sources.push(at);
    const ids = (c.stepIds ?? []).filter((id) => known.has(id));
    out.changes.push({
      name: c.name,
      from: c.from,
      to: typed(
        c.to,
        ids.map((id) => paramOf(id, c.name)).filter((s): s is z.ZodType => s !== null),
      ),
      source: at?.text ?? "",
      why: c.why ?? "",
      by: "planner" as const,
      stepIds: ids,
    });
  }
  return out;
}

/** The schema of the parameter `name` a tool of the step takes (a model-driven step's: any tool of its loop), or null. */
function parameterOf(
  plan: Plan,
  registry: ToolRegistry,
  workers: WorkerModel | undefined,
  stepId: string,
  name: string,
): z.ZodType | null {
  const step = plan.steps.find((s) => s.id === stepId);
  if (!step) return null;
  const tools = isModelDriven(step, registry, workers)
    ? loopTools(step, registry)
    : step.tools.flatMap((t) => registry.tool(t) ?? []);
  for (const t of tools) {
    const schema = (t.schema as { shape?: Record<string, z.ZodType> }).shape?.[name];
    if (schema) return schema;
  }
  return null;
}

/** A value as the parameters that take it want it: numeric text as a number where a parameter takes no text. */
function typed(value: unknown, schemas: readonly z.ZodType[]): unknown {
  if (typeof value !== "string" || schemas.length === 0) return value;
  const n = Number(value.trim().replace(/(\d),(?=\d{3}\b)/g, "$1"));
  if (value.trim() === "" || !Number.isFinite(n)) return value;
  return schemas.every((s) => !s.safeParse(value).success && s.safeParse(n).success) ? n : value;
}

/** Whether a direct call of one of these steps holds the words of a constraint in a parameter ("2000" in "under $2000"). */
function paramCarries(steps: readonly TaskStep[], ids: readonly string[], words: string): boolean {
  const said = foldCase(words);
  return steps
    .filter((s) => ids.includes(s.id))
    .some((s) =>
      Object.values(s.params).some((p) => {
        if (typeof p !== "string" && typeof p !== "number") return false;
        const needle = foldCase(String(p).trim());
        return (
          needle !== "" && new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(needle)}(?![\\p{L}\\p{N}])`, "u").test(said)
        );
      }),
    );
}

const unique = (xs: readonly string[]) => [...new Set(xs)];

function show(v: unknown): string {
  return typeof v === "string" ? `"${v}"` : (JSON.stringify(v) ?? String(v));
}

/** The words of a text, case and accents folded, a plural's "s" dropped, words under three letters left out. */
function stemsOf(text: string): string[] {
  return (foldCase(text).match(/\p{L}{3,}/gu) ?? []).map((w) => w.replace(/(?<=\p{L}{3})s$/u, ""));
}

function stripId(p: RequestPart): Omit<RequestPart, "id"> {
  const { id: _, ...rest } = p;
  return rest;
}

/** The plan with its understanding record; open questions cap its confidence and are named among its reasons. */
export function withUnderstanding(plan: Plan, understanding: Understanding): Plan {
  const questions = openQuestions(understanding);
  if (questions.length === 0) return { ...plan, understanding };
  return {
    ...plan,
    understanding,
    confidence: Math.min(plan.confidence, OPEN_QUESTION_CONFIDENCE),
    confidenceReasons: [...plan.confidenceReasons, ...questions.filter((q) => !plan.confidenceReasons.includes(q))],
  };
}
