import { describe, expect, it } from "vitest";
import { poissonArrivals, Rng, shuffle, ZipfSampler } from "./prng";

describe("Rng", () => {
  it("is a pure function of its seed", () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const c = new Rng(43);
    const xs = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(xs);
    expect(Array.from({ length: 5 }, () => c.next())).not.toEqual(xs);
  });

  it("is roughly uniform on [0, 1)", () => {
    const r = new Rng("u");
    const buckets = new Array(10).fill(0);
    for (let i = 0; i < 100_000; i++) {
      const x = r.next();
      expect(x >= 0 && x < 1).toBe(true);
      buckets[Math.floor(x * 10)]++;
    }
    for (const b of buckets) expect(Math.abs(b - 10_000)).toBeLessThan(500);
  });

  it("forks independent streams without disturbing determinism", () => {
    const a = new Rng(1).fork("x");
    const b = new Rng(1).fork("y");
    expect(a.next()).not.toBe(b.next());
    expect(new Rng(1).fork("x").next()).toBe(new Rng(1).fork("x").next());
  });
});

describe("poissonArrivals", () => {
  it("has the requested mean rate and increasing times", () => {
    const t = poissonArrivals(20_000, 10, new Rng(3));
    for (let i = 1; i < t.length; i++) expect(t[i]!).toBeGreaterThanOrEqual(t[i - 1]!);
    const rate = t.length / (t[t.length - 1]! / 1000);
    expect(rate).toBeGreaterThan(9.7);
    expect(rate).toBeLessThan(10.3);
  });
  it("rejects a non-positive rate", () => {
    expect(() => poissonArrivals(3, 0, new Rng(1))).toThrow(/rate/);
  });
});

describe("ZipfSampler", () => {
  it("puts rank k at ~1/(k+1) of rank 0 for s = 1", () => {
    const z = new ZipfSampler(100, 1);
    const r = new Rng(9);
    const counts = new Array(100).fill(0);
    for (let i = 0; i < 200_000; i++) counts[z.sample(r)]++;
    expect(counts[1] / counts[0]).toBeCloseTo(0.5, 1);
    expect(counts[3] / counts[0]).toBeCloseTo(0.25, 1);
  });
});

describe("shuffle", () => {
  it("permutes deterministically", () => {
    const a = shuffle([1, 2, 3, 4, 5, 6], new Rng(5));
    expect([...a].sort()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(shuffle([1, 2, 3, 4, 5, 6], new Rng(5))).toEqual(a);
  });
});
