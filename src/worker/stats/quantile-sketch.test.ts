import { describe, expect, it } from "vitest";
import { seededRandom } from "../../routing/seeded-random";
import { EMPTY_SKETCH, mergeSketchData, QuantileSketch, SKETCH_BIN_LIMIT } from "./quantile-sketch";

/** Exact quantile of a sorted sample (the lower of the two middle values, as DDSketch's rank rule). */
const exact = (sorted: number[], q: number) => sorted[Math.floor(q * (sorted.length - 1))]!;

describe("QuantileSketch", () => {
  it("answers within 1% relative error and survives the plain-data round trip", () => {
    const random = seededRandom(3);
    const s = new QuantileSketch();
    const values: number[] = [];
    for (let i = 0; i < 20_000; i++) {
      const v = Math.exp(random() * 9); // 1 .. ~8,100 ms, log-uniform
      values.push(v);
      s.add(v);
    }
    values.sort((a, b) => a - b);
    const back = QuantileSketch.fromData(JSON.parse(JSON.stringify(s.toData())));
    for (const q of [0.5, 0.9, 0.99]) {
      expect(Math.abs(s.quantile(q)! / exact(values, q) - 1)).toBeLessThan(0.021);
      expect(back.quantile(q)).toBe(s.quantile(q));
    }
    expect(back.count).toBe(20_000);
  });

  it("merges exactly: two halves merged answer as one sketch of everything", () => {
    const random = seededRandom(5);
    const all = new QuantileSketch();
    const a = new QuantileSketch();
    const b = new QuantileSketch();
    for (let i = 0; i < 5_000; i++) {
      const v = 10 + random() * (i % 2 === 0 ? 100 : 5_000);
      all.add(v);
      (i % 2 === 0 ? a : b).add(v);
    }
    const merged = mergeSketchData(a.toData(), b.toData());
    const m = QuantileSketch.fromData(merged);
    for (const q of [0.5, 0.9, 0.99]) expect(m.quantile(q)).toBe(all.quantile(q));
    expect(mergeSketchData(EMPTY_SKETCH, a.toData())).toEqual(a.toData());
  });

  it("keeps memory bounded whatever the spread of values", () => {
    const s = new QuantileSketch();
    for (let e = -6; e < 12; e += 0.001) s.add(10 ** e);
    s.add(Number.NaN);
    s.add(-5);
    expect(s.toData().bins.length).toBeLessThanOrEqual(SKETCH_BIN_LIMIT);
    // Clamped at the ceiling, and still a quantile (not the floor).
    expect(s.quantile(0.99)).toBeGreaterThan(0.97e8);
    expect(s.quantile(0.5)).toBeGreaterThan(1e2);
    expect(new QuantileSketch().quantile(0.5)).toBeUndefined();
  });
});
