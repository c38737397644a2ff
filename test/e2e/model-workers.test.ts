import { describe, expect, it } from "vitest";
import { FakeOpenAIServer } from "../fakes/fake-openai-server.js";
import { perTest, runCli } from "./helpers.js";

const { freshDb } = perTest();

describe("candor run --model with a step the plan leaves open", () => {
  it(
    "marks the step model-driven in the plan view, and its worker reads the file with its own tool",
    { timeout: 60_000 },
    async () => {
      const plan = {
        objective: "Say what the project is",
        contextSummary: null,
        confidence: 0.9,
        steps: [
          {
            id: "s1",
            description: "Read the project's README and say what the project is",
            workerType: "reader",
            tools: ["read_file"],
            // The planner left the path out: the worker's model fills it in.
            paramsJson: null,
            dependsOn: [],
            expectedOutputs: ["text"],
          },
        ],
        understanding: null,
      };
      const fake = new FakeOpenAIServer([
        { json: plan },
        { toolCall: { name: "read_file", arguments: { path: "README.md" } } },
        "README.md says Candor is a planner-executor agent.",
        { json: { parts: [{ partId: "p1", answered: true, why: null }] } },
        "Candor is a planner-executor agent.",
      ]);
      const server = await fake.start();
      try {
        const r = await runCli(
          ["run", "read README.md", "--db", freshDb(), "--model", "fake-model", "--approval-threshold", "0"],
          { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.baseUrl },
        );
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toMatch(/s1\s+Read the project's README and say what the project is \[reader, model-driven\]/);
        const worker = fake.requests[1]!.body;
        expect(worker.tools!.map((t) => t.function.name)).toEqual(["read_file"]);
        expect(r.stdout).toContain("Candor is a planner-executor agent.");
        fake.assertConsumed();
      } finally {
        await server.close();
      }
    },
  );
});
