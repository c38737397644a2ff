import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";

/**
 * A throwaway PostgreSQL 15 server for tests: `initdb` and `pg_ctl` on a temp directory, a free port on
 * 127.0.0.1, the socket in the same directory, fsync off. As root the binaries run as the `postgres` user (the
 * server refuses to run as root). The server is stopped by `stop()`, and on process exit as a backstop, so a
 * failing test file does not leave it running.
 *
 * Whether the PostgreSQL half of the suite runs: binaries found (`pg_config --bindir`, else Debian's
 * /usr/lib/postgresql/<version>/bin) → it runs; not found → it is skipped with a message, unless CANDOR_REQUIRE_PG=1
 * (CI), where a missing PostgreSQL fails the suite. CANDOR_TEST_PG=0 skips it even when PostgreSQL is installed.
 */
export interface ThrowawayPostgres {
  /** A URL for the server's `postgres` database (trust authentication, no password). */
  url: string;
  /** The directory of the server's binaries (createdb, psql …). */
  bin: string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server at once (`pg_ctl stop -m immediate`, a crash to its clients), keeping its data. */
  down(): void;
  /** Starts it again on the same port, with the same data: `down()` then `up()` is a server restart. */
  up(): void;
  stop(): void;
}

/** Where Debian puts each major version's server binaries when `pg_config` is not installed. */
const DEBIAN_ROOT = "/usr/lib/postgresql";

/** Debian's server binary directories, newest major version first. */
function debianBinDirs(): string[] {
  if (!existsSync(DEBIAN_ROOT)) return [];
  return readdirSync(DEBIAN_ROOT)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => path.join(DEBIAN_ROOT, v, "bin"));
}

/** The directory of initdb and pg_ctl, or why there is none. */
function postgresBinaries(): { ok: true; bin: string } | { ok: false; why: string } {
  let bin: string | null;
  try {
    bin = execFileSync("pg_config", ["--bindir"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    bin = null; // pg_config missing (only the client package, or nothing): try Debian's fixed paths.
  }
  for (const dir of [bin, ...debianBinDirs()]) {
    if (dir && existsSync(path.join(dir, "initdb")) && existsSync(path.join(dir, "pg_ctl")))
      return { ok: true, bin: dir };
  }
  return {
    ok: false,
    why: `PostgreSQL server binaries not found (neither \`pg_config --bindir\` nor ${DEBIAN_ROOT}/<version>/bin has initdb and pg_ctl); install Debian's postgresql package (apt-get install -y postgresql)`,
  };
}

/** Whether this test run includes the PostgreSQL backend; throws when CANDOR_REQUIRE_PG=1 and it cannot. */
export function postgresWanted(): { run: true } | { run: false; why: string } {
  if (process.env.CANDOR_TEST_PG === "0") return { run: false, why: "CANDOR_TEST_PG=0" };
  const found = postgresBinaries();
  if (found.ok) return { run: true };
  if (process.env.CANDOR_REQUIRE_PG === "1") {
    throw new Error(`CANDOR_REQUIRE_PG=1 but ${found.why}.`);
  }
  return { run: false, why: found.why };
}

let warned = false;
/** Says once per test process that the PostgreSQL half is skipped, and why. */
export function warnPostgresSkipped(why: string): void {
  if (warned) return;
  warned = true;
  console.warn(
    `[candor tests] PostgreSQL tests skipped: ${why}. Set CANDOR_REQUIRE_PG=1 to make this an error (CI does).`,
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0;

/** Runs a PostgreSQL binary, as the `postgres` user when this process is root. */
function runAsServerUser(bin: string, args: string[]): void {
  const [command, argv] = isRoot() ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  const done = spawnSync(command, argv, { encoding: "utf8", timeout: 60_000 });
  if (done.status !== 0) {
    throw new Error(
      `${path.basename(bin)} failed (exit ${done.status}${done.error ? `, ${done.error.message}` : ""}): ${done.stderr || done.stdout}`,
    );
  }
}

function ownedByServerUser(dir: string): void {
  if (!isRoot()) return;
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
  chownSync(dir, uid, gid);
}

/** Starts a fresh server (about 1.5 s). Throws, with the server's own log, when it cannot start. */
export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const found = postgresBinaries();
  if (!found.ok) throw new Error(found.why);
  const { bin } = found;
  const dir = mkdtempSync(path.join(tmpdir(), "candor-pg-"));
  ownedByServerUser(dir);
  const data = path.join(dir, "data");
  const log = path.join(dir, "server.log");
  let stopped = false;
  let started = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    process.off("exit", stop);
    if (started) {
      try {
        runAsServerUser(path.join(bin, "pg_ctl"), ["stop", "-D", data, "-m", "immediate", "-w"]);
      } catch (e) {
        console.warn(`[candor tests] could not stop the throwaway PostgreSQL in ${dir}: ${String(e)}`);
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.on("exit", stop);
  try {
    runAsServerUser(path.join(bin, "initdb"), [
      "-D",
      data,
      "-U",
      "postgres",
      "--auth=trust",
      "--no-sync",
      "--encoding=UTF8",
      "--locale=C",
    ]);
    let port = 0;
    // Another process may take the free port between the probe and the server's bind: try a few.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
      try {
        runAsServerUser(path.join(bin, "pg_ctl"), ["start", "-D", data, "-l", log, "-w", "-t", "60", "-o", options]);
        started = true;
        break;
      } catch (e) {
        if (attempt >= 3) throw e;
      }
    }
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
    return {
      url,
      bin,
      stop,
      down() {
        runAsServerUser(path.join(bin, "pg_ctl"), ["stop", "-D", data, "-m", "immediate", "-w"]);
      },
      up() {
        runAsServerUser(path.join(bin, "pg_ctl"), ["start", "-D", data, "-l", log, "-w", "-t", "60", "-o", options]);
      },
      async createDatabase(name = `candor_${randomBytes(4).toString("hex")}`) {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          await client.query(`CREATE DATABASE "${name}"`);
        } finally {
          await client.end();
        }
        return `postgres://postgres@127.0.0.1:${port}/${name}`;
      },
    };
  } catch (e) {
    const serverLog = existsSync(log) ? readFileSync(log, "utf8").slice(-2000) : "";
    stop();
    throw new Error(
      `Could not start a throwaway PostgreSQL: ${String(e)}${serverLog ? `\nserver log:\n${serverLog}` : ""}`,
      { cause: e },
    );
  }
}

/** The database every test database is copied from: migrated once, so a test's database is ready at once. */
export const TEMPLATE_DATABASE = "candor_template";

/**
 * A new database on the throwaway server, made synchronously with the `createdb` client (~50 ms), so that
 * synchronous test helpers (`tempDir`) can hand out PostgreSQL databases as they hand out SQLite files. By default
 * it is a copy of the migrated template (ready for Candor at once); `{ migrated: false }` gives an empty one.
 */
export function createDatabaseFromTemplate(serverUrl: string, bin: string, { migrated = true } = {}): string {
  const url = new URL(serverUrl);
  const name = `candor_${randomBytes(6).toString("hex")}`;
  execFileSync(
    path.join(bin, "createdb"),
    ["-h", url.hostname, "-p", url.port, "-U", url.username, ...(migrated ? ["-T", TEMPLATE_DATABASE] : []), name],
    { stdio: ["ignore", "ignore", "pipe"], timeout: 30_000 },
  );
  return `postgres://${url.username}@${url.hostname}:${url.port}/${name}`;
}
