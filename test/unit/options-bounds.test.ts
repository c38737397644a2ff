import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { readEnv } from "../../src/env.js";
import {
  HistoryFlags,
  LogsFlags,
  parseFlags,
  ReplayFlags,
  ResumeFlags,
  RunFlags,
  ThreadsFlags,
} from "../../src/cli/options.js";
import { buildProgram, runCli, swallowedFlag } from "../../src/cli/program.js";

const refusal = (schema: z.ZodType, raw: Record<string, unknown>): string => {
  try {
    parseFlags(schema, raw);
  } catch (e) {
    return (e as Error).message;
  }
  return "accepted";
};

describe("every flag is parsed at the boundary, with its bounds said in the message (issue 8 defect 8)", () => {
  // Regression: "" was read as 0 (approval silently off), 1e9 revisions, ',,,' and a 20-digit call count were
  // accepted, `--replan` took the next flag as its guidance, and `logs --operation bogus` matched nothing quietly.
  it.each([
    [
      '--approval-threshold "" (was taken as 0: approval off)',
      RunFlags,
      { approvalThreshold: "" },
      /^--approval-threshold must be a number between 0 and 1, e.g. --approval-threshold 0.8\.$/,
    ],
    [
      "--approval-threshold of spaces",
      RunFlags,
      { approvalThreshold: "  " },
      /--approval-threshold must be a number between 0 and 1/,
    ],
    [
      "--approval-threshold above 1",
      RunFlags,
      { approvalThreshold: "1.5" },
      /--approval-threshold must be a number between 0 and 1/,
    ],
    [
      "--approval-threshold in hex",
      RunFlags,
      { approvalThreshold: "0x1" },
      /--approval-threshold must be a number between 0 and 1/,
    ],
    ['--abort-below ""', RunFlags, { abortBelow: "" }, /--abort-below must be a number between 0 and 1/],
    ["--abort-below NaN", RunFlags, { abortBelow: "NaN" }, /--abort-below must be a number between 0 and 1/],
    [
      "--max-revisions 1e9",
      RunFlags,
      { maxRevisions: "1e9" },
      /^--max-revisions must be a whole number from 0 to 20, e.g. --max-revisions 2\.$/,
    ],
    ["--max-revisions 21", RunFlags, { maxRevisions: "21" }, /--max-revisions must be a whole number from 0 to 20/],
    ["--max-revisions -1", RunFlags, { maxRevisions: "-1" }, /--max-revisions must be a whole number from 0 to 20/],
    ["--max-revisions 1.5", RunFlags, { maxRevisions: "1.5" }, /--max-revisions must be a whole number from 0 to 20/],
    ['--max-revisions ""', RunFlags, { maxRevisions: "" }, /--max-revisions must be a whole number from 0 to 20/],
    [
      "--fault ',,,'",
      RunFlags,
      { fault: [",,,"] },
      /^--fault ",,," is malformed: an entry is empty; write tool=kind\[\*N\] with kind one of timeout, .* and N from 1 to 1000/,
    ],
    [
      "--fault with a trailing comma",
      RunFlags,
      { fault: ["search_flights=timeout,"] },
      /--fault "search_flights=timeout," is malformed: an entry is empty/,
    ],
    [
      "--fault 'x=timeout*99999999999999999999'",
      RunFlags,
      { fault: ["x=timeout*99999999999999999999"] },
      /is malformed: the number of failing calls 99999999999999999999 is not from 1 to 1000/,
    ],
    [
      "--fault '...*0'",
      RunFlags,
      { fault: ["search_flights=timeout*0"] },
      /the number of failing calls 0 is not from 1 to 1000/,
    ],
    ["--fault with an unknown kind", RunFlags, { fault: ["search_flights=explode"] }, /"explode" is not a fault kind/],
    [
      "--thread followed by a flag",
      RunFlags,
      { thread: "--json" },
      /^--thread needs a value, but the next word is the flag "--json": put it right after --thread/,
    ],
    [
      "--user followed by a flag",
      RunFlags,
      { user: "--db" },
      /--user needs a value, but the next word is the flag "--db"/,
    ],
    [
      "--db followed by a flag",
      RunFlags,
      { db: "--json" },
      /--db needs a value, but the next word is the flag "--json"/,
    ],
    ['--model ""', RunFlags, { model: " " }, /--model needs a value/],
    [
      "--replan followed by a flag (resume T --replan --approve)",
      ResumeFlags,
      { replan: "--approve" },
      /^--replan needs guidance text, but the next word is the flag "--approve": put it right after --replan \(quoted if it has spaces\), e.g. --replan "use the train instead"\.$/,
    ],
    [
      "--adjust followed by a flag",
      ResumeFlags,
      { adjust: "--db" },
      /--adjust needs a value, but the next word is the flag "--db"/,
    ],
    [
      "--comment followed by a flag",
      ResumeFlags,
      { comment: "--approve" },
      /--comment needs a value, but the next word is the flag/,
    ],
    [
      "--set followed by a flag",
      ResumeFlags,
      { set: ["--db"] },
      /--set needs a value, but the next word is the flag "--db"/,
    ],
    [
      "threads --limit 0",
      ThreadsFlags,
      { limit: "0" },
      /^--limit must be a whole number from 1 to 10000, e.g. --limit 10\.$/,
    ],
    ["threads --limit 1e9", ThreadsFlags, { limit: "1e9" }, /--limit must be a whole number from 1 to 10000/],
    ["history --limit 10001", HistoryFlags, { limit: "10001" }, /--limit must be a whole number from 1 to 10000/],
    ['history --limit ""', HistoryFlags, { limit: "" }, /--limit must be a whole number from 1 to 10000/],
    [
      "logs --operation bogus",
      LogsFlags,
      { operation: "bogus" },
      /^--operation must be one of plan, approval, route, dispatch, step_result, .*report, model_call\.$/,
    ],
    ["logs --thread that is no thread id", LogsFlags, { thread: "a b" }, /--thread: a thread id is 1-64 letters/],
    [
      "fork --as-node bogus",
      ReplayFlags,
      { from: "c1", asNode: "bogus" },
      /^--as-node must be one of the graph's nodes: converse, understand, execute/,
    ],
    [
      "fork --from followed by a flag",
      ReplayFlags,
      { from: "--set" },
      /--from needs a value, but the next word is the flag "--set"/,
    ],
  ] as [string, z.ZodType, Record<string, unknown>, RegExp][])("refuses %s", (_what, schema, raw, message) => {
    expect(refusal(schema, raw)).toMatch(message);
  });

  it.each([
    [
      RunFlags,
      {
        approvalThreshold: "0.8",
        abortBelow: ".3",
        maxRevisions: "20",
        fault: ["search_flights=timeout*1000,search_hotels=unavailable"],
        thread: "run-1",
        user: "me@x",
      },
      { approvalThreshold: 0.8, abortBelow: 0.3, maxRevisions: 20 },
    ],
    [
      RunFlags,
      { approvalThreshold: "1", abortBelow: "0", maxRevisions: "0" },
      { approvalThreshold: 1, abortBelow: 0, maxRevisions: 0 },
    ],
    [ThreadsFlags, { limit: "10000" }, { limit: 10000 }],
    [LogsFlags, { operation: "human_decision", step: "hotel" }, { operation: "human_decision", step: "hotel" }],
    [
      ResumeFlags,
      { replan: "use the train instead", set: ["maxPrice=-5"] },
      { replan: "use the train instead", set: ["maxPrice=-5"] },
    ],
    [ReplayFlags, { from: "c1", asNode: "understand" }, { from: "c1", asNode: "understand" }],
  ] as [z.ZodType, Record<string, unknown>, Record<string, unknown>][])(
    "accepts values at and inside the bounds (%#)",
    (schema, raw, parsed) => {
      expect(parseFlags(schema, raw)).toMatchObject(parsed);
    },
  );
});

// Only usage errors are run in this process, so nothing should be opened; were a flag accepted by mistake, the
// database it would open is in a directory removed after the tests, never the repository's default one.
const scratch = mkdtempSync(path.join(tmpdir(), "candor-options-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs the CLI in this process, collecting stdout and stderr. */
async function cli(args: string[]): Promise<{ code: number; stdout: string[]; stderr: string[] }> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await runCli(args, { out: (t) => stdout.push(t), err: (t) => stderr.push(t), invokedAs: "candor" }, () =>
    readEnv({ CANDOR_DB: path.join(scratch, "candor.db") }),
  );
  return { code, stdout, stderr };
}

describe("a flag left without its value is named, not swallowed (issue 8 defect 8)", () => {
  // Regression: `resume T --replan --db x.db` took "--db" as the guidance and then complained about x.db.
  it.each([
    [
      ["resume", "T", "--replan", "--db", "x.db"],
      /^--replan needs a value, but the next word is the flag "--db": put the value right after --replan \(quoted if it has spaces\), as in --replan <guidance>\. See candor resume --help/,
    ],
    [["resume", "T", "--comment", "--approve"], /^--comment needs a value, but the next word is the flag "--approve"/],
    [["run", "trip", "--thread", "--json"], /^--thread needs a value, but the next word is the flag "--json"/],
    [["logs", "--db", "--json"], /^--db needs a value, but the next word is the flag "--json"/],
  ])("%j exits 2 naming the flag", async (args, message) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stderr.join("\n")).toMatch(message);
  });

  it("leaves a flag's value alone when it is not a flag, and everything after `--`", () => {
    const program = buildProgram(
      { out: () => undefined, err: () => undefined, invokedAs: "candor", env: readEnv({}) },
      () => undefined,
    );
    expect(swallowedFlag(program, ["resume", "T", "--replan", "go by train", "--db", "x.db"], "candor")).toBeNull();
    expect(swallowedFlag(program, ["run", "--db", "x.db", "--", "--replan", "--json"], "candor")).toBeNull();
    expect(swallowedFlag(program, ["resume", "T", "--set", "maxPrice=-5", "--retry"], "candor")).toBeNull();
  });
});

describe("with --json, a usage error is one JSON object on stdout (issue 8 defect 9)", () => {
  // Regression: with --json, usage errors printed nothing on stdout, so a script reading it got no JSON at all.
  it.each([
    ["run", ["run", "--json"], "INVALID_REQUEST", /Missing required argument 'request'/],
    [
      "run, a bad flag value",
      ["run", "trip", "--max-revisions", "1e9", "--json"],
      "INVALID_REQUEST",
      /--max-revisions must be a whole number from 0 to 20/,
    ],
    [
      "demo",
      ["demo", "--approval-threshold", "", "--json"],
      "INVALID_REQUEST",
      /--approval-threshold must be a number between 0 and 1/,
    ],
    [
      "resume",
      ["resume", "T", "--replan", "--approve", "--json"],
      "INVALID_REQUEST",
      /--replan needs a value, but the next word is the flag "--approve"/,
    ],
    ["resume, two decisions", ["resume", "T", "--approve", "--reject", "--json"], "INVALID_REQUEST", /one decision/],
    [
      "threads",
      ["threads", "--limit", "0", "--json"],
      "INVALID_REQUEST",
      /--limit must be a whole number from 1 to 10000/,
    ],
    ["history", ["history", "not a thread", "--json"], "INVALID_REQUEST", /is not a thread id/],
    ["report", ["report", "--json"], "INVALID_REQUEST", /Missing required argument 'thread'/],
    ["logs", ["logs", "--operation", "bogus", "--json"], "INVALID_REQUEST", /argument 'bogus' is invalid/],
    ["replay", ["replay", "T", "--json"], "INVALID_REQUEST", /--from/],
    ["fork", ["fork", "T", "--from", "c", "--json"], "INVALID_REQUEST", /fork needs at least one --set/],
    [
      "fork, a forbidden path",
      ["fork", "T", "--from", "c", "--set", "__proto__.x=1", "--json"],
      "INVALID_REQUEST",
      /"__proto__" reaches an object's prototype, never a field/,
    ],
    ["an unknown flag", ["run", "trip", "--frobnicate", "--json"], "INVALID_REQUEST", /Unknown option '--frobnicate'/],
  ])("%s", async (_what, args, code, message) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toHaveLength(1);
    const json = JSON.parse(r.stdout[0]!) as { error: { code: string; message: string } };
    expect(json).toEqual({ error: { code, message: expect.stringMatching(message) } });
    // The person reading the terminal still gets the sentence on stderr.
    expect(r.stderr.join("\n")).toBe(json.error.message);
  });

  it("without --json, stdout stays empty", async () => {
    const r = await cli(["run", "trip", "--max-revisions", "1e9"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toEqual([]);
  });
});
