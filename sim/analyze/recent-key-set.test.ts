import { describe, expect, it } from "vitest";
import { Rng } from "../workloads/prng";
import { RecentKeySet } from "./recent-key-set";

/** Distinct random keys below 2^53, like block keys. */
function keys(n: number, seed: number): number[] {
  const rng = new Rng(seed);
  const out = new Set<number>();
  while (out.size < n) out.add(rng.nextU32() * 2097152 + (rng.nextU32() >>> 11));
  return [...out];
}

describe("RecentKeySet", () => {
  it("is an exact set until it holds its capacity", () => {
    const s = new RecentKeySet(64 << 20);
    expect(s.capacity).toBe(3 * (1 << 20)); // 2^22 slots × 3/4
    const added = keys(300_000, 1);
    expect(added.map((k) => s.touch(k)).filter(Boolean)).toEqual([]);
    expect(added.every((k) => s.touch(k))).toBe(true);
    expect(s.exact).toBe(true);
    expect(s.size).toBe(300_000);
    expect(keys(10_000, 2).filter((k) => s.touch(k))).toEqual([]);
    expect(s.touch(0)).toBe(false);
    expect(s.touch(0)).toBe(true);
  });

  it("past its capacity remembers at least the most recent `capacity` keys, within its memory", () => {
    const s = new RecentKeySet(1 << 20); // 2^16 slots: 49,152 keys a generation
    expect(s.capacity).toBe(49_152);
    const stream = keys(300_000, 3);
    const hot = stream.slice(0, 100);
    for (let i = 0; i < stream.length; i++) {
      s.touch(stream[i]!);
      if (i % 1000 === 0) for (const h of hot) s.touch(h); // used all along: never forgotten
    }
    expect(s.exact).toBe(false);
    expect(s.bytes).toBeLessThanOrEqual(1 << 20);
    expect(s.size).toBeLessThanOrEqual(2 * s.capacity);
    const recent = stream.slice(-s.capacity + hot.length);
    expect(recent.every((k) => s.touch(k))).toBe(true);
    expect(hot.every((k) => s.touch(k))).toBe(true);
    // Keys last used more than two generations ago are gone.
    expect(stream.slice(1000, 50_000).filter((k) => s.touch(k))).toEqual([]);
  });

  it("refuses a cap too small for its first table", () => {
    expect(() => new RecentKeySet(1000)).toThrow(/at least/);
  });
});
