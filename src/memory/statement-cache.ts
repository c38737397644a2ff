import type Database from "better-sqlite3";

/** Distinct SQL texts kept prepared; the saver uses a handful, and `list` with filters a few more. */
const MAX_STATEMENTS = 64;

/**
 * The same connection, but `prepare` returns a statement already prepared for the same SQL. SqliteSaver prepares
 * its INSERTs again on every checkpoint and every task's writes (about 4% of a run in the profile); a statement
 * in better-sqlite3 is reusable as long as nobody changes its mode (`raw`, `pluck`, `expand`), which the saver
 * never does — so this is given to the saver only, not to code that might. Oldest statements are dropped first.
 */
export function withStatementCache(db: Database.Database): Database.Database {
  const cache = new Map<string, Database.Statement>();
  const prepare = (sql: string): Database.Statement => {
    const hit = cache.get(sql);
    if (hit) return hit;
    const statement = db.prepare(sql);
    if (cache.size >= MAX_STATEMENTS) cache.delete(cache.keys().next().value!);
    cache.set(sql, statement);
    return statement;
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === "prepare") return prepare;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
