import { describe, expect, it } from "vitest";
import { SLICE_MS, cooperate, cooperative } from "../../src/tools/cooperate.js";

/** Keeps the thread busy for `ms`, as a synchronous unit of work (a checkpoint write, a superstep) does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    /* spin */
  }
}

/** A fresh turn of the event loop, so every test starts with an unspent slice. */
const freshTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 5));

describe("cooperate: yield points that keep the event loop responsive", () => {
  it("costs nothing while the turn's slice lasts: no promise, the caller goes on synchronously", async () => {
    await freshTurn();
    expect(cooperate()).toBeUndefined();
    busy(1);
    expect(cooperate()).toBeUndefined();
  });

  it("past the slice, hands the caller a wait that ends in a later turn", async () => {
    await freshTurn();
    expect(cooperate()).toBeUndefined();
    busy(SLICE_MS + 2);
    let laterTurn = false;
    setImmediate(() => (laterTurn = true));
    const wait = cooperate();
    expect(wait).toBeInstanceOf(Promise);
    await wait;
    expect(laterTurn).toBe(true);
  });

  it("lets a timer that fell due run before a long chain of work finishes, not after it", async () => {
    // Without yield points, 60 units of 2 ms chained on promises hold the loop for 120 ms and the timer runs last.
    await freshTurn();
    let unitsBeforeTimer = -1;
    let units = 0;
    setTimeout(() => (unitsBeforeTimer = units), 0);
    for (let i = 0; i < 60; i++) {
      busy(2);
      units++;
      const wait = cooperate();
      if (wait) await wait;
    }
    expect(unitsBeforeTimer).toBeGreaterThanOrEqual(0);
    expect(unitsBeforeTimer).toBeLessThan(60);
  });

  it("continuations that wake in a turn whose slice is spent wait again before doing any work", async () => {
    // Forty chains of work, each a unit of 3 ms between yield points: however many wake in one turn, the turn
    // runs only about a slice of units before the loop goes round (counted per turn by a heartbeat immediate).
    await freshTurn();
    const perTurn: number[] = [0];
    let running = true;
    const heartbeat = () => {
      if (!running) return;
      perTurn.push(0);
      setImmediate(heartbeat);
    };
    setImmediate(heartbeat);
    const chain = async () => {
      for (let i = 0; i < 4; i++) {
        const wait = cooperate();
        if (wait) await wait;
        busy(3);
        perTurn[perTurn.length - 1]!++;
      }
    };
    await Promise.all(Array.from({ length: 40 }, chain));
    running = false;
    // A slice of 10 ms fits four units of 3 ms (the fourth starts before the slice is spent); never all 160.
    expect(Math.max(...perTurn)).toBeLessThanOrEqual(Math.ceil(SLICE_MS / 3) + 1);
    expect(perTurn.reduce((a, b) => a + b, 0)).toBe(160);
  });

  it("cooperative(fn) starts fn at once within the slice, and after the loop has gone round once past it", async () => {
    const started: string[] = [];
    const node = cooperative(async (name: string) => {
      started.push(name);
      return name.length;
    });
    await freshTurn();
    const first = node("within");
    expect(started).toEqual(["within"]); // called synchronously: no tick was spent
    expect(await first).toBe(6);
    busy(SLICE_MS + 2);
    setImmediate(() => started.push("other work"));
    expect(await node("past")).toBe(4);
    expect(started).toEqual(["within", "other work", "past"]);
  });
});
