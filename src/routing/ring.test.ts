import { describe, expect, it } from "vitest";
import { HashRing, VNODES_PER_MEAN_WEIGHT } from "./ring";
import { seededRandom } from "./seeded-random";

function keys(count: number, seed: number): number[] {
  const random = seededRandom(seed);
  const out: number[] = [];
  for (let i = 0; i < count; i++)
    out.push(Math.floor(random() * 2 ** 32) * 2 ** 21 + Math.floor(random() * 2 ** 21));
  return out;
}

function members(n: number, prefix = "gpu-"): { id: string; weight: number }[] {
  return Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, weight: 1 }));
}

const KEYS = keys(100_000, 11);

describe("HashRing", () => {
  it("gives each backend virtual nodes in proportion to weight", () => {
    const ring = new HashRing([
      { id: "a", weight: 1 },
      { id: "b", weight: 3 },
    ]);
    expect(ring.vnodeCount(0)).toBe(Math.round(VNODES_PER_MEAN_WEIGHT * 0.5));
    expect(ring.vnodeCount(1)).toBe(Math.round(VNODES_PER_MEAN_WEIGHT * 1.5));
  });

  it.each([4, 8, 16])(
    "removing or adding one of %i backends remaps about 1/N of keys, only to/from it",
    (n) => {
      const base = members(n);
      const ring = new HashRing(base);
      const removed = new HashRing(base.slice(0, n - 1));
      const added = new HashRing([...base, { id: "gpu-new", weight: 1 }]);
      let movedOnRemove = 0;
      let movedOnAdd = 0;
      for (const k of KEYS) {
        const home = ring.primary(k);
        const afterRemove = removed.primary(k);
        if (home !== afterRemove) {
          movedOnRemove++;
          expect(home).toBe(n - 1); // only keys of the removed backend move
        }
        const afterAdd = added.primary(k);
        if (home !== afterAdd) {
          movedOnAdd++;
          expect(afterAdd).toBe(n); // moved keys go to the new backend only
        }
      }
      const fr = movedOnRemove / KEYS.length;
      const fa = movedOnAdd / KEYS.length;
      expect(fr).toBeLessThanOrEqual(2 / n);
      expect(fa).toBeLessThanOrEqual(2 / n);
      expect(fr).toBeGreaterThan(0.5 / n);
      expect(fa).toBeGreaterThan(0.5 / (n + 1));
    },
  );

  it("honours weights: each backend's share of keys within 3 points of its weight share", () => {
    const ms = [
      { id: "a", weight: 1 },
      { id: "b", weight: 2 },
      { id: "c", weight: 3 },
      { id: "d", weight: 4 },
    ];
    const ring = new HashRing(ms);
    const counts = new Array(ms.length).fill(0);
    for (const k of KEYS) counts[ring.primary(k)]++;
    ms.forEach((m, i) => {
      expect(Math.abs(counts[i] / KEYS.length - m.weight / 10)).toBeLessThan(0.03);
    });
  });

  it("probe order is a deterministic permutation starting at the ring home", () => {
    const ring = new HashRing(members(8));
    const again = new HashRing(members(8).reverse());
    for (const k of KEYS.slice(0, 500)) {
      const order = ring.order(k);
      expect([...order].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(order[0]).toBe(ring.primary(k));
      // Same fleet in another order: the same ids in the same sequence.
      const ids = [...order].map((i) => `gpu-${i}`);
      const idsAgain = [...again.order(k)].map((i) => `gpu-${7 - i}`);
      expect(idsAgain).toEqual(ids);
    }
  });

  it("probe skips rejected backends and reports rank; none accepted gives -1", () => {
    const ring = new HashRing(members(4));
    const k = KEYS[0]!;
    const order = ring.order(k);
    expect(ring.probe(k, (i) => i !== order[0])).toEqual({ index: order[1], rank: 1 });
    expect(ring.probe(k, () => false).index).toBe(-1);
  });

  it("a full home's overflow spreads over the others (rehash, not the ring successor)", () => {
    // For keys whose home is backend 0, where does the second choice go?
    const n = 8;
    const ring = new HashRing(members(n));
    const second = new Array(n).fill(0);
    let total = 0;
    for (const k of KEYS) {
      if (ring.primary(k) !== 0) continue;
      second[ring.order(k)[1]!]++;
      total++;
    }
    expect(second[0]).toBe(0);
    for (let i = 1; i < n; i++) expect(second[i] / total).toBeGreaterThan(0.5 / (n - 1));
    for (let i = 1; i < n; i++) expect(second[i] / total).toBeLessThan(2 / (n - 1));
  });
});
