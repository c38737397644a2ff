import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { decisionLogPath, openPersistence } from "../../memory/persistence.js";
import { collectMetrics } from "../../reflection/collect-metrics.js";
import { metricsLines } from "../../reflection/metrics.js";
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
  if (!existsSync(path.resolve(dbPath))) {
    io.err(`No metrics yet: there is no Candor database at ${dbPath}. Start with: ${io.invokedAs} run "<request>".`);
    return Exit.COMPLETED;
  }
  const persistence = openPersistence(dbPath);
  try {
    const log = decisionLogPath(dbPath);
    const metrics = await collectMetrics(persistence.store, {
      ...(flags.user ? { userId: flags.user } : {}),
      decisionLog: existsSync(log) ? readFileSync(log, "utf8") : null,
    });
    io.out(flags.json ? JSON.stringify(metrics, null, 2) : metricsLines(metrics).join("\n"));
    return Exit.COMPLETED;
  } finally {
    persistence.close();
  }
}
