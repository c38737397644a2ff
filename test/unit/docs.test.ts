import { mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LlmReasoner } from "../../src/reasoning/llm.js";
import { createChatModel } from "../../src/reasoning/model.js";
import { RulesReasoner } from "../../src/reasoning/rules.js";
import { scriptedServersPerTest } from "../fakes/fake-openai-server.js";
import {
  docsToolkit,
  gradeByTerms,
  type DocsSearchResult,
  type RelevanceGrader,
} from "../../src/tools/builtin/docs.js";

const { serve } = scriptedServersPerTest();
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function folder(files: Record<string, string>) {
  const base = mkdtempSync(path.join(tmpdir(), "candor-docs-"));
  dirs.push(base);
  const docs = path.join(base, "docs");
  mkdirSync(docs);
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(docs, name), text);
  return { base, docs, dbPath: path.join(base, "candor.db") };
}

async function search(
  f: { docs: string; dbPath: string },
  args: { query: string; task?: string; limit?: number },
  grader?: RelevanceGrader,
): Promise<DocsSearchResult> {
  const tool = docsToolkit({ dir: f.docs, dbPath: f.dbPath, ...(grader ? { grader } : {}) }).tools[0]!;
  const parsed = tool.schema.parse(args);
  return (await tool.run(parsed, {
    signal: new AbortController().signal,
    inputs: {},
    stepId: "s",
    attempt: 1,
  })) as DocsSearchResult;
}

const SKI = {
  "beginners.md":
    "# Best ski resorts for beginners\n\nGentle slopes, a good ski school and lessons every morning make these resorts ideal for beginners.",
  "experts.md": "# Advanced techniques\n\nOff-piste couloirs and moguls for experts only. Not for the faint-hearted.",
  "lessons.md":
    "# Beginner-friendly ski lessons\n\nSmall groups, patient instructors: ski resorts where beginners learn fast.",
};

describe("corrective retrieval over a documents folder (seed 001 scenarios 14-16)", () => {
  it("scenario 14: passages are graded for the query and those under 0.5 are left out", async () => {
    expect(gradeByTerms("Best ski resorts for beginners", "", SKI["beginners.md"])).toBe(1);
    expect(gradeByTerms("Best ski resorts for beginners", "", SKI["experts.md"])).toBeLessThan(0.5);
    const r = await search(folder(SKI), { query: "Best ski resorts for beginners" });
    expect(r.sources).toContain("beginners.md");
    expect(r.sources).not.toContain("experts.md");
    expect(r.passages.every((p) => p.relevant && p.score >= 0.5)).toBe(true);
    expect(r.summary).toMatch(/Sources: .*beginners\.md/);
  });

  it("scenario 15: a vague query is refined (any word, every word, the task's words) until relevance ≥ 0.7, each iteration shown", async () => {
    const generic = Object.fromEntries(
      ["alps", "dolomites", "pyrenees", "rockies"].map((m) => [
        `${m}.md`,
        `# Ski resorts of the ${m}\n\nSki resorts, ski resorts: lift prices and opening dates of the ski resorts.`,
      ]),
    );
    const f = folder({ ...SKI, ...generic });
    const r = await search(f, { query: "ski resorts", task: "beginner ski resorts with lessons", limit: 1 });
    expect(r.iterations.length).toBeGreaterThan(1);
    expect(r.iterations[0]!.query).toBe("ski OR resort");
    expect(r.iterations[0]!.relevance).toBeLessThan(0.7);
    expect(r.relevance).toBeGreaterThanOrEqual(0.7);
    expect(r.iterations.at(-1)!.relevance).toBe(r.relevance);
    expect(r.summary).toMatch(/after [23] queries \(1: "ski OR resort" → [\d.]+; 2: /);
    expect(r.sources).toEqual([expect.stringMatching(/^(beginners|lessons)\.md$/)]);
  });

  it("scenario 16: passages are reranked for the task, not left in full-text order", async () => {
    const f = folder({
      "a.md": "Hotel Paris budget rooms near the station, hotel hotel hotel.",
      "b.md": "Romantic hotel in Paris with a couples suite and candlelit dinners.",
    });
    const r = await search(f, { query: "hotel Paris", task: "find a romantic hotel for a couple" });
    expect(r.passages[0]!.path).toBe("b.md");
    expect(r.passages[0]!.score).toBeGreaterThan(r.passages[1]?.score ?? 0);
  });

  it("a model grader decides the grades when it answers; null leaves them to term coverage", async () => {
    const f = folder(SKI);
    const seen: string[][] = [];
    const grader: RelevanceGrader = async (_q, _t, passages) => {
      seen.push(passages.map((p) => p.path));
      return passages.map((p) => (p.path === "experts.md" ? 0.95 : 0.1));
    };
    const r = await search(f, { query: "ski techniques" }, grader);
    expect(seen.length).toBeGreaterThan(0);
    expect(r.sources).toEqual(["experts.md"]);
    const fallback = await search(f, { query: "Best ski resorts for beginners" }, async () => null);
    expect(fallback.sources).toContain("beginners.md");
  });

  it("with a model, the model grades (scenario 14's 0.9 / 0.3 / 0.85), against the fake OpenAI server", async () => {
    const { fake, baseUrl } = await serve([
      {
        json: {
          grades: [
            { index: 0, score: 0.9 },
            { index: 1, score: 0.3 },
            { index: 2, score: 0.85 },
          ],
        },
      },
    ]);
    const model = createChatModel({ apiKey: "k", baseUrl, model: "gpt-4o-mini", maxRetries: 0 });
    const reasoner = new LlmReasoner({ model, fallback: new RulesReasoner() });
    const passages = [
      { path: "beginners.md", text: SKI["beginners.md"] },
      { path: "experts.md", text: SKI["experts.md"] },
      { path: "lessons.md", text: SKI["lessons.md"] },
    ];
    expect(await reasoner.gradeRelevance({ query: "Best ski resorts for beginners", task: "", passages })).toEqual([
      0.9, 0.3, 0.85,
    ]);
    expect(fake.promptOf(1)).toContain("[1] (experts.md) # Advanced techniques");
  });

  it("re-indexes changed, new and removed files at the next search", async () => {
    const f = folder({ "a.md": "Tokyo ramen guide." });
    expect((await search(f, { query: "ramen" })).sources).toEqual(["a.md"]);
    writeFileSync(path.join(f.docs, "a.md"), "Kyoto temples guide, completely rewritten.");
    writeFileSync(path.join(f.docs, "b.md"), "Osaka ramen street food.");
    expect((await search(f, { query: "ramen" })).sources).toEqual(["b.md"]);
    unlinkSync(path.join(f.docs, "b.md"));
    expect((await search(f, { query: "ramen" })).sources).toEqual([]);
    expect((await search(f, { query: "temples" })).sources).toEqual(["a.md"]);
  });

  it("never reads outside the folder, symlinks included", async () => {
    const f = folder({ "inside.md": "Public notes about secrets management." });
    writeFileSync(path.join(f.base, "outside.md"), "TOP SECRET password list.");
    symlinkSync(path.join(f.base, "outside.md"), path.join(f.docs, "link.md"));
    const r = await search(f, { query: "secret password" });
    expect(r.sources).not.toContain("link.md");
    expect(JSON.stringify(r)).not.toContain("TOP SECRET");
  });
});
