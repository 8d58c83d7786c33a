import { describe, expect, it } from "vitest";
import { blockKeysFromIds, chainSeed } from "../prefix/block-keys";
import { LruBlockSet } from "./lru-block-set";
import { seededRandom } from "./seeded-random";

describe("LruBlockSet", () => {
  it("evicts the least recently touched block when full", () => {
    const s = new LruBlockSet(3);
    s.touchChain([1], 1);
    s.touchChain([2], 1);
    s.touchChain([3], 1);
    s.touchChain([1], 1); // 1 is fresh again; 2 is now the oldest
    s.touchChain([4], 1);
    expect([1, 2, 3, 4].map((k) => s.has(k))).toEqual([true, false, true, true]);
    expect(s.size).toBe(3);
  });

  it("touches a chain tail first: the head block ends up most recent", () => {
    const s = new LruBlockSet(10);
    const first = s.touchChain([10, 11, 12, 13], 4);
    expect(s.stampOf(13)).toBe(first);
    expect(s.stampOf(10)).toBe(first + 3);
    const prev = new Float64Array(2);
    s.touchChain([10, 11, 12, 13, 14], 5, prev);
    expect([...prev]).toEqual([first + 3, first + 2]);
  });

  it("keeps stamps, order and membership across growth", () => {
    const s = new LruBlockSet(5000);
    for (let k = 0; k < 5000; k++) s.touchChain([k * 7919], 1);
    for (let k = 0; k < 5000; k++) expect(s.stampOf(k * 7919)).toBe(k + 1);
    s.touchChain([123_456_789], 1);
    expect(s.has(0)).toBe(false); // the oldest went
    expect(s.has(7919)).toBe(true);
  });

  it("stays prefix-closed under eviction, so binary search finds the longest cached prefix", () => {
    const random = seededRandom(5);
    const seed = chainSeed("m");
    // A tree of prefixes: 20 roots × branching conversations, in a set far smaller than the traffic.
    const chains: number[][] = [];
    for (let c = 0; c < 300; c++) {
      const root = Math.floor(random() * 20);
      const ids = [root, root + 1, root + 2];
      const len = 3 + Math.floor(random() * 60);
      for (let j = 3; j < len; j++) ids.push(j < 10 ? root * 100 + j : c * 1000 + j);
      chains.push(blockKeysFromIds(ids, seed));
    }
    const s = new LruBlockSet(700);
    const failures: string[] = [];
    let partial = 0;
    for (let step = 0; step < 3000; step++) {
      const chain = chains[Math.floor(random() * chains.length)]!;
      s.touchChain(chain, chain.length);
      if (step % 37 === 0) s.evictThrough(s.nextStamp - 400);
      if (step % 5 !== 0) continue;
      for (let c = 0; c < chains.length; c += 5) {
        const blocks = chains[c]!;
        let linear = 0;
        while (linear < blocks.length && s.has(blocks[linear]!)) linear++;
        if (linear > 0 && linear < blocks.length) partial++;
        for (let j = linear; j < blocks.length; j++)
          if (s.has(blocks[j]!))
            failures.push(`step ${step} chain ${c}: block ${j} held past a gap at ${linear}`);
        if (s.longestPrefix(blocks) !== linear)
          failures.push(`step ${step} chain ${c}: binary search disagrees`);
      }
    }
    expect(failures).toEqual([]);
    expect(partial).toBeGreaterThan(100); // eviction really did cut chains part-way
  });

  it("evictThrough drops exactly the entries at least as old as a stamp", () => {
    const s = new LruBlockSet(100);
    for (let k = 1; k <= 10; k++) s.touchChain([k], 1);
    expect(s.evictThrough(s.stampOf(4))).toBe(4);
    expect([1, 4, 5, 10].map((k) => s.has(k))).toEqual([false, false, true, true]);
  });

  it("removeIfStamp removes only an entry nobody touched since", () => {
    const s = new LruBlockSet(10);
    s.touchChain([1, 2], 2);
    const stamp = s.stampOf(2);
    s.touchChain([2], 1);
    expect(s.removeIfStamp(2, stamp)).toBe(false);
    expect(s.removeIfStamp(1, s.stampOf(1))).toBe(true);
    expect(s.has(1)).toBe(false);
  });

  it("shrinking the capacity keeps the most recent entries in order", () => {
    const s = new LruBlockSet(1000);
    for (let k = 1; k <= 1000; k++) s.touchChain([k], 1);
    s.setCapacity(10);
    expect(s.size).toBe(10);
    expect(s.has(991)).toBe(true);
    expect(s.has(990)).toBe(false);
    s.touchChain([5000], 1);
    expect(s.has(991)).toBe(false);
    expect(s.bytes()).toBeLessThan(2000);
  });

  it("holds 1 M blocks over 16 backends in under 64 MB (~32-36 bytes per block)", () => {
    const sets = Array.from({ length: 16 }, () => new LruBlockSet(62_500));
    const random = seededRandom(9);
    for (const s of sets) {
      const chain: number[] = [];
      for (let k = 0; k < 70_000; k++) chain.push(Math.floor(random() * 2 ** 53));
      s.touchChain(chain, chain.length);
    }
    const blocks = sets.reduce((a, s) => a + s.size, 0);
    const bytes = sets.reduce((a, s) => a + s.bytes(), 0);
    expect(blocks).toBe(1_000_000);
    expect(bytes).toBeLessThan(64 * 2 ** 20);
    expect(bytes / blocks).toBeLessThan(40);
  });
});

describe("LruBlockSet anonymous entries and reserved capacity", () => {
  it("an anonymous entry takes capacity and ages like any entry, but no key finds it", () => {
    const s = new LruBlockSet(4);
    s.touchChain([1, 2], 2);
    expect(s.occupy(2)).toBe(2);
    expect(s.size).toBe(4);
    expect(s.anonymous).toBe(2);
    expect(s.longestPrefix([1, 2])).toBe(2);
    s.touchChain([3], 1); // full: the oldest (block 2, touched first) goes
    expect([1, 2, 3].map((k) => s.has(k))).toEqual([true, false, true]);
    s.touchChain([4, 5], 2); // then block 1 and the older anonymous entry
    expect(s.anonymous).toBe(1);
    expect(s.has(1)).toBe(false);
    expect(s.occupy(10)).toBe(4); // at most the capacity
    expect(s.anonymous).toBe(4);
    expect(s.size).toBe(4);
    expect([3, 4, 5].some((k) => s.has(k))).toBe(false);
  });

  it("keeps anonymous entries through eviction by stamp and through a capacity change", () => {
    const s = new LruBlockSet(100);
    s.occupy(3);
    const t = s.touchChain([7, 8], 2);
    s.occupy(2);
    expect(s.evictThrough(t - 1)).toBe(3); // the three anonymous entries older than the chain
    expect(s.anonymous).toBe(2);
    s.setCapacity(3); // keeps the three most recent: both anonymous entries and block 7
    expect(s.anonymous).toBe(2);
    expect([7, 8].map((k) => s.has(k))).toEqual([true, false]);
    s.touchChain([9], 1); // full again: block 7 is now the least recent
    expect(s.has(7)).toBe(false);
    expect(s.anonymous).toBe(2);
    expect(() => s.occupy(-1)).toThrow(/occupy/);
  });

  it("reserved capacity shrinks what the entries may fill, evicting the least recent, and comes back", () => {
    const s = new LruBlockSet(5);
    s.touchChain([1, 2, 3, 4, 5], 5);
    s.reserve(2);
    expect(s.reserved).toBe(2);
    expect(s.size).toBe(3);
    expect([1, 2, 3, 4, 5].map((k) => s.has(k))).toEqual([true, true, true, false, false]);
    s.touchChain([6], 1);
    expect(s.size).toBe(3);
    expect(s.has(3)).toBe(false);
    s.reserve(-2);
    s.touchChain([7, 8], 2);
    expect(s.size).toBe(5);
    // Never below one entry, and never a negative reservation.
    s.reserve(50);
    expect(s.size).toBe(1);
    s.reserve(-80);
    expect(s.reserved).toBe(0);
    expect(() => s.reserve(0.5)).toThrow(/reserve/);
  });

  it("shrinking the capacity under a reservation keeps the list in stamp order", () => {
    const s = new LruBlockSet(200);
    const keys = Array.from({ length: 200 }, (_, i) => i + 1);
    for (const k of keys) s.touchChain([k], 1);
    s.pin([60], 1, 1);
    s.reserve(50);
    s.setCapacity(150);
    expect(s.size).toBe(100);
    // Eviction by stamp walks from the least recent: it must reach every entry at least that old.
    const stamps = keys
      .filter((k) => s.has(k))
      .map((k) => s.stampOf(k))
      .sort((a, b) => a - b);
    const t = stamps[79]!;
    expect(s.evictThrough(t)).toBe(80);
    expect(s.size).toBe(20);
  });
});

describe("LruBlockSet pinned entries", () => {
  it("a pinned entry is not evicted to make room; unpinned, it ages again from where it stands", () => {
    const s = new LruBlockSet(3);
    s.touchChain([1], 1);
    s.touchChain([2], 1);
    s.touchChain([3], 1);
    s.pin([1], 1, 1); // the least recent, pinned (a request still in flight holds it)
    s.touchChain([4], 1);
    expect([1, 2, 3, 4].map((k) => s.has(k))).toEqual([true, false, true, true]);
    expect(s.pinsOf(1)).toBe(1);
    s.pin([1], 1, -1);
    s.pin([1], 1, -1); // never below 0
    expect(s.pinsOf(1)).toBe(0);
    s.touchChain([5], 1); // 3 is now the least recent (1 was moved to the head when spared)
    s.touchChain([6], 1);
    expect([1, 3, 4].map((k) => s.has(k))).toEqual([false, false, true]);
  });

  it("when every entry is pinned the least recent goes anyway, and a reservation spares pinned entries too", () => {
    const s = new LruBlockSet(2);
    s.touchChain([1, 2], 2);
    s.pin([1, 2], 2, 1);
    s.touchChain([3], 1);
    expect(s.size).toBe(2);
    expect(s.has(3)).toBe(true);
    const r = new LruBlockSet(4);
    r.touchChain([1, 2, 3, 4], 4); // 4 least recent
    r.pin([4], 1, 1);
    r.reserve(1);
    expect([1, 2, 3, 4].map((k) => r.has(k))).toEqual([true, true, false, true]);
    r.setCapacity(2); // a capacity change keeps pin counts
    expect(r.pinsOf(4)).toBe(1);
  });
});

describe("LruBlockSet with every entry pinned", () => {
  it("evicts the least recent at once, in linear time over many inserts", () => {
    const n = 20_000;
    const s = new LruBlockSet(n);
    const keys = Array.from({ length: n }, (_, k) => k + 1);
    s.touchChain(keys, n);
    s.pin(keys, n, 1); // requests in flight fill the whole index and never end
    const t0 = performance.now();
    for (let k = 0; k < n; k++) {
      s.touchChain([n + 1 + k], 1);
      s.pin([n + 1 + k], 1, 1);
    }
    expect(s.size).toBe(n);
    expect(s.has(1)).toBe(false);
    expect(s.has(2 * n)).toBe(true);
    // Quadratic (every insert walking the pinned list) took minutes here; linear takes milliseconds.
    expect(performance.now() - t0).toBeLessThan(5000);
  });
});

describe("LruBlockSet chain walks that reuse the previous walk's nodes", () => {
  // touchAndPinChain, unpinChain (with the nodes a pin found, stale by then) and retouchChain must equal
  // touchChain + pin, pin(-1) and touchChain in every effect:
  // the index's decisions rest on it. Two sets take the same random operations, one through the plain
  // calls, one through the fused ones; small capacities force eviction, node reuse and sparing, and the
  // key space includes 0 (the key of a never-used node) and repeated keys within a chain.
  function randomChain(rnd: () => number, universe: number): number[] {
    const len = 1 + Math.floor(rnd() * 12);
    return Array.from({ length: len }, () => Math.floor(rnd() * universe));
  }

  function snapshot(set: LruBlockSet, universe: number): string {
    const rows: string[] = [`${set.size}/${set.anonymous}/${set.reserved}/${set.nextStamp}`];
    for (let k = 0; k < universe; k++) rows.push(`${k}:${set.stampOf(k)}:${set.pinsOf(k)}`);
    return rows.join(" ");
  }

  for (const capacity of [3, 8, 20]) {
    it(`matches the plain calls step by step (capacity ${capacity})`, () => {
      const rnd = seededRandom(capacity);
      const universe = 30;
      const plain = new LruBlockSet(capacity);
      const fused = new LruBlockSet(capacity);
      const inflight: { chain: number[]; hints: Int32Array }[] = [];
      for (let step = 0; step < 3000; step++) {
        const r = rnd();
        if (r < 0.45 || inflight.length === 0) {
          const chain = randomChain(rnd, universe);
          const prevA = new Float64Array(Math.floor(rnd() * chain.length));
          const prevB = new Float64Array(prevA.length);
          expect(fused.touchAndPinChain(chain, chain.length, prevB)).toBe(
            plain.touchChain(chain, chain.length, prevA),
          );
          plain.pin(chain, chain.length, 1);
          expect(Array.from(prevB)).toEqual(Array.from(prevA));
          inflight.push({ chain, hints: fused.chainNodesOf(chain.length) });
        } else if (r < 0.9) {
          const { chain, hints } = inflight.splice(Math.floor(rnd() * inflight.length), 1)[0]!;
          const between = rnd();
          const anon = between < 0.3 ? Math.floor(rnd() * 4) : 0;
          const stamp = between > 0.85 ? plain.nextStamp - 1 - Math.floor(rnd() * 20) : -1;
          plain.pin(chain, chain.length, -1);
          fused.unpinChain(chain, chain.length, hints);
          for (const set of [plain, fused]) {
            if (stamp >= 0) set.evictThrough(stamp);
            set.occupy(anon);
          }
          expect(fused.retouchChain(chain, chain.length)).toBe(plain.touchChain(chain, chain.length));
        } else {
          // Other walks in between: the fused set's remembered nodes are stale, and must not matter.
          const other = randomChain(rnd, universe);
          for (const set of [plain, fused]) set.touchChain(other, other.length);
          const d = rnd() < 0.5 ? 1 : -1;
          for (const set of [plain, fused]) set.reserve(d);
        }
        expect(snapshot(fused, universe)).toBe(snapshot(plain, universe));
      }
    });
  }
});
