import { defineConfig } from "vitest/config";

// The browser test (npm run test:browser): its own run, after `npm test`, because it builds the chat app and starts
// its own `langgraphjs dev` in the repository, which the e2e suite's server must not share.
export default defineConfig({
  test: {
    include: ["test/browser/**/*.browser.ts"],
    testTimeout: 300_000,
    hookTimeout: 900_000,
    env: { CANDOR_TEST: "1", OPENAI_API_KEY: "" },
  },
});
