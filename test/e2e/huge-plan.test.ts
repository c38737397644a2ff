import { statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FakeOpenAIServer } from "../fakes/fake-openai-server.js";
import { perTest, runCli, STACK_LINE } from "./helpers.js";

const { freshDb } = perTest();

describe("a model's huge plan", () => {
  it("5,000 steps: refused at once with the bound named, the run goes on with the rules planner, and threads still reads the database", async () => {
    // Regression: such a plan ran for 250 s in 3.5 GB, failed with "string or blob too big", and from then on
    // `candor threads` on that database always failed.
    const steps = Array.from({ length: 5000 }, (_, i) => ({
      id: `s${i}`,
      description: `search flights, part ${i}`,
      workerType: "flight_agent",
      tools: ["search_flights"],
      paramsJson: null,
      dependsOn: i === 0 ? [] : [`s${i - 1}`],
      expectedOutputs: null,
    }));
    const plan = { objective: "a trip", contextSummary: null, confidence: 0.9, understanding: null, steps };
    // The plan, then the two calls the rest of the run makes (the answer and its review); nothing else is expected.
    const fake = new FakeOpenAIServer([{ json: plan }, "The trip is planned.", "The trip is planned."]);
    const server = await fake.start();
    const db = freshDb();
    try {
      const run = await runCli(
        [
          "run",
          "Plan a 3-day trip from Madrid to Paris for 2 people",
          "--db",
          db,
          "--model",
          "fake-model",
          "--no-input",
        ],
        { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.baseUrl },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(
        "The model's plan was rejected: The plan has 5000 steps, more than the 1,000 steps a plan may have (maxPlanSteps, the bound on steps per plan when the request's constraints.maxSteps sets none; set by CANDOR_MAX_PLAN_STEPS for the CLI, buildAgentGraph's bounds.maxPlanSteps in an app).",
      );
      expect(run.stderr).toContain("Used the rules planner instead.");
      expect(run.stderr).not.toMatch(STACK_LINE);
      fake.assertConsumed();
    } finally {
      await server.close();
    }
    // Nothing of the 5,000 steps was stored: the database stays the size of one small run.
    const wal = statSync(`${db}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    expect(statSync(db).size + wal).toBeLessThan(8 * 1024 * 1024);
    const threads = await runCli(["threads", "--db", db]);
    expect(threads.code, threads.stderr).toBe(0);
    expect(threads.stdout).toMatch(/run-[0-9a-f]{8} +completed +Plan a 3-day trip from Madrid to Paris/);
  }, 120_000);
});
