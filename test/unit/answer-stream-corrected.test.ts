import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/program.js";
import { readEnv } from "../../src/env.js";
import { FLIGHTS_MODEL_PLAN } from "../fakes/model-plans.js";
import { scriptedServersPerTest, type ScriptedResponse } from "../fakes/fake-openai-server.js";

// Issue 22 item 3 with streaming: `candor run --model` prints the model's answer as it is written, before SYNTHESIZE
// checks it. When the check corrects it, the terminal must end with the corrected answer, not leave the streamed one
// standing as if it were kept. The real ChatOpenAI talks to the scripted server on 127.0.0.1.

const { serve } = scriptedServersPerTest();
const scratch = mkdtempSync(path.join(tmpdir(), "candor-answer-corrected-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const ANSWERED = { parts: [{ partId: "p1", answered: true, why: null }] };

/** Runs the CLI with a model whose answer is `answer`; stdout and stderr are also kept together, in order. */
async function run(answer: string) {
  const { baseUrl } = await serve([{ json: FLIGHTS_MODEL_PLAN }, { json: ANSWERED }, answer] as ScriptedResponse[]);
  const db = path.join(scratch, `${Date.now()}-${Math.random().toString(16).slice(2)}.db`);
  const stdout: string[] = [];
  const parts: string[] = [];
  const stderr: string[] = [];
  const both: string[] = [];
  const argv = ["run", "find flights from Madrid to Paris", "--db", db, "--model", "gpt-4o-mini", "--no-input"];
  const code = await runCli(
    [...argv, "--approval-threshold", "0"],
    {
      out: (t) => (stdout.push(`${t}\n`), both.push(`${t}\n`)),
      outPart: (t) => (parts.push(t), stdout.push(t), both.push(t)),
      err: (t) => (stderr.push(t), both.push(`${t}\n`)),
      invokedAs: "candor",
    },
    () => readEnv({ OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: baseUrl }),
  );
  return { code, out: stdout.join(""), streamed: parts.join(""), stderr: stderr.join("\n"), both: both.join("") };
}

const NOT_KEPT = "The answer printed above as it was written is not the one kept; the kept answer follows.";
const FIGURE =
  "Corrected: removed a sentence with the figure 89: it is in no step's result, in the request or in what was understood of it.";

describe("a streamed answer that SYNTHESIZE corrects", () => {
  it("a sentence taken out: the corrected answer follows the streamed one, which is said not to be kept", async () => {
    const r = await run("The cheapest flight leaves at 09:10.\nIt costs 89 EUR.");
    expect(r.code, r.stderr).toBe(0);
    // Streamed as the model wrote it (it could not be known to be wrong before it was whole) …
    expect(r.streamed).toBe("\nAnswer:\n  The cheapest flight leaves at 09:10.\n  It costs 89 EUR.\n");
    expect(r.stderr).toContain("The answer was corrected: removed a sentence with the figure 89");
    // … then said not to be kept, and the kept answer printed whole: the last answer on screen is the corrected one.
    const notice = r.both.indexOf(NOT_KEPT);
    const kept = r.both.lastIndexOf("\nAnswer:\n");
    expect(notice).toBeGreaterThan(r.both.indexOf("It costs 89 EUR."));
    expect(kept).toBeGreaterThan(notice);
    expect(r.both.slice(kept)).toMatch(
      new RegExp(`^\\nAnswer:\\n  The cheapest flight leaves at 09:10\\.\\n  ${FIGURE.replace(/[.()]/g, "\\$&")}\\n`),
    );
    expect(r.both.slice(kept)).not.toContain("89 EUR");
  });

  it("results added: only what was added follows the streamed answer, printed once", async () => {
    const r = await run("Done, everything looks good.");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain(NOT_KEPT);
    expect(r.out).toContain(
      [
        "\nAnswer:",
        "  Done, everything looks good.",
        "  Flights",
        "  - Find flights Madrid → Paris: Iberia IB895 Madrid ⇄ Paris, nonstop, departs 09:10: $424 × 1 = $424",
        "  Corrected: the answer as written gives none of the results, so they are listed from the steps' own results.",
      ].join("\n"),
    );
    expect(r.out.split("Answer:").length - 1).toBe(1);
    expect(r.out.split("Done, everything looks good.").length - 1).toBe(1);
  });
});
