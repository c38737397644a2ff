import { inject } from "vitest";
import { createDatabaseFromTemplate } from "../fakes/postgres.js";

/**
 * Databases on the run's throwaway PostgreSQL server (test/fakes/pg-global-setup.ts): the tests in test/pg run
 * only in the `postgres` project, which starts it.
 */
export function postgresDatabase(options: { migrated?: boolean } = {}): string {
  return createDatabaseFromTemplate(inject("candorPostgresUrl"), inject("candorPostgresBin"), options);
}
