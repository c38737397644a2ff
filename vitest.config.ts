import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Graph tests open real SQLite files and e2e tests spawn the CLI: give them room on a shared 2-core box.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The default model provider throws in tests so nothing reaches a network.
    env: { CANDOR_TEST: "1", OPENAI_API_KEY: "" },
  },
});
