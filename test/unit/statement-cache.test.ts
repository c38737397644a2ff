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

  it("runs a transaction: commits what it wrote, rolls back when it throws, nests with a savepoint", () => {
    const db = new Database(":memory:");
    const cached = withStatementCache(db);
    cached.exec("CREATE TABLE t (n INTEGER)");
    const insert = cached.prepare("INSERT INTO t VALUES (?)");
    const many = cached.transaction((ns: number[]) => {
      for (const n of ns) insert.run(n);
      return ns.length;
    });
    expect(many([1, 2])).toBe(2);
    expect(() =>
      cached.transaction(() => {
        insert.run(3);
        throw new Error("half-way");
      })(),
    ).toThrow("half-way");
    expect(cached.inTransaction).toBe(false);
    // The inner one fails and is undone to its savepoint; the outer one still commits what it wrote.
    cached.transaction(() => {
      insert.run(4);
      expect(() =>
        cached.transaction(() => {
          insert.run(5);
          throw new Error("inner");
        })(),
      ).toThrow("inner");
    })();
    expect(db.prepare("SELECT n FROM t ORDER BY n").pluck().all()).toEqual([1, 2, 4]);
    db.close();
  });
});
