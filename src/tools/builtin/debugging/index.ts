import { relative, resolve } from "node:path";
import { z } from "zod";
import { CandorError, ErrorCode } from "../../../errors.js";
import { emptyInterpretation, defineTool, paramText, type RequestFacts, type Toolkit } from "../../types.js";
import { ConfinedRoot } from "../confine.js";
import type { RunArchive } from "./archive.js";
import {
  focusOf,
  reviewThread,
  ReviewedThread,
  RunContext,
  runContext,
  ToolOutput,
  toolOutputOf,
  Transcript,
  transcriptOf,
} from "./findings.js";
import { findingsOf, reportFileName, reportMarkdown, type ReportSources } from "./report.js";

/** The category the `reviewer` worker is granted, and only these tools have. */
const DEBUGGING_CATEGORY = "debugging";
/** Every debugging tool, in the order a review uses them. */
export const DEBUGGING_TOOLS = [
  "review_runs",
  "get_run_context",
  "get_run_transcript",
  "get_tool_output_full",
  "write_debug_report",
] as const;

/** The most threads review_runs looks at in one call. */
const MAX_REVIEWED = 50;

const ReviewResult = z.object({
  where: z.string(),
  threads: z.array(ReviewedThread),
  /** The thread most worth a closer look (most anomalies), for the transcript and the report; null when none. */
  focus: z.string().nullable(),
  summary: z.string(),
});
type ReviewResult = z.infer<typeof ReviewResult>;

const ReportResult = z.object({ file: z.string(), findings: z.array(z.string()), summary: z.string() });

/** A thread id as Candor makes them (letters, digits, "_" and "-"): anything else names no thread. */
const threadParam = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "a thread id is 1-64 letters, digits, '_' or '-'")
  .describe("the thread id, e.g. run-1a2b3c4d (review_runs lists them)");

/** "thread run-1a2b3c4d" in a request: the thread it is about, with where it was said. */
const THREAD_IN_REQUEST = /\bthread\s+([A-Za-z0-9_-]{1,64})\b/i;
/** Words a review request uses for what it reviews, read by this toolkit. */
const REVIEW_WORDS = /\b(?:review|recent|past|last|runs|threads?|steps?)\b/gi;
/**
 * "a debug report": asks for write_debug_report, and its "report" is no other tool's keyword (the workspace's
 * write_report would otherwise join a review's plan when the debugging tools are added to the others).
 */
const DEBUG_REPORT = /\bdebug(?:ging)?\s+reports?\b/gi;
/** "step flight" / "step `flight`" in a request. */
const STEP_IN_REQUEST = /\bstep\s+[`'"]?([A-Za-z0-9_.-]+)/i;

function threadIn(facts: RequestFacts): { start: number; end: number; text: string } | null {
  const m = THREAD_IN_REQUEST.exec(facts.text);
  if (!m?.[1]) return null;
  const start = m.index + m[0].length - m[1].length;
  return { start, end: start + m[1].length, text: m[1] };
}

function stepIn(facts: RequestFacts): { start: number; end: number; text: string } | null {
  const m = STEP_IN_REQUEST.exec(facts.text);
  if (!m?.[1]) return null;
  const start = m.index + m[0].length - m[1].length;
  return { start, end: start + m[1].length, text: m[1] };
}

function spanOf(m: RegExpExecArray | RegExpMatchArray): { start: number; end: number; text: string } {
  const start = m.index ?? 0;
  return { start, end: start + m[0].length, text: m[0] };
}

export interface DebuggingToolkitOptions {
  /** The database the tools read (see persistenceArchive). */
  archive: RunArchive;
  /** The workspace reports are written in (default: the working directory). */
  root?: string;
  /** Where reports go, relative to the root and confined to it (default .candor/reports). */
  reportsDir?: string;
  /** The clock reports are stamped with (tests fix it). */
  now?: () => Date;
}

/**
 * Seed 004's introspection tools over Candor's own records: the threads of the database a run uses, each one's
 * plan, revisions, confidence, approvals, notifications and step inputs and outputs, and the decision log. Every
 * tool reads; only write_debug_report writes, a markdown file under the workspace's reports folder, confined to
 * the workspace as the workspace tools' writes are. Off unless asked for (`--debug-tools`, CANDOR_DEBUG_TOOLS=1,
 * `candor review`): a run's tools should not read other runs unless a person wants them to.
 */
export function debuggingToolkit(options: DebuggingToolkitOptions): Toolkit {
  const { archive } = options;
  const root = resolve(options.root ?? process.cwd());
  const reportsDir = options.reportsDir ?? ".candor/reports";
  const now = options.now ?? (() => new Date());
  /** The thread a step is about: its parameter, else the one the step's inputs looked at. */
  const threadOf = (given: string | undefined, inputs: Record<string, unknown>, tool: string): string => {
    if (given) return given;
    const context = RunContext.safeParse(inputs.run_context);
    if (context.success) return context.data.threadId;
    const review = ReviewResult.safeParse(inputs.run_review);
    if (review.success && review.data.focus) return review.data.focus;
    const why = review.success
      ? `review_runs found no thread with anomalies among ${review.data.threads.length}`
      : "no thread was named";
    throw new CandorError(
      `${tool} needs a thread, but ${why}. Name one, e.g. threadId "run-1a2b3c4d".`,
      ErrorCode.INVALID_REQUEST,
      { details: { failureClass: review.success ? "resource_unavailable" : "invalid_parameters" } },
    );
  };
  return {
    name: "debugging",
    tools: [
      defineTool({
        name: "review_runs",
        description:
          "List the recent threads of this database with their anomalies: failed steps, escalations, slow steps, low confidence, bad outcomes",
        category: DEBUGGING_CATEGORY,
        // Phrases, not "review" alone: added to the other tools, a word as common would join unrelated plans.
        keywords: ["anomalies", "recent runs", "review runs"],
        consumes: [],
        produces: ["run_review"],
        sideEffect: "none",
        needsApproval: false,
        schema: z.object({
          limit: z.number().int().min(1).max(MAX_REVIEWED).default(10),
          onlyAnomalies: z.boolean().default(false),
        }),
        outputSchema: ReviewResult,
        estimates: { durationMs: 200, cost: 0 },
        describeStep: (p) => `Review the ${paramText(p.limit, "10")} most recent runs for anomalies`,
        run: async ({ limit, onlyAnomalies }) => {
          const threads = (await archive.threads()).filter((t) => !t.review).slice(0, limit);
          const reviewed = [];
          for (const t of threads) {
            const row = reviewThread(t, await archive.state(t.threadId), await archive.decisions(t.threadId));
            if (!onlyAnomalies || row.anomalies.length > 0) reviewed.push(row);
          }
          const focus = focusOf(reviewed);
          const flagged = reviewed.filter((r) => r.anomalies.length > 0).length;
          return {
            where: archive.where,
            threads: reviewed,
            focus,
            summary: `${threads.length} thread(s) reviewed, ${flagged} with anomalies${focus ? `; most to look at: ${focus}` : ""}`,
          };
        },
      }),
      defineTool({
        name: "get_run_context",
        description: "One thread in depth: its plan, revisions, confidence history, human approvals and anomalies",
        category: DEBUGGING_CATEGORY,
        keywords: ["context", "depth"],
        consumes: [],
        produces: ["run_context"],
        sideEffect: "none",
        needsApproval: false,
        schema: z.object({ threadId: threadParam }),
        outputSchema: RunContext,
        estimates: { durationMs: 100, cost: 0 },
        extractParams: (facts) => {
          const thread = threadIn(facts);
          return thread ? { threadId: thread.text } : {};
        },
        describeStep: (p) => `Look into thread ${paramText(p.threadId, "?")} in depth`,
        run: async ({ threadId }) => runContext(await archive.state(threadId), await archive.decisions(threadId)),
      }),
      defineTool({
        name: "get_run_transcript",
        description:
          "The notifications a thread gave the person watching it, in order (the thread named, else the one the review or context step looked at)",
        category: DEBUGGING_CATEGORY,
        keywords: ["transcript", "notifications"],
        consumes: [],
        optionalConsumes: ["run_review", "run_context"],
        produces: ["run_transcript"],
        sideEffect: "none",
        needsApproval: false,
        schema: z.object({ threadId: threadParam.optional() }),
        outputSchema: Transcript,
        estimates: { durationMs: 100, cost: 0 },
        extractParams: (facts) => {
          const thread = threadIn(facts);
          return thread ? { threadId: thread.text } : {};
        },
        describeStep: (p) =>
          `Read the transcript of ${p.threadId ? `thread ${paramText(p.threadId, "?")}` : "the thread under review"}`,
        run: async ({ threadId }, ctx) =>
          transcriptOf(await archive.state(threadOf(threadId, ctx.inputs, "get_run_transcript"))),
      }),
      defineTool({
        name: "get_tool_output_full",
        description:
          "A step's full input and output in one thread: parameters, results, errors, attempts, for every dispatch",
        category: DEBUGGING_CATEGORY,
        keywords: ["full output", "tool output"],
        consumes: [],
        // A step named in a request is looked up in the thread the request names: its context, not a review.
        optionalConsumes: ["run_context", "run_review"],
        produces: ["tool_output"],
        sideEffect: "none",
        needsApproval: false,
        schema: z.object({
          threadId: threadParam.optional(),
          stepId: z.string().min(1, "say which step, e.g. s2 (get_run_context lists them)"),
          dispatch: z.number().int().min(1).optional(),
        }),
        outputSchema: ToolOutput,
        estimates: { durationMs: 100, cost: 0 },
        extractParams: (facts) => {
          const thread = threadIn(facts);
          const step = stepIn(facts);
          return { ...(thread ? { threadId: thread.text } : {}), ...(step ? { stepId: step.text } : {}) };
        },
        describeStep: (p) => `Read the full input and output of step ${paramText(p.stepId, "?")}`,
        run: async ({ threadId, stepId, dispatch }, ctx) =>
          toolOutputOf(await archive.state(threadOf(threadId, ctx.inputs, "get_tool_output_full")), stepId, dispatch),
      }),
      defineTool({
        name: "write_debug_report",
        description:
          "Write a markdown debug report of what the review found under .candor/reports (the only debugging tool that writes)",
        category: DEBUGGING_CATEGORY,
        keywords: ["debug"],
        consumes: [],
        optionalConsumes: ["run_transcript", "run_context", "run_review", "tool_output"],
        produces: ["debug_report"],
        sideEffect: "reversible",
        needsApproval: false,
        schema: z.object({
          // Required: a plan that leaves it out makes the step model-driven, so a model titles and writes the report.
          title: z.string().trim().min(1, "give the report a title").max(120),
          content: z.string().optional(),
        }),
        outputSchema: ReportResult,
        estimates: { durationMs: 50, cost: 0 },
        extractParams: (facts) => {
          const thread = threadIn(facts);
          return { title: thread ? `Review of thread ${thread.text}` : "Review of recent runs" };
        },
        describeStep: (p) => `Write the debug report "${paramText(p.title, "Debug review")}"`,
        run: async ({ title, content }, ctx) => {
          const sources = sourcesOf(ctx.inputs, content);
          const at = now();
          const workspace = await ConfinedRoot.open(root);
          const { file } = await workspace.writeText(
            reportsDir,
            reportFileName(title, at),
            reportMarkdown(title, at, sources),
          );
          const findings = findingsOf(sources);
          return {
            file,
            findings,
            summary: `debug report written to ${relative(workspace.real, file)}: ${findings[0]}`,
          };
        },
      }),
    ],
    // The thread and step a request names are values the tools read, and the words that say what is reviewed
    // ("recent runs", "thread", "debug report") are read too: none is a part of the request left unexplained.
    interpret: (facts) => {
      const thread = threadIn(facts);
      const step = stepIn(facts);
      return {
        ...emptyInterpretation(),
        consumed: [...facts.text.matchAll(REVIEW_WORDS)].map(spanOf),
        asks: [...facts.text.matchAll(DEBUG_REPORT)].map((m) => ({ span: spanOf(m), tools: ["write_debug_report"] })),
        values: [
          ...(thread
            ? [
                {
                  name: "threadId",
                  value: thread.text,
                  source: thread,
                  tools: ["get_run_context", "get_run_transcript", "get_tool_output_full"],
                },
              ]
            : []),
          ...(step ? [{ name: "stepId", value: step.text, source: step, tools: ["get_tool_output_full"] }] : []),
        ],
      };
    },
    workers: [
      {
        name: "reviewer",
        description: "Reviews past runs: finds anomalies, reads a thread in depth and writes a debug report",
        categories: [DEBUGGING_CATEGORY],
        keywords: ["review", "debug", "transcript"],
      },
    ],
  };
}

/** The report's evidence: each input the step received, read with the schema of the tool that made it. */
function sourcesOf(inputs: Record<string, unknown>, content: string | undefined): ReportSources {
  const review = ReviewResult.safeParse(inputs.run_review);
  const context = RunContext.safeParse(inputs.run_context);
  const transcript = Transcript.safeParse(inputs.run_transcript);
  const output = ToolOutput.safeParse(inputs.tool_output);
  return {
    ...(review.success ? { review: review.data } : {}),
    ...(context.success ? { context: context.data } : {}),
    ...(transcript.success ? { transcript: transcript.data } : {}),
    ...(output.success ? { toolOutput: output.data } : {}),
    ...(content ? { content } : {}),
  };
}
