import { errorMessage } from "../errors.js";
import { LEASE_RENEW_MS, LEASE_TTL_MS, type Lease, type ThreadLeases } from "./lease.js";

/** How long a lease lasts, and how often it is renewed while it is held. */
export interface LeaseTiming {
  ttlMs: number;
  renewMs: number;
}

export const DEFAULT_LEASE_TIMING: LeaseTiming = { ttlMs: LEASE_TTL_MS, renewMs: LEASE_RENEW_MS };

/** A lease held and renewed in the background until `release`. */
export interface KeptLease {
  /** Aborted when the lease is lost or cannot be renewed (its reason is the message), or when `options.signal` is. */
  signal: AbortSignal;
  /** True when a renewal found the lease taken by another process (this one stalled past the expiry). */
  lost(): boolean;
  /** Stops renewing and gives the lease back (unless it was lost: then it is someone else's). Safe to call twice. */
  release(): Promise<void>;
}

export interface KeepOptions {
  timing?: LeaseTiming;
  /** Aborts the kept lease's signal too (Ctrl-C, a client that went away). */
  signal?: AbortSignal;
  /**
   * Told once, in a sentence, why the holder must stop writing: the lease was lost or could not be renewed. The
   * holder stops at its next step boundary, as `signal` is aborted at the same time.
   */
  onStop(message: string): void;
}

/**
 * Keeps a lease this process acquired: renews it on an unref'd timer (so it never keeps the process alive), and when
 * a renewal says the lease is gone, or fails, says so through `onStop` and aborts `signal`. Every writer of a thread
 * (the CLI's commands, workers, `candor serve`) keeps its lease through this one function, so none of them can go on
 * writing a thread another process has taken without being told.
 */
export function keepLease(leases: ThreadLeases, lease: Lease, options: KeepOptions): KeptLease {
  const timing = options.timing ?? DEFAULT_LEASE_TIMING;
  const controller = new AbortController();
  let lost = false;
  let stopped = false;
  let renewing = false;
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const stop = (message: string) => {
    if (stopped) return;
    stopped = true;
    options.onStop(message);
    controller.abort(new Error(message));
  };
  const threadId = lease.threadId;
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
  return {
    signal: controller.signal,
    lost: () => lost,
    release: async () => {
      if (released) return;
      released = true;
      clearInterval(timer);
      options.signal?.removeEventListener("abort", onAbort);
      if (!lost) await leases.release(lease);
    },
  };
}
