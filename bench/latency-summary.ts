/**
 * Latency summaries for the e2e reports and the micro-benchmarks (one definition for both). Percentiles use the nearest-rank
 * definition (the value at rank ceil(p·n)): with a few hundred samples per arm
 * it never invents a latency that no request had, which interpolation would.
 */

export interface Summary {
  readonly count: number;
  readonly mean: number;
  readonly min: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

/** Nearest-rank percentile of an ascending-sorted array; NaN when empty. */
export function percentileSorted(sorted: readonly number[], p: number): number {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`percentile must be in [0, 1], got ${p}`);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil(p * n));
  return sorted[rank - 1]!;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  const n = sorted.length;
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: n,
    mean: n === 0 ? Number.NaN : sum / n,
    min: n === 0 ? Number.NaN : sorted[0]!,
    p50: percentileSorted(sorted, 0.5),
    p90: percentileSorted(sorted, 0.9),
    p99: percentileSorted(sorted, 0.99),
    max: n === 0 ? Number.NaN : sorted[n - 1]!,
  };
}
