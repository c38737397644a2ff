import { z } from "zod";
import { databaseMayExist, openDatabase } from "../../memory/persistence.js";
import { collectMetrics } from "../../reflection/collect-metrics.js";
import { metricsLines } from "../../reflection/metrics.js";
import { closing } from "../closing.js";
import { Exit, type CliIo } from "../io.js";
import { CommonFlags, parseFlags, resolveDbPath } from "../options.js";

const MetricsFlags = CommonFlags.extend({
  user: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_@-]{1,64}$/, "--user is 1-64 letters, digits, '_', '-' or '@'")
    .optional(),
});

/**
 * `candor metrics [--user U] [--json]`: planning, reflection, adjustment, revision and calibration figures from the
 * store and the decision log, for one user or every user.
 */
export async function metricsCommand(rawFlags: unknown, io: CliIo): Promise<Exit> {
  const flags = parseFlags(MetricsFlags, rawFlags);
  const dbPath = resolveDbPath(flags.db, io.env);
  if (!databaseMayExist(dbPath)) {
    io.err(`No metrics yet: there is no Candor database at ${dbPath}. Start with: ${io.invokedAs} run "<request>".`);
    return Exit.COMPLETED;
  }
  // Read-only: reading the figures writes nothing, and a database this user may not write is read all the same.
  const persistence = await openDatabase(dbPath, { readOnly: true });
  return closing(
    persistence,
    async () => {
      // The database's own decision log: the file beside SQLite, or the table in PostgreSQL.
      const lines = await persistence.decisions.read();
      const metrics = await collectMetrics(persistence.store, {
        ...(flags.user ? { userId: flags.user } : {}),
        decisionLog: lines ? lines.join("\n") : null,
      });
      io.out(flags.json ? JSON.stringify(metrics, null, 2) : metricsLines(metrics).join("\n"));
      return Exit.COMPLETED;
    },
    { where: persistence.dbPath },
  );
}
