/** Process-level measurements for the execution bench: memory around a run, event-loop stalls, SQLite bytes. */
import { monitorEventLoopDelay } from "node:perf_hooks";
import v8 from "node:v8";
import vm from "node:vm";
import type Database from "better-sqlite3";

// Memory deltas mean little while garbage waits to be collected: expose V8's gc() to this process only.
v8.setFlagsFromString("--expose-gc");
const exposed: unknown = vm.runInNewContext("gc");
const gc = typeof exposed === "function" ? (exposed as () => void) : () => undefined;

const MiB = 1024 * 1024;

export interface Memory {
  /** Highest heap in use during the run, above the collected heap before it (MiB). */
  peakHeapMiB: number;
  /** Heap still in use after the run and a full collection, above the one before (MiB): what the run retained. */
  retainedHeapMiB: number;
  /** Resident set size after the run minus before it (MiB). */
  rssMiB: number;
}

/** Runs `fn`, sampling the heap every 10 ms (whenever the event loop lets the sampler run). */
export async function withMemory<T>(fn: () => Promise<T>): Promise<{ value: T; memory: Memory }> {
  gc();
  const before = process.memoryUsage();
  let peak = before.heapUsed;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 10);
  try {
    const value = await fn();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    const rss = process.memoryUsage().rss;
    gc();
    const after = process.memoryUsage();
    return {
      value,
      memory: {
        peakHeapMiB: (peak - before.heapUsed) / MiB,
        retainedHeapMiB: (after.heapUsed - before.heapUsed) / MiB,
        rssMiB: (rss - before.rss) / MiB,
      },
    };
  } finally {
    clearInterval(sampler);
  }
}

export interface Stall {
  p99Ms: number;
  maxMs: number;
}

/** Runs `fn` under perf_hooks' event-loop delay monitor: how long the loop was kept from running timers. */
export async function withStallMonitor<T>(fn: () => Promise<T>): Promise<{ value: T; stall: Stall }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  try {
    const value = await fn();
    histogram.disable();
    return { value, stall: { p99Ms: histogram.percentile(99) / 1e6, maxMs: histogram.max / 1e6 } };
  } finally {
    histogram.disable();
  }
}

export interface ThreadBytes {
  /** Checkpoint and metadata blobs plus pending-write blobs, over every namespace (subgraphs included). */
  bytes: number;
  checkpoints: number;
}

/** What a thread wrote to a SqliteSaver file, read through a separate read-only connection. */
export function threadBytes(db: Database.Database, threadId: string): ThreadBytes {
  const row = (sql: string) => db.prepare<[string], { bytes: number | null; n: number }>(sql).get(threadId);
  const checkpoints = row(
    "SELECT SUM(LENGTH(checkpoint) + LENGTH(metadata)) AS bytes, COUNT(*) AS n FROM checkpoints WHERE thread_id = ?",
  );
  const writes = row("SELECT SUM(LENGTH(value)) AS bytes, COUNT(*) AS n FROM writes WHERE thread_id = ?");
  return { bytes: (checkpoints?.bytes ?? 0) + (writes?.bytes ?? 0), checkpoints: checkpoints?.n ?? 0 };
}
