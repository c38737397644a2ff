import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEBUGGING_TOOLS } from "../../src/tools/builtin/debugging/index.js";
import { FakeOpenAIServer } from "../fakes/fake-openai-server.js";
import { childEnv, collect, ROOT, tempDir, type CliResult } from "./helpers.js";

/*
 * `candor review` end to end, in a process of its own whose working directory is a temp folder, so the report
 * lands in that folder's .candor/reports (never in the repository) and the test can read exactly what was written.
 */

const TSX = pathToFileURL(path.join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;
const MAIN = path.join(ROOT, "src/cli/main.ts");
const REVIEW_WORDS = "Review recent runs for anomalies, with the transcript, in a debug report";

const tmp = tempDir("candor-review-");
const reports = path.join(tmp.dir, ".candor/reports");

/** Runs the CLI with `cwd` as its working directory. */
function cli(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  const child = spawn(process.execPath, ["--import", TSX, MAIN, ...args], {
    cwd: tmp.dir,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  return collect(child);
}

const reportFiles = () => (existsSync(reports) ? readdirSync(reports).sort() : []);
/** The step ids of the plan a run printed, in order ("1. run_review  Review …"). */
const planned = (stderr: string) => [...stderr.matchAll(/^\s+\d+\. (\w+)\s/gm)].map((m) => m[1]);

beforeAll(async () => {
  const trip = await cli([
    "run",
    "Plan a 2-day trip from Paris to Rome for 1 person",
    "--fault",
    "search_hotels=unavailable*1",
    "--thread",
    "trip-1",
    "--db",
    tmp.db,
    "--no-input",
  ]);
  expect(trip.code, trip.stderr).toBe(0);
});
afterAll(() => tmp.cleanup());

describe("candor review", () => {
  it("reviews the recent runs: review_runs → get_run_transcript → write_debug_report, and the report says what it found", async () => {
    const r = await cli(["review", "--db", tmp.db, "--no-input"]);
    expect(r.code, r.stderr).toBe(0);
    expect(planned(r.stderr)).toEqual(["run_review", "run_transcript", "debug_report"]);
    const [file, ...more] = reportFiles();
    expect(more).toEqual([]);
    const text = readFileSync(path.join(reports, file!), "utf8");
    expect(text).toContain("1 of 1 thread(s) reviewed have anomalies: trip-1 (1)");
    expect(text).toContain("trip-1: recovered hotel (resource_unavailable) → FIND_WORKAROUND");
    expect(text).toContain("## Transcript of trip-1");
    expect(r.stdout).toContain(`debug report written to .candor/reports/${file}`);
  });

  it("--thread looks into one thread: get_run_context → get_run_transcript → write_debug_report", async () => {
    const before = reportFiles();
    const r = await cli(["review", "--thread", "trip-1", "--db", tmp.db, "--no-input"]);
    expect(r.code, r.stderr).toBe(0);
    expect(planned(r.stderr)).toEqual(["run_context", "run_transcript", "debug_report"]);
    const added = reportFiles().filter((f) => !before.includes(f));
    expect(added).toHaveLength(1);
    expect(added[0]).toMatch(/^review-of-thread-trip-1-/);
    const text = readFileSync(path.join(reports, added[0]!), "utf8");
    expect(text).toContain("trip-1: hotel failed (resource_unavailable) and was recovered by FIND_WORKAROUND");
    expect(text).toContain("## Thread trip-1 in depth");
  });

  it("an unknown thread is a usage error, before anything runs or is written", async () => {
    const before = reportFiles();
    const r = await cli(["review", "--thread", "nope", "--db", tmp.db, "--json"]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: "UNKNOWN_THREAD" } });
    expect(r.stderr).toContain('There is no thread "nope"');
    expect(r.stderr).toContain("trip-1");
    expect(reportFiles()).toEqual(before);
  });
});

describe("the debugging tools are off unless enabled", () => {
  it("a run without --debug-tools has none of them", async () => {
    const off = await cli(["run", REVIEW_WORDS, "--db", tmp.db, "--no-input"]);
    // Without them nothing reads a transcript: the plan (the workspace's tools) waits for a person, exit 3.
    expect(off.code, off.stderr).toBe(3);
    expect(off.stderr).toContain('no tool does "transcript"');
    expect(planned(off.stderr).filter((id) => ["run_review", "run_transcript", "debug_report"].includes(id!))).toEqual(
      [],
    );
  });

  it("CANDOR_DEBUG_TOOLS=1 adds them to a run", async () => {
    const on = await cli(["run", REVIEW_WORDS, "--db", tmp.db, "--no-input"], { CANDOR_DEBUG_TOOLS: "1" });
    expect(on.code, on.stderr).toBe(0);
    expect(planned(on.stderr)).toEqual(["run_review", "run_transcript", "debug_report"]);
  });
});

describe("candor review with a model", () => {
  it("the model plans over the five tools, and the report step it leaves open is written by the worker's model", async () => {
    const plan = {
      objective: "Review thread trip-1",
      contextSummary: null,
      confidence: 0.9,
      steps: [
        {
          id: "s1",
          description: "Look into thread trip-1",
          workerType: "reviewer",
          tools: ["get_run_context"],
          paramsJson: JSON.stringify({ threadId: "trip-1" }),
          dependsOn: [],
          expectedOutputs: ["run_context"],
        },
        {
          id: "s2",
          description: "Read the transcript of trip-1",
          workerType: "reviewer",
          tools: ["get_run_transcript"],
          paramsJson: JSON.stringify({ threadId: "trip-1" }),
          dependsOn: [],
          expectedOutputs: ["run_transcript"],
        },
        {
          id: "s3",
          description: "Write what went wrong in trip-1 as a debug report",
          workerType: "reviewer",
          tools: ["write_debug_report"],
          // Left open: the worker's model titles the report and writes its words.
          paramsJson: null,
          dependsOn: ["s1", "s2"],
          expectedOutputs: ["debug_report"],
        },
      ],
      understanding: null,
    };
    const fake = new FakeOpenAIServer([
      { json: plan },
      {
        toolCall: {
          name: "write_debug_report",
          arguments: { title: "Model review", content: "The hotel search was fully booked; a wider search fixed it." },
        },
      },
      "The report is written.",
      { json: { parts: [{ partId: "p1", answered: true, why: null }] } },
      "trip-1 recovered from a fully booked hotel; the report is in .candor/reports.",
    ]);
    const server = await fake.start();
    try {
      const before = reportFiles();
      const r = await cli(["review", "--thread", "trip-1", "--db", tmp.db, "--model", "fake-model", "--no-input"], {
        OPENAI_API_KEY: "test-key",
        OPENAI_BASE_URL: server.baseUrl,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/s3\s+Write what went wrong in trip-1 as a debug report \[reviewer, model-driven\]/);
      const offered = JSON.stringify(fake.requests[0]!.body);
      for (const tool of DEBUGGING_TOOLS) expect(offered).toContain(tool);
      expect(offered).not.toContain("read_file");
      expect(fake.requests[1]!.body.tools!.map((t) => t.function.name)).toEqual(["write_debug_report"]);
      const added = reportFiles().filter((f) => !before.includes(f));
      expect(added).toHaveLength(1);
      const text = readFileSync(path.join(reports, added[0]!), "utf8");
      expect(text).toContain("The hotel search was fully booked; a wider search fixed it.");
      expect(text).toContain("trip-1: hotel failed (resource_unavailable) and was recovered by FIND_WORKAROUND");
      expect(text).toContain("## Transcript of trip-1");
      fake.assertConsumed();
    } finally {
      await server.close();
    }
  });
});
