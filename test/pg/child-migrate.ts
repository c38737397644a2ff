/**
 * One of several processes migrating one database at the same moment (test/pg/migrate.test.ts):
 * `node --import tsx test/pg/child-migrate.ts <url>` loads everything, prints READY, waits for a line on stdin
 * (the parent sends it to every child at once), migrates, and prints the report as JSON or the error.
 */
import { createInterface } from "node:readline";
import { migrateDatabase } from "../../src/memory/persistence.js";

const [url] = process.argv.slice(2);
if (!url) {
  console.error("usage: child-migrate.ts <postgres url>");
  process.exit(2);
}
const lines = createInterface({ input: process.stdin });
console.log("READY");
await new Promise<void>((resolve) => lines.once("line", () => resolve()));
lines.close();
try {
  console.log(JSON.stringify(await migrateDatabase(url)));
} catch (e) {
  console.log(JSON.stringify({ error: e instanceof Error ? e.message : String(e) }));
  process.exitCode = 1;
}
