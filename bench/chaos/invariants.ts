/**
 * The invariants every chaos run must keep, as pure checks over what the driver recorded: each command's exit
 * code and output, and what the database said before and after it. A check returns the violations it found,
 * each with one line that says what was wrong.
 */
import type { Notification } from "../../src/domain/notification.js";
import { planOf } from "../../src/domain/plan-state.js";
import type { CommandRecord, RunRecord } from "./driver.js";
import { COMMAND_TIMEOUT_MS } from "./driver.js";
import type { LedgerRow } from "./inspect.js";

export const INVARIANTS = {
  "no-stack-trace": "no stack trace or internal error on stdout or stderr",
  "exit-code": "the exit code is a documented one (0/2/3/4) and matches the thread's state",
  "json-output": "with --json, stdout is one JSON object that agrees with the state",
  "failure-announced": "every failure is announced (a notification) before its recovery",
  caps: "caps are never exceeded: revisions, failures per step",
  "status-report": "the final status agrees with the report (completed ⇒ nothing missing)",
  "side-effect-once": "no side effect happens twice (effect ledger)",
  "refusal-changes-nothing": "a refused decision leaves the thread as it was",
  "decision-validated": "a decision with a value the step's tool refuses is refused, and the thread keeps waiting",
  stuck: "a command that was not killed leaves the thread finished or waiting, never stopped part-way",
  "bounded-time": "every command ends within its time limit",
  "bounded-interaction": "a run ends within a bounded number of decisions",
  "kill-resume": "a run killed and resumed ends with the same status and answer as the same seed uninterrupted",
  confinement: "nothing from outside the workspace appears in any output",
} as const;
export type InvariantId = keyof typeof INVARIANTS;

export interface Violation {
  invariant: InvariantId;
  /** One line: what was wrong, with the command it happened in. */
  message: string;
  /** What the command said, or other specifics that differ between violations of one class. */
  detail?: string;
  /** Set when it happened in the uninterrupted twin of a kill run. */
  phase?: "uninterrupted";
}

/** A Node stack frame, as printed by an uncaught error or `--debug`. */
const STACK = /^\s+at (?:.+ \()?(?:file:\/\/|node:|\/)[^\n]*:\d+:\d+\)?$/m;

const TERMINAL = new Set(["completed", "partial", "failed", "rejected", "aborted"]);

/** The exit code a command should have given the state it left. */
export function expectedExit(after: CommandRecord["after"]): number {
  if (after.waitingKind) return 3;
  if (!after.finished) return 4;
  return after.status === "completed" ? 0 : 4;
}

/** The command as a person would type it, without the run's temporary database path. */
function show(c: Pick<CommandRecord, "argv">): string {
  const words = c.argv.filter((a, i) => a !== "--db" && c.argv[i - 1] !== "--db");
  return `\`candor ${words.map((a) => (/^[\w.=@:,*-]+$/.test(a) ? a : JSON.stringify(a))).join(" ")}\``;
}

function firstLine(text: string): string {
  return (text.split("\n").find((l) => l.trim()) ?? "").trim().slice(0, 200);
}

export function checkCommands(run: RunRecord): Violation[] {
  const out: Violation[] = [];
  for (const c of run.commands) {
    const where = show(c);
    if (c.timedOut)
      out.push({
        invariant: "bounded-time",
        message: `${where} ran past ${COMMAND_TIMEOUT_MS / 1000} s and was stopped`,
      });
    if (c.killed) continue; // A SIGKILLed command has no exit code and may have printed half a line.
    const both = `${c.stdout}\n${c.stderr}`;
    if (STACK.test(both) || /UNCAUGHT:/.test(both))
      out.push({
        invariant: "no-stack-trace",
        message: `${where} printed a stack trace`,
        detail: firstLine(both.slice(Math.max(0, both.search(STACK) - 200))),
      });
    if (c.code === 1 || /Internal error/.test(both))
      out.push({
        invariant: "no-stack-trace",
        message: `${where} exited ${c.code} with an internal error`,
        detail: firstLine(c.stderr.slice(Math.max(0, c.stderr.indexOf("Internal error")))),
      });
    if (run.marker && both.includes(run.marker))
      out.push({ invariant: "confinement", message: `${where} printed the content of a file outside the workspace` });
    if (c.timedOut) continue;
    if (c.code === null || ![0, 2, 3, 4].includes(c.code)) {
      out.push({ invariant: "exit-code", message: `${where} exited ${c.code ?? c.signal} (documented: 0, 2, 3, 4)` });
      continue;
    }
    const malformed = c.move?.malformed === true;
    if (c.code === 2) {
      if (c.before.checkpointId !== c.after.checkpointId && c.move?.thread === undefined) {
        out.push({
          invariant: "refusal-changes-nothing",
          message: `${where} exited 2 (refused) but wrote to the thread (status ${c.before.status} → ${c.after.status})`,
        });
      }
      // A thread with no checkpoint (killed before its first) is the kill-resume check's to report.
      if (!malformed && c.after.exists) {
        const after = c.after;
        const expected = after.exists ? expectedExit(after) : null;
        out.push({
          invariant: "exit-code",
          message: `${where} exited 2 for an answer that fits (thread ${after.exists ? `${after.status}${after.waitingKind ? `, waiting for ${after.waitingKind}` : ""}, expected exit ${expected}` : "has no checkpoint"})`,
          detail: firstLine(c.stderr),
        });
      }
    } else {
      const expected = expectedExit(c.after);
      if (c.code !== expected) {
        out.push({
          invariant: "exit-code",
          message: `${where} exited ${c.code} but the thread is ${c.after.finished ? `finished (${c.after.status})` : c.after.waitingKind ? `waiting for ${c.after.waitingKind}` : `stopped part-way (${c.after.status})`}: expected ${expected}`,
        });
      }
      if (malformed && c.before.waitingKind !== null && c.after.decisions !== c.before.decisions) {
        const why = c.move?.mustRefuse ? `, although ${c.move.mustRefuse}` : "";
        out.push({
          invariant: c.move?.mustRefuse ? "decision-validated" : "refusal-changes-nothing",
          message: `${where} was accepted (exit ${c.code}, ${c.before.waitingKind} → ${c.after.finished ? c.after.status : (c.after.waitingKind ?? c.after.status)})${why}`,
        });
      }
    }
    if (c.argv.includes("--json") && (c.code === 0 || c.code === 3 || c.code === 4)) {
      let json: Record<string, unknown> | null = null;
      try {
        json = JSON.parse(c.stdout) as Record<string, unknown>;
      } catch {
        out.push({
          invariant: "json-output",
          message: `${where} printed something that is not one JSON object on stdout`,
          detail: firstLine(c.stdout) || "(nothing)",
        });
      }
      if (json) {
        if (json.exitCode !== undefined && json.exitCode !== c.code)
          out.push({
            invariant: "json-output",
            message: `${where}: JSON exitCode ${JSON.stringify(json.exitCode)} but the process exited ${c.code}`,
          });
        if (c.after.exists && json.status !== c.after.status)
          out.push({
            invariant: "json-output",
            message: `${where}: JSON status ${String(json.status)} but the thread's is ${c.after.status}`,
          });
      }
    } else if (c.argv.includes("--json") && c.code === 2 && c.stdout.trim() !== "") {
      try {
        JSON.parse(c.stdout);
      } catch {
        out.push({
          invariant: "json-output",
          message: `${where} exited 2 and printed text that is not JSON on stdout`,
        });
      }
    } else if (c.argv.includes("--json") && c.code === 2) {
      out.push({
        invariant: "json-output",
        message: `${where} exited 2 and printed nothing on stdout, though --json was given`,
        detail: firstLine(c.stderr),
      });
    }
    if (!c.killed && !c.timedOut && c.code !== 2 && c.after.exists && !c.after.finished && !c.after.waitingKind) {
      out.push({
        invariant: "stuck",
        message: `${where} exited ${c.code} leaving the thread stopped part-way (status ${c.after.status})`,
      });
    }
  }
  if (run.unbounded)
    out.push({ invariant: "bounded-interaction", message: `still waiting after ${run.commands.length} commands` });
  return out;
}

const isRecovery = (n: Notification) => n.kind === "strategy" && /^Recovery for /.test(n.title);
const isAnnouncement = (n: Notification) => n.kind === "step_failed" || n.kind === "escalation";

/**
 * Every recovery is preceded by its own announcement: between two recoveries of a step there is a failure or
 * an escalation of that step. Every failed attempt a worker recorded was announced, and every revision has its
 * recovery explained.
 */
export function checkAnnouncements(run: RunRecord): Violation[] {
  const v = run.final.values;
  if (!v) return [];
  const out: Violation[] = [];
  const announcedSince = new Map<string, boolean>();
  for (const n of v.notifications) {
    if (!n.taskId) continue;
    if (isAnnouncement(n)) announcedSince.set(n.taskId, true);
    else if (isRecovery(n)) {
      if (announcedSince.get(n.taskId) !== true)
        out.push({
          invariant: "failure-announced",
          message: `"${n.title}" with no failure of ${n.taskId} announced before it`,
        });
      announcedSince.set(n.taskId, false);
    }
  }
  const recoveries = v.notifications.filter(isRecovery).length;
  if (recoveries < v.revisions.length)
    out.push({
      invariant: "failure-announced",
      message: `${v.revisions.length} revision(s) but ${recoveries} recovery explanation(s)`,
    });
  const failedAttempts = new Map<string, number>();
  for (const f of v.feedback) {
    // PARTIAL_SUCCESS is a step that ran without an optional input a skipped step would have given: announced as a
    // warning when it is dispatched, not a failure of its own.
    const n =
      f.attempts.filter((a) => a.error !== null).length ||
      (f.feedbackType === "SUCCESS" || f.feedbackType === "PARTIAL_SUCCESS" ? 0 : 1);
    failedAttempts.set(f.taskId, (failedAttempts.get(f.taskId) ?? 0) + n);
  }
  for (const [taskId, n] of failedAttempts) {
    const told = v.notifications.filter((x) => x.taskId === taskId && x.kind === "step_failed").length;
    if (told < n)
      out.push({
        invariant: "failure-announced",
        message: `${taskId} failed ${n} time(s) (attempts included) but ${told} failure(s) were announced`,
      });
  }
  return out;
}

/**
 * Revisions stay within --max-revisions plus what people granted (each retry, replan or skip they chose may add
 * one), the count agrees with the list, and no step fails more often than the per-step cap (3 by default, plus
 * one per retry a person granted).
 */
export function checkCaps(run: RunRecord): Violation[] {
  const v = run.final.values;
  if (!v) return [];
  const out: Violation[] = [];
  const granted = run.commands.filter(
    (c) =>
      c.move &&
      !c.move.malformed &&
      c.code !== 2 &&
      c.after.decisions > c.before.decisions &&
      /^(retry|replan|skip|adjust)/.test(c.move.label),
  ).length;
  const cap = run.scenario.maxRevisions + granted;
  if (v.revisionCount > cap)
    out.push({
      invariant: "caps",
      message: `revisionCount ${v.revisionCount} > --max-revisions ${run.scenario.maxRevisions} + ${granted} granted by a person`,
    });
  if (v.revisions.length !== v.revisionCount)
    out.push({
      invariant: "caps",
      message: `revisionCount ${v.revisionCount} but ${v.revisions.length} revision(s) recorded`,
    });
  const perStep = v.settings.maxStepFailures;
  const failures = new Map<string, number>();
  for (const f of v.feedback)
    if (f.feedbackType !== "SUCCESS" && f.feedbackType !== "DEPENDENCY_FAILURE")
      failures.set(f.taskId, (failures.get(f.taskId) ?? 0) + 1);
  for (const [taskId, n] of failures)
    if (n > perStep + granted)
      out.push({ invariant: "caps", message: `step ${taskId} failed ${n} times (cap ${perStep}, ${granted} granted)` });
  if (v.plan && (v.plan.confidence < 0 || v.plan.confidence > 1))
    out.push({ invariant: "caps", message: `plan confidence ${v.plan.confidence} outside 0..1` });
  return out;
}

/** A finished run's status, report, answer and plan tell the same story. */
export function checkStatusReport(run: RunRecord): Violation[] {
  const f = run.final;
  const v = f.values;
  if (!v || !f.finished) return [];
  const out: Violation[] = [];
  const status = v.status;
  if (!TERMINAL.has(status))
    return [
      {
        invariant: "status-report",
        message: `looks finished (nothing left to run) with non-terminal status ${status}, and no report`,
      },
    ];
  const r = v.report;
  if (!r) {
    out.push({
      invariant: "status-report",
      message: `looks finished (nothing left to run) with status ${status} but no report`,
    });
    return out;
  }
  if (r.summary.status !== status)
    out.push({ invariant: "status-report", message: `status ${status} but the report says ${r.summary.status}` });
  if (status === "completed") {
    if (r.missing.length > 0)
      out.push({ invariant: "status-report", message: `completed but the report lists missing: ${r.missing[0]}` });
    if (!v.answer) out.push({ invariant: "status-report", message: "completed without an answer" });
    const open = (planOf(v)?.steps ?? []).filter(
      (s) =>
        s.status === "failed" ||
        s.status === "pending" ||
        s.status === "running" ||
        (s.status === "skipped" && s.skipCause !== "condition_false"),
    );
    if (open.length > 0)
      out.push({ invariant: "status-report", message: `completed with step ${open[0]!.id} ${open[0]!.status}` });
  }
  if (status === "partial" && r.missing.length === 0)
    out.push({ invariant: "status-report", message: "partial but the report lists nothing missing" });
  if (
    (status === "failed" || status === "rejected" || status === "aborted") &&
    !v.failureReason &&
    !r.summary.failureReason
  )
    out.push({ invariant: "status-report", message: `${status} without a reason` });
  return out;
}

/** No call with a side effect completed twice for one step of one thread, nor an irreversible tool twice at all. */
export function checkSideEffects(
  ledger: readonly LedgerRow[],
  irreversible: (tool: string) => boolean,
  feedbackBookings = 0,
): Violation[] {
  const out: Violation[] = [];
  const done = ledger.filter((r) => r.status === "done");
  const perTool = new Map<string, number>();
  for (const r of done) if (irreversible(r.tool)) perTool.set(r.tool, (perTool.get(r.tool) ?? 0) + 1);
  for (const [tool, n] of perTool)
    if (n > 1)
      out.push({ invariant: "side-effect-once", message: `${tool} completed ${n} times in one thread (ledger)` });
  const perDispatch = new Map<string, number>();
  for (const r of done)
    perDispatch.set(`${r.stepId}#${r.dispatch}`, (perDispatch.get(`${r.stepId}#${r.dispatch}`) ?? 0) + 1);
  for (const [k, n] of perDispatch)
    if (n > 1)
      out.push({ invariant: "side-effect-once", message: `dispatch ${k} has ${n} completed calls in the ledger` });
  if (feedbackBookings > 1)
    out.push({
      invariant: "side-effect-once",
      message: `${feedbackBookings} successful irreversible steps in the thread's feedback`,
    });
  return out;
}

/** Nothing read from outside the workspace reached the thread's state. */
function checkConfinement(run: RunRecord): Violation[] {
  if (!run.marker || !run.final.values) return [];
  return JSON.stringify(run.final.values).includes(run.marker)
    ? [{ invariant: "confinement", message: "the thread's state holds the content of a file outside the workspace" }]
    : [];
}

export interface Outcome {
  status: string | null;
  answer: string | null;
  exists: boolean;
}

export function outcomeOf(run: RunRecord): Outcome {
  return {
    status: run.final.values?.status ?? null,
    answer: run.final.values?.answer ?? null,
    exists: run.final.exists,
  };
}

/** A killed and resumed run ends as the uninterrupted one did. */
export function checkKillResume(killed: RunRecord, baseline: Outcome): Violation[] {
  const got = outcomeOf(killed);
  const kills = killed.commands.filter((c) => c.killed).length;
  if (kills === 0) return [];
  const out: Violation[] = [];
  if (!got.exists) {
    const resume = killed.commands.find((c, i) => i > 0 && killed.commands[i - 1]!.killed && c.argv[0] === "resume");
    return [
      {
        invariant: "kill-resume",
        message: `killed before the first checkpoint; \`resume\` then ${resume ? `exited ${resume.code}` : "was not possible"}`,
        detail: resume ? firstLine(resume.stderr) : "",
      },
    ];
  }
  if (got.status !== baseline.status)
    out.push({
      invariant: "kill-resume",
      message: `ended ${got.status} after ${kills} kill(s); the uninterrupted run ended ${baseline.status}`,
    });
  else if (got.answer !== baseline.answer)
    out.push({
      invariant: "kill-resume",
      message: `same status (${got.status}) but a different answer after ${kills} kill(s)`,
      detail: diffLine(baseline.answer, got.answer),
    });
  return out;
}

function diffLine(a: string | null, b: string | null): string {
  if (a === null || b === null)
    return `${a === null ? "no answer" : "an answer"} vs ${b === null ? "no answer" : "an answer"}`;
  const la = a.split("\n");
  const lb = b.split("\n");
  for (let i = 0; i < Math.max(la.length, lb.length); i++)
    if (la[i] !== lb[i]) return `line ${i + 1}: "${(la[i] ?? "").slice(0, 90)}" vs "${(lb[i] ?? "").slice(0, 90)}"`;
  return "(whitespace)";
}

/** Every invariant of one run (the kill comparison is separate: it needs the baseline). */
export function checkRun(run: RunRecord, irreversible: (tool: string) => boolean): Violation[] {
  const bookings = (run.final.values?.feedback ?? []).filter(
    (f) => f.feedbackType === "SUCCESS" && f.tool !== null && irreversible(f.tool),
  ).length;
  return [
    ...checkCommands(run),
    ...checkAnnouncements(run),
    ...checkCaps(run),
    ...checkStatusReport(run),
    ...checkSideEffects(run.ledger, irreversible, bookings),
    ...checkConfinement(run),
  ];
}
