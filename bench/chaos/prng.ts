/**
 * A tiny seeded PRNG for the chaos suite: the same seed gives the same sequence on every machine, so a run is
 * reproduced from its seed and index alone. mulberry32 is 32-bit, fast and good enough for picking test cases
 * (it is not for cryptography).
 */

/** A source of numbers in [0, 1), and the helpers every generator uses. */
export interface Rng {
  /** The next number in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** One element, chosen with the given weights (any non-negative numbers, not all zero). */
  weighted<T>(items: readonly (readonly [T, number])[]): T;
  /** `n` distinct elements (fewer when the list is shorter), in random order. */
  sample<T>(items: readonly T[], n: number): T[];
  /** A new generator whose sequence depends only on this one's seed and `label`: adding draws elsewhere never shifts it. */
  fork(label: string | number): Rng;
  readonly seed: number;
}

/** mulberry32: one 32-bit state, one multiply-xorshift round per draw. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a over a string, then mixed with `seed`: stable labels for `fork` and `deriveSeed`. */
export function hashSeed(seed: number, label: string | number): number {
  let h = (0x811c9dc5 ^ (seed >>> 0)) >>> 0;
  for (const ch of String(label)) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  // A final avalanche (murmur3's fmix32) so nearby labels give unrelated seeds.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/** The seed of run `index` of a chaos run started with `seed`. */
export function deriveSeed(seed: number, index: number): number {
  return hashSeed(seed, `run:${index}`);
}

export function createRng(seed: number): Rng {
  const next = mulberry32(seed);
  const rng: Rng = {
    seed: seed >>> 0,
    next,
    int: (min, max) => {
      if (!Number.isInteger(min) || !Number.isInteger(max) || max < min)
        throw new RangeError(`int(${min}, ${max}): need integers with min ≤ max`);
      return min + Math.floor(next() * (max - min + 1));
    },
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new RangeError("pick from an empty list");
      return items[Math.floor(next() * items.length)] as (typeof items)[number];
    },
    weighted: (items) => {
      const total = items.reduce((s, [, w]) => s + Math.max(0, w), 0);
      if (items.length === 0 || total <= 0) throw new RangeError("weighted pick needs a positive total weight");
      let r = next() * total;
      for (const [item, w] of items) {
        r -= Math.max(0, w);
        if (r < 0) return item;
      }
      return items[items.length - 1]![0];
    },
    sample: (items, n) => {
      const copy = [...items];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [copy[i], copy[j]] = [copy[j]!, copy[i]!];
      }
      return copy.slice(0, Math.max(0, n));
    },
    fork: (label) => createRng(hashSeed(seed, label)),
  };
  return rng;
}
