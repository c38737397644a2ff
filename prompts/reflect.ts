import type { ReflectionDraft } from "../src/domain/reflection.js";
import type { ReflectionInput } from "../src/reflection/rules-reflection.js";
import { describeKnob } from "../src/reflection/knobs.js";
import { bullets, tag } from "./tags.js";

/** What the reflection prompt is built from: the input, which attempt of the improvement loop, and the last try. */
export interface ReflectPromptInput {
  input: ReflectionInput;
  /** 1: the standard prompt; 2: adds quality guidance and what was wrong; 3: adds a worked example too. */
  attempt: 1 | 2 | 3;
  previous: { draft: ReflectionDraft; violations: string[]; quality: number } | null;
}

const INSTRUCTIONS = `You reflect on one run of a planner-executor agent that a user judged (or that failed), so that the
agent's next runs for this user go better. Go beyond the symptom to the ROOT CAUSE: the strategy or assumption
behind what happened, not just what happened.
- BAD root cause: "Wrong note selected" (a symptom).
- GOOD root cause: "The newest-first strategy conflicts with this user's preference for relevance" (a strategy flaw).

Write:
- whatHappened: what the run chose or what failed, with the concrete values (names, numbers).
- why: which setting or choice of the agent led there.
- rootCause: the strategy or assumption that was wrong for this user.
- patternsIdentified: only patterns listed under <valid_patterns>, copied as written; [] when there are none.
  Never invent a pattern from this one run.
- strategyAdjustments: concrete changes, each in exactly one of these forms, using only the settings listed
  under <settings>:
  "Change <param> of <tool> from '<current>' to '<new>'"
  "Add constraint: <tool>.<param> >= <number>"   (or "= true" for an on/off setting)
  "Filter <tool> results where <field> != '<value>'"
  "Remove <tool> from plans for this user; plan <other tool> instead"
- learning: at least 50 characters on how to apply this next time for this user, and what it prevents.`;

const GUIDANCE = `Your previous reflection did not pass the quality gate. Fix what it names:
- depth: give a why and a root cause that names a strategy, default or assumption, with concrete values;
- actionability: every adjustment must be in one of the forms above, with a listed tool and setting;
- completeness: fill every field; learning of at least 50 characters; cite the valid patterns if any are listed.`;

const EXAMPLE = `An example of a reflection that passes (for another user and tool):
{"whatHappened": "Step notes (search_notes) chose 'Q3 plan, draft 1', relevance score 4.2 of 10, and the user rejected it: 'that is a stale draft'.",
 "why": "search_notes ran with priority 'recent' (the newest first), so it never looked at relevance.",
 "rootCause": "The strategy of trusting the tool's default ranking assumed it suits every user; for this user it conflicts with a preference for relevance.",
 "patternsIdentified": [],
 "strategyAdjustments": ["Change priority of search_notes from 'recent' to 'relevance'", "Add constraint: search_notes.minScore >= 7"],
 "learning": "For this user, relevance matters more than recency: rank notes by relevance and keep only those scoring 7 or more, which prevents another stale pick."}`;

const OUTPUT_FORMAT = `Answer with one JSON object and nothing else:
{"whatHappened": "...", "why": "...", "rootCause": "...", "patternsIdentified": ["..."], "strategyAdjustments": ["..."], "learning": "..."}`;

/** The reflection prompt for one attempt of the improvement loop. */
export function reflectPrompt(p: ReflectPromptInput): string {
  const { input } = p;
  const e = input.episode;
  const tools = new Set([
    ...(e.choices ?? []).map((c) => c.tool),
    ...e.failures.flatMap((f) => (f.tool ? [f.tool] : [])),
  ]);
  const settings = input.knobs.filter((k) => tools.has(k.tool)).map(describeKnob);
  const choices = (e.choices ?? []).map(
    (c) => `${c.stepId} (${c.tool}) with ${JSON.stringify(c.params)} chose: ${JSON.stringify(c.result)}`,
  );
  const failures = e.failures.map((f) => `${f.taskId} (${f.tool ?? "no tool"}) ${f.failureClass}: ${f.error}`);
  const valid = input.patterns.filter((x) => x.valid).map((x) => x.text);
  const sections = [
    INSTRUCTIONS,
    tag("request", e.request),
    tag(
      "evaluation",
      `${input.evaluation.verdict} by the ${input.evaluation.source}${input.evaluation.reason ? `: ${input.evaluation.reason}` : ""}${input.evaluation.comment ? ` (comment: ${input.evaluation.comment})` : ""}`,
    ),
    tag("outcome", `status ${e.status}`),
    tag("choices", bullets(choices)),
    tag("failures", bullets(failures)),
    tag("settings", bullets(settings)),
    tag("valid_patterns", bullets(valid)),
    tag(
      "memory",
      input.first
        ? "This is the first reflection for this user: no past experience."
        : `${input.history.length} past episode(s) of this user.`,
    ),
  ];
  if (p.attempt >= 2) {
    sections.push(GUIDANCE);
    if (p.previous)
      sections.push(
        tag(
          "previous_attempt",
          `quality ${p.previous.quality}; violations: ${p.previous.violations.join("; ") || "none, but the quality was too low"}\n${JSON.stringify(p.previous.draft)}`,
        ),
      );
  }
  if (p.attempt >= 3) sections.push(EXAMPLE);
  sections.push(OUTPUT_FORMAT);
  return sections.join("\n\n");
}
