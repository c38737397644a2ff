import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/program.js";
import { readEnv } from "../../src/env.js";
import { FLIGHTS_MODEL_PLAN } from "../fakes/model-plans.js";
import { scriptedServersPerTest, type ScriptedResponse } from "../fakes/fake-openai-server.js";

// Issue 11 item 3: `candor run --model` prints the answer as the model writes it (stdout, piece by piece), and
// prints it once: the final answer is not repeated after it. The real ChatOpenAI talks to the scripted server on
// 127.0.0.1, which streams each answer in pieces.

const { serve } = scriptedServersPerTest();
const scratch = mkdtempSync(path.join(tmpdir(), "candor-answer-stream-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const PLAN = FLIGHTS_MODEL_PLAN;
const ANSWERED = { parts: [{ partId: "p1", answered: true, why: null }] };
// The flight the travel toolkit finds: an answer with another price would be corrected (answer-check.ts).
const ANSWER = "The cheapest flight leaves at 09:10.\nIt costs $424.";

/** Runs one CLI command in this process against the scripted server; stdout is kept in the order it was written. */
async function cli(argv: string[], baseUrl: string) {
  const stdout: string[] = [];
  const parts: string[] = [];
  const stderr: string[] = [];
  const code = await runCli(
    argv,
    {
      out: (t) => stdout.push(`${t}\n`),
      outPart: (t) => (parts.push(t), stdout.push(t)),
      err: (t) => stderr.push(t),
      invokedAs: "candor",
    },
    () => readEnv({ OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: baseUrl }),
  );
  return { code, out: stdout.join(""), parts, stderr: stderr.join("\n") };
}

const runArgs = (db: string, threshold: string, extra: string[] = []) => [
  "run",
  "find flights from Madrid to Paris",
  "--db",
  db,
  "--model",
  "gpt-4o-mini",
  "--approval-threshold",
  threshold,
  "--no-input",
  ...extra,
];

/** Runs the CLI with a model on the scripted server. */
async function run(script: ScriptedResponse[], extra: string[] = []) {
  const { fake, baseUrl } = await serve(script);
  const db = path.join(scratch, `${Date.now()}-${Math.random().toString(16).slice(2)}.db`);
  return { ...(await cli(runArgs(db, "0", extra), baseUrl)), fake };
}

describe("candor run --model prints the answer as it is written", () => {
  it("prints the model's answer in pieces as they arrive, under Answer:, once", async () => {
    const r = await run([{ json: PLAN }, { json: ANSWERED }, ANSWER]);
    expect(r.code, r.stderr).toBe(0);
    // The heading, then the answer in several pieces (the server sends it in four).
    expect(r.parts[0]).toBe("\nAnswer:\n  ");
    expect(r.parts.length).toBeGreaterThan(3);
    expect(r.out).toContain("\nAnswer:\n  The cheapest flight leaves at 09:10.\n  It costs $424.\n");
    expect(r.out.split("The cheapest flight").length - 1).toBe(1);
  });

  it("prints nothing piece by piece with --json: stdout stays one JSON document", async () => {
    const r = await run([{ json: PLAN }, { json: ANSWERED }, ANSWER], ["--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.parts).toEqual([]);
    expect(JSON.parse(r.out)).toMatchObject({ answer: ANSWER, status: "completed" });
  });

  it("prints it as it is written after `resume --approve` too, not only on `run`", async () => {
    // Regression: resume (and replay, and answers typed at the prompt) printed the answer only once it was done.
    const { baseUrl } = await serve([{ json: PLAN }, { json: ANSWERED }, ANSWER]);
    const db = path.join(scratch, `resume-${Date.now()}.db`);
    const paused = await cli(runArgs(db, "1"), baseUrl);
    expect(paused.code, paused.stderr).toBe(3);
    const thread = /thread (run-\S+)/.exec(paused.stderr)?.[1];
    expect(thread, paused.stderr).toBeDefined();
    const resumed = await cli(["resume", thread!, "--approve", "--db", db, "--no-input"], baseUrl);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.parts[0]).toBe("\nAnswer:\n  ");
    expect(resumed.parts.length).toBeGreaterThan(3);
    expect(resumed.out.split("The cheapest flight").length - 1).toBe(1);
  });
});
