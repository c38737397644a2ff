/**
 * Global setup of the `postgres` test project (vitest.config.ts): one throwaway PostgreSQL server for the whole
 * run, with a migrated template database that each test's database is copied from. Stopped when the run ends,
 * failed or not (and on process exit, see startThrowawayPostgres).
 */
import type { TestProject } from "vitest/node";
import { migrateDatabase } from "../../src/memory/persistence.js";
import { startThrowawayPostgres, TEMPLATE_DATABASE } from "./postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The throwaway server's `postgres` database URL. */
    candorPostgresUrl: string;
    /** Its binaries' directory (createdb). */
    candorPostgresBin: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const server = await startThrowawayPostgres();
  try {
    const template = await server.createDatabase(TEMPLATE_DATABASE);
    await migrateDatabase(template);
  } catch (e) {
    server.stop();
    throw e;
  }
  project.provide("candorPostgresUrl", server.url);
  project.provide("candorPostgresBin", server.bin);
  return () => server.stop();
}
