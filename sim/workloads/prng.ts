/**
 * A small seeded PRNG for workloads and the simulator: sfc32 (Chris Doty-Humphrey's
 * "small fast counting" generator, public domain, passes PractRand) seeded through
 * splitmix32. Never Math.random: every workload and every simulated run is a pure
 * function of its seed.
 */

/** 32-bit string hash (FNV-1a), used to derive seeds from labels. */
export function hashString(s: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function splitmix32(state: number): [number, number] {
  const next = (state + 0x9e3779b9) | 0;
  let z = next;
  z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
  z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
  return [next, (z ^ (z >>> 15)) >>> 0];
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number | string) {
    let s = typeof seed === "string" ? hashString(seed) : seed >>> 0;
    const out: number[] = [];
    for (let i = 0; i < 4; i++) {
      const [ns, v] = splitmix32(s);
      s = ns;
      out.push(v);
    }
    [this.a, this.b, this.c, this.d] = out as [number, number, number, number];
    // Warm up: the first outputs of a counting generator are correlated with the seed.
    for (let i = 0; i < 12; i++) this.nextU32();
  }

  nextU32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform [0, 1). */
  next(): number {
    return this.nextU32() / 4294967296;
  }

  /** Uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** Exponential with the given mean (inter-arrival gaps of a Poisson process). */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  /** A bound [0, 1) source, the shape RouteContext.random expects. */
  source(): () => number {
    return () => this.next();
  }

  /** An independent stream for a named purpose, so adding draws in one place does not shift another. */
  fork(label: string): Rng {
    return new Rng(hashString(label, this.nextU32()));
  }
}

/** Fisher-Yates in place. */
export function shuffle<T>(items: T[], rng: Rng): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    const tmp = items[i]!;
    items[i] = items[j]!;
    items[j] = tmp;
  }
  return items;
}

/**
 * Sampler of ranks 0..n-1 with P(k) ∝ 1/(k+1)^s (Zipf), by inverse CDF over a
 * precomputed table (n is at most a few thousand here).
 */
export class ZipfSampler {
  private readonly cdf: Float64Array;

  constructor(
    readonly n: number,
    readonly s: number,
  ) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`zipf n must be a positive integer, got ${n}`);
    this.cdf = new Float64Array(n);
    let total = 0;
    for (let k = 0; k < n; k++) {
      total += 1 / (k + 1) ** s;
      this.cdf[k] = total;
    }
    for (let k = 0; k < n; k++) this.cdf[k]! /= total;
  }

  sample(rng: Rng): number {
    const u = rng.next();
    let lo = 0;
    let hi = this.n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cdf[mid]! > u) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** Arrival times (ms) of n requests of a Poisson process at `ratePerSec`; Infinity → all at 0. */
export function poissonArrivals(n: number, ratePerSec: number, rng: Rng): number[] {
  if (!(ratePerSec > 0)) throw new RangeError(`rate must be > 0 requests/s, got ${ratePerSec}`);
  const out = new Array<number>(n);
  let t = 0;
  const meanGapMs = 1000 / ratePerSec;
  for (let i = 0; i < n; i++) {
    if (Number.isFinite(ratePerSec)) t += rng.exponential(meanGapMs);
    out[i] = t;
  }
  return out;
}
