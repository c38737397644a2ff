import type pg from "pg";
import { CandorError, ErrorCode, errorMessage } from "../errors.js";
import { storageFault } from "./storage-faults.js";

/** `postgres://…` or `postgresql://…` (any case): what `--db` and CANDOR_DB take for PostgreSQL. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location.trim());
}

/** The URL as messages show it: a password in it becomes `***` (keep it in PGPASSWORD or ~/.pgpass instead). */
export function redactUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/]*):[^@/]*@/i, "$1:***@");
}

/**
 * Turns a driver error into a coded error that says which database, what went wrong and what to do: a connection
 * lost (or a full disk) under a command is a storage fault (exit 5, resumable); anything else, and a server that
 * cannot be reached at all when first connecting, is STORAGE (the URL or the server to check).
 */
export function postgresError(url: string, e: unknown, doing: string): CandorError {
  if (CandorError.isInstance(e)) return e;
  const code = (e as { code?: unknown } | null)?.code;
  const where = redactUrl(url);
  const fault = doing === "connect" ? null : storageFault(e, where);
  if (fault) return fault;
  const fix =
    code === "42P01"
      ? `Its Candor tables do not exist: run \`candor db migrate --db ${where}\` once, then try again.`
      : code === "3D000"
        ? "That database does not exist: create it (createdb) or name another one in the URL."
        : code === "28P01" || code === "28000"
          ? "The server refused the user: check the user in the URL and the password (PGPASSWORD or ~/.pgpass)."
          : "Check the URL in --db or CANDOR_DB (postgres://user@host:port/database) and that the server is running and reachable.";
  return new CandorError(
    `Cannot ${doing} on the PostgreSQL database ${where}: ${errorMessage(e) || (typeof code === "string" ? code : "connection failed")}. ${fix}`,
    ErrorCode.STORAGE,
    { cause: e, details: { dbPath: where } },
  );
}

/**
 * Gives every connection of `pool` an "error" listener. A connection the server drops (a restart,
 * pg_terminate_backend) emits "error" on its client, and on the pool too when it was idle; an unheard "error"
 * event kills the process ("Unhandled 'error' event"), and a client checked out for a transaction (the saver's
 * writes, a lease, the queue) has no listener of its own. The query that was running, or the next one, fails with
 * the reason, and that is where the failure is reported (postgresError, storage-faults.ts).
 */
export function hearConnectionErrors(pool: pg.Pool): void {
  pool.on("error", () => undefined);
  pool.on("connect", (client) => void client.on("error", () => undefined));
}
