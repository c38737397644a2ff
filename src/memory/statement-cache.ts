import type Database from "better-sqlite3";

/** Distinct SQL texts kept prepared; the saver uses a handful, and `list` with filters a few more. */
const MAX_STATEMENTS = 64;

/**
 * The same connection, but `prepare` returns a statement already prepared for the same SQL. SqliteSaver prepares
 * its INSERTs again on every checkpoint and every task's writes (about 4% of a run in the profile); a statement
 * in better-sqlite3 is reusable as long as nobody changes its mode (`raw`, `pluck`, `expand`), which the saver
 * never does — so this is given to the saver only, not to code that might. Oldest statements are dropped first.
 *
 * `transaction(fn)` is also cheaper: better-sqlite3 builds four wrapped functions and their properties for every
 * call, and the saver calls it once per task's writes; outside a transaction this runs BEGIN, `fn`, COMMIT (or
 * ROLLBACK when `fn` throws) with statements prepared once. Inside one (a nested call) it is better-sqlite3's own,
 * which uses a savepoint. Methods are bound once, not on every property read.
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
  let control: { begin: Database.Statement; commit: Database.Statement; rollback: Database.Statement } | null = null;
  const transaction = (fn: (...args: unknown[]) => unknown) =>
    ((...args: unknown[]) => {
      if (db.inTransaction) return db.transaction(fn)(...args);
      control ??= { begin: db.prepare("BEGIN"), commit: db.prepare("COMMIT"), rollback: db.prepare("ROLLBACK") };
      control.begin.run();
      try {
        const result = fn(...args);
        if (typeof (result as { then?: unknown } | null)?.then === "function") {
          throw new TypeError("Transaction function cannot return a promise");
        }
        control.commit.run();
        return result;
      } catch (e) {
        if (db.inTransaction) control.rollback.run();
        throw e;
      }
    }) as unknown as Database.Transaction<typeof fn>;
  const bound = new Map<PropertyKey, unknown>([
    ["prepare", prepare],
    ["transaction", transaction],
  ]);
  return new Proxy(db, {
    get(target, property) {
      const hit = bound.get(property);
      if (hit !== undefined) return hit;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      const method = (value as (...args: unknown[]) => unknown).bind(target);
      bound.set(property, method);
      return method;
    },
  });
}
