import { CandorError, ErrorCode, errorMessage } from "../errors.js";

/** `postgres://…` or `postgresql://…` (any case): what `--db` and CANDOR_DB take for PostgreSQL. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location.trim());
}

/** The URL as messages show it: a password in it becomes `***` (keep it in PGPASSWORD or ~/.pgpass instead). */
export function redactUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/]*):[^@/]*@/i, "$1:***@");
}

/** Turns a driver error into a STORAGE error that says which database, what went wrong and what to do. */
export function postgresError(url: string, e: unknown, doing: string): CandorError {
  if (CandorError.isInstance(e)) return e;
  const code = (e as { code?: unknown } | null)?.code;
  const where = redactUrl(url);
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
