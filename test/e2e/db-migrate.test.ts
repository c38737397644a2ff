import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { perTest, runCli } from "./helpers.js";

const { freshDb } = perTest();

describe("candor db migrate on SQLite", () => {
  it("opens the file, makes every Candor table, and says there is never anything else to migrate", async () => {
    const db = freshDb();
    const out = await runCli(["db", "migrate", "--db", db]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe(
      `SQLite database ${db} is ready: SQLite makes Candor's tables whenever a command opens it, so there is never anything to migrate.\n`,
    );
    const conn = new Database(db, { readonly: true });
    try {
      const tables = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((r) => (r as { name: string }).name);
      expect(tables).toEqual(
        expect.arrayContaining(["checkpoints", "writes", "candor_store", "candor_effects", "candor_leases"]),
      );
    } finally {
      conn.close();
    }
    const json = JSON.parse((await runCli(["db", "migrate", "--db", db, "--json"])).stdout);
    expect(json).toEqual({ backend: "sqlite", dbPath: db, before: null, after: null, waited: false });
  });
});
