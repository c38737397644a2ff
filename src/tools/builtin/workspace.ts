import { relative, resolve } from "node:path";
import { z } from "zod";
import { CandorError, ErrorCode } from "../../errors.js";
import { figure, limitsOf, type ResultLimit, ResultLimits, withLimits } from "../limits.js";
import { defineTool, paramText, type RequestFacts, type Toolkit } from "../types.js";
import { ConfinedRoot } from "./confine.js";
import { binaryInput, looksBinary, summarizeTextTool } from "./summarize.js";
import { dirParam, fileIn, folderAsked, readWorkspaceRequest, reportTitleIn } from "./workspace-reading.js";

export { insideRoot } from "./confine.js";

/** Largest file read_file returns whole; bigger files are cut, and the result says so. */
const MAX_READ_BYTES = 200_000;
/** Most entries list_files returns; a bigger folder's listing is cut, and the result says so. */
const MAX_LISTED_ENTRIES = 1_000;
/**
 * Most bytes of a file text_stats finds the most frequent words in. Counting lines, words and characters goes
 * through the whole file at a few hundred megabytes a second; collecting words is ten times slower, and a step has
 * about a second (the rules planner's time limit for text_stats), so past this the frequent words are a sample.
 */
const MAX_FREQUENT_BYTES = 2_000_000;
/**
 * Most distinct words text_stats keeps a count for: past it, the least frequent are dropped (memory stays bounded
 * on a text full of unique ids), and the most frequent words become estimates.
 */
const MAX_DISTINCT_WORDS = 50_000;
/** Longest run of word characters carried from one streamed piece to the next before it is counted as it is. */
const MAX_CARRIED_WORD = 1 << 16;

/** The first file-looking word of a request (e.g. "README.md", "src/index.ts"). */
function pathIn(facts: RequestFacts): string | null {
  return fileIn(facts.text)?.text ?? null;
}

const TextResult = z.object({
  path: z.string(),
  text: z.string(),
  truncated: z.boolean(),
  summary: z.string(),
  /** Set when the text is not the whole file: cut (`truncated`), or not read at all (`binary`). */
  limits: ResultLimits.optional(),
});
/**
 * A read result as text_stats takes it: its limits are read apart, with `limitsOf`, so that a malformed limit is
 * ignored instead of making the whole input unusable.
 */
const TextInput = TextResult.omit({ limits: true });
const StatsResult = z.object({
  words: z.number(),
  lines: z.number(),
  characters: z.number(),
  topWords: z.array(z.tuple([z.string(), z.number()])),
  summary: z.string(),
  /** Set when a figure is not over the whole text (most frequent words estimated) or the input had limits. */
  limits: ResultLimits.optional(),
});

/** An analysis as write_report takes it; its limits are read apart, as text_stats reads a read's. */
const StatsInput = StatsResult.omit({ limits: true });

/**
 * Whitespace as GNU wc 9 counts it in a UTF-8 locale (checked against `wc -w` 9.1): ASCII tab to carriage return
 * and space, the no-break spaces (U+00A0, U+2007, U+202F, U+2060), and U+1680, U+2000–U+200A, U+205F, U+3000.
 * Not U+0085, U+2028, U+2029, U+200B or U+FEFF, which wc reads as part of a word.
 */
function isWcSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x2060 ||
    c === 0x3000
  );
}

/** 1 for the ASCII bytes `isWcSpace` takes for whitespace, by byte. */
const ASCII_SPACE = Uint8Array.from({ length: 0x80 }, (_, c) => (isWcSpace(c) ? 1 : 0));

/**
 * Counts UTF-8 bytes given chunk by chunk, the way `wc` counts a file: lines are newline characters (so "a\nb\n"
 * has 2, and a last line without a newline is not one), words are maximal runs of non-whitespace (`isWcSpace`),
 * characters are Unicode code points (`wc -m` in a UTF-8 locale). Works on bytes, never decoding: it must get
 * through a file of hundreds of megabytes within a step's time limit. A chunk may end inside a character. Exact for
 * valid UTF-8; a byte that is not (a binary file is refused before counting) counts as a character when it could
 * start one and as nothing otherwise.
 */
class TextTally {
  lines = 0;
  words = 0;
  characters = 0;
  bytes = 0;
  /** 1 inside a word, 0 between words. */
  private inWord = 0;
  /** Continuation bytes the multi-byte character being read still needs, and its code point so far. */
  private need = 0;
  private point = 0;

  add(chunk: Uint8Array): void {
    // Locals, not fields, and no branch on a byte's class where arithmetic does: the loop runs once per byte.
    let { lines, words, characters, inWord, need, point } = this;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i] ?? 0;
      if (b < 0x80) {
        need = 0;
        characters++;
        const space = ASCII_SPACE[b] ?? 0;
        lines += b === 0x0a ? 1 : 0;
        words += (1 - space) & (1 - inWord);
        inWord = 1 - space;
      } else if (b >= 0xc0) {
        // Whether the character is whitespace is known once its last byte is read.
        characters++;
        need = b >= 0xf0 ? 3 : b >= 0xe0 ? 2 : 1;
        point = b & (b >= 0xf0 ? 0x07 : b >= 0xe0 ? 0x0f : 0x1f);
      } else if (need > 0) {
        point = (point << 6) | (b & 0x3f);
        if (--need === 0) {
          const space = isWcSpace(point) ? 1 : 0;
          words += (1 - space) & (1 - inWord);
          inWord = 1 - space;
        }
      }
    }
    Object.assign(this, { lines, words, characters, inWord, need, point });
    this.bytes += chunk.length;
  }
}

/** Characters that make up a word for the most-frequent list (the rest separates them). */
const FREQUENT_WORD = /[a-z0-9']{4,}/g;
/** Whether a UTF-16 unit is part of a frequent-list word (`FREQUENT_WORD`). */
function isWordUnit(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x27;
}

/**
 * The most frequent words longer than three letters of a text given piece by piece (a piece may end inside a
 * word), in bounded memory: past `MAX_DISTINCT_WORDS` the rarer half is dropped and the counts become estimates.
 */
class FrequentWords {
  /** The end of the last piece when it may be the start of a word the next piece finishes. */
  private carried = "";
  private readonly counts = new Map<string, number>();
  /** Whether some counts were dropped: then the most frequent words are estimates. */
  estimated = false;

  add(piece: string): void {
    const lower = this.carried + piece.toLowerCase();
    let end = lower.length;
    while (end > 0 && isWordUnit(lower.charCodeAt(end - 1))) end--;
    if (lower.length - end > MAX_CARRIED_WORD) end = lower.length;
    this.carried = lower.slice(end);
    this.tally(lower.slice(0, end));
  }

  private tally(text: string): void {
    for (const [w] of text.matchAll(FREQUENT_WORD)) this.counts.set(w, (this.counts.get(w) ?? 0) + 1);
    if (this.counts.size <= MAX_DISTINCT_WORDS) return;
    // Keep the more frequent half: a word seen often early keeps its count, a word first seen late starts again.
    const kept = [...this.counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, MAX_DISTINCT_WORDS / 2);
    this.counts.clear();
    for (const [w, n] of kept) this.counts.set(w, n);
    this.estimated = true;
  }

  /** The five most frequent; `complete` false when the text stopped inside a word, which is then left out. */
  top(complete: boolean): [string, number][] {
    if (complete) this.tally(this.carried);
    this.carried = "";
    return [...this.counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 5);
  }
}

/** Code points in a text (what a user calls characters; `text.length` counts UTF-16 units). */
function codePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xdc00 || c > 0xdfff) n++;
  }
  return n;
}

/**
 * Built-in tools over a workspace directory, with seed 004's generic worker types: `reader` reads files,
 * `analyzer` measures text, `reporter` writes reports under .candor/reports, `coder` may read and propose
 * changes (it writes nothing: a tool that writes code needs the approval flow before it can be offered).
 * Every read and write is confined to the workspace by real path at the moment of use (see confine.ts).
 */
export function workspaceToolkit(
  options: { root?: string; reportsDir?: string; allowHardLinks?: boolean } = {},
): Toolkit {
  const root = resolve(options.root ?? process.cwd());
  /** Where reports go, relative to the root (and confined to it like every other path). */
  const reportsDir = options.reportsDir ?? ".candor/reports";
  // Resolved at each call, not at build time: the workspace may not exist yet when the graph is built.
  const confined = () => ConfinedRoot.open(root, { allowHardLinks: options.allowHardLinks ?? false });
  return {
    name: "workspace",
    tools: [
      defineTool({
        name: "read_file",
        description: "Read a text file from the workspace",
        category: "files",
        keywords: ["read", "file", "open", "readme"],
        consumes: [],
        produces: ["text"],
        sideEffect: "none",
        needsApproval: false,
        schema: z.object({ path: z.string().min(1, "say which file, e.g. README.md") }),
        outputSchema: TextResult,
        estimates: { durationMs: 20, cost: 0 },
        extractParams: (facts) => {
          const path = pathIn(facts);
          return path ? { path } : {};
        },
        describeStep: (p) => `Read ${paramText(p.path, "a file")}`,
        run: async ({ path }) => {
          const { text, bytes, read, truncated } = await (await confined()).readText(path, MAX_READ_BYTES);
          // A binary file is a real answer to "read X" (the file exists, it is not text), not a failure recovery
          // could retry its way around; so it succeeds with no text and a limit that says why, and tools that need
          // text refuse it. Its decoded bytes would be mojibake a summary or a model would take for content.
          if (looksBinary(text))
            return withLimits(
              {
                path,
                text: "",
                truncated,
                summary: `${path}: a binary file of ${figure(bytes)} bytes, not read as text`,
              },
              [
                {
                  kind: "binary",
                  message: `${path} is a binary file (${figure(bytes)} bytes), so it was not read as text.`,
                },
              ],
            );
          const limits: ResultLimit[] = truncated
            ? [
                {
                  kind: "truncated",
                  message: `Read ${figure(read)} of ${figure(bytes)} bytes of ${path}; the rest was not read.`,
                },
              ]
            : [];
          const cut = truncated ? ` (cut: the file has ${bytes} bytes)` : "";
          return withLimits(
            { path, text, truncated, summary: `${path}: ${codePoints(text)} characters${cut}` },
            limits,
          );
        },
      }),
      defineTool({
        name: "list_files",
        description: "List the files in a workspace directory",
        category: "files",
        keywords: ["list", "files", "directory", "folder"],
        consumes: [],
        produces: ["file_list"],
        sideEffect: "none",
        needsApproval: false,
        schema: z.object({ dir: z.string().min(1).default(".") }),
        estimates: { durationMs: 20, cost: 0 },
        // The folder the request names ("the files in src"); none named, the workspace itself.
        extractParams: (facts) => {
          const dir = folderAsked(facts.text, root);
          return { dir: dir ? dirParam(dir.text) : "." };
        },
        describeStep: (p) => `List files in ${paramText(p.dir, ".")}`,
        run: async ({ dir }) => {
          const entries = await (await confined()).list(dir);
          // A symlink is listed by its name only (marked @), never followed: reading it is checked like any path.
          const all = entries
            .filter((e) => !e.name.startsWith(".") && e.name !== "node_modules")
            .map((e) => (e.isSymlink ? `${e.name}@` : e.isDirectory ? `${e.name}/` : e.name))
            .sort();
          const names = all.slice(0, MAX_LISTED_ENTRIES);
          const cut = all.length > names.length;
          const shown = `${names.slice(0, 12).join(", ")}${names.length > 12 ? ", …" : ""}`;
          return withLimits(
            {
              dir,
              files: names,
              summary: `${cut ? `${names.length} of ${all.length}` : names.length} entries in ${dir}: ${shown}`,
            },
            cut
              ? [
                  {
                    kind: "listing_cut",
                    message: `Listed ${figure(names.length)} of ${figure(all.length)} entries in ${dir} (the first by name); the rest were not listed.`,
                  },
                ]
              : [],
          );
        },
      }),
      defineTool({
        name: "text_stats",
        description: "Count the words, lines and most frequent words of a text",
        category: "analysis",
        keywords: ["count", "words", "statistics", "stats", "analyze", "analyse", "frequent"],
        consumes: ["text"],
        produces: ["analysis"],
        sideEffect: "none",
        needsApproval: false,
        schema: z.looseObject({}),
        outputSchema: StatsResult,
        estimates: { durationMs: 10, cost: 0 },
        describeStep: () => "Count words and lines",
        run: async (_args, ctx) => {
          const source = TextInput.safeParse(ctx.inputs.text);
          if (!source.success)
            throw new CandorError(
              "Invalid input: text_stats needs the text of an earlier read_file step.",
              ErrorCode.TOOL_FAILED,
            );
          const { path, text } = source.data;
          const carried = limitsOf(ctx.inputs.text);
          if (carried.some((l) => l.kind === "binary") || looksBinary(text)) throw binaryInput("text_stats", path);
          const tally = new TextTally();
          const frequent = new FrequentWords();
          // A cut read is counted again over the whole file, streamed from disk through the same confinement as
          // any read: counting the cut text would report a fraction of the file as all of it.
          const cut = source.data.truncated || carried.some((l) => l.kind === "truncated");
          let sampled = false;
          if (cut) {
            const decoder = new TextDecoder("utf-8");
            for await (const chunk of (await confined()).chunks(path, { signal: ctx.signal })) {
              const room = MAX_FREQUENT_BYTES - tally.bytes;
              if (room > 0) {
                const piece = decoder.decode(chunk.subarray(0, room), { stream: true });
                if (tally.bytes === 0 && looksBinary(piece)) throw binaryInput("text_stats", path);
                frequent.add(piece);
              }
              tally.add(chunk);
            }
            sampled = tally.bytes > MAX_FREQUENT_BYTES;
            if (!sampled) frequent.add(decoder.decode());
          } else {
            tally.add(Buffer.from(text, "utf8"));
            frequent.add(text);
          }
          const { words, lines, characters } = tally;
          const topWords = frequent.top(!sampled);
          const notes = [
            sampled ? `were counted over the first ${figure(MAX_FREQUENT_BYTES)} of ${figure(tally.bytes)} bytes` : "",
            frequent.estimated ? `are estimates (over ${figure(MAX_DISTINCT_WORDS)} different words)` : "",
          ].filter(Boolean);
          const limits: ResultLimit[] = [
            // Streaming the file answered the cut; anything else the input lacked, this count lacks too.
            ...carried.filter((l) => !(cut && l.kind === "truncated")),
            ...(notes.length > 0
              ? [
                  {
                    kind: "sampled" as const,
                    message: `The most frequent words of ${path} ${notes.join(" and ")}; the line, word and character counts are of the whole file.`,
                  },
                ]
              : []),
          ];
          const top = topWords.map(([w, n]) => `${w} (${n})`).join(", ");
          const whole = cut ? ` over the whole file (${tally.bytes} bytes, read from disk)` : "";
          return withLimits(
            {
              words,
              lines,
              characters,
              topWords,
              summary: `${words} words, ${lines} lines, ${characters} characters${whole}; most frequent: ${top}`,
            },
            limits,
          );
        },
      }),
      defineTool({
        name: "write_report",
        description:
          "Write a markdown report of the analysis under .candor/reports (a new file: an existing report is never replaced)",
        category: "notes",
        keywords: ["report", "write", "save", "document"],
        consumes: ["analysis"],
        produces: ["report"],
        sideEffect: "reversible",
        effectWords: ["report written", "wrote report", "report saved", "saved report", "report created"],
        needsApproval: false,
        schema: z.object({ title: z.string().min(1).default("Candor report") }),
        estimates: { durationMs: 20, cost: 0 },
        // The title the request gives the report; else its first words, so the file says what it is about.
        extractParams: (facts) => ({ title: reportTitleIn(facts.text)?.title ?? facts.text.slice(0, 60) }),
        describeStep: () => "Write the report",
        run: async ({ title }, ctx) => {
          const analysis = StatsInput.safeParse(ctx.inputs.analysis);
          if (!analysis.success)
            throw new CandorError(
              "Invalid input: write_report needs the result of an earlier analysis step.",
              ErrorCode.TOOL_FAILED,
            );
          const name = `${
            title
              .toLowerCase()
              .replace(/[^a-z0-9]+/g, "-")
              .replace(/^-|-$/g, "")
              .slice(0, 40) || "report"
          }.md`;
          const workspace = await confined();
          // The report says what the analysis did not cover, as the analysis did: a reader of the file sees it too.
          const limits = limitsOf(ctx.inputs.analysis);
          const notes = limits.length > 0 ? `\n${limits.map((l) => `- ${l.message}`).join("\n")}\n` : "";
          const written = await workspace.writeText(
            reportsDir,
            name,
            `# ${title}\n\n${analysis.data.summary}\n${notes}`,
          );
          // An existing report is never replaced: the name used is said, and why it is not the one asked for.
          const where = relative(workspace.real, written.file);
          const renamed = written.name === name ? "" : ` (${name} already exists and was left as it was)`;
          return withLimits({ file: written.file, summary: `report written to ${where}${renamed}` }, limits);
        },
      }),
      summarizeTextTool(),
    ],
    interpret: (facts) => readWorkspaceRequest(facts, root),
    workers: [
      {
        name: "reader",
        description: "Reads and summarises information",
        categories: ["files"],
        keywords: ["read", "file", "list"],
      },
      {
        name: "analyzer",
        description: "Analyses data and finds patterns",
        categories: ["analysis", "files"],
        keywords: ["count", "analyze", "words"],
      },
      {
        name: "reporter",
        description: "Writes findings into reports",
        categories: ["notes", "analysis"],
        keywords: ["report", "write"],
      },
      {
        name: "coder",
        description: "Reads source code (writing code needs the approval flow, not offered yet)",
        categories: ["files"],
        keywords: ["code", "source"],
      },
    ],
  };
}
