import type { ReviewedThread, RunContext, ToolOutput, Transcript } from "./findings.js";

/** What write_debug_report has to write from: its step's inputs, each absent when the plan had no such step. */
export interface ReportSources {
  review?: { threads: ReviewedThread[]; focus: string | null; where: string };
  context?: RunContext;
  transcript?: Transcript;
  toolOutput?: ToolOutput;
  /** Text a model wrote for the report; it comes first, the evidence after it. */
  content?: string;
}

/** The report's file name: the title as a slug, then the time, so a new review never replaces an old one. */
export function reportFileName(title: string, at: Date): string {
  const slug =
    title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 40) || "debug-report";
  return `${slug}-${at.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "")}.md`;
}

/** The findings in one line each: what the report says first. */
export function findingsOf(s: ReportSources): string[] {
  const out: string[] = [];
  if (s.review) {
    const flagged = s.review.threads.filter((t) => t.anomalies.length > 0);
    out.push(
      flagged.length === 0
        ? `No anomalies in the ${s.review.threads.length} thread(s) reviewed.`
        : `${flagged.length} of ${s.review.threads.length} thread(s) reviewed have anomalies: ${flagged.map((t) => `${t.threadId} (${t.anomalies.length})`).join(", ")}.`,
    );
  }
  const context = s.context;
  if (context) {
    out.push(`${context.summary}.`);
    for (const r of context.revisions)
      out.push(
        `${context.threadId}: ${r.failedTaskId} failed (${r.failureClass}) and was recovered by ${r.strategy}: ${r.rationale}`,
      );
    for (const a of context.approvals)
      out.push(
        `${context.threadId}: a person decided "${a.decision}" on ${a.kind}${a.taskId ? ` (${a.taskId})` : ""}.`,
      );
  }
  const focused = s.review?.threads.find((t) => t.threadId === s.review?.focus);
  if (!context && focused && focused.recoveries.length > 0)
    out.push(`${focused.threadId}: recovered ${focused.recoveries.join(", ")}.`);
  const anomalies =
    context?.anomalies ?? s.review?.threads.find((t) => t.threadId === s.review?.focus)?.anomalies ?? [];
  const subject = context?.threadId ?? s.review?.focus;
  for (const a of anomalies) out.push(`${subject}: ${a.kind.replace("_", " ")} — ${a.detail}`);
  if (s.transcript) out.push(`${s.transcript.summary}.`);
  if (s.toolOutput) out.push(`${s.toolOutput.summary}.`);
  return out.length > 0 ? out : ["Nothing to review: the report had no evidence to work from."];
}

/** One line of markdown, whatever the text holds (a notification's message has line breaks). */
const oneLine = (text: string) => text.replace(/\s*\n\s*/g, " ");

const fence = (value: unknown) => ["```json", JSON.stringify(value, null, 2), "```"].join("\n");

/** The report as markdown: the findings, then the evidence each came from. */
export function reportMarkdown(title: string, at: Date, s: ReportSources): string {
  const parts: string[] = [`# ${title}`, `_Written by Candor's reviewer at ${at.toISOString()}._`];
  if (s.content?.trim()) parts.push(s.content.trim());
  parts.push(
    "## What was found",
    findingsOf(s)
      .map((f) => `- ${f}`)
      .join("\n"),
  );
  if (s.review) {
    const rows = s.review.threads.map(
      (t) =>
        `| ${t.threadId} | ${t.status ?? "not started"} | ${t.anomalies.map((a) => a.kind).join(", ") || "none"} | ${t.request.replace(/\|/g, "\\|")} |`,
    );
    parts.push(
      `## Threads reviewed (${s.review.where})`,
      ["| thread | status | anomalies | request |", "|---|---|---|---|", ...rows].join("\n"),
    );
  }
  if (s.context) {
    const c = s.context;
    const lines = [
      `## Thread ${c.threadId} in depth`,
      `Request: ${c.request ?? "?"} · status: ${c.status ?? "not started"}`,
    ];
    if (c.plan)
      lines.push(
        `Plan ${c.plan.planId} (confidence ${c.plan.confidence}):`,
        ...c.plan.steps.map(
          (st) =>
            `- ${st.id} [${st.status}] ${st.description} — ${st.tools.join(", ")} by ${st.workerType}${st.replaces ? `, replaces ${st.replaces}` : ""}`,
        ),
      );
    if (c.confidenceHistory.length > 0)
      lines.push("Confidence:", ...c.confidenceHistory.map((p) => `- ${p.value.toFixed(2)} — ${p.reason}`));
    if (c.approvals.length > 0)
      lines.push(
        "Human decisions:",
        ...c.approvals.map(
          (a) => `- ${a.kind}${a.taskId ? ` (${a.taskId})` : ""}: ${a.decision}${a.detail ? ` — ${a.detail}` : ""}`,
        ),
      );
    if (c.failureReason) lines.push(`Failure reason: ${c.failureReason}`);
    parts.push(lines.join("\n"));
  }
  if (s.transcript)
    parts.push(
      `## Transcript of ${s.transcript.threadId}`,
      s.transcript.lines
        .map((l, i) => `${i + 1}. [${l.severity}] ${oneLine(l.title)}${l.message ? ` — ${oneLine(l.message)}` : ""}`)
        .join("\n") || "(no notifications)",
    );
  if (s.toolOutput) parts.push(`## Step ${s.toolOutput.stepId} of ${s.toolOutput.threadId}`, fence(s.toolOutput));
  return `${parts.join("\n\n")}\n`;
}
