import { hostname } from "node:os";
import { DEFAULT_LEASE_TIMING, keepLease, type KeptLease, type LeaseTiming } from "../memory/lease-keeper.js";
import { closing } from "./closing.js";
import { Exit, type CliIo } from "./io.js";
import { stamp } from "./render.js";
import type { Session } from "./session.js";

/**
 * Takes the thread's lease for a command that writes to it (run, resume, replay, fork), or returns the message
 * that says who holds it. `keepLease` renews it and, when it is lost or cannot be renewed, says so on stderr and
 * aborts the signal the stream runs under; the lease is released by `release`, and on process exit too (a second
 * Ctrl-C): on SQLite at once, on PostgreSQL the exit cannot wait for the network, so the lease ends when it expires.
 */
async function holdThread(
  session: Session,
  threadId: string,
  io: CliIo,
  timing: LeaseTiming = DEFAULT_LEASE_TIMING,
): Promise<KeptLease | { busy: string }> {
  const { leases } = session.persistence;
  const result = await leases.acquire(threadId, timing.ttlMs);
  if (!result.acquired) {
    const { pid, host, expiresAt } = result.heldBy;
    const where = host === hostname() ? `pid ${pid}` : `pid ${pid} on ${host}`;
    return {
      busy: `Thread ${threadId} is busy: another process (${where}) is running it and holds its lease until ${stamp(new Date(expiresAt).toISOString())} (renewed while it runs). Two writers on one thread would lose one's updates, so this command did nothing. Wait for the other process to finish and try again; a crashed process does not hold it (the lease ends with its process, a zombie included, or within ${Math.round(timing.ttlMs / 1000)} s if it ran on another machine).`,
    };
  }
  const kept = keepLease(leases, result.lease, {
    timing,
    ...(io.signal ? { signal: io.signal } : {}),
    onStop: (message) => io.err(message),
  });
  const forget = io.atExit?.(() => void kept.release());
  return {
    ...kept,
    release: async () => {
      forget?.();
      await kept.release();
    },
  };
}

/**
 * Runs `body` while holding the thread's lease, and gives the lease back however it ends. When another process
 * holds it, says so on stderr and returns `busy()` without running `body`: the command changes nothing.
 */
export async function whileHolding<T>(
  session: Session,
  threadId: string,
  io: CliIo,
  busy: () => T,
  body: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const held = await holdThread(session, threadId, io);
  if ("busy" in held) {
    io.err(held.busy);
    return busy();
  }
  try {
    return await body(held.signal);
  } finally {
    await held.release();
  }
}

/**
 * A command's whole use of a thread it writes (resume, replay, fork): the thread's lease held while `body` runs (exit
 * BUSY, saying who holds it, when another process does), and the session closed after it, a close failure never
 * hiding the body's own (see `closing`).
 */
export function inLeasedThread(
  session: Session,
  threadId: string,
  io: CliIo,
  body: (signal: AbortSignal) => Promise<Exit>,
): Promise<Exit> {
  return closing(session, () => whileHolding(session, threadId, io, () => Exit.BUSY, body), {
    where: session.persistence.dbPath,
  });
}
