import { hostname } from "node:os";
import { errorMessage } from "../errors.js";
import { LEASE_RENEW_MS, LEASE_TTL_MS, type Lease } from "../memory/lease.js";
import type { CliIo } from "./io.js";
import { stamp } from "./render.js";
import type { Session } from "./session.js";

/** A thread's lease held by this command, renewed in the background until `release`. */
interface HeldThread {
  /** Aborted when the user presses Ctrl-C or the lease is lost; pass it to the stream. */
  signal: AbortSignal;
  /** True when renewal found the lease taken by another process (this one stalled past the expiry). */
  lost(): boolean;
  release(): Promise<void>;
}

interface LeaseTiming {
  ttlMs: number;
  renewMs: number;
}

/**
 * Takes the thread's lease for a command that writes to it (run, resume, replay, fork), or returns the message
 * that says who holds it. Renewal runs on an unref'd timer so it never keeps the process alive; the lease is
 * released by `release`, and on process exit too (a second Ctrl-C): on SQLite at once, on PostgreSQL the exit
 * cannot wait for the network, so the lease ends when it expires.
 */
async function holdThread(
  session: Session,
  threadId: string,
  io: CliIo,
  timing: LeaseTiming = { ttlMs: LEASE_TTL_MS, renewMs: LEASE_RENEW_MS },
): Promise<HeldThread | { busy: string }> {
  const { leases } = session.persistence;
  const result = await leases.acquire(threadId, timing.ttlMs);
  if (!result.acquired) {
    const { pid, host, expiresAt } = result.heldBy;
    const where = host === hostname() ? `pid ${pid}` : `pid ${pid} on ${host}`;
    return {
      busy: `Thread ${threadId} is busy: another process (${where}) is running it and holds its lease until ${stamp(new Date(expiresAt).toISOString())} (renewed while it runs). Two writers on one thread would lose one's updates, so this command did nothing. Wait for the other process to finish and try again; a crashed process does not hold it (the lease ends with its process, a zombie included, or within ${Math.round(timing.ttlMs / 1000)} s if it ran on another machine).`,
    };
  }
  const lease: Lease = result.lease;
  const controller = new AbortController();
  let lost = false;
  let renewing = false;
  const onAbort = () => controller.abort();
  io.signal?.addEventListener("abort", onAbort, { once: true });
  if (io.signal?.aborted) controller.abort();
  const stop = (message: string) => {
    io.err(message);
    controller.abort();
  };
  const timer = setInterval(() => {
    // A renewal slower than the interval (a slow network) must not pile up behind itself.
    if (renewing) return;
    renewing = true;
    void leases
      .renew(lease, timing.ttlMs)
      .then(
        (held) => {
          if (held || lost) return;
          lost = true;
          stop(
            `Lost the lease on thread ${threadId}: another process took it after this one stalled past its expiry. Stopping at the next step boundary.`,
          );
        },
        (e: unknown) =>
          stop(
            `Could not renew the lease on thread ${threadId} (${errorMessage(e)}): another process may take the thread when it expires, so this one stops at the next step boundary.`,
          ),
      )
      .finally(() => (renewing = false));
  }, timing.renewMs);
  timer.unref();
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    clearInterval(timer);
    io.signal?.removeEventListener("abort", onAbort);
    if (!lost) await leases.release(lease);
  };
  const forget = io.atExit?.(() => void release());
  return {
    signal: controller.signal,
    lost: () => lost,
    release: async () => {
      forget?.();
      await release();
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
