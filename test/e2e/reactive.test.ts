import { describe, expect, it } from "vitest";
import { FakeOpenAIServer, type ScriptedResponse } from "../fakes/fake-openai-server.js";
import { perTest, runCli, STACK_LINE } from "./helpers.js";

const { freshDb } = perTest();

/** Runs the CLI against a fake OpenAI-compatible server answering `script`, and checks the script was used up. */
async function withFakeModel(script: ScriptedResponse[], args: string[]) {
  const fake = new FakeOpenAIServer(script);
  const server = await fake.start();
  try {
    const r = await runCli([...args, "--db", freshDb(), "--model", "fake-model", "--no-input"], {
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: server.baseUrl,
    });
    return { r, fake };
  } finally {
    await server.close();
  }
}

/** The general worker's loop: list the files, read one, answer; then the synthesis writes the answer. */
const LOOP_AND_ANSWER: ScriptedResponse[] = [
  { toolCall: { name: "list_files", arguments: { dir: "." } } },
  { toolCall: { name: "read_file", arguments: { path: "package.json" } } },
  "package.json names the project candor.",
  "The project is called candor.",
];

describe("candor run --reactive", () => {
  it(
    "runs the request as one general worker loop with every tool, with no plan, and says reactive mode",
    { timeout: 60_000 },
    async () => {
      const { r, fake } = await withFakeModel(LOOP_AND_ANSWER, ["run", "what is this project called", "--reactive"]);
      expect(r.code, r.stderr).toBe(0);
      fake.assertConsumed();
      // No planner call: the first request is the worker's, offered the general worker's whole grant.
      const first = fake.requests[0]!.body;
      expect(first.response_format).toBeUndefined();
      const offered = first.tools!.map((t) => t.function.name);
      expect(offered).toEqual(expect.arrayContaining(["read_file", "list_files", "write_report", "search_flights"]));
      expect(r.stderr).toContain("Reactive mode: no plan; one general worker runs the request");
      expect(r.stderr).toMatch(
        /reactive mode, no plan: what is this project called \[general, every tool, model-driven\]/,
      );
      expect(r.stderr).not.toMatch(/1 step\(s\)/);
      expect(r.stdout).toContain("The project is called candor.");
    },
  );

  it("is refused at once without a model: a coded error that says what to do, exit 2, no stack trace", async () => {
    const r = await runCli(["run", "what is this project called", "--reactive", "--db", freshDb(), "--json"]);
    expect(r.code).toBe(2);
    const out = JSON.parse(r.stdout) as { error: { code: string; message: string } };
    expect(out.error.code).toBe("CONFIGURATION");
    expect(out.error.message).toMatch(/^--reactive runs the request as one worker loop driven by a chat model/);
    expect(out.error.message).toContain("Pass --model <model> with OPENAI_API_KEY set");
    expect(r.stderr).not.toMatch(STACK_LINE);
  });
});

describe("candor run --model when planning fails", () => {
  it("falls back to reactive mode, says so, and the worker loop answers", { timeout: 60_000 }, async () => {
    const { r, fake } = await withFakeModel(
      [
        // The plan: not a plan, and the rules find none either. (The CLI streams model calls, so the client does not
        // refuse the answer before Candor reads it: it is asked once, not again without the schema.)
        "I would rather not make a plan.",
        ...LOOP_AND_ANSWER,
      ],
      ["run", "frobnicate the quux"],
    );
    expect(r.code, r.stderr).toBe(0);
    fake.assertConsumed();
    expect(r.stderr).toMatch(/Planning failed: .*No tool matches "frobnicate the quux".*; running in reactive mode/);
    expect(r.stderr).toContain("reactive mode, no plan: frobnicate the quux [general, every tool, model-driven]");
    // The report says it too, and why.
    expect(r.stderr + r.stdout).toMatch(/Report for reactive run plan-/);
    expect(r.stderr + r.stdout).toMatch(/Mode: reactive mode, no plan — Planning failed: .*frobnicate the quux/);
    expect(r.stdout).toContain("The project is called candor.");
  });
});
