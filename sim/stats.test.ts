import { describe, expect, it } from "vitest";
import { mean, percentile, sortedCopy } from "./stats";

describe("percentile", () => {
  it("interpolates linearly between closest ranks", () => {
    const s = sortedCopy([4, 1, 3, 2]);
    expect(percentile(s, 0)).toBe(1);
    expect(percentile(s, 50)).toBe(2.5);
    expect(percentile(s, 100)).toBe(4);
    expect(percentile(s, 90)).toBeCloseTo(3.7, 10);
  });
  it("matches the textbook p99 of 1..100", () => {
    const s = sortedCopy(Array.from({ length: 100 }, (_, i) => 100 - i));
    expect(percentile(s, 99)).toBeCloseTo(99.01, 10);
    expect(percentile(s, 50)).toBe(50.5);
  });
  it("handles one value, empty input and bad p", () => {
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });
  it("sorts numerically, not as strings", () => {
    expect(Array.from(sortedCopy([10, 9, 100]))).toEqual([9, 10, 100]);
    expect(mean([1, 2, 3, 6])).toBe(3);
  });
});
