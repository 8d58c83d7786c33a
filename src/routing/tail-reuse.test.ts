import { describe, expect, it } from "vitest";
import { BackendAffinity } from "./affinity-index";
import { LruBlockSet } from "./lru-block-set";
import { ghostCapacity, TailReuse } from "./tail-reuse";

/** A chain of n distinct keys starting at `base`. */
function chain(base: number, n: number): number[] {
  return Array.from({ length: n }, (_, j) => base + j);
}

const BT = 16;

/** Routes `keys` to `a` and ends the request at once, as a completion with the hit we expected. */
function serve(a: BackendAffinity, keys: number[]): void {
  const matched = a.matched(keys);
  a.settle(a.record(keys, matched), { ok: true, cachedTokens: matched * BT }, BT, keys.length * BT + 1);
}

describe("LruBlockSet eviction accounting", () => {
  it("oldestStamp is the LRU tail's stamp; roomEvictions counts keyed evictions for room only", () => {
    const s = new LruBlockSet(3);
    expect(s.oldestStamp).toBe(s.nextStamp);
    s.touchChain([1], 1);
    s.touchChain([2], 1);
    expect(s.oldestStamp).toBe(s.stampOf(1));
    s.touchChain([3], 1);
    s.touchChain([4], 1); // evicts 1 to make room
    expect(s.roomEvictions).toBe(1);
    s.evictThrough(s.stampOf(2)); // on evidence: not counted
    expect(s.roomEvictions).toBe(1);
    s.occupy(1); // anonymous, and there is room for it: nothing goes
    expect(s.roomEvictions).toBe(1);
    s.occupy(3); // evicts 3 and 4 (keyed, counted) and the anonymous one (not counted)
    expect(s.roomEvictions).toBe(3);
  });

  it("remembers the keys it evicted to make room, and counts a returning run once", () => {
    const s = new LruBlockSet(4);
    s.trackEvictions(2);
    s.touchChain([1, 2, 3, 4], 4);
    s.touchChain([5, 6], 2); // evicts 4 then 3 (the chain's end first)
    expect(s.returned([1, 2, 3, 4], 2, 4)).toBe(2);
    expect(s.returned([1, 2, 3, 4], 2, 4)).toBe(0); // forgotten once counted
    s.touchChain([7, 8, 9], 3); // evicts 2, 1, 6: the ghosts keep the last two (1, 6)
    expect(s.returned([2], 0, 1)).toBe(0);
    expect(s.returned([1, 99], 0, 2)).toBe(1); // stops at the first key it never evicted
    expect(new LruBlockSet(4).returned([1], 0, 1)).toBe(0); // untracked
  });
});

describe("TailReuse", () => {
  it("prices the share of evictions that came back, at most 1", () => {
    const t = new TailReuse(1000);
    expect(t.share).toBe(0);
    t.observeReturns(5); // nothing evicted yet: no price
    expect(t.share).toBe(0);
    t.observeEvictions(20);
    expect(t.share).toBeCloseTo(5 / 20);
    t.observeEvictions(20); // the same running total again: nothing new
    expect(t.share).toBeCloseTo(5 / 20);
    t.observeReturns(50);
    expect(t.share).toBe(1);
  });

  it("halves its counts past the window, so it follows recent churn", () => {
    const t = new TailReuse(100);
    t.observeEvictions(100); // 100 evictions, nothing back
    for (let k = 1; k <= 20; k++) {
      t.observeEvictions(100 + 10 * k);
      t.observeReturns(8);
    }
    // Lifetime share 160 / 300; the window keeps mostly the recent 8 of 10.
    expect(t.share).toBeGreaterThan(0.7);
  });

  it("rejects a window that is not a finite number >= 1", () => {
    expect(() => new TailReuse(0)).toThrow(RangeError);
    expect(() => new TailReuse(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(ghostCapacity(1)).toBe(1);
  });
});

describe("BackendAffinity.tailReuse", () => {
  it("is 0 for a tail of finished conversations that never come back", () => {
    const stale = new BackendAffinity(100);
    for (let c = 0; c < 40; c++) serve(stale, chain(10_000 * (c + 1), 10));
    expect(stale.blocks.roomEvictions).toBeGreaterThan(0);
    expect(stale.tailReuse()).toBe(0);
  });

  it("is high when what it evicts is asked for again soon after", () => {
    // 11 conversations of 10 blocks take turns through a 100-entry set: each comes back just after
    // its blocks were evicted (LRU's cyclic worst case). Every eviction returns; the ghosts (an eighth
    // of the set, 13 keys) still hold most of a conversation's 10 when it does.
    const hot = new BackendAffinity(100);
    for (let turn = 0; turn < 200; turn++) serve(hot, chain(10_000 * ((turn % 11) + 1), 10));
    expect(hot.blocks.roomEvictions).toBeGreaterThan(100);
    expect(hot.tailReuse()).toBeGreaterThan(0.5);
  });

  it("counts a return on a backend that evicted the blocks even when the request goes elsewhere", () => {
    const a = new BackendAffinity(20);
    serve(a, chain(1, 10));
    serve(a, chain(100, 20)); // evicts all of chain(1, 10)
    const before = a.tailReuse();
    a.noteReturns(chain(1, 10), a.matched(chain(1, 10)));
    expect(a.tailReuse()).toBeGreaterThan(before);
    expect(a.matched(chain(1, 10))).toBe(0); // only counted: nothing is touched here
  });
});
