import { interruptsOf } from "../interrupts.js";
import { DecisionName, EDITABLE_STEP_FIELDS, type PlanAdjustment } from "../domain/approval.js";
import { DECISION_INPUT } from "../domain/decisions.js";
import type { Plan } from "../domain/plan.js";
import { CandorError } from "../errors.js";
import { updateFromAssignments } from "../replay.js";
import type { CliIo } from "./io.js";
import { parseAdjustFlag } from "./options.js";
import { executeThread } from "./present.js";
import { decisionMeaning, kindTitle, requestLines } from "./render.js";
import {
  threadConfig,
  type CandorGraph,
  type Session,
  type ThreadInput,
  type ThreadOutcome,
  type WaitingRequest,
} from "./session.js";

/** One decision a waiting request accepts, with the key that picks it. */
export interface Choice {
  decision: string;
  key: string;
  meaning: string;
}

/** At the prompt the follow-up questions replace the flags the resume commands mention. */
const ASKED_NEXT: Partial<Record<DecisionName, string>> = {
  adjust: "change steps, then run the adjusted plan (the edits are asked next)",
  retry: "allow one more recovery attempt (new parameters for the step are asked next, optional)",
};

/** What a decision does, as the prompt says it: with what is asked next where a follow-up question comes. */
function meaningAt(decision: string, request: WaitingRequest): string {
  if (decision === "replan") return replanMeaning(request);
  // A re-run after a check asks nothing more; a retry of an impossible limit needs the new limit.
  if (decision === "retry" && request.kind === "unknown_outcome") return decisionMeaning(decision, request);
  if (decision === "retry" && request.kind === "infeasible_constraint")
    return "check again with a limit that can be met (asked next)";
  const known = DecisionName.safeParse(decision);
  return (known.success ? ASKED_NEXT[known.data] : undefined) ?? decisionMeaning(decision, request);
}

/** What replan does depends on what waits: a plan not yet run is made again; after a failure, the rest is. */
const replanMeaning = (request: WaitingRequest) =>
  request.kind === "plan_approval"
    ? "make the plan again with your guidance (asked next)"
    : "plan the unfinished work again (your guidance is asked next)";

/** The decisions `request` accepts, in its order, each with a one-letter key (a decision without one gets a free letter). */
export function decisionChoices(request: WaitingRequest): Choice[] {
  const taken = new Set<string>();
  return request.decisions.map((decision) => {
    // The same key for a decision whatever asks for it, so a person learns them once (the table's keys).
    const known = DecisionName.safeParse(decision);
    const preferred = known.success ? DECISION_INPUT[known.data].key : undefined;
    const key =
      preferred && !taken.has(preferred)
        ? preferred
        : ([...decision.toLowerCase()].find((c) => /[a-z]/.test(c) && !taken.has(c)) ?? decision);
    taken.add(key);
    return { decision, key, meaning: meaningAt(decision, request) };
  });
}

export type Picked = { ok: true; decision: string } | { ok: false; error: string };

/** Reads a typed choice: its key, the word, or a prefix of the word that fits only one choice; case and spaces do not matter. */
export function pickDecision(text: string, choices: readonly Choice[]): Picked {
  const answer = text.trim().toLowerCase();
  const keys = choices.map((c) => c.key).join(", ");
  const words = choices.map((c) => c.decision).join(", ");
  if (!answer) return { ok: false, error: `Type one of ${keys} (or the word: ${words}).` };
  const exact = choices.find((c) => c.key === answer || c.decision === answer);
  if (exact) return { ok: true, decision: exact.decision };
  const prefixed = choices.filter((c) => c.decision.startsWith(answer));
  if (prefixed.length === 1) return { ok: true, decision: prefixed[0]!.decision };
  return {
    ok: false,
    error: `"${text.trim()}" is not one of the choices. Type one of ${keys} (or the word: ${words}).`,
  };
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

const EDIT_EXAMPLE = `[{"taskId":"s2","field":"params.limit","newValue":3}]`;

/**
 * Reads the edits of an adjust answer (JSON, or @file) and checks what can be checked here: each names a step of
 * the plan and a field a person may change. The graph checks the rest (types, cycles) and says so if it refuses.
 */
export function parseEdits(text: string, plan: Plan | undefined, cwd = process.cwd()): Parsed<PlanAdjustment[]> {
  let edits: PlanAdjustment[];
  try {
    edits = parseAdjustFlag(text.trim(), cwd);
  } catch (e) {
    if (!CandorError.isInstance(e)) throw e;
    // parseAdjustFlag speaks of the flag; here the edits were typed at a prompt.
    const typed = e.message.replace(/--adjust '([^']*)'/g, "$1");
    return {
      ok: false,
      error: typed
        .replace(/^--adjust is /, "The edits are ")
        .replace(/^--adjust (@\S+): /, "$1: ")
        .replace(/^--adjust /, "The edits "),
    };
  }
  for (const [i, edit] of edits.entries()) {
    const label = `Edit ${i + 1}`;
    if (plan && !plan.steps.some((s) => s.id === edit.taskId)) {
      return {
        ok: false,
        error: `${label}: the plan has no step "${edit.taskId}". Steps: ${plan.steps.map((s) => s.id).join(", ")}.`,
      };
    }
    const field = edit.field.startsWith("params.")
      ? edit.field.length > "params.".length
        ? "params"
        : ""
      : edit.field;
    if (!(EDITABLE_STEP_FIELDS as readonly string[]).includes(field)) {
      return {
        ok: false,
        error: `${label}: "${edit.field}" is not a field a person can change. Use params.<key> or one of ${EDITABLE_STEP_FIELDS.join(", ")}.`,
      };
    }
    if (edit.newValue === undefined) return { ok: false, error: `${label}: "newValue" is missing.` };
  }
  return { ok: true, value: edits };
}

/**
 * Reads `key=value` pairs separated by spaces (a value with spaces goes in double quotes, JSON-style); values are
 * JSON when they parse, else text, as with `--set`. Blank means no new parameters.
 */
export function parseParams(text: string): Parsed<Record<string, unknown> | null> {
  const tokens = text.trim().match(/(?:[^\s"]+|"(?:[^"\\]|\\.)*")+/g) ?? [];
  if (tokens.length === 0) return { ok: true, value: null };
  const bad = tokens.find((t) => !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*=/.test(t));
  if (bad)
    return {
      ok: false,
      error: `"${bad}" is not key=value. Example: maxPrice=300 cabin=economy (blank for no new parameters).`,
    };
  try {
    return { ok: true, value: updateFromAssignments({}, tokens) };
  } catch (e) {
    // A name that reaches a prototype (`__proto__=1`) is asked again, like any other malformed answer.
    if (!CandorError.isInstance(e)) throw e;
    return { ok: false, error: e.message };
  }
}

/** Why the graph refused the thread's last answer, if it did: the request is asked again with the reason as `error`. */
export async function lastRefusal(graph: CandorGraph, threadId: string): Promise<string | null> {
  const snapshot = await graph.getState(threadConfig(threadId), { subgraphs: true });
  const refused = interruptsOf(snapshot).map((i) => (i.value as { error?: unknown } | undefined)?.error);
  return refused.find((e): e is string => typeof e === "string") ?? null;
}

type Answer = Omit<Extract<ThreadInput, { kind: "decision" }>, "kind" | "interruptIds">;
/** A follow-up either answers, goes back to the list of decisions (blank where an answer is needed), or meets the end of input. */
type FollowUp = { kind: "answer"; answer: Answer } | { kind: "back" } | { kind: "eof" };

/** Asks until `parse` accepts the line, saying what was wrong each time it does not. */
async function askUntil<T>(
  ask: NonNullable<CliIo["ask"]>,
  io: CliIo,
  prompt: string,
  parse: (line: string) => Parsed<T>,
): Promise<{ kind: "value"; value: T } | { kind: "eof" }> {
  for (;;) {
    const line = await ask(prompt);
    if (line === null) return { kind: "eof" };
    const parsed = parse(line);
    if (parsed.ok) return { kind: "value", value: parsed.value };
    io.err(`  ✗ ${parsed.error}`);
  }
}

const BACK = Symbol("back");

/** The follow-up questions a decision needs: the edits of adjust, a retry's parameters, a replan's guidance, the reason for a refusal. */
async function followUp(
  decision: string,
  request: WaitingRequest,
  ask: NonNullable<CliIo["ask"]>,
  io: CliIo,
): Promise<FollowUp> {
  const plain = (comment: string | null = null): FollowUp => ({ kind: "answer", answer: { decision, comment } });
  switch (decision) {
    case "adjust": {
      const plan = request.kind === "plan_approval" ? request.plan : undefined;
      io.err(
        [
          `  Edits: a JSON list of {taskId, field, newValue}, e.g. ${EDIT_EXAMPLE}`,
          `  (field: params.<key> or one of ${EDITABLE_STEP_FIELDS.join(", ")}; @file reads a file; blank goes back)`,
        ].join("\n"),
      );
      const got = await askUntil<PlanAdjustment[] | typeof BACK>(ask, io, "Edits: ", (line) =>
        line.trim() ? parseEdits(line, plan) : { ok: true, value: BACK },
      );
      if (got.kind === "eof") return got;
      return got.value === BACK
        ? { kind: "back" }
        : { kind: "answer", answer: { decision, comment: null, adjustments: got.value } };
    }
    case "retry": {
      if (request.kind === "unknown_outcome") return plain();
      const current =
        "params" in request && request.params && typeof request.params === "object"
          ? ` (now ${JSON.stringify(request.params)})`
          : "";
      const step = "taskId" in request && typeof request.taskId === "string" ? ` for ${request.taskId}` : "";
      if (request.kind === "infeasible_constraint") {
        // The same limit fails the same way: new parameters are required here, so blank goes back instead.
        const example =
          "retryWith" in request && request.retryWith
            ? Object.entries(request.retryWith)
                .map(([k, v]) => `${k}=${String(v)}`)
                .join(" ")
            : "budget=900";
        const got = await askUntil(
          ask,
          io,
          `A limit that can be met${step}${current}, e.g. ${example} (blank goes back): `,
          parseParams,
        );
        if (got.kind === "eof") return got;
        return got.value
          ? { kind: "answer", answer: { decision, comment: null, extra: { params: got.value } } }
          : { kind: "back" };
      }
      const got = await askUntil(
        ask,
        io,
        `New parameters${step}${current} as key=value, blank for none: `,
        parseParams,
      );
      if (got.kind === "eof") return got;
      return got.value
        ? { kind: "answer", answer: { decision, comment: null, extra: { params: got.value } } }
        : plain();
    }
    case "replan": {
      const line = await ask("Guidance for the new plan (what to do differently; blank goes back): ");
      if (line === null) return { kind: "eof" };
      const guidance = line.trim();
      if (!guidance) return { kind: "back" };
      return { kind: "answer", answer: { decision, comment: null, extra: { guidance } } };
    }
    case "reject":
    case "deny": {
      const line = await ask("Why? (recorded with the decision; blank for no comment): ");
      if (line === null) return { kind: "eof" };
      return plain(line.trim() || null);
    }
    default:
      return plain();
  }
}

function menuLines(request: WaitingRequest, choices: readonly Choice[], refusal: string | null): string[] {
  const width = Math.max(...choices.map((c) => c.decision.length));
  return [
    "",
    `Waiting for you: ${kindTitle(request.kind)}.`,
    `  ${request.question}`,
    "",
    ...requestLines(request, true),
    ...(refusal ? ["", `  ! Your last answer was not applied: ${refusal}`] : []),
    "",
    "Answer with:",
    ...choices.map((c) => `  ${c.key}  ${c.decision.padEnd(width)}   ${c.meaning}`),
    "  (? shows this again · Ctrl-D leaves the thread waiting and prints the commands to answer it later)",
  ];
}

/** Asks for one decision on `request`; null when the input ends (or Ctrl-C) first. */
async function readAnswer(
  request: WaitingRequest,
  refusal: string | null,
  ask: NonNullable<CliIo["ask"]>,
  io: CliIo,
): Promise<Answer | null> {
  const choices = decisionChoices(request);
  const show = () => io.err(menuLines(request, choices, refusal).join("\n"));
  show();
  for (;;) {
    const line = await ask(`Decision [${choices.map((c) => c.key).join("/")}]: `);
    if (line === null) return null;
    if (line.trim() === "?") {
      show();
      continue;
    }
    const picked = pickDecision(line, choices);
    if (!picked.ok) {
      io.err(`  ✗ ${picked.error}`);
      continue;
    }
    const next = await followUp(picked.decision, request, ask, io);
    if (next.kind === "eof") return null;
    if (next.kind === "answer") return next.answer;
  }
}

function describe(answer: Answer): string {
  const parts = [
    answer.adjustments ? `edits ${JSON.stringify(answer.adjustments)}` : "",
    answer.extra?.params ? `parameters ${JSON.stringify(answer.extra.params)}` : "",
    typeof answer.extra?.guidance === "string" ? `guidance: ${answer.extra.guidance}` : "",
    answer.comment ? `comment: ${answer.comment}` : "",
  ].filter(Boolean);
  return `→ ${answer.decision}${parts.length > 0 ? ` (${parts.join("; ")})` : ""}`;
}

/**
 * Issue 4 item 10: while the thread waits for a person and `io.ask` can reach one, shows the request readably,
 * asks for a decision (and what it needs: edits, parameters, guidance, a reason), sends it, and goes on until the
 * thread stops waiting. A malformed answer is asked again, as is one the graph refuses (with its reason).
 * Returns the last outcome: still waiting when the input ended (Ctrl-D), so the caller prints the resume
 * commands and exits 3 as without a terminal; "interrupted" after Ctrl-C. Without `io.ask` it returns `outcome`.
 * `streamAnswer` prints a model's answer as it is written, as executeThread does.
 */
export async function decideInteractively(
  session: Session,
  threadId: string,
  outcome: ThreadOutcome | "interrupted",
  io: CliIo,
  options: { streamAnswer?: boolean } = {},
): Promise<ThreadOutcome | "interrupted"> {
  const ask = io.ask;
  if (!ask) return outcome;
  let current = outcome;
  while (current !== "interrupted" && current.waitingFor && current.waitingFor.decisions.length > 0) {
    const refusal = await lastRefusal(session.graph, threadId);
    const answer = await readAnswer(current.waitingFor, refusal, ask, io);
    if (io.signal?.aborted) {
      // The prompt's line is still open after ^C; the caller's "Stopped by Ctrl-C" goes on a line of its own.
      io.err("");
      return "interrupted";
    }
    if (!answer) {
      io.err("\nNo answer (end of input): the thread keeps waiting.");
      return current;
    }
    io.err(describe(answer));
    current = await executeThread(
      session,
      threadId,
      { kind: "decision", ...answer, interruptIds: current.interruptIds },
      io,
      undefined,
      options,
    );
  }
  return current;
}
