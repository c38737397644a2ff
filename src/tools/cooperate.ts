/**
 * Keeping the event loop responsive when many runs share one process.
 *
 * Every step's continuation (a tool returns → the result is recorded → LangGraph saves the task's writes → the
 * next steps start) is a chain of promises: once a timer or a socket wakes it, it runs to its next real wait
 * without letting the loop serve anything else. One chain is a millisecond or two; but with a hundred threads in
 * one process, the tools' timers that expired during one long turn are all served in the next turn, back to back,
 * so the turn grows with the load and every timer, socket and stream in the process waits behind it (measured
 * before this: turns of 300–700 ms with 100 threads of 12 steps; bare LangGraph of the same shape stalls the same
 * way). `cooperate()` is a yield point: within a turn's first SLICE_MS it costs nothing (no promise, no tick); past
 * it, the caller waits for a later turn (setImmediate), so the loop runs timers and I/O first. A continuation that
 * resumes while the new turn's slice is already spent waits again before doing any work, so a turn does at most
 * one slice of work plus one unit between yield points, however many continuations are waiting.
 */

/** How much work one turn of the event loop may do before callers yield (ms). */
export const SLICE_MS = 10;

let sliceStart = 0;
/** A reset is queued: the current turn's slice is running. Cleared when the queued reset runs (a later phase). */
let turnOpen = false;

function openTurn(now: number): void {
  sliceStart = now;
  turnOpen = true;
  // setImmediate runs after this turn's I/O and timers phases: the next caller after it starts a new slice.
  setImmediate(() => {
    turnOpen = false;
  });
}

function spent(): boolean {
  const now = performance.now();
  if (!turnOpen) {
    openTurn(now);
    return false;
  }
  return now - sliceStart >= SLICE_MS;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Undefined when this turn may go on (the caller continues synchronously: `const wait = cooperate(); if (wait)
 * await wait;`), else a promise that resolves in a later turn that still has time for the caller.
 */
export function cooperate(): Promise<void> | undefined {
  if (!spent()) return undefined;
  return (async () => {
    do await nextTurn();
    while (spent());
  })();
}

/** `fn` behind a yield point: a graph node that starts only when the turn still has time for it. */
export function cooperative<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A) => {
    const wait = cooperate();
    if (wait) await wait;
    return fn(...args);
  };
}
