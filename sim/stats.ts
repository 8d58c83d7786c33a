/**
 * Percentiles by linear interpolation between closest ranks (NumPy's default,
 * "linear", Hyndman & Fan type 7): p50 of [1, 2, 3, 4] is 2.5. Empty → NaN.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be in [0, 100], got ${p}`);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const h = (n - 1) * (p / 100);
  const lo = Math.floor(h);
  const hi = Math.min(n - 1, lo + 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

/** A sorted copy as a Float64Array (numeric sort, not lexicographic). */
export function sortedCopy(values: ArrayLike<number>): Float64Array {
  return Float64Array.from(values).sort();
}

export function mean(values: ArrayLike<number>): number {
  if (values.length === 0) return Number.NaN;
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i]!;
  return s / values.length;
}
