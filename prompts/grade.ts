import { tag } from "./tags.js";

/** What the relevance-grading prompt shows: the query, the task it serves, and the passages found. */
export interface GradePromptInput {
  query: string;
  task: string;
  passages: readonly { path: string; text: string }[];
}

/** Longest passage shown; a long one must not crowd out the rest. */
const MAX_PASSAGE_CHARS = 600;

const INSTRUCTIONS = `Grade how relevant each passage below is to the query, for the task it serves, from 0.0 (unrelated, or
about something the task rules out) to 1.0 (exactly what the task needs). A passage that matches the words of the query
but not what the task is after (e.g. advanced slopes for a beginner) is not relevant. Grade every passage, by its index.`;

const OUTPUT_FORMAT = `Answer with one JSON object and nothing else:
{"grades": [{"index": 0, "score": 0.9}, {"index": 1, "score": 0.2}]}`;

/** The relevance-grading prompt (CorrectiveRAG.grade_relevance). */
export function gradePrompt(p: GradePromptInput): string {
  const passages = p.passages.map(
    (x, i) =>
      `[${i}] (${x.path}) ${x.text.length > MAX_PASSAGE_CHARS ? `${x.text.slice(0, MAX_PASSAGE_CHARS - 1)}…` : x.text}`,
  );
  return [
    INSTRUCTIONS,
    tag("query", p.query),
    tag("task", p.task || p.query),
    tag("passages", passages.join("\n")),
    OUTPUT_FORMAT,
  ].join("\n\n");
}
