/**
 * Is the gateway's memory flat? Judged on what a long run shows without a
 * heap profiler:
 * - workerd's RSS over the second half of the run (the first half holds the
 *   warm-up: JIT code, the tokenizer's ranks and memo, the index filling):
 *   its least-squares slope must stay within a tolerance, in MiB per minute;
 * - the affinity index (router.indexBytes) never exceeds its own bound
 *   (capacity entries × 40 B), whatever the traffic.
 * A per-request leak at the soak's ~50 requests/s shows up as a steady slope;
 * the GC's sawtooth averages out of a least-squares fit over minutes.
 */

export interface Point {
  readonly tMs: number;
  readonly value: number;
}

/** Least-squares slope of value per minute; NaN with fewer than two distinct times. */
export function slopePerMinute(points: readonly Point[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  let st = 0;
  let sv = 0;
  for (const p of points) {
    st += p.tMs;
    sv += p.value;
  }
  const mt = st / n;
  const mv = sv / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.tMs - mt) * (p.value - mv);
    den += (p.tMs - mt) ** 2;
  }
  return den === 0 ? Number.NaN : (num / den) * 60_000;
}

/** The points at or after the midpoint of the time span. */
export function secondHalf<T extends { readonly tMs: number }>(points: readonly T[]): T[] {
  if (points.length === 0) return [];
  const mid = (points[0]!.tMs + points[points.length - 1]!.tMs) / 2;
  return points.filter((p) => p.tMs >= mid);
}

export interface MemoryInput {
  readonly tMs: number;
  readonly rssBytes?: number;
  readonly indexBytes?: number;
  readonly indexBoundBytes?: number;
}

export interface MemoryVerdict {
  readonly pass: boolean;
  /** RSS slope over the second half, MiB per minute. */
  readonly rssSlopeMiBPerMin: number;
  readonly rssSlopeToleranceMiBPerMin: number;
  /** RSS at the start of the second half and at the end, MiB. */
  readonly rssMidMiB: number;
  readonly rssEndMiB: number;
  readonly rssMaxMiB: number;
  readonly indexBytesMax: number;
  readonly indexBoundBytes: number;
  readonly indexBytesMid: number;
  readonly indexBytesEnd: number;
  readonly detail: string;
}

const MIB = 1024 * 1024;

export function judgeMemory(samples: readonly MemoryInput[], toleranceMiBPerMin: number): MemoryVerdict {
  const rss = samples.flatMap((s) =>
    s.rssBytes !== undefined ? [{ tMs: s.tMs, value: s.rssBytes / MIB }] : [],
  );
  const late = secondHalf(rss);
  const slope = slopePerMinute(late);
  const index = samples.filter((s) => s.indexBytes !== undefined);
  const lateIndex = secondHalf(index);
  const indexMax = Math.max(0, ...index.map((s) => s.indexBytes!));
  const bound = Math.max(0, ...index.map((s) => s.indexBoundBytes ?? 0));
  const rssOk = Number.isFinite(slope) && slope <= toleranceMiBPerMin;
  const indexOk = index.length > 0 && indexMax <= bound;
  const v = {
    rssSlopeMiBPerMin: slope,
    rssSlopeToleranceMiBPerMin: toleranceMiBPerMin,
    rssMidMiB: late[0]?.value ?? Number.NaN,
    rssEndMiB: late.at(-1)?.value ?? Number.NaN,
    rssMaxMiB: Math.max(...rss.map((p) => p.value)),
    indexBytesMax: indexMax,
    indexBoundBytes: bound,
    indexBytesMid: lateIndex[0]?.indexBytes ?? Number.NaN,
    indexBytesEnd: lateIndex.at(-1)?.indexBytes ?? Number.NaN,
  };
  const detail =
    `RSS slope over the second half ${slope.toFixed(2)} MiB/min (tolerance ≤ ${toleranceMiBPerMin}; ` +
    `${v.rssMidMiB.toFixed(1)} → ${v.rssEndMiB.toFixed(1)} MiB); affinity index max ${indexMax} B ` +
    `of its ${bound} B bound (${v.indexBytesMid} → ${v.indexBytesEnd} B over the second half)`;
  return { pass: rssOk && indexOk, ...v, detail };
}
