import { configDefaults, defineConfig } from "vitest/config";
import { postgresWanted, warnPostgresSkipped } from "./test/fakes/postgres.js";

// Graph tests open real databases and e2e tests spawn the CLI: give them room on a shared 2-core box. The default
// model provider throws in tests so nothing reaches a network.
const shared = { testTimeout: 60_000, hookTimeout: 60_000, env: { CANDOR_TEST: "1", OPENAI_API_KEY: "" } };

/**
 * The graph suite's key tests (happy path, recovery, approval and resume, crash-resume at most once, restart,
 * replay and fork) run a second time on PostgreSQL, beside the tests only PostgreSQL has (test/pg). Only the
 * `sqlite` project runs when PostgreSQL is not installed (or CANDOR_TEST_PG=0); with CANDOR_REQUIRE_PG=1 (CI) a
 * missing PostgreSQL fails the run instead. `npx vitest run --project sqlite` runs only the SQLite part.
 */
const ON_POSTGRES = [
  "test/graph/happy-path.test.ts",
  "test/graph/recovery.test.ts",
  "test/graph/approval.test.ts",
  "test/graph/effects.test.ts",
  "test/graph/restart.test.ts",
  "test/graph/replay-fork.test.ts",
  "test/graph/debugging-tools.test.ts",
  "test/pg/**/*.test.ts",
];

/**
 * Imports of the package by its own name (examples/embed imports "candor") resolve to the TypeScript source, as
 * tsconfig.json's customConditions do for the typecheck, so the suite needs no build. The rest are Vite's default
 * conditions for code run on the server. Each project sets it: a project does not inherit the root's config.
 */
const fromSource = { ssr: { resolve: { conditions: ["candor-source", "module", "node", "development|production"] } } };

const postgres = postgresWanted();
if (!postgres.run) warnPostgresSkipped(postgres.why);

export default defineConfig({
  test: {
    ...shared,
    projects: [
      {
        ...fromSource,
        test: {
          ...shared,
          name: "sqlite",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/pg/**"],
        },
      },
      ...(postgres.run
        ? [
            {
              ...fromSource,
              test: {
                ...shared,
                name: "postgres",
                include: ON_POSTGRES,
                globalSetup: ["test/fakes/pg-global-setup.ts"],
                env: { ...shared.env, CANDOR_TEST_BACKEND: "postgres" },
              },
            },
          ]
        : []),
    ],
  },
});
