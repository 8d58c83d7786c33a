import { describe, expect, it } from "vitest";
import { EvictionPrice } from "./eviction-price";

describe("EvictionPrice", () => {
  it("prices nothing while the new tokens fit in the free cache", () => {
    const p = new EvictionPrice();
    p.observe(900, 1000);
    expect(p.evictedWorth(500, 500)).toBe(0);
    expect(p.evictedWorth(100, 10_000)).toBe(0);
  });

  it("prices the overflow at the reuse estimate", () => {
    const p = new EvictionPrice();
    p.observe(500, 1000);
    expect(p.reuse).toBeCloseTo(0.5);
    expect(p.evictedWorth(1000, 200)).toBeCloseTo(400);
    // A negative free figure (an index over its capacity) counts as none free, never as extra.
    expect(p.evictedWorth(1000, -300)).toBeCloseTo(500);
  });

  it("prices eviction at zero on a workload with no reuse", () => {
    const p = new EvictionPrice();
    for (let k = 0; k < 100; k++) p.observe(0, 2000);
    expect(p.evictedWorth(50_000, 0)).toBe(0);
  });

  it("follows the cached share as an EWMA, clamped to [0, 1], ignoring empty prompts", () => {
    const p = new EvictionPrice(0.5);
    p.observe(0, 100);
    p.observe(100, 100);
    expect(p.reuse).toBeCloseTo(0.5);
    p.observe(500, 100);
    expect(p.reuse).toBeCloseTo(0.75);
    p.observe(10, 0);
    expect(p.reuse).toBeCloseTo(0.75);
  });

  it("rejects an EWMA weight outside (0, 1]", () => {
    expect(() => new EvictionPrice(0)).toThrow(RangeError);
    expect(() => new EvictionPrice(1.5)).toThrow(RangeError);
  });
});
