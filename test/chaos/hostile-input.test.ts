/**
 * Hostile files, values and model output (issue 24): each attack that got through is tried again, with variants, and
 * must be refused or survived with a message that names what was wrong and how to go on. A hard link inside the
 * workspace or the documents folder to a file outside was read, summarized and cited; a symlink's refusal named the
 * real path outside; write_report replaced a file it had not written; escape sequences from a file or a model reached
 * the terminal raw; a model's malformed tool-call arguments were dropped without telling it; a deeply nested or huge
 * `--adjust` ended in a stack overflow or was echoed back. FIFOs given as files are in cli-bad-input.test.ts, where
 * each runs in a process of its own with a time limit (a FIFO read in this process would hang the test runner).
 */
import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { compileAgent } from "../../graphs/agent.js";
import { visible } from "../../src/cli/io.js";
import { parseAdjustFlag } from "../../src/cli/options.js";
import type { TaskStep } from "../../src/domain/plan.js";
import { loadDotEnv } from "../../src/env.js";
import { CandorError, ErrorCode } from "../../src/errors.js";
import { runStep } from "../../src/execution/run-step.js";
import { CLI_JSON_LIMITS } from "../../src/json-limits.js";
import { openPersistence } from "../../src/memory/persistence.js";
import { createChatModel } from "../../src/reasoning/model.js";
import { pricesFrom } from "../../src/reasoning/prices.js";
import type { PlanResult, Reasoner, SynthesisInput, WorkerModel } from "../../src/reasoning/types.js";
import { parseAssignments } from "../../src/replay.js";
import { readGivenFile } from "../../src/safe-read.js";
import { docsToolkit, type DocsSearchResult } from "../../src/tools/builtin/docs.js";
import { workspaceToolkit } from "../../src/tools/builtin/workspace.js";
import { openEffectLedger } from "../../src/tools/effects.js";
import { loadMcpConfig } from "../../src/tools/mcp/config.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { memoryDecisionLog } from "../../src/transparency/decision-log.js";
import { FakeOpenAIServer } from "../fakes/fake-openai-server.js";
import { countingToolkits, threadConfig, tripInput } from "../fakes/graph-harness.js";
import { notesToolkit } from "../fakes/notes-toolkit.js";
import { workerPrompt } from "../../prompts/worker.js";

const SECRET = "top secret outside the workspace";
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A workspace and, beside it, an outside folder with a secret file in it. */
function setup() {
  const base = mkdtempSync(join(tmpdir(), "candor-hostile-"));
  dirs.push(base);
  const root = join(base, "ws");
  const outside = join(base, "outside-secret-place");
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.md"), `${SECRET}\n`);
  writeFileSync(join(root, "notes.md"), "inside the workspace\n");
  return { base, root, outside };
}

function step(tool: string, params: Record<string, unknown>): TaskStep {
  return {
    id: "s1",
    description: tool,
    workerType: tool === "write_report" ? "reporter" : tool === "text_stats" ? "analyzer" : "reader",
    tools: [tool],
    params,
    dependsOn: [],
    expectedOutputs: [],
    estimates: { durationMs: 10, cost: 0 },
    timeoutMs: 5000,
    retry: { maxAttempts: 1, backoffMs: [] },
    order: 0,
  } as unknown as TaskStep;
}

async function call(registry: ToolRegistry, tool: string, params: Record<string, unknown>, inputs = {}) {
  return runStep({ step: step(tool, params), inputs, registry, dispatch: 1 });
}

/** The error of a synchronous call, which must be a CandorError with `code`. */
function refusal(fn: () => unknown, code: ErrorCode): string {
  try {
    fn();
  } catch (e) {
    expect(CandorError.hasCode(e, code), String(e)).toBe(true);
    return (e as Error).message;
  }
  throw new Error("expected a refusal, but the call succeeded");
}

describe("hard links in the workspace and the documents folder", () => {
  it("read_file refuses a hard link to a file outside, says why and how to opt in, and reads it once allowed", async () => {
    const { root, outside } = setup();
    linkSync(join(outside, "secret.md"), join(root, "innocent.md"));
    const strict = ToolRegistry.create([workspaceToolkit({ root })]);
    const fb = await call(strict, "read_file", { path: "innocent.md" });
    expect(fb.feedbackType).not.toBe("SUCCESS");
    expect(fb.failureClass).toBe("policy_blocked");
    expect(JSON.stringify(fb)).not.toContain(SECRET);
    expect(fb.errors.join(" ")).toMatch(/"innocent\.md": it is a hard link \(the file has 2 names\)/);
    expect(fb.errors.join(" ")).toContain("CANDOR_ALLOW_HARD_LINKS=1");
    expect(fb.errors.join(" ")).not.toContain(outside);

    const allowed = ToolRegistry.create([workspaceToolkit({ root, allowHardLinks: true })]);
    const ok = await call(allowed, "read_file", { path: "innocent.md" });
    expect(ok.feedbackType).toBe("SUCCESS");
    expect((ok.outputs.result as { text: string }).text).toContain(SECRET);
  });

  it("text_stats does not stream a hard-linked file either, when a cut read sends it back to disk", async () => {
    const { root, outside } = setup();
    linkSync(join(outside, "secret.md"), join(root, "big.md"));
    const registry = ToolRegistry.create([workspaceToolkit({ root })]);
    const read = { path: "big.md", text: "cut", truncated: true, summary: "big.md: 3 characters (cut)" };
    const fb = await call(registry, "text_stats", {}, { text: read });
    expect(fb.feedbackType).not.toBe("SUCCESS");
    expect(fb.errors.join(" ")).toMatch(/hard link/);
  });

  it("search_docs neither indexes nor cites a hard link, says it left it out, and drops one that became a link", async () => {
    const { base, outside } = setup();
    const docs = join(base, "docs");
    mkdirSync(docs);
    writeFileSync(join(docs, "guide.md"), "# Guide\n\nThe secret handshake is documented here for beginners.");
    writeFileSync(join(docs, "later.md"), "# Later\n\nA secret passage that is indexed first, then linked.");
    const dbPath = join(base, "candor.db");
    const search = async (allowHardLinks = false) => {
      const tool = docsToolkit({ dir: docs, dbPath, allowHardLinks }).tools[0]!;
      return (await tool.run(tool.schema.parse({ query: "secret" }), {
        signal: new AbortController().signal,
        inputs: {},
        stepId: "s",
        attempt: 1,
      })) as DocsSearchResult;
    };
    expect((await search()).sources).toContain("later.md");
    // Linked after it was indexed: its time and size are unchanged, yet it must not be served from the index.
    linkSync(join(docs, "later.md"), join(outside, "later-copy.md"));
    linkSync(join(outside, "secret.md"), join(docs, "leak.md"));
    const r = await search();
    expect(JSON.stringify(r.passages)).not.toContain(SECRET);
    expect(r.sources).not.toContain("leak.md");
    expect(r.sources).not.toContain("later.md");
    expect(r.skipped?.join(" ")).toMatch(/"leak\.md": it is a hard link/);
    expect(r.summary).toMatch(/2 file\(s\) were not searched/);
    expect(r.summary).not.toContain(outside);

    const opted = await search(true);
    expect(opted.sources).toContain("leak.md");
    expect(opted.skipped).toBeUndefined();
  });
});

describe("refusals name what the user gave, never a path outside the workspace", () => {
  it("a symlink to a file outside is refused by its own name", async () => {
    const { root, outside } = setup();
    symlinkSync(join(outside, "secret.md"), join(root, "link.md"));
    const fb = await call(ToolRegistry.create([workspaceToolkit({ root })]), "read_file", { path: "link.md" });
    expect(fb.failureClass).toBe("policy_blocked");
    const said = JSON.stringify(fb);
    expect(said).toContain('"link.md"');
    expect(said).not.toContain(outside);
    expect(said).not.toContain("outside-secret-place");
  });

  it("a reports folder that is a symlink out is refused without naming where it leads", async () => {
    const { root, outside } = setup();
    mkdirSync(join(root, ".candor"));
    symlinkSync(outside, join(root, ".candor", "reports"));
    const registry = ToolRegistry.create([workspaceToolkit({ root })]);
    const analysis = { words: 3, lines: 1, characters: 20, topWords: [], summary: "3 words, 1 lines" };
    const fb = await call(registry, "write_report", { title: "r" }, { analysis });
    expect(fb.feedbackType).not.toBe("SUCCESS");
    expect(JSON.stringify(fb)).not.toContain("outside-secret-place");
  });
});

describe("write_report never replaces a file", () => {
  it("picks the next free name, leaves the existing file as it was, and says the name used", async () => {
    const { root } = setup();
    const reports = join(root, ".candor", "reports");
    mkdirSync(reports, { recursive: true });
    writeFileSync(join(reports, "weekly.md"), "a person's own notes\n");
    const registry = ToolRegistry.create([workspaceToolkit({ root })]);
    const analysis = { words: 3, lines: 1, characters: 20, topWords: [], summary: "3 words, 1 lines" };
    const summaries: string[] = [];
    for (let i = 0; i < 3; i++) {
      const fb = await call(registry, "write_report", { title: "Weekly" }, { analysis });
      expect(fb.feedbackType).toBe("SUCCESS");
      summaries.push((fb.outputs.result as { summary: string }).summary);
    }
    expect(readFileSync(join(reports, "weekly.md"), "utf8")).toBe("a person's own notes\n");
    expect(summaries).toEqual([
      "report written to .candor/reports/weekly-2.md (weekly.md already exists and was left as it was)",
      "report written to .candor/reports/weekly-3.md (weekly.md already exists and was left as it was)",
      "report written to .candor/reports/weekly-4.md (weekly.md already exists and was left as it was)",
    ]);
    expect(readFileSync(join(reports, "weekly-3.md"), "utf8")).toContain("3 words");
  });
});

describe("files given by path: only regular files, within a size", () => {
  it("refuses a directory, a device and a file over the limit, naming the path as given", () => {
    const { base } = setup();
    const big = join(base, "big.json");
    writeFileSync(big, "x".repeat(2_000));
    expect(
      refusal(() => readGivenFile(base, { what: "--x", code: ErrorCode.CONFIGURATION }), ErrorCode.CONFIGURATION),
    ).toBe(`--x names "${base}", which is a directory, not a regular file, so it was not read. Give a regular file.`);
    expect(
      refusal(
        () => readGivenFile("/dev/zero", { what: "--x", code: ErrorCode.CONFIGURATION }),
        ErrorCode.CONFIGURATION,
      ),
    ).toMatch(/"\/dev\/zero", which is a device, not a regular file/);
    expect(
      refusal(
        () => readGivenFile(big, { what: "--x", code: ErrorCode.INVALID_REQUEST, maxBytes: 1_000 }),
        ErrorCode.INVALID_REQUEST,
      ),
    ).toMatch(/a file of 2000 bytes; at most 1000 bytes are read/);
  });

  it("the MCP configuration, the prices file, .env and --adjust @file all go through the check", () => {
    const { base } = setup();
    expect(refusal(() => loadMcpConfig(base), ErrorCode.CONFIGURATION)).toMatch(/MCP configuration .*a directory/);
    expect(refusal(() => pricesFrom({ CANDOR_PRICES_FILE: "/dev/zero" }), ErrorCode.CONFIGURATION)).toMatch(
      /CANDOR_PRICES_FILE .*"\/dev\/zero", which is a device/,
    );
    expect(refusal(() => loadDotEnv(base), ErrorCode.CONFIGURATION)).toMatch(/\.env names .*a directory/);
    expect(refusal(() => parseAdjustFlag("@/dev/zero"), ErrorCode.INVALID_REQUEST)).toMatch(
      /^--adjust names "\/dev\/zero", which is a device/,
    );
  });

  it(".env still fills in what the shell did not set, and only that", () => {
    const { base } = setup();
    const file = join(base, "dot.env");
    writeFileSync(file, "CANDOR_TEST_SET_BY_SHELL=from-file\nCANDOR_TEST_ONLY_IN_FILE=from-file\n");
    process.env.CANDOR_TEST_SET_BY_SHELL = "from-shell";
    try {
      expect(loadDotEnv(file)).toBe(true);
      expect(process.env.CANDOR_TEST_SET_BY_SHELL).toBe("from-shell");
      expect(process.env.CANDOR_TEST_ONLY_IN_FILE).toBe("from-file");
    } finally {
      delete process.env.CANDOR_TEST_SET_BY_SHELL;
      delete process.env.CANDOR_TEST_ONLY_IN_FILE;
    }
  });
});

describe("JSON on the command line: nested or huge values are refused with the limit named", () => {
  const deep = (n: number) => `[{"taskId":"hotel","field":"params.x","newValue":${"[".repeat(n)}${"]".repeat(n)}}]`;

  it("--adjust nested 5,000 deep is refused by its depth, not a stack overflow", () => {
    const message = refusal(() => parseAdjustFlag(deep(5_000)), ErrorCode.INVALID_REQUEST);
    expect(message).toMatch(/^--adjust nests 5002 levels deep; at most 32 levels of arrays and objects are accepted/);
    // The limit itself is accepted: a plan edit as deep as the limit allows still parses.
    expect(parseAdjustFlag(deep(CLI_JSON_LIMITS.maxDepth - 2))).toHaveLength(1);
  });

  it("--adjust of 10 MB is refused by its size and not echoed back", () => {
    const huge = JSON.stringify([{ taskId: "hotel", field: "params.x", newValue: "y".repeat(10_000_000) }]);
    const message = refusal(() => parseAdjustFlag(huge), ErrorCode.INVALID_REQUEST);
    expect(message).toMatch(/^--adjust is \d{8} bytes of JSON; at most 65536 bytes are accepted/);
    expect(message.length).toBeLessThan(400);
  });

  it("brackets inside strings do not count as nesting", () => {
    const text = JSON.stringify([{ taskId: "hotel", field: "params.x", newValue: "[".repeat(1_000) }]);
    expect(parseAdjustFlag(text)[0]!.newValue).toBe("[".repeat(1_000));
  });

  it("--set values are bounded the same way, and a bad one is quoted only in part", () => {
    expect(
      refusal(() => parseAssignments([`a=${"[".repeat(100)}${"]".repeat(100)}`]), ErrorCode.INVALID_REQUEST),
    ).toMatch(/^--set a nests 100 levels deep/);
    const huge = `${"z".repeat(1_000_000)}`;
    expect(refusal(() => parseAssignments([huge]), ErrorCode.INVALID_REQUEST).length).toBeLessThan(400);
  });
});

describe("untrusted text reaches the terminal with its control characters made visible", () => {
  it("makes ESC sequences, OSC 52, C1, DEL and bidi overrides visible, and keeps newlines and tabs", () => {
    const osc52 = "\u001b]52;c;ZXZpbA==\u0007";
    expect(visible(`a${osc52}b`)).toBe("a␛]52;c;ZXZpbA==␇b");
    expect(visible("\u001b[2J\u001b[31mred\r\u0000")).toBe("␛[2J␛[31mred␍␀");
    expect(visible("csi\u009b31m del\u007f rlo\u202eevil")).toBe("csi\\u009b31m del\\u007f rlo\\u202eevil");
    expect(visible("line 1\n\tline 2 · é — ✓")).toBe("line 1\n\tline 2 · é — ✓");
  });

  it("keeps --json output parseable and its values exact", () => {
    const value = { text: "\u001b]52;c;x\u0007 \u009b \u007f \u202e done\n" };
    const shown = visible(JSON.stringify(value));
    // eslint-disable-next-line no-control-regex -- the characters looked for
    expect(shown).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(JSON.parse(shown)).toEqual(value);
  });
});

describe("a model's malformed tool-call arguments are answered, never dropped", () => {
  /** A reasoner that runs the request reactively on a real ChatOpenAI talking to the fake server. */
  class ReactiveReasoner implements Reasoner {
    readonly kind = "llm" as const;
    readonly workerModel: WorkerModel;
    constructor(model: WorkerModel["model"]) {
      this.workerModel = { model, maxModelCalls: 8, prompt: workerPrompt };
    }
    plan(): Promise<PlanResult> {
      throw new Error("reactive: the planner is never asked");
    }
    synthesize(input: SynthesisInput): Promise<string> {
      return Promise.resolve(`Answer: ${JSON.stringify(input.results)}`);
    }
    proposeRecovery(): Promise<null> {
      return Promise.resolve(null);
    }
  }

  it("null, a list, a string and text that is not JSON each get an error the model corrects", async () => {
    const { base } = setup();
    const fake = new FakeOpenAIServer([
      { toolCall: { name: "read_note", arguments: "null" } },
      { toolCall: { name: "read_note", arguments: "[1, 2]" } },
      { toolCall: { name: "read_note", arguments: '"readme"' } },
      { toolCall: { name: "read_note", arguments: '{"name": "readme"' } },
      { toolCall: { name: "read_note", arguments: { name: "readme" } } },
      { toolCall: { name: "count_words", arguments: {} } },
      "The readme note has 5 words.",
    ]);
    const server = await fake.start();
    const persistence = openPersistence(join(base, "candor.db"));
    try {
      const model = createChatModel({
        apiKey: "test-key",
        baseUrl: server.baseUrl,
        model: "gpt-4o-mini",
        maxRetries: 0,
      });
      const { toolkits, calls } = countingToolkits([notesToolkit()]);
      const graph = compileAgent(
        {
          toolkits,
          reasoner: new ReactiveReasoner(model),
          decisionLog: memoryDecisionLog(),
          ledger: openEffectLedger(persistence.store.db),
        },
        persistence,
      );
      const done = await graph.invoke(
        tripInput("count the words of the readme note", { planner: false }),
        threadConfig("malformed-args"),
      );
      fake.assertConsumed();
      expect(done.status).toBe("completed");
      expect(calls.all()).toEqual({ read_note: 1, count_words: 1 });
      // What the model was told after each malformed call: the last tool message of the next request.
      const told = (n: number) => {
        const messages = fake.requests[n - 1]!.body.messages ?? [];
        const last = messages.filter((m) => m.role === "tool").at(-1);
        return String(last?.content);
      };
      expect(told(2)).toMatch(/^The arguments of your call to read_note are null, not a JSON object, so nothing ran\./);
      expect(told(2)).toContain('{"name": …}');
      expect(told(3)).toMatch(/are a list, not a JSON object/);
      expect(told(4)).toMatch(/are a string, not a JSON object/);
      expect(told(5)).toMatch(/are not valid JSON/);
      // Every call is shown as it happens, the refused ones with why.
      const shown = done.notifications.map((n) => n.title).join("\n");
      expect(shown).toMatch(/its model called read_note\(null\), whose arguments are null, not a JSON object/);
      expect(shown).toMatch(/its model calls read_note\(\{"name":"readme"\}\)/);
      expect(shown).toMatch(/its model calls count_words\(\{\}\)/);
    } finally {
      persistence.close();
      await server.close();
    }
  });

  it("arguments over the bound on tool arguments are refused before anything else, and the model told the bound", async () => {
    const { base } = setup();
    const fake = new FakeOpenAIServer([
      { toolCall: { name: "read_note", arguments: { name: "r".repeat(4096) } } },
      { toolCall: { name: "read_note", arguments: { name: "readme" } } },
      { toolCall: { name: "count_words", arguments: {} } },
      "The readme note has 5 words.",
    ]);
    const server = await fake.start();
    const persistence = openPersistence(join(base, "candor.db"));
    try {
      const model = createChatModel({
        apiKey: "test-key",
        baseUrl: server.baseUrl,
        model: "gpt-4o-mini",
        maxRetries: 0,
      });
      const { toolkits, calls } = countingToolkits([notesToolkit()]);
      const graph = compileAgent(
        {
          toolkits,
          reasoner: new ReactiveReasoner(model),
          decisionLog: memoryDecisionLog(),
          ledger: openEffectLedger(persistence.store.db),
          bounds: { maxToolArgumentBytes: 1024 },
        },
        persistence,
      );
      const done = await graph.invoke(
        tripInput("count the words of the readme note", { planner: false }),
        threadConfig("oversized-args"),
      );
      fake.assertConsumed();
      expect(done.status).toBe("completed");
      expect(calls.all()).toEqual({ read_note: 1, count_words: 1 });
      const told = String(fake.requests[1]!.body.messages?.filter((m) => m.role === "tool").at(-1)?.content);
      expect(told).toMatch(
        /^The arguments of your call to read_note are 4,\d{3} bytes, over the 1,024 bytes one tool call's arguments may have \(maxToolArgumentBytes/,
      );
    } finally {
      persistence.close();
      await server.close();
    }
  });
});
