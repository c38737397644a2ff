import { migrateDatabase, type MigrationReport } from "../../memory/persistence.js";
import { Exit, type CliIo } from "../io.js";
import { CommonFlags, parseFlags, resolveDbPath } from "../options.js";

/**
 * `candor db migrate`: creates or upgrades Candor's tables in the database (--db or CANDOR_DB). PostgreSQL needs
 * it once before first use and after upgrading Candor; it is safe to repeat and to run from several machines at
 * once. On SQLite there is nothing to do beyond opening the file, which it does.
 */
export async function dbMigrateCommand(rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(CommonFlags, rawFlags);
  const location = resolveDbPath(flags.db, io.env);
  const report = await migrateDatabase(location, () =>
    io.err(`Another process is migrating this database; waiting for it to finish first.`),
  );
  if (flags.json) io.out(JSON.stringify(report, null, 2));
  else io.out(describeMigration(report));
  return Exit.COMPLETED;
}

/** One sentence on what the migration did. */
export function describeMigration(r: MigrationReport): string {
  if (r.backend === "sqlite") {
    return `SQLite database ${r.dbPath} is ready: SQLite makes Candor's tables whenever a command opens it, so there is never anything to migrate.`;
  }
  if (r.before === r.after)
    return `PostgreSQL database ${r.dbPath} is up to date (Candor schema version ${r.after}); nothing to do.`;
  const what = r.before === null ? "Created Candor's tables" : `Upgraded Candor's tables from version ${r.before}`;
  return `${what} in PostgreSQL database ${r.dbPath} (schema version ${r.after}, with LangGraph's checkpoint and store tables). Point --db or CANDOR_DB at it on every machine.`;
}
