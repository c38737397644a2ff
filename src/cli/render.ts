import type { CandorEvent, Notification, Progress } from "../domain/notification.js";
import { formatUsage } from "../domain/usage.js";
import type { Plan, TaskStep } from "../domain/plan.js";
import { DecisionName, type FailureEscalationRequest } from "../domain/approval.js";
import { DECISION_INPUT, decisionMeaning, kindTitle } from "../domain/decisions.js";
import { understandingLines } from "../domain/understanding.js";
import { isReactive, REACTIVE_WORKER } from "../domain/plan.js";
import type { WaitingRequest } from "./session.js";
import { inline } from "./io.js";
import { shellArg } from "./shell-arg.js";

export { shellArg };

export { decisionMeaning, kindTitle };

const STEP_WIDTH = 14;
/** Continuation lines start under the step column: "HH:MM:SS x ". */
const INDENT = " ".repeat(11);

/** Local wall-clock time of an ISO timestamp, HH:MM:SS. */
export function clock(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "--:--:--";
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}

/** Local date and time of an ISO timestamp, YYYY-MM-DD HH:MM:SS (the decision log spans days). */
export function stamp(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "----------   --:--:--";
  const date = [d.getFullYear(), d.getMonth() + 1, d.getDate()]
    .map((n, i) => String(n).padStart(i === 0 ? 4 : 2, "0"))
    .join("-");
  return `${date} ${clock(iso)}`;
}

function marker(n: Notification): string {
  if (n.kind === "step_succeeded") return "✓";
  return n.severity === "ERROR" ? "✗" : n.severity === "WARNING" ? "!" : "·";
}

function line(at: string, mark: string, step: string, text: string): string {
  return `${clock(at)} ${mark} ${step.padEnd(STEP_WIDTH)} ${text}`.trimEnd();
}

/**
 * Turns the stream of Candor events into readable lines. Progress arrives both as `progress` events and as
 * progress notifications, and in bursts (one per finished step of a superstep): print each new count once.
 * Detail pointers name the CLI as the user invoked it and leave out the log file, which the header names.
 */
export class EventPrinter {
  private printedDone = 0;
  private printedTotal = 0;

  /** `scope` (e.g. " --thread run-1 --db x.db") narrows `logs` pointers to this run, so they never show another's. */
  constructor(
    private readonly commandPrefix: string,
    private readonly scope = "",
  ) {}

  lines(event: CandorEvent): string[] {
    return event.type === "progress" ? this.progress(event.progress) : this.notification(event.notification);
  }

  private progress(p: Progress): string[] {
    // Re-running steps after a revision counts them again; a count that goes backwards reads like a fault.
    if (p.done === 0 || (p.done <= this.printedDone && p.total === this.printedTotal)) return [];
    this.printedDone = p.done;
    this.printedTotal = p.total;
    const eta = p.etaMs >= 100 ? `, about ${(p.etaMs / 1000).toFixed(1)} s left` : "";
    const tokens = p.tokens ? ` · model so far: ${formatUsage(p.tokens)}` : "";
    return [line(p.at, "·", "", `Progress: ${p.done}/${p.total} steps (${Math.round(p.percent)}%)${eta}${tokens}`)];
  }

  private notification(n: Notification): string[] {
    if (n.kind === "progress") return [];
    // A strategy choice is always followed by its explanation, which names the strategy again.
    if (n.kind === "strategy" && !n.message.includes("\n")) return [];
    const out = [line(n.at, marker(n), n.taskId ?? "", inline(tidyTitle(n)))];
    switch (n.kind) {
      case "step_failed": {
        const details = n.details ? this.pointer(n.details) : null;
        const parts = [
          n.recoveryStrategy && `recovery: ${n.recoveryStrategy}`,
          n.estimatedDelay && `delay: ${n.estimatedDelay}`,
          details && `details: ${details}`,
        ];
        const detail = parts.filter(Boolean).join(" · ");
        if (detail) out.push(`${INDENT}↳ ${detail}`);
        break;
      }
      case "strategy":
        for (const l of n.message.split("\n"))
          out.push(`${INDENT}  ${l.replace(/^Details: (.*)$/, (_, d: string) => `Details: ${this.pointer(d)}`)}`);
        break;
      case "plan":
        // The first message line lists the steps; the plan itself is printed with descriptions instead.
        for (const note of n.message.split("\n").slice(1)) out.push(`${INDENT}  ${note}`);
        break;
      default:
        break;
    }
    return out;
  }

  /** "candor logs --step x (log file: …)" as the user would type it; the header already names the log file. */
  private pointer(details: string): string {
    const command = details.replace(/^candor /, `${this.commandPrefix} `).replace(/\s*\(log file: [^)]*\)$/, "");
    return / logs\b/.test(command) ? `${command}${this.scope}` : command;
  }
}

/** The step id has its own column, so the title need not repeat it. */
function tidyTitle(n: Notification): string {
  return n.taskId ? n.title.replace(` (${n.taskId})`, "") : n.title;
}

/** A remark from the reasoner (e.g. the model's answer was unusable and rules took over), as a log line. */
export function noteLine(note: string, at = new Date().toISOString()): string {
  return line(at, "!", "", inline(note));
}

/**
 * The plan as a numbered list: step id, short description, worker (marked when its model drives the step's tools
 * rather than one planned call), and what it waits for.
 */
export function planLines(plan: Plan, indent = INDENT, modelDriven?: (step: TaskStep) => boolean): string[] {
  // A reactive run has no plan to show: saying "1 step" would pretend one was made.
  if (isReactive(plan))
    return plan.steps.map(
      (s) =>
        `${indent}reactive mode, no plan: ${inline(s.description)} [${s.workerType}${s.workerType === REACTIVE_WORKER ? ", every tool" : ""}, model-driven]`,
    );
  return [...plan.steps]
    .sort((a, b) => a.order - b.order)
    .map((s, i) => {
      const after = s.dependsOn.length > 0 ? ` — after ${s.dependsOn.join(", ")}` : "";
      const worker = modelDriven?.(s) ? `${s.workerType}, model-driven` : s.workerType;
      return `${indent}${String(i + 1).padStart(2)}. ${s.id.padEnd(STEP_WIDTH)} ${inline(s.description)} [${worker}]${after}`;
    });
}

/**
 * The plan as a numbered list with what each step will do: its worker, tools, parameters and dependencies on a
 * line of their own under the description (what a person approving the plan needs to see).
 */
function planDetailLines(plan: Plan, indent = "  "): string[] {
  const under = `${indent}${" ".repeat(4 + STEP_WIDTH + 1)}`;
  return [...plan.steps]
    .sort((a, b) => a.order - b.order)
    .flatMap((s, i) => {
      const facts = [
        `worker ${s.workerType}`,
        s.tools.length > 0 ? `tools ${s.tools.join(", ")}` : "",
        Object.keys(s.params).length > 0 ? `params ${inline(JSON.stringify(s.params))}` : "",
        s.dependsOn.length > 0 ? `after ${s.dependsOn.join(", ")}` : "",
      ];
      return [
        `${indent}${String(i + 1).padStart(2)}. ${s.id.padEnd(STEP_WIDTH)} ${inline(s.description)}`,
        `${under}${facts.filter(Boolean).join(" · ")}`,
      ];
    });
}

/** A tool call exactly as it will be made: `book_trip({"tripId":"t-1"})`. */
function toolCall(tool: string, args: unknown): string {
  return `${tool}(${inline(JSON.stringify(args ?? {}))})`;
}

/** What follows `--<decision>` in a printed command (a placeholder for the value it needs), from the table. */
function flagArg(decision: string): string {
  const known = DecisionName.safeParse(decision);
  return known.success ? DECISION_INPUT[known.data].flagArg : "";
}

export interface ResumeCommand {
  decision: string;
  command: string;
  meaning: string;
}

/** The exact commands that continue a waiting thread, one per decision it accepts. */
export function resumeCommands(
  threadId: string,
  request: WaitingRequest,
  ctx: { commandPrefix: string; dbArg: string | null },
): ResumeCommand[] {
  const db = ctx.dbArg ? ` --db ${shellArg(ctx.dbArg)}` : "";
  // A retry that can only work with new parameters (an infeasible limit) is printed with them.
  const retryWith =
    "retryWith" in request && request.retryWith && typeof request.retryWith === "object"
      ? Object.entries(request.retryWith as Record<string, unknown>)
      : [];
  const args = (decision: string) =>
    decision === "retry" && retryWith.length > 0
      ? retryWith
          .map(([k, v]) => ` --set ${shellArg(`${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)}`)
          .join("")
      : flagArg(decision);
  return request.decisions.map((decision) => ({
    decision,
    command: `${ctx.commandPrefix} resume ${threadId} --${decision}${args(decision)}${db}`,
    meaning: decisionMeaning(decision, request),
  }));
}

function isEscalation(r: WaitingRequest): r is FailureEscalationRequest {
  return (
    r.kind === "max_revisions" ||
    r.kind === "step_failures" ||
    r.kind === "low_confidence" ||
    r.kind === "infeasible_constraint" ||
    r.kind === "unknown_outcome" ||
    r.kind === "request_change"
  );
}

/**
 * What a waiting thread asks, after its question: the plan and the reasons for its confidence, the failures and
 * suggested actions, or the exact tool call. `detailed` (the interactive prompt) adds each step's tools and
 * parameters, the escalation's reason and the call's side effect.
 */
export function requestLines(request: WaitingRequest, detailed = false): string[] {
  const out: string[] = [];
  if (request.kind === "plan_approval") {
    out.push(
      `  Plan ${request.planId} (confidence ${request.confidence.toFixed(2)}, approval needed below ${request.threshold.toFixed(2)}):`,
    );
    out.push(...(detailed ? planDetailLines(request.plan, "  ") : planLines(request.plan, "  ")));
    out.push("", "  Why the confidence is what it is:");
    for (const r of request.reasons) out.push(`    - ${inline(r)}`);
    const understood = understandingLines(request.plan.understanding);
    if (understood.length > 0) {
      out.push("", "  What Candor understood of the request:");
      for (const l of understood) out.push(`    - ${inline(l)}`);
    }
  } else if (!isEscalation(request)) {
    const r = request as { taskId?: unknown; tool?: unknown; args?: unknown; sideEffect?: unknown };
    if (typeof r.taskId === "string") out.push(`  Step ${r.taskId}`);
    if (typeof r.tool === "string") out.push(`  Call: ${toolCall(r.tool, r.args)}`);
    if (detailed && typeof r.sideEffect === "string")
      out.push(`  Side effect: ${r.sideEffect}${r.sideEffect === "irreversible" ? " (it cannot be undone)" : ""}`);
  } else {
    out.push(
      `  Step ${request.taskId}: ${request.failureCount} failure(s), ${request.revisionCount} revision(s), confidence ${request.confidence.toFixed(2)}.`,
    );
    if (detailed && request.reason) out.push(`  Reason: ${inline(request.reason)}`);
    out.push("  Errors:");
    for (const e of request.errors) out.push(`    - ${inline(e)}`);
    out.push("  Suggested:");
    for (const s of request.suggestedActions) out.push(`    - ${inline(s)}`);
  }
  return out;
}

/** What a waiting thread asks and how to answer it. */
export function waitingLines(request: WaitingRequest, commands: readonly ResumeCommand[]): string[] {
  const out = [
    `Waiting for a human: ${kindTitle(request.kind)}.`,
    `  ${inline(request.question)}`,
    "",
    ...requestLines(request),
  ];
  out.push("", "Continue with one of:");
  const width = Math.max(...commands.map((c) => c.command.length));
  for (const c of commands) out.push(`  ${c.command.padEnd(width)}   # ${c.meaning}`);
  out.push(`  (add --comment "..." to record why)`);
  return out;
}
