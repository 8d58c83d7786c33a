import { describe, expect, it } from "vitest";
import { percentileSorted, summarize } from "./latency-summary";

describe("percentileSorted", () => {
  it("uses nearest rank", () => {
    const xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(percentileSorted(xs, 0.5)).toBe(5);
    expect(percentileSorted(xs, 0.9)).toBe(9);
    expect(percentileSorted(xs, 0.99)).toBe(10);
    expect(percentileSorted(xs, 0)).toBe(1);
    expect(percentileSorted(xs, 1)).toBe(10);
  });

  it("is NaN on no samples and rejects bad p", () => {
    expect(percentileSorted([], 0.5)).toBeNaN();
    expect(() => percentileSorted([1], 1.5)).toThrow(RangeError);
  });
});

describe("summarize", () => {
  it("sorts, drops non-finite values and reports the tail", () => {
    const xs = Array.from({ length: 100 }, (_, i) => 100 - i);
    const s = summarize([...xs, Number.NaN, Number.POSITIVE_INFINITY]);
    expect(s.count).toBe(100);
    expect(s.p50).toBe(50);
    expect(s.p90).toBe(90);
    expect(s.p99).toBe(99);
    expect(s.max).toBe(100);
    expect(s.mean).toBeCloseTo(50.5);
  });
});
