import { acquireLease, LEASE_RENEW_MS, LEASE_TTL_MS, releaseLease, renewLease, type Lease } from "../memory/lease.js";
import type { CliIo } from "./io.js";
import { stamp } from "./render.js";
import type { Session } from "./session.js";

/** A thread's lease held by this command, renewed in the background until `release`. */
interface HeldThread {
  /** Aborted when the user presses Ctrl-C or the lease is lost; pass it to the stream. */
  signal: AbortSignal;
  /** True when renewal found the lease taken by another process (this one stalled past the expiry). */
  lost(): boolean;
  release(): void;
}

interface LeaseTiming {
  ttlMs: number;
  renewMs: number;
}

/**
 * Takes the thread's lease for a command that writes to it (run, resume, replay, fork), or returns the message
 * that says who holds it. Renewal runs on an unref'd timer so it never keeps the process alive; the lease is
 * released by `release`, and on process exit too (a second Ctrl-C).
 */
function holdThread(
  session: Session,
  threadId: string,
  io: CliIo,
  timing: LeaseTiming = { ttlMs: LEASE_TTL_MS, renewMs: LEASE_RENEW_MS },
): HeldThread | { busy: string } {
  const db = session.persistence.store.db;
  const result = acquireLease(db, threadId, timing.ttlMs);
  if (!result.acquired) {
    const { pid, expiresAt } = result.heldBy;
    return {
      busy: `Thread ${threadId} is busy: another process (pid ${pid}) is running it and holds its lease until ${stamp(new Date(expiresAt).toISOString())} (renewed while it runs). Two writers on one thread would lose one's updates, so this command did nothing. Wait for the other process to finish and try again; a crashed process does not hold it (the lease ends with its process, a zombie included, or within ${Math.round(timing.ttlMs / 1000)} s if it ran on another machine).`,
    };
  }
  const lease: Lease = result.lease;
  const controller = new AbortController();
  let lost = false;
  const onAbort = () => controller.abort();
  io.signal?.addEventListener("abort", onAbort, { once: true });
  if (io.signal?.aborted) controller.abort();
  const timer = setInterval(() => {
    if (!db.open || renewLease(db, lease, timing.ttlMs)) return;
    lost = true;
    io.err(
      `Lost the lease on thread ${threadId}: another process took it after this one stalled past its expiry. Stopping at the next step boundary.`,
    );
    controller.abort();
  }, timing.renewMs);
  timer.unref();
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    clearInterval(timer);
    io.signal?.removeEventListener("abort", onAbort);
    if (!lost && db.open) releaseLease(db, lease);
  };
  const forget = io.atExit?.(release);
  return {
    signal: controller.signal,
    lost: () => lost,
    release: () => {
      release();
      forget?.();
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
  const held = holdThread(session, threadId, io);
  if ("busy" in held) {
    io.err(held.busy);
    return busy();
  }
  try {
    return await body(held.signal);
  } finally {
    held.release();
  }
}
