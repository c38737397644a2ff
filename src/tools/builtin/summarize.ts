import { z } from "zod";
import { CandorError, ErrorCode } from "../../errors.js";
import { limitsOf, ResultLimits, withLimits } from "../limits.js";
import { defineTool, type ToolSpec } from "../types.js";

/** What read_file returns (and summarize_text consumes). */
const Text = z.object({ path: z.string(), text: z.string() });

export const SummaryResult = z.object({
  path: z.string(),
  /** Each heading with the first sentence under it, in order. */
  sections: z.array(z.object({ heading: z.string(), lead: z.string() })),
  summary: z.string(),
  /** The input's limits (a summary of a cut file is a summary of its start), when it had any. */
  limits: ResultLimits.optional(),
});
export type SummaryResult = z.infer<typeof SummaryResult>;

/** Most sections a summary lists; a longer document says how many it left out. */
const MAX_SECTIONS = 12;
/** Longest lead sentence kept. */
const MAX_LEAD_CHARS = 220;

/** How much of a text's start `looksBinary` looks at (UTF-16 units; git and grep look at the first 8 KiB). */
const SNIFF_UNITS = 8192;
/** Share of odd characters above which a text is taken for binary (perl's -B file test uses the same share). */
const MAX_ODD_SHARE = 0.3;

/**
 * Whether decoded file content is binary rather than text. Kept simple so a user can predict it: a NUL character in
 * the first 8,192, or more than 30% of them odd — U+FFFD (bytes that were not UTF-8) or control characters other
 * than tab, newline, vertical tab, form feed, carriage return, backspace and escape. A text in another encoding
 * with a few accented letters (Latin-1) stays text, with a replacement character for each; UTF-16 text, full of
 * NULs, is binary to a tool that reads UTF-8.
 */
export function looksBinary(text: string): boolean {
  const n = Math.min(text.length, SNIFF_UNITS);
  let odd = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) return true;
    if (c === 0xfffd || (c < 0x20 && (c < 0x08 || c > 0x0d) && c !== 0x1b) || c === 0x7f) odd++;
  }
  return odd > n * MAX_ODD_SHARE;
}

/** The refusal of a tool that needs text and was given a binary file. */
export function binaryInput(tool: string, path: string): CandorError {
  return new CandorError(
    `Invalid input: ${path} is a binary file; ${tool} works on text only, so it did not run on it.`,
    ErrorCode.TOOL_FAILED,
    { details: { path, binary: true } },
  );
}

/** The first sentence of a paragraph, without markdown decoration. */
function firstSentence(paragraph: string): string {
  const plain = paragraph
    .replace(/`{3}[\s\S]*?`{3}/g, " ")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/(^|\s)>\s?/g, "$1")
    .replace(/[*`|]/g, "")
    .replace(/\s+/g, " ")
    .trim();
  const m = /^(.+?[.!?])(\s|$)/.exec(plain);
  const sentence = (m?.[1] ?? plain).trim();
  return sentence.length > MAX_LEAD_CHARS ? `${sentence.slice(0, MAX_LEAD_CHARS - 1)}…` : sentence;
}

/**
 * An extractive summary: the document's headings (markdown `#`, or underlined) with the first sentence of prose
 * under each; a text without headings gives its first sentences. Deterministic, offline: what the rules reasoner
 * can answer "summarize README.md" with.
 */
export function summarizeText(path: string, text: string): SummaryResult {
  // A source file is outlined, not read as markdown: a Python or shell comment ("# Reads the config") is no heading.
  const code = PROSE_FILE.test(path) ? null : codeOutline(text);
  if (code) return { path, sections: [], summary: `${path}: ${code}` };
  const lines = text.split(/\r?\n/);
  const sections: { heading: string; lead: string }[] = [];
  let heading: string | null = null;
  let paragraph: string[] = [];
  let lead: string | null = null;
  let inFence = false;
  const close = () => {
    if (heading === null) return;
    const prose = lead ?? (paragraph.length > 0 ? firstSentence(paragraph.join(" ")) : "");
    sections.push({ heading, lead: prose });
  };
  for (const [i, line] of lines.entries()) {
    if (/^\s*```/.test(line)) {
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;
    const atx = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    const setext = line.trim().length > 0 && /^\s*(=+|-+)\s*$/.test(lines[i + 1] ?? "");
    if (atx || setext) {
      close();
      heading = (atx?.[1] ?? line).trim();
      paragraph = [];
      lead = null;
      continue;
    }
    if (/^\s*(=+|-+)\s*$/.test(line) || heading === null || lead !== null) continue;
    // The lead is the first sentence of the first paragraph of prose under the heading (lists and tables skipped).
    if (line.trim() === "") {
      if (paragraph.length > 0) lead = firstSentence(paragraph.join(" "));
      continue;
    }
    // Lists, tables and indented continuations of a list item are not the section's lead.
    if (paragraph.length === 0 && /^(\s*(\||[-*+] |\d+\. )|\s{2,})/.test(line)) continue;
    paragraph.push(line.trim());
  }
  close();
  if (sections.length === 0) {
    const sentences = text.replace(/\s+/g, " ").match(/[^.!?]+[.!?]/g) ?? [text.slice(0, MAX_LEAD_CHARS)];
    const first = sentences
      .slice(0, 3)
      .map((x) => x.trim())
      .join(" ");
    return { path, sections: [], summary: `${path}: ${first}` };
  }
  const shown = sections.slice(0, MAX_SECTIONS);
  const more = sections.length > shown.length ? `\n(${sections.length - shown.length} more section(s) not shown)` : "";
  const body = shown.map((x) => `${x.heading}${x.lead ? ` — ${x.lead}` : ""}`).join("\n");
  return { path, sections: shown, summary: `Summary of ${path} (${sections.length} section(s)):\n${body}${more}` };
}

/** Files whose text is prose (markdown and plain text), summarized by their headings whatever they mention. */
const PROSE_FILE = /\.(?:md|markdown|mdx|txt|rst|adoc|org)$/i;

/** Declarations a source file defines (JavaScript/TypeScript exports, Python and Go top-level definitions). */
const DECLARATION =
  /^(?:export\s+(?:default\s+)?(?:async\s+)?(?:function\*?|class|const|let|interface|type|enum)\s+([\w$]+)|(?:async\s+)?def\s+([A-Za-z_]\w*)|class\s+([A-Za-z_]\w*)|func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*))/gm;

/**
 * A source file in a few words, for a text without headings that defines things: its first comment's first sentence
 * (what the file says it is) and the names it defines. Null when it defines nothing (prose, data).
 */
function codeOutline(text: string): string | null {
  const names = [...text.matchAll(DECLARATION)].map((m) => m.slice(1).find((g) => g !== undefined)!);
  if (names.length === 0) return null;
  const comment = /\/\*\*?([\s\S]*?)\*\/|^(?:\s*(?:\/\/|#)[^\n]*\n)+/m.exec(text);
  const said = comment ? firstSentence((comment[1] ?? comment[0]).replace(/^\s*(?:\*|\/\/|#)+/gm, " ")) : "";
  const unique = [...new Set(names)];
  const shown = unique.slice(0, 20);
  const more = unique.length > shown.length ? ` and ${unique.length - shown.length} more` : "";
  return `${said ? `${said} ` : ""}Defines ${shown.join(", ")}${more}.`;
}

/** The workspace's summarizer: takes the text an earlier read_file step produced. */
export function summarizeTextTool(): ToolSpec {
  return defineTool({
    name: "summarize_text",
    description:
      "Summarize a text read from the workspace: its headings with the lead sentence under each (extractive, offline)",
    category: "analysis",
    keywords: ["summarize", "summarise", "summary", "sum up", "overview", "resume", "resumen", "resumir", "resumer"],
    consumes: ["text"],
    produces: ["summary"],
    sideEffect: "none",
    needsApproval: false,
    schema: z.looseObject({}),
    outputSchema: SummaryResult,
    estimates: { durationMs: 10, cost: 0 },
    describeStep: () => "Summarize the text",
    run: async (_args, ctx) => {
      // Several reads (a comparison of two files): each summarized in turn, in the order they were read.
      if (Array.isArray(ctx.inputs.text)) {
        const parts = await Promise.all(
          ctx.inputs.text.map((text) => summarizeOne({ ...ctx, inputs: { ...ctx.inputs, text } })),
        );
        return withLimits(
          {
            path: parts.map((p) => p.path).join(", "),
            sections: parts.flatMap((p) => p.sections.map((x) => ({ ...x, heading: `${p.path}: ${x.heading}` }))),
            summary: parts.map((p) => p.summary).join("\n\n"),
          },
          parts.flatMap((p) => p.limits ?? []),
        );
      }
      return summarizeOne(ctx);
    },
  });
}

/** The summary of the one text an earlier read_file step produced (`ctx.inputs.text`), with its limits. */
async function summarizeOne(ctx: { inputs: Record<string, unknown> }): Promise<SummaryResult> {
  const source = Text.safeParse(ctx.inputs.text);
  if (!source.success)
    throw new CandorError(
      "Invalid input: summarize_text needs the text of an earlier read_file step.",
      ErrorCode.TOOL_FAILED,
    );
  const { path, text } = source.data;
  // Read apart from the schema, so that a malformed limit is ignored rather than refusing the whole input.
  const limits = limitsOf(ctx.inputs.text);
  // Summarizing mojibake would pass garbage off as the file's content.
  if (limits.some((l) => l.kind === "binary") || looksBinary(text)) throw binaryInput("summarize_text", path);
  // A cut text's summary is of its start only: its limits (which name how much was read) say so, in the
  // result and in the summary a person reads.
  const result = summarizeText(path, text);
  const caveat = limits.map((l) => l.message).join(" ");
  return withLimits({ ...result, summary: caveat ? `${result.summary}\n${caveat}` : result.summary }, limits);
}
