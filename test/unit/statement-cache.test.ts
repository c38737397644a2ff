import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { withStatementCache } from "../../src/memory/statement-cache.js";

describe("withStatementCache", () => {
  it("prepares each SQL text once and still runs every statement on the same connection", () => {
    const db = new Database(":memory:");
    const prepared: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = (sql: string) => {
      prepared.push(sql);
      return prepare(sql);
    };
    const cached = withStatementCache(db);
    cached.exec("CREATE TABLE t (n INTEGER)");
    for (let i = 0; i < 5; i++) cached.prepare("INSERT INTO t VALUES (?)").run(i);
    expect(prepared).toEqual(["INSERT INTO t VALUES (?)"]);
    expect(db.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 5 });
    expect(cached.inTransaction).toBe(false);
    db.close();
  });

  it("keeps at most 64 statements, dropping the oldest", () => {
    const db = new Database(":memory:");
    const cached = withStatementCache(db);
    const first = cached.prepare("SELECT 0");
    for (let i = 1; i <= 64; i++) cached.prepare(`SELECT ${i}`);
    expect(cached.prepare("SELECT 64")).toBe(cached.prepare("SELECT 64"));
    expect(cached.prepare("SELECT 0")).not.toBe(first);
    db.close();
  });
});
