import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { workspaceToolkit } from "../../src/tools/builtin/workspace.js";
import { figure, limitsOf, type ResultLimit, withLimits } from "../../src/tools/limits.js";

// Regression tests for tools that did not say what they did not do: read_file cut a big file and text_stats
// counted the cut text as the whole file; "a\nb\n" was counted as 3 lines; a binary file was read and summarized
// as mojibake; a listing had no bound and no word about one.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A workspace with `files` in it, and a way to call its tools as a step would (output schema checked). */
function workspace(files: Record<string, string | Buffer> = {}) {
  const base = mkdtempSync(join(tmpdir(), "candor-limits-"));
  dirs.push(base);
  const root = join(base, "ws");
  mkdirSync(root);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(root, name), content);
  const kit = workspaceToolkit({ root });
  async function call(
    name: string,
    args: Record<string, unknown>,
    inputs: Record<string, unknown> = {},
    signal?: AbortSignal,
  ) {
    const tool = kit.tools.find((t) => t.name === name);
    if (!tool) throw new Error(`no tool ${name}`);
    const ctx = { signal: signal ?? new AbortController().signal, inputs, stepId: "s1", attempt: 1 };
    const result = (await tool.run(tool.schema.parse(args), ctx)) as Record<string, unknown>;
    if (tool.outputSchema) expect(tool.outputSchema.safeParse(result).success).toBe(true);
    return result;
  }
  return { base, root, call };
}

interface Stats {
  words: number;
  lines: number;
  characters: number;
  topWords: [string, number][];
  summary: string;
  limits?: ResultLimit[];
}

/** read_file then text_stats over what it read, as a plan's two steps would run them. */
async function stats(ws: ReturnType<typeof workspace>, path: string): Promise<Stats> {
  const text = await ws.call("read_file", { path });
  return (await ws.call("text_stats", {}, { text })) as unknown as Stats;
}

/**
 * What GNU-style `wc -l -w -m` prints for a file in a UTF-8 locale, or null when this machine has no wc, or one
 * whose -m does not count code points (then the comparison is skipped, the pinned figures still checked).
 */
function wc(file: string): { lines: number; words: number; characters: number } | null {
  const env = { ...process.env, LC_ALL: "C.UTF-8" };
  const probe = spawnSync("wc", ["-m"], { input: "é\n", env, encoding: "utf8" });
  if (probe.status !== 0 || probe.stdout.trim() !== "2") return null;
  const out = spawnSync("wc", ["-l", "-w", "-m", file], { env, encoding: "utf8" });
  const [lines, words, characters] = out.stdout.trim().split(/\s+/).map(Number);
  if (out.status !== 0 || lines === undefined || words === undefined || characters === undefined) return null;
  return { lines, words, characters };
}

describe("text_stats counts as wc does", () => {
  it.each([
    [
      "a trailing newline ends the last line, it starts none",
      "two.txt",
      "a\nb\n",
      { lines: 2, words: 2, characters: 4 },
    ],
    [
      "a last line without a newline is not counted as a line",
      "open.txt",
      "one two\nthree",
      { lines: 1, words: 3, characters: 13 },
    ],
    [
      "characters are code points, not bytes or UTF-16 units",
      "utf8.txt",
      "café naïve 日本語 😀\n",
      { lines: 1, words: 4, characters: 17 },
    ],
    ["an empty file has nothing", "empty.txt", "", { lines: 0, words: 0, characters: 0 }],
    [
      "runs of mixed whitespace separate one word each",
      "spaces.txt",
      "  a\t\tb \r\n\n c  ",
      { lines: 2, words: 3, characters: 14 },
    ],
  ])("%s", async (_why, name, content, expected) => {
    const ws = workspace({ [name]: content });
    const got = await stats(ws, name);
    expect({ lines: got.lines, words: got.words, characters: got.characters }).toEqual(expected);
    expect(got.limits).toBeUndefined();
    const byWc = wc(join(ws.root, name));
    if (byWc) expect(byWc).toEqual(expected);
    // read_file's summary counts characters the same way.
    expect((await ws.call("read_file", { path: name })).summary).toBe(`${name}: ${expected.characters} characters`);
  });

  it("takes the no-break spaces for separators and U+2028 for part of a word, as GNU wc 9 does", async () => {
    const ws = workspace({ "nbsp.txt": "a\u00a0b\u2028c d\u3000e\n" });
    const got = await stats(ws, "nbsp.txt");
    // a | b\u2028c | d | e (GNU wc 9.1 prints 4 words and 10 characters for the same bytes).
    expect(got.words).toBe(4);
    expect(got.characters).toBe(10);
  });
});

describe("a file bigger than read_file's cap", () => {
  /** ~3 MB: numbered lines of words, with a two-byte "é" across byte 200,000 where read_file cuts. */
  function bigFile() {
    const head = "x".repeat(199_999);
    const lines = Array.from({ length: 60_000 }, (_, i) => `line ${i} alpha beta gamma delta épsilon\n`).join("");
    return `${head}é\n${lines}`;
  }

  it("read_file says how many bytes of how many it read, and never ends on half a character", async () => {
    const content = bigFile();
    const size = Buffer.byteLength(content);
    const ws = workspace({ "big.txt": content });
    const read = await ws.call("read_file", { path: "big.txt" });
    expect(read.truncated).toBe(true);
    // The cut falls before the "é" that straddles byte 200,000, so 199,999 bytes are read, all whole characters.
    expect(read.text).toBe("x".repeat(199_999));
    expect(limitsOf(read)).toEqual([
      { kind: "truncated", message: `Read 199,999 of ${figure(size)} bytes of big.txt; the rest was not read.` },
    ]);
    expect(size).toBeGreaterThan(2_500_000);
  });

  it("text_stats counts the whole file from disk, not the cut text, and says its frequent words are a sample", async () => {
    const content = bigFile();
    const ws = workspace({ "big.txt": content });
    const got = await stats(ws, "big.txt");
    expect(got.lines).toBe(60_001);
    expect(got.words).toBe(1 + 60_000 * 7);
    expect(got.characters).toBe([...content].length);
    expect(got.summary).toContain("over the whole file");
    const byWc = wc(join(ws.root, "big.txt"));
    if (byWc) expect(byWc).toEqual({ lines: got.lines, words: got.words, characters: got.characters });
    // The cut is answered by the count; what is left is the sample the frequent words come from.
    const limits = got.limits ?? [];
    expect(limits.map((l) => l.kind)).toEqual(["sampled"]);
    expect(limits[0]?.message).toContain(`first 2,000,000 of ${figure(Buffer.byteLength(content))} bytes`);
    expect(got.topWords.map(([w]) => w)).toEqual(expect.arrayContaining(["alpha", "beta", "gamma", "delta"]));
  });

  it("text_stats streams the file only through the workspace's confinement", async () => {
    const ws = workspace({ "big.txt": bigFile() });
    writeFileSync(join(ws.base, "outside.txt"), "secret outside\n".repeat(20_000));
    symlinkSync(join(ws.base, "outside.txt"), join(ws.root, "link.txt"));
    const cutRead = (path: string) => ({
      path,
      text: "secret",
      truncated: true,
      summary: "",
      limits: [{ kind: "truncated", message: "Read 6 of 300,000 bytes." }],
    });
    for (const path of ["../outside.txt", "link.txt", "/etc/passwd"])
      await expect(ws.call("text_stats", {}, { text: cutRead(path) })).rejects.toThrow(/outside the workspace/);
  });

  it("text_stats refuses a file that became binary between the read and the count", async () => {
    const ws = workspace({ "big.txt": bigFile() });
    const text = await ws.call("read_file", { path: "big.txt" });
    writeFileSync(join(ws.root, "big.txt"), Buffer.alloc(300_000, 0));
    await expect(ws.call("text_stats", {}, { text })).rejects.toThrow(/big.txt is a binary file/);
  });

  it("text_stats stops when its step is cancelled", async () => {
    const ws = workspace({ "big.txt": bigFile() });
    const text = await ws.call("read_file", { path: "big.txt" });
    const cancelled = new AbortController();
    cancelled.abort(new Error("step timed out"));
    await expect(ws.call("text_stats", {}, { text }, cancelled.signal)).rejects.toThrow(/step timed out/);
  });

  it("summarize_text of a cut file says it summarized the start, in its limits and its summary", async () => {
    const doc = `# Title\n\nThe lead sentence. More.\n\n${"filler words here.\n".repeat(20_000)}`;
    const ws = workspace({ "doc.md": doc });
    const text = await ws.call("read_file", { path: "doc.md" });
    const summary = await ws.call("summarize_text", {}, { text });
    const message = `Read 200,000 of ${figure(Buffer.byteLength(doc))} bytes of doc.md; the rest was not read.`;
    expect(limitsOf(summary)).toEqual([{ kind: "truncated", message }]);
    expect(summary.summary).toContain(message);
  });

  it("write_report puts the analysis's limits in the report and in its result", async () => {
    const ws = workspace({ "big.txt": bigFile() });
    const analysis = await stats(ws, "big.txt");
    const report = await ws.call("write_report", { title: "big" }, { analysis });
    expect(limitsOf(report).map((l) => l.kind)).toEqual(["sampled"]);
    expect(readFileSync(report.file as string, "utf8")).toContain(analysis.limits?.[0]?.message ?? "(none)");
  });
});

describe("a binary file", () => {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]);
  /** No NUL at all, but bytes that are not UTF-8 throughout (what a compressed file looks like). */
  const noise = Buffer.from(Array.from({ length: 4096 }, (_, i) => 0x80 + ((i * 37) % 0x7f)));

  it.each([
    ["with NUL bytes", "logo.png", png],
    ["without NULs but mostly bytes that are not UTF-8", "data.gz", noise],
    ["bigger than the read cap", "big.bin", Buffer.concat([png, Buffer.alloc(300_000, 7)])],
  ])("read_file names it binary (%s) and returns no mojibake", async (_why, name, bytes) => {
    const ws = workspace({ [name]: bytes });
    const read = await ws.call("read_file", { path: name });
    expect(read.text).toBe("");
    expect(limitsOf(read)).toEqual([
      {
        kind: "binary",
        message: `${name} is a binary file (${figure(bytes.length)} bytes), so it was not read as text.`,
      },
    ]);
    expect(read.summary).toContain("binary");
  });

  it("text_stats and summarize_text refuse it instead of counting or summarizing it", async () => {
    const ws = workspace({ "logo.png": png });
    const text = await ws.call("read_file", { path: "logo.png" });
    await expect(ws.call("text_stats", {}, { text })).rejects.toThrow(/Invalid input: logo.png is a binary file/);
    await expect(ws.call("summarize_text", {}, { text })).rejects.toThrow(/Invalid input: logo.png is a binary file/);
  });

  it("text_stats and summarize_text refuse binary text handed to them without a limit", async () => {
    const ws = workspace();
    const text = { path: "old.bin", text: png.toString("utf8"), truncated: false, summary: "old.bin" };
    await expect(ws.call("text_stats", {}, { text })).rejects.toThrow(/binary file/);
    await expect(ws.call("summarize_text", {}, { text })).rejects.toThrow(/binary file/);
  });

  it("a text in Latin-1 with a few accented letters is still read as text", async () => {
    const ws = workspace({ "latin1.txt": Buffer.from("Le café est très bon, merci beaucoup.\n", "latin1") });
    const read = await ws.call("read_file", { path: "latin1.txt" });
    expect(limitsOf(read)).toEqual([]);
    expect(read.text).toContain("Le caf");
  });
});

describe("list_files on a folder bigger than a listing", () => {
  it("lists the first 1,000 entries by name and says how many there are", async () => {
    const ws = workspace();
    mkdirSync(join(ws.root, "many"));
    for (let i = 0; i < 1_005; i++) writeFileSync(join(ws.root, "many", `f${String(i).padStart(4, "0")}.txt`), "");
    const listed = await ws.call("list_files", { dir: "many" });
    const files = listed.files as string[];
    expect(files).toHaveLength(1_000);
    expect(files[999]).toBe("f0999.txt");
    expect(limitsOf(listed)).toEqual([
      {
        kind: "listing_cut",
        message: "Listed 1,000 of 1,005 entries in many (the first by name); the rest were not listed.",
      },
    ]);
    expect(listed.summary).toMatch(/^1000 of 1005 entries in many/);
  });

  it("a folder that fits has no limits", async () => {
    const ws = workspace({ "a.txt": "a", "b.txt": "b" });
    const listed = await ws.call("list_files", { dir: "." });
    expect(listed).not.toHaveProperty("limits");
    expect(listed.files).toEqual(["a.txt", "b.txt"]);
  });
});

describe("limitsOf and withLimits", () => {
  it.each([
    ["null", null],
    ["undefined", undefined],
    ["a number", 42],
    ["a string", "truncated"],
    ["an array of limits", [{ kind: "truncated", message: "Read 1 of 2 bytes." }]],
    ["an object without limits", { text: "x" }],
    ["limits that are not an array", { limits: { kind: "truncated", message: "x" } }],
    ["limits of a string", { limits: "truncated" }],
    [
      "only malformed entries",
      {
        limits: [
          null,
          "truncated",
          { kind: "cut", message: "an unknown kind" },
          { kind: "truncated" },
          { kind: "binary", message: "" },
          { kind: "sampled", message: 7 },
        ],
      },
    ],
  ])("reads no limit from %s", (_what, result) => {
    expect(limitsOf(result)).toEqual([]);
  });

  it("keeps the valid entries beside malformed ones", () => {
    const valid: ResultLimit = {
      kind: "binary",
      message: "x.bin is a binary file (3 bytes), so it was not read as text.",
    };
    expect(limitsOf({ limits: [{ kind: 1 }, valid, null] })).toEqual([valid]);
  });

  it("adds limits to those a result carries, once each, and leaves a whole result as it was", () => {
    const whole = { text: "x" };
    expect(withLimits(whole, [])).toBe(whole);
    const cut: ResultLimit = { kind: "truncated", message: "Read 1 of 2 bytes of x; the rest was not read." };
    const sampled: ResultLimit = { kind: "sampled", message: "The frequent words are a sample." };
    const once = withLimits(whole, [cut]);
    expect(withLimits(once, [cut, sampled]).limits).toEqual([cut, sampled]);
    expect(whole).not.toHaveProperty("limits");
  });

  it("writes figures grouped by thousands", () => {
    expect([0, 999, 1_000, 184_320_000].map(figure)).toEqual(["0", "999", "1,000", "184,320,000"]);
  });
});
