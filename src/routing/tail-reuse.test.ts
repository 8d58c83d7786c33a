import { describe, expect, it } from "vitest";
import { BackendAffinity } from "./affinity-index";
import { LruBlockSet } from "./lru-block-set";
import { TAIL_SHARE, TailReuse } from "./tail-reuse";

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

describe("LruBlockSet tail accessors", () => {
  it("oldestStamp is the LRU tail's stamp (nextStamp when empty); roomEvictions counts only evictions for room", () => {
    const s = new LruBlockSet(3);
    expect(s.oldestStamp).toBe(s.nextStamp);
    s.touchChain([1], 1);
    s.touchChain([2], 1);
    expect(s.oldestStamp).toBe(s.stampOf(1));
    s.touchChain([3], 1);
    s.touchChain([4], 1); // evicts 1 to make room
    expect(s.roomEvictions).toBe(1);
    expect(s.oldestStamp).toBe(s.stampOf(2));
    s.evictThrough(s.stampOf(2)); // on evidence: not counted
    expect(s.roomEvictions).toBe(1);
    s.reserve(2); // sets capacity aside: evicts 3 for room
    expect(s.roomEvictions).toBe(2);
  });
});

describe("TailReuse", () => {
  it("counts as tail hits only stamps in the oldest share of the range, and prices them against evictions", () => {
    const t = new TailReuse(1000);
    expect(t.share).toBe(0);
    // Range [100, 200): the edge is 100 + TAIL_SHARE * 100.
    const edge = 100 + TAIL_SHARE * 100;
    t.observeHits(Float64Array.from([edge - 1, edge, 150, -1]), 4, 100, 200);
    t.observeEvictions(3);
    expect(t.share).toBeCloseTo(1 / 4);
    t.observeEvictions(3); // the same running total again: nothing new
    expect(t.share).toBeCloseTo(1 / 4);
  });

  it("halves its counts past the window, so it follows recent churn", () => {
    const t = new TailReuse(10);
    t.observeEvictions(10); // 10 evictions, no hit
    for (let k = 0; k < 40; k++) t.observeHits(Float64Array.from([0]), 1, 0, 100);
    // Without the window the share would be 40/50; with it the old evictions have faded.
    expect(t.share).toBeGreaterThan(0.9);
  });

  it("rejects a window that is not a finite number >= 1", () => {
    expect(() => new TailReuse(0)).toThrow(RangeError);
    expect(() => new TailReuse(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});

describe("BackendAffinity.tailReuse", () => {
  it("is 0 for a tail of finished conversations that never come back", () => {
    // Stale: 40 one-off conversations of 10 blocks through a 100-entry set, never seen again.
    const stale = new BackendAffinity(100);
    for (let c = 0; c < 40; c++) serve(stale, chain(10_000 * (c + 1), 10));
    expect(stale.blocks.roomEvictions).toBeGreaterThan(0);
    expect(stale.tailReuse()).toBe(0);
  });
});
