import { defineConfig } from "vitest/config";

// The browser tests (npm run test:browser): their own run, after `npm test`, because they build the chat app and
// start their own servers: chat.browser.ts a `langgraphjs dev` in the repository, which the e2e suite's server must
// not share; serve.browser.ts `candor serve` on a throwaway PostgreSQL (which must be installed) with two workers.
export default defineConfig({
  test: {
    include: ["test/browser/**/*.browser.ts"],
    testTimeout: 300_000,
    hookTimeout: 900_000,
    env: { CANDOR_TEST: "1", OPENAI_API_KEY: "" },
  },
});
