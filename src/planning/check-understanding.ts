import { z } from "zod";
import type { Plan, TaskStep } from "../domain/plan.js";
import type { PlanningRequest } from "../domain/request.js";
import { openQuestions, Understanding, type RequestPart, type Unaccounted } from "../domain/understanding.js";
import type { WorkerModel } from "../reasoning/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { Interpretation } from "../tools/types.js";
import { isModelDriven, loopTools } from "../tools/model-driven.js";
import { foldCase, overlaps, within, type Span } from "./lexicon.js";
import { abilitiesOf, OPEN_QUESTION_CONFIDENCE, requestFacts, toolWords } from "./rules-planner.js";
import { paramNames } from "../tools/args.js";
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
  values: z.array(z.object({ name: z.string(), value: z.unknown(), source: z.string().nullish() })).nullish(),
  assumptions: z.array(z.object({ name: z.string(), value: z.unknown(), why: z.string().nullish() })).nullish(),
  changes: z
    .array(z.object({ name: z.string(), from: z.unknown(), to: z.unknown(), why: z.string().nullish() }))
    .nullish(),
});

/** Where the text of a claim sits in the request (case and accents ignored), or null when it is not there. */
function locate(request: string, norm: string, text: string): Span | null {
  const needle = foldCase(text.trim());
  if (needle.length === 0) return null;
  const at = norm.indexOf(needle);
  return at < 0 ? null : { start: at, end: at + needle.length, text: request.slice(at, at + needle.length) };
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
 * A model's plan with its understanding checked: the model's parts (steps it names that the plan does not have
 * are dropped; a served part left with none becomes unsupported), its values, assumptions and changes, plus what
 * the generic reading finds open — meaningful text no part, value or step accounts for (a task verb only counts as
 * accounted when a tool of the plan has it as a keyword), and excluded outputs a step still produces. `workers`: the
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
  const text = request.userIntent;
  const norm = foldCase(text);
  const read = LooseRecord.safeParse(claimed ?? {});
  if (claimed !== null && claimed !== undefined && !read.success)
    notes.push("The model's understanding record was unreadable; the request was read again without it.");
  const model = read.success ? read.data : {};
  const stepIds = new Set(plan.steps.map((s) => s.id));
  /** Whether the tools of these steps (a model-driven step's: every tool its loop may call) name every word of `what`. */
  const saidByTools = (what: string, ids: readonly string[]): boolean => {
    const steps = plan.steps.filter((s) => ids.includes(s.id));
    const tools = steps.flatMap((s) =>
      isModelDriven(s, registry, workers) ? loopTools(s, registry) : s.tools.flatMap((t) => registry.tool(t) ?? []),
    );
    const said = new Set(tools.flatMap((t) => stemsOf(`${t.name.replace(/_/g, " ")} ${t.description}`)));
    const asked = stemsOf(what);
    return asked.length > 0 && asked.every((w) => said.has(w));
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
    parts.push({
      at: locate(text, norm, p.text),
      text: p.text,
      description: p.description ?? p.text,
      kind: p.kind,
      status,
      stepIds: status === "served" ? given : [],
      why,
    });
  }
  const covered = parts.map((p) => p.at).filter((s): s is Span => s !== null);
  const valueSpans = (model.values ?? [])
    .flatMap((v) => (v.source ? [locate(text, norm, v.source)] : []))
    .filter((s): s is Span => s !== null);

  // The generic reading of what the model's parts leave out or claim wrongly.
  if (parts.length === 0) {
    for (const p of base.parts) parts.push({ ...stripId(p), at: locate(text, norm, p.text) });
  } else {
    for (const bp of base.parts) {
      if (bp.status === "served") continue;
      const at = locate(text, norm, bp.text);
      const over = at ? parts.filter((q) => q.at !== null && overlaps(q.at, [at])) : [];
      const inside = over.filter((q) => at !== null && q.at !== null && q.at.start >= at.start && q.at.end <= at.end);
      // A part the reader found no tool for, within a part the model serves by steps whose tools say it: carried.
      if (
        bp.status === "unsupported" &&
        over.some((q) => q.status === "served" && saidByTools(bp.description, q.stepIds))
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
  // Meaningful text: accounted by the model's parts and values only when it is not a task verb (a model cannot
  // serve "translate" by saying so; a tool of the plan must do it).
  const unaccounted: Unaccounted[] = base.unaccounted.filter((u) => {
    const at = locate(text, norm, u.text);
    if (!at) return true;
    if (u.kind === "task") return true;
    return !overlaps(at, [...covered, ...valueSpans]);
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
    values: [
      ...(model.values ?? []).map((v) => ({ name: v.name, value: v.value, source: v.source ?? "", stepIds: [] })),
      ...base.values.filter((v) => !(model.values ?? []).some((m) => m.name === v.name)),
    ],
    assumptions: [
      ...(model.assumptions ?? []).map((a) => ({ name: a.name, value: a.value, why: a.why ?? "" })),
      ...base.assumptions.filter((a) => !(model.assumptions ?? []).some((m) => m.name === a.name)),
    ],
    changes: [
      ...(model.changes ?? []).map((c) => ({
        name: c.name,
        from: c.from,
        to: c.to,
        why: c.why ?? "",
        by: "planner" as const,
      })),
      ...base.changes.filter((c) => !(model.changes ?? []).some((m) => m.name === c.name)),
    ],
    refused: base.refused,
    unaccounted,
    by: "llm",
  });
  return { understanding, notes };
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
