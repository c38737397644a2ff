/**
 * Why `signal` was aborted, as an Error to reject with: the reason itself when it is one (a CandorError timeout,
 * the AbortError of a bare `abort()`), else an Error carrying it, so every rejection has a message and a stack.
 */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(`Aborted: ${String(reason)}`, { cause: reason });
}

/**
 * Waits `ms` milliseconds, or rejects with `signal.reason` as soon as the signal aborts. The timer and the abort
 * listener are both removed whichever happens first, so a cancelled wait leaves nothing behind to keep the
 * process alive or to fire later.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      if (signal) reject(abortReason(signal));
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Never resolves; rejects with `signal.reason` when the signal aborts. Uses no timer at all, so a hung call costs
 * nothing but a listener, and that listener goes away with the abort.
 */
export function waitForAbort(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    signal.addEventListener("abort", () => reject(abortReason(signal)), { once: true });
  });
}
