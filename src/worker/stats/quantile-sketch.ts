/**
 * Latency quantiles that merge: a DDSketch (@datadog/sketches-js) with 1%
 * relative accuracy. Values are clamped to [SKETCH_MIN_MS, SKETCH_MAX_MS]
 * (1 µs .. ~28 h), so its dense store spans at most SKETCH_BIN_LIMIT bins
 * (~10 KiB) whatever the traffic. (The library's collapsing variants would
 * bound it differently but answer wrong quantiles once they collapse: a
 * test here caught p50 = p99.) Two sketches merge exactly (bin counts add),
 * which is what lets several RouterDO cells of a pool report one p99.
 *
 * Sketches cross the RPC boundary as plain data (SketchData): the library's
 * own wire form is protobuf, which the Worker does not bundle (wrangler.toml
 * aliases its lazily required protobuf runtime to a stub that throws).
 */
import { DDSketch } from "@datadog/sketches-js";

export const SKETCH_RELATIVE_ACCURACY = 0.01;
/** The range values are clamped to, ms: below it a value counts at the floor, above it at the ceiling. */
export const SKETCH_MIN_MS = 0.001;
export const SKETCH_MAX_MS = 1e8;
/** Bins the clamped range needs at 1%: log(max/min) / log(γ), γ = 1.01/0.99. */
export const SKETCH_BIN_LIMIT =
  Math.ceil(
    Math.log(SKETCH_MAX_MS / SKETCH_MIN_MS) /
      Math.log((1 + SKETCH_RELATIVE_ACCURACY) / (1 - SKETCH_RELATIVE_ACCURACY)),
  ) + 2;

/** A sketch as plain data: counts of consecutive bins from `minKey`, plus summary figures. */
export interface SketchData {
  readonly count: number;
  readonly sum: number;
  readonly min: number;
  readonly max: number;
  readonly zeroCount: number;
  readonly minKey: number;
  readonly bins: readonly number[];
}

export const EMPTY_SKETCH: SketchData = {
  count: 0,
  sum: 0,
  min: 0,
  max: 0,
  zeroCount: 0,
  minKey: 0,
  bins: [],
};

export class QuantileSketch {
  private readonly sketch = new DDSketch({ relativeAccuracy: SKETCH_RELATIVE_ACCURACY });

  get count(): number {
    return this.sketch.count;
  }

  /** Adds one value, ms (clamped to the sketch's range; NaN counts at the floor). */
  add(value: number): void {
    this.sketch.accept(value >= SKETCH_MIN_MS ? Math.min(value, SKETCH_MAX_MS) : SKETCH_MIN_MS);
  }

  /** The value at quantile q (0..1); undefined while empty. */
  quantile(q: number): number | undefined {
    return this.sketch.count === 0 ? undefined : this.sketch.getValueAtQuantile(q);
  }

  merge(other: QuantileSketch): void {
    this.sketch.merge(other.sketch);
  }

  toData(): SketchData {
    const s = this.sketch;
    const store = s.store;
    const bins: number[] = [];
    if (store.count > 0)
      for (let k = store.minKey; k <= store.maxKey; k++) bins.push(store.bins[k - store.offset] ?? 0);
    return {
      count: s.count,
      sum: s.sum,
      min: s.count > 0 ? s.min : 0,
      max: s.count > 0 ? s.max : 0,
      zeroCount: s.zeroCount,
      minKey: store.count > 0 ? store.minKey : 0,
      bins,
    };
  }

  static fromData(d: SketchData): QuantileSketch {
    const q = new QuantileSketch();
    const s = q.sketch;
    d.bins.forEach((n, i) => {
      if (n > 0) s.store.add(d.minKey + i, n);
    });
    s.zeroCount = d.zeroCount;
    s.count = d.count;
    s.sum = d.sum;
    s.min = d.count > 0 ? d.min : Number.POSITIVE_INFINITY;
    s.max = d.count > 0 ? d.max : Number.NEGATIVE_INFINITY;
    return q;
  }
}

/** Merges sketches given as plain data. */
export function mergeSketchData(a: SketchData, b: SketchData): SketchData {
  const s = QuantileSketch.fromData(a);
  s.merge(QuantileSketch.fromData(b));
  return s.toData();
}
