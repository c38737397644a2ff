import { relative, resolve } from "node:path";
import { z } from "zod";
import { CandorError, ErrorCode } from "../../errors.js";
import { defineTool, paramText, type RequestFacts, type Toolkit } from "../types.js";
import { ConfinedRoot } from "./confine.js";
import { summarizeTextTool } from "./summarize.js";
import { dirIn, dirParam, fileIn, readWorkspaceRequest } from "./workspace-reading.js";

export { insideRoot } from "./confine.js";

/** Largest file read_file returns whole; bigger files are cut, and the result says so. */
const MAX_READ_BYTES = 200_000;

/** The first file-looking word of a request (e.g. "README.md", "src/index.ts"). */
function pathIn(facts: RequestFacts): string | null {
  return fileIn(facts.text)?.text ?? null;
}

const TextResult = z.object({ path: z.string(), text: z.string(), truncated: z.boolean(), summary: z.string() });
const StatsResult = z.object({
  words: z.number(),
  lines: z.number(),
  characters: z.number(),
  topWords: z.array(z.tuple([z.string(), z.number()])),
  summary: z.string(),
});

/**
 * Built-in tools over a workspace directory, with seed 004's generic worker types: `reader` reads files,
 * `analyzer` measures text, `reporter` writes reports under .candor/reports, `coder` may read and propose
 * changes (it writes nothing: a tool that writes code needs the approval flow before it can be offered).
 * Every read and write is confined to the workspace by real path at the moment of use (see confine.ts).
 */
export function workspaceToolkit(options: { root?: string; reportsDir?: string } = {}): Toolkit {
  const root = resolve(options.root ?? process.cwd());
  /** Where reports go, relative to the root (and confined to it like every other path). */
  const reportsDir = options.reportsDir ?? ".candor/reports";
  // Resolved at each call, not at build time: the workspace may not exist yet when the graph is built.
  const confined = () => ConfinedRoot.open(root);
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
          const { text, bytes, truncated } = await (await confined()).readText(path, MAX_READ_BYTES);
          return {
            path,
            text,
            truncated,
            summary: `${path}: ${text.length} characters${truncated ? ` (cut: the file has ${bytes} bytes)` : ""}`,
          };
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
          const dir = dirIn(facts.text);
          return { dir: dir ? dirParam(dir.text) : "." };
        },
        describeStep: (p) => `List files in ${paramText(p.dir, ".")}`,
        run: async ({ dir }) => {
          const entries = await (await confined()).list(dir);
          // A symlink is listed by its name only (marked @), never followed: reading it is checked like any path.
          const names = entries
            .filter((e) => !e.name.startsWith(".") && e.name !== "node_modules")
            .map((e) => (e.isSymlink ? `${e.name}@` : e.isDirectory ? `${e.name}/` : e.name))
            .sort();
          return {
            dir,
            files: names,
            summary: `${names.length} entries in ${dir}: ${names.slice(0, 12).join(", ")}${names.length > 12 ? ", …" : ""}`,
          };
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
          const source = TextResult.safeParse(ctx.inputs.text);
          if (!source.success)
            throw new CandorError(
              "Invalid input: text_stats needs the text of an earlier read_file step.",
              ErrorCode.TOOL_FAILED,
            );
          const text = source.data.text;
          const words = text.toLowerCase().match(/[a-z0-9']+/g) ?? [];
          const counts = new Map<string, number>();
          for (const w of words) if (w.length > 3) counts.set(w, (counts.get(w) ?? 0) + 1);
          const topWords = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 5);
          const lines = text.split("\n").length;
          return {
            words: words.length,
            lines,
            characters: text.length,
            topWords,
            summary: `${words.length} words, ${lines} lines; most frequent: ${topWords.map(([w, n]) => `${w} (${n})`).join(", ")}`,
          };
        },
      }),
      defineTool({
        name: "write_report",
        description: "Write a markdown report of the analysis under .candor/reports",
        category: "notes",
        keywords: ["report", "write", "save", "document"],
        consumes: ["analysis"],
        produces: ["report"],
        sideEffect: "reversible",
        needsApproval: false,
        schema: z.object({ title: z.string().min(1).default("Candor report") }),
        estimates: { durationMs: 20, cost: 0 },
        extractParams: (facts) => ({ title: facts.text.slice(0, 60) }),
        describeStep: () => "Write the report",
        run: async ({ title }, ctx) => {
          const analysis = StatsResult.safeParse(ctx.inputs.analysis);
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
          const file = await workspace.writeText(reportsDir, name, `# ${title}\n\n${analysis.data.summary}\n`);
          return { file, summary: `report written to ${relative(workspace.real, file)}` };
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
