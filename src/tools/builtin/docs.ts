import { stat } from "node:fs/promises";
import path from "node:path";
import Database from "better-sqlite3";
import { z } from "zod";
import { CandorError, ErrorCode, errorMessage } from "../../errors.js";
import { defineTool, emptyInterpretation, paramText, type RequestFacts, type Toolkit } from "../types.js";
import { ConfinedRoot } from "./confine.js";

/*
 * Corrective retrieval over a folder of documents (seed 001 scenarios 14–16): `search_docs` searches an SQLite
 * FTS5 index (BM25) kept in the same database as everything else, grades each passage's relevance to the query
 * and the task, refines the query up to three times until the relevance reaches 0.7, keeps the relevant passages
 * (grade ≥ 0.5) reranked for the task, and cites the files. The index follows the folder: a file added, changed
 * or removed is indexed again at the next search. Only files whose real path lies inside the folder are read.
 */

/** Passages below this grade are left out (seed 001 scenario 14). */
const RELEVANT_GRADE = 0.5;
/** Refinement stops once the mean grade of the top passages reaches this (scenario 15). */
const TARGET_RELEVANCE = 0.7;
const MAX_ITERATIONS = 3;
const TOP = 3;
const CHUNK_CHARS = 900;
const MAX_FILE_BYTES = 2_000_000;
const TEXT_FILES = new Set([".md", ".markdown", ".txt", ".rst", ".adoc"]);
/** Words that carry no topic: function words, and the words that ask for a search of the documents itself. */
const STOP = new Set(
  [
    "the a an and or of to in on for with is are be it this that what which how who where when best good about from by at as into",
    "search find look tell show please docs doc documentation document notes note manual guide folder",
  ]
    .join(" ")
    .split(" "),
);

/** One passage with its grade (0..1) for the query and the task. */
interface GradedPassage {
  path: string;
  line: number;
  text: string;
  score: number;
  relevant: boolean;
}

/**
 * Grades passages for a query and the task they serve, 0..1 each, or null to leave it to the rules (a model's
 * grader returns null when its answer is late or unusable).
 */
export type RelevanceGrader = (
  query: string,
  task: string,
  passages: readonly { path: string; text: string }[],
  signal: AbortSignal,
) => Promise<number[] | null>;

const SearchArgs = z.object({
  query: z.string().trim().min(1, "say what to look for, e.g. beginner ski resorts"),
  /** The task the passages serve (the request), for grading, refinement and reranking. */
  task: z.string().default(""),
  limit: z.number().int().min(1).max(20).default(5),
});

const SearchResult = z.object({
  query: z.string(),
  iterations: z.array(z.object({ query: z.string(), relevance: z.number(), passages: z.number() })),
  relevance: z.number(),
  passages: z.array(
    z.object({ path: z.string(), line: z.number(), text: z.string(), score: z.number(), relevant: z.boolean() }),
  ),
  sources: z.array(z.string()),
  summary: z.string(),
  /** Files of the folder that were not searched, each with why (a hard link, a symlink leading out, unreadable). */
  skipped: z.array(z.string()).optional(),
});
export type DocsSearchResult = z.infer<typeof SearchResult>;

export interface DocsToolkitOptions {
  /** The folder to search. */
  dir: string;
  /** The SQLite file the index lives in (Candor's database). */
  dbPath: string;
  /** A model's grader; absent, or when it returns null: term coverage. */
  grader?: RelevanceGrader;
  /** Index files that have more than one name (hard links); off unless the user opts in (CANDOR_ALLOW_HARD_LINKS). */
  allowHardLinks?: boolean;
}

/** The `docs` toolkit: `search_docs` and the `researcher` worker that may use it. */
export function docsToolkit(options: DocsToolkitOptions): Toolkit {
  const index = new DocsIndex(options.dir, options.dbPath, options.allowHardLinks ?? false);
  return {
    name: "docs",
    tools: [
      defineTool({
        name: "search_docs",
        description:
          "Search the documents folder for passages about a query (full-text, BM25), grade them for the task, refine the query when they are not relevant enough, and return the relevant passages with their files.",
        category: "docs",
        keywords: ["docs", "documentation", "documents", "manual", "notes", "according to", "search the docs", "guide"],
        consumes: [],
        produces: ["passages"],
        sideEffect: "none",
        needsApproval: false,
        schema: SearchArgs,
        outputSchema: SearchResult,
        estimates: { durationMs: 100, cost: 0 },
        extractParams: (facts) => ({ query: topicOf(facts).text, task: facts.text }),
        describeStep: (p) => `Search the documents for ${paramText(p.query, "?")}`,
        run: async (args, ctx) => correctiveSearch(index, args, options.grader, ctx.signal),
      }),
    ],
    // The topic is what the search is for: said read, so the understanding check does not flag it as unserved.
    interpret: (facts) => {
      const topic = topicOf(facts);
      return {
        ...emptyInterpretation(),
        values: [{ name: "query", value: topic.text, source: topic, tools: ["search_docs"] }],
      };
    },
    workers: [
      {
        name: "researcher",
        description: "Finds and grades passages in the documents folder",
        categories: ["docs"],
        keywords: ["research", "docs", "documents", "find"],
      },
    ],
  };
}

/**
 * Pure. Term coverage: the share of the query's words a passage has (whole words, or a word they begin); with a
 * task, the share of the task's other words counts as much, since a passage must serve the task, not only match.
 */
export function gradeByTerms(query: string, task: string, passage: string): number {
  const words = new Set(wordsOf(passage));
  const cover = (terms: string[]) =>
    terms.length === 0
      ? 0
      : terms.filter((t) => [...words].some((w) => w === t || w.startsWith(t))).length / terms.length;
  const q = [...new Set(wordsOf(query))];
  const t = [...new Set(wordsOf(task))].filter((w) => !q.includes(w));
  const score = t.length === 0 ? cover(q) : 0.5 * cover(q) + 0.5 * cover(t);
  return Math.round(score * 100) / 100;
}

/** Refinement (CorrectiveRAG.refine_knowledge): any word, then every word, then every word and one of the task's. */
function refinements(query: string, task: string): string[] {
  const q = [...new Set(wordsOf(query))];
  const extra = [...new Set(wordsOf(task))].filter((w) => !q.includes(w));
  const out = [q.join(" OR "), q.join(" AND ")];
  if (extra.length > 0) out.push(`${q.join(" AND ")} AND (${extra.join(" OR ")})`);
  return [...new Set(out.filter((x) => x.length > 0))].slice(0, MAX_ITERATIONS);
}

async function correctiveSearch(
  index: DocsIndex,
  args: z.infer<typeof SearchArgs>,
  grader: RelevanceGrader | undefined,
  signal: AbortSignal,
): Promise<DocsSearchResult> {
  const skipped = await index.refresh();
  const iterations: DocsSearchResult["iterations"] = [];
  let best: { relevance: number; passages: GradedPassage[] } = { relevance: 0, passages: [] };
  for (const q of refinements(args.query, args.task)) {
    signal.throwIfAborted();
    const found = index.search(q, Math.max(args.limit * 2, TOP));
    const byModel = found.length > 0 && grader ? await grader(args.query, args.task, found, signal) : null;
    const graded = found.map((p, i) => {
      const score = byModel?.[i] ?? gradeByTerms(args.query, args.task, p.text);
      return { ...p, score, relevant: score >= RELEVANT_GRADE };
    });
    // Reranked for the task (scenario 16): the grade decides the order, BM25 only what is considered.
    graded.sort((a, b) => b.score - a.score);
    const top = graded.slice(0, TOP);
    const relevance =
      top.length === 0 ? 0 : Math.round((top.reduce((s, p) => s + p.score, 0) / top.length) * 100) / 100;
    iterations.push({ query: q, relevance, passages: found.length });
    if (relevance > best.relevance || iterations.length === 1) best = { relevance, passages: graded };
    if (relevance >= TARGET_RELEVANCE) break;
  }
  const passages = best.passages.filter((p) => p.relevant).slice(0, args.limit);
  const sources = [...new Set(passages.map((p) => p.path))];
  const trail = iterations.map((it, i) => `${i + 1}: "${it.query}" → ${it.relevance}`).join("; ");
  const summary =
    passages.length === 0
      ? `No relevant passage for "${args.query}" in ${index.dir} after ${iterations.length} quer${iterations.length === 1 ? "y" : "ies"} (${trail}).`
      : `${passages.length} relevant passage(s) for "${args.query}", relevance ${best.relevance} after ${iterations.length} quer${iterations.length === 1 ? "y" : "ies"} (${trail}). Sources: ${sources.join(", ")}.`;
  const left = skipped.length > 0 ? ` ${skipped.length} file(s) were not searched: ${skipped.join(" ")}` : "";
  return {
    query: args.query,
    iterations,
    relevance: best.relevance,
    passages,
    sources,
    summary: `${summary}${left}`,
    ...(skipped.length > 0 ? { skipped } : {}),
  };
}

/** The FTS5 index of one folder, in its own tables of the database, opened on first use. */
class DocsIndex {
  private db: Database.Database | null = null;
  readonly dir: string;

  constructor(
    dir: string,
    private readonly dbPath: string,
    private readonly allowHardLinks: boolean,
  ) {
    this.dir = path.resolve(dir);
  }

  private open(): Database.Database {
    if (this.db?.open) return this.db;
    try {
      const db = new Database(this.dbPath, { timeout: 5000 });
      db.pragma("journal_mode = WAL");
      db.exec(`
CREATE TABLE IF NOT EXISTS candor_docs_files (root TEXT NOT NULL, path TEXT NOT NULL, mtime_ms REAL NOT NULL, size INTEGER NOT NULL, PRIMARY KEY (root, path));
CREATE VIRTUAL TABLE IF NOT EXISTS candor_docs USING fts5(root UNINDEXED, path UNINDEXED, line UNINDEXED, text, tokenize = 'porter unicode61');`);
      this.db = db;
      return db;
    } catch (e) {
      throw new CandorError(
        `Cannot keep the documents index in "${this.dbPath}": ${errorMessage(e)}.`,
        ErrorCode.STORAGE,
        { cause: e },
      );
    }
  }

  /**
   * Indexes what changed since the last search: new and changed files again, removed files out, and files that may
   * no longer be read (now a hard link, or a symlink leading out) out too. Returns the files left out, each with
   * why, for the search to say.
   */
  async refresh(): Promise<string[]> {
    let root: ConfinedRoot;
    try {
      root = await ConfinedRoot.open(this.dir, { allowHardLinks: this.allowHardLinks });
    } catch (e) {
      throw new CandorError(
        `The documents folder "${this.dir}" cannot be read: ${errorMessage(e)}. Set --docs or CANDOR_DOCS to a folder.`,
        ErrorCode.TOOL_FAILED,
        { cause: e },
      );
    }
    const db = this.open();
    const files = await listTextFiles(root, ".");
    const known = new Map(
      db
        .prepare<[string], { path: string; mtime_ms: number; size: number }>(
          "SELECT path, mtime_ms, size FROM candor_docs_files WHERE root = ?",
        )
        .all(this.dir)
        .map((r) => [r.path, r]),
    );
    const seen = new Set<string>();
    const skipped: string[] = [];
    for (const rel of files) {
      let info;
      try {
        info = await stat(path.join(root.real, rel));
      } catch {
        continue; // removed since it was listed
      }
      const k = known.get(rel);
      // Linking a file again changes neither its time nor its size: an indexed file that became a hard link is read
      // (and refused) again rather than served from the index.
      const unchanged = k && k.mtime_ms === info.mtimeMs && k.size === info.size;
      if (unchanged && (info.nlink <= 1 || this.allowHardLinks)) {
        seen.add(rel);
        continue;
      }
      let text: string;
      try {
        text = (await root.readText(rel, MAX_FILE_BYTES)).text;
      } catch (e) {
        // A symlink leading out of the folder, a hard link, or unreadable: never indexed, and said. Left out of
        // `seen`, so what an earlier search indexed of it is removed below.
        skipped.push(errorMessage(e));
        continue;
      }
      seen.add(rel);
      const write = db.transaction(() => {
        db.prepare("DELETE FROM candor_docs WHERE root = ? AND path = ?").run(this.dir, rel);
        const insert = db.prepare("INSERT INTO candor_docs (root, path, line, text) VALUES (?, ?, ?, ?)");
        for (const c of chunks(text)) insert.run(this.dir, rel, c.line, c.text);
        db.prepare(
          "INSERT INTO candor_docs_files (root, path, mtime_ms, size) VALUES (?, ?, ?, ?) ON CONFLICT (root, path) DO UPDATE SET mtime_ms = excluded.mtime_ms, size = excluded.size",
        ).run(this.dir, rel, info.mtimeMs, info.size);
      });
      write();
    }
    for (const rel of known.keys())
      if (!seen.has(rel))
        db.transaction(() => {
          db.prepare("DELETE FROM candor_docs WHERE root = ? AND path = ?").run(this.dir, rel);
          db.prepare("DELETE FROM candor_docs_files WHERE root = ? AND path = ?").run(this.dir, rel);
        })();
    return skipped;
  }

  /** Passages matching an FTS5 query, best BM25 first. */
  search(query: string, limit: number): { path: string; line: number; text: string }[] {
    return this.open()
      .prepare<[string, string, number], { path: string; line: number; text: string }>(
        "SELECT path, line, text FROM candor_docs WHERE candor_docs MATCH ? AND root = ? ORDER BY bm25(candor_docs) LIMIT ?",
      )
      .all(ftsQuery(query), this.dir, limit);
  }
}

/** An FTS5 query from our own AND/OR form, every word quoted so no user text is read as FTS syntax. */
function ftsQuery(q: string): string {
  return q.replace(/[A-Za-z0-9]+/g, (w) => (w === "AND" || w === "OR" ? w : `"${w}"`));
}

/** What a request asks the documents about: the words after "docs for/about/on …", else the whole request. */
function topicOf(facts: RequestFacts): { start: number; end: number; text: string } {
  const m = /\b(?:docs|documentation|documents|notes|manual|guide)\s+(?:for|about|on|regarding)\s+(.+?)[\s.?!]*$/i.exec(
    facts.text,
  );
  if (m?.[1] && m.index !== undefined) {
    const start = facts.text.indexOf(m[1], m.index);
    return { start, end: start + m[1].length, text: m[1] };
  }
  return { start: 0, end: facts.text.length, text: facts.text };
}

/** Text files under a folder, relative paths; symlinked folders are not followed. */
async function listTextFiles(root: ConfinedRoot, dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await root.list(dir)) {
    if (e.name.startsWith(".")) continue;
    const rel = dir === "." ? e.name : `${dir}/${e.name}`;
    if (e.isDirectory && !e.isSymlink) out.push(...(await listTextFiles(root, rel)));
    else if (!e.isDirectory && TEXT_FILES.has(path.extname(e.name).toLowerCase())) out.push(rel);
  }
  return out.sort();
}

/** Paragraphs joined up to about CHUNK_CHARS, each with the line it starts on. */
function chunks(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let current = "";
  let start = 1;
  let line = 1;
  for (const para of text.split(/\n\s*\n/)) {
    const trimmed = para.trim();
    if (trimmed && current && current.length + trimmed.length > CHUNK_CHARS) {
      out.push({ line: start, text: current });
      current = "";
    }
    if (trimmed) {
      if (!current) start = line;
      current = current ? `${current}\n\n${trimmed}` : trimmed;
    }
    line += para.split("\n").length + 1;
  }
  if (current) out.push({ line: start, text: current });
  return out;
}

function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3 && !STOP.has(w))
    .map((w) => (w.length > 4 && w.endsWith("s") ? w.slice(0, -1) : w));
}
