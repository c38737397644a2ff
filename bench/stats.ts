/** Order statistics for the bench: medians and nearest-rank percentiles (no means: shared machines have long tails). */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))]!;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  if (s.length === 0) return Number.NaN;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  max: number;
}

export function summarize(xs: readonly number[]): Summary {
  return { n: xs.length, p50: median(xs), p95: percentile(xs, 95), max: xs.length ? Math.max(...xs) : Number.NaN };
}

/** Milliseconds with a precision that suits the size. */
export function ms(x: number): string {
  if (!Number.isFinite(x)) return "n/a";
  if (x < 0.1) return `${(x * 1000).toFixed(1)} µs`;
  if (x < 10) return `${x.toFixed(2)} ms`;
  return `${x.toFixed(0)} ms`;
}

/** Round-to-round spread of a series: (max − min) / median; 0 for a perfectly quiet machine. */
export function spread(xs: readonly number[]): number {
  const m = median(xs);
  return xs.length < 2 || !(m > 0) ? 0 : (Math.max(...xs) - Math.min(...xs)) / m;
}
