import { describe, expect, it } from "vitest";
import { BackendAffinity } from "./affinity-index";

/** A chain of n distinct keys starting at `base` (chained keys are just distinct numbers here). */
function chain(base: number, n: number): number[] {
  return Array.from({ length: n }, (_, j) => base + j);
}

const BT = 16;

describe("BackendAffinity correction", () => {
  it("a shortfall evicts everything at least as old as the first missed block, and nothing newer", () => {
    const a = new BackendAffinity(1000);
    const old = chain(1000, 8); // touched before A: older than A's blocks
    const convo = chain(2000, 10);
    const newer = chain(3000, 8); // touched after A: newer
    a.settle(a.record(old, 0), { ok: true, cachedTokens: 0 }, BT, 8 * BT);
    a.settle(a.record(convo, 0), { ok: true, cachedTokens: 0 }, BT, 10 * BT);
    a.settle(a.record(newer, 0), { ok: true, cachedTokens: 0 }, BT, 8 * BT);

    const next = [...convo, 2010, 2011, 2012, 2013, 2014];
    expect(a.matched(next)).toBe(10);
    const r = a.record(next, 10);
    // The engine found only 3 blocks: blocks 3.. were evicted there, so was everything older.
    const result = a.settle(r, { ok: true, cachedTokens: 3 * BT + 5 }, BT, 15 * BT + 3);
    expect(result.evicted).toBe(8);
    expect(old.some((k) => a.blocks.has(k))).toBe(false);
    expect(newer.every((k) => a.blocks.has(k))).toBe(true);
    expect(a.matched(next)).toBe(15); // this request's own blocks were just computed there
  });

  it("reads the engine's hit in its own token units, and ignores a shortfall within tokenizer skew", () => {
    const a = new BackendAffinity(1000);
    const old = chain(1000, 4);
    const c = chain(2000, 40);
    a.settle(a.record(old, 0), { ok: true, cachedTokens: 0 }, BT, 64);
    a.settle(a.record(c, 0), { ok: true, cachedTokens: 0 }, BT, 40 * BT);
    // Same 40 blocks hit, but the engine's tokenizer counts 10% fewer tokens: 576 of its 576 ≈ our 640.
    const next = [...c, 2040];
    const r1 = a.record(next, 40);
    expect(a.settle(r1, { ok: true, promptTokens: 594, cachedTokens: 576 }, BT, 41 * BT + 2).evicted).toBe(0);
    // One block short in our units: skew (a different chat template), not an eviction.
    const r2 = a.record(next, 40);
    expect(
      a.settle(r2, { ok: true, promptTokens: 41 * BT + 2, cachedTokens: 39 * BT }, BT, 41 * BT + 2).evicted,
    ).toBe(0);
    expect(a.blocks.has(1000)).toBe(true);
    // Half the prefix missing is an eviction, skew or not.
    const r3 = a.record(next, 40);
    expect(
      a.settle(r3, { ok: true, promptTokens: 594, cachedTokens: 288 }, BT, 41 * BT + 2).evicted,
    ).toBeGreaterThan(0);
    expect(a.blocks.has(1000)).toBe(false);
  });

  it("an exact hit read through a skew just under 1 is not an eviction (64-token entries, short prompt)", () => {
    // The e2e Mooncake replay's case: 8 entries (512 tokens, the prefix every request shares) expected,
    // the engine reports exactly those 512 tokens, but its prompt counts 923 tokens to our 919, so the
    // hit reads as 7.97 entries and floors to 7: one entry short, within the tolerance of one.
    const entry = 64;
    const a = new BackendAffinity(1000);
    const older = chain(5000, 20);
    a.settle(a.record(older, 0), { ok: true, cachedTokens: 0 }, entry, 20 * entry);
    const shared = chain(1, 8);
    a.settle(a.record(shared, 0), { ok: true, cachedTokens: 0 }, entry, 8 * entry);
    const next = [...shared, ...chain(9000, 6)];
    const r = a.record(next, 8);
    expect(a.settle(r, { ok: true, promptTokens: 923, cachedTokens: 512 }, entry, 919).evicted).toBe(0);
    expect(a.blocks.has(5000)).toBe(true);
  });

  it("does not correct when the whole prompt hit but for the last block (the engine recomputes the last token)", () => {
    const a = new BackendAffinity(1000);
    const old = chain(1000, 4);
    const c = chain(2000, 10);
    a.settle(a.record(old, 0), { ok: true, cachedTokens: 0 }, BT, 64);
    a.settle(a.record(c, 0), { ok: true, cachedTokens: 0 }, BT, 160);
    const r = a.record(c, 10);
    expect(a.settle(r, { ok: true, cachedTokens: 144 }, BT, 160).evicted).toBe(0);
    expect(a.blocks.has(1000)).toBe(true);
  });

  it("does not correct a miss explained by a request still prefilling the same prefix", () => {
    const a = new BackendAffinity(1000);
    const old = chain(1000, 4);
    a.settle(a.record(old, 0), { ok: true, cachedTokens: 0 }, BT, 64);
    const c = chain(2000, 10);
    const first = a.record(c, 0); // in flight
    const second = a.record(c, a.matched(c));
    expect(second.matched).toBe(10);
    expect(a.settle(second, { ok: true, cachedTokens: 0 }, BT, 170).evicted).toBe(0);
    expect(a.blocks.has(1000)).toBe(true);
    // Once the first request has completed, the same miss is evidence of eviction.
    a.settle(first, { ok: true, cachedTokens: 0 }, BT, 170);
    const third = a.record(c, 10);
    expect(a.settle(third, { ok: true, cachedTokens: 0 }, BT, 170).evicted).toBeGreaterThan(0);
    expect(a.blocks.has(1000)).toBe(false);
  });

  it("ok=false forgets the tail blocks the request inserted, keeps the cached head", () => {
    const a = new BackendAffinity(1000);
    const head = chain(2000, 4);
    a.settle(a.record(head, 0), { ok: true, cachedTokens: 0 }, BT, 64);
    const req = [...head, 5000, 5001, 5002];
    const r = a.record(req, a.matched(req));
    expect(a.settle(r, { ok: false }, BT, 7 * BT).forgotten).toBe(3);
    expect(a.matched(req)).toBe(4);
  });

  it("ok=false keeps tail blocks a later request touched since", () => {
    const a = new BackendAffinity(1000);
    const req = chain(7000, 6);
    const failed = a.record(req, 0);
    const later = a.record(req, 6); // a concurrent request re-touched them
    expect(a.settle(failed, { ok: false }, BT, 96).forgotten).toBe(0);
    expect(a.matched(req)).toBe(6);
    a.settle(later, { ok: true, cachedTokens: 0 }, BT, 96);
  });

  it("without reported cached tokens nothing is corrected, and settling twice is a no-op", () => {
    const a = new BackendAffinity(100);
    const c = chain(1, 5);
    a.settle(a.record(c, 0), { ok: true }, BT, 80);
    const r = a.record(c, 5);
    expect(a.settle(r, { ok: true }, BT, 90)).toEqual({ evicted: 0, forgotten: 0 });
    expect(a.settle(r, { ok: false }, BT, 90)).toEqual({ evicted: 0, forgotten: 0 });
    expect(a.matched(c)).toBe(5);
  });
});

describe("BackendAffinity follows the engine's whole cache (kv-footprint.ts)", () => {
  it("sets a prompt's KV past its keys aside while it runs, and holds it as anonymous entries once it ends", () => {
    const a = new BackendAffinity(8);
    const old = chain(1000, 4);
    a.settle(a.record(old, 0), { ok: true, cachedTokens: 0 }, BT, 4 * BT);
    // 3 keyed blocks of a 6-block prompt: 3 more blocks the engine holds and the index does not key.
    const long = chain(2000, 3);
    const r = a.record(long, 0, 3);
    expect(a.blocks.reserved).toBe(3);
    // 4 + 3 entries + 3 set aside > 8: the two least recent blocks of `old` (its tail) went.
    expect(old.map((k) => a.blocks.has(k))).toEqual([true, true, false, false]);
    a.settle(r, { ok: true, cachedTokens: 0 }, BT, 6 * BT);
    expect(a.blocks.reserved).toBe(0);
    expect(a.blocks.anonymous).toBe(3);
    expect(a.blocks.size).toBe(8);
    expect(a.matched(long)).toBe(3);
  });

  it("a request that failed gives its reservation back and leaves no anonymous entries", () => {
    const a = new BackendAffinity(8);
    const r = a.record(chain(2000, 3), 0, 3);
    a.settle(r, { ok: false }, BT, 6 * BT);
    expect(a.blocks.reserved).toBe(0);
    expect(a.blocks.anonymous).toBe(0);
  });

  it("when all its keys match, the prompt past them may be cached: only what the engine did not hit is counted", () => {
    const a = new BackendAffinity(100);
    const keys = chain(1, 4);
    a.settle(a.record(keys, 0, 6), { ok: true, cachedTokens: 0 }, BT, 10 * BT);
    expect(a.blocks.anonymous).toBe(6);
    // The next turn: the whole window matches, nothing is set aside while it runs…
    const r = a.record(keys, 4, 8);
    expect(r.deferred).toBe(8);
    expect(a.blocks.reserved).toBe(0);
    // …and the engine hit 9 blocks: 5 past the window were cached, 3 were new.
    a.settle(r, { ok: true, cachedTokens: 9 * BT }, BT, 12 * BT);
    expect(a.blocks.anonymous).toBe(9);
  });

  it("a request's blocks take their LRU place when it ends, as the engine frees them then", () => {
    const a = new BackendAffinity(8);
    const early = chain(1000, 4);
    const late = chain(2000, 4);
    const slow = a.record(early, 0); // routed first, ends last
    const fast = a.record(late, 0);
    a.settle(fast, { ok: true, cachedTokens: 0 }, BT, 4 * BT);
    a.settle(slow, { ok: true, cachedTokens: 0 }, BT, 4 * BT);
    a.settle(a.record(chain(3000, 2), 0), { ok: true, cachedTokens: 0 }, BT, 2 * BT);
    // The two evicted are the tail of the request freed first, not of the request routed first.
    expect(early.every((k) => a.blocks.has(k))).toBe(true);
    expect(late.map((k) => a.blocks.has(k))).toEqual([true, true, false, false]);
  });

  it("a miss on blocks a completed request freed is an eviction, even while an older request is in flight", () => {
    const a = new BackendAffinity(1000);
    const old = chain(1000, 4);
    a.settle(a.record(old, 0), { ok: true, cachedTokens: 0 }, BT, 4 * BT);
    a.record(chain(9000, 3), 0); // in flight throughout
    const c = chain(2000, 10);
    a.settle(a.record(c, 0), { ok: true, cachedTokens: 0 }, BT, 10 * BT);
    const again = a.record(c, 10);
    expect(again.pendingAt[0]).toBe(0);
    expect(a.settle(again, { ok: true, cachedTokens: 0 }, BT, 10 * BT + 5).evicted).toBeGreaterThan(0);
    expect(a.blocks.has(1000)).toBe(false);
  });

  it("a finished request's answer takes capacity: older prefixes go as the engine reuses their blocks", () => {
    // Capacity 10: an old prefix of 4 entries, then a 4-entry request whose answer held 3 entries.
    const withAnswer = new BackendAffinity(10);
    const old = chain(1000, 4);
    withAnswer.settle(withAnswer.record(old, 0), { ok: true, cachedTokens: 0 }, BT, 4 * BT);
    const turn = chain(2000, 4);
    withAnswer.settle(
      withAnswer.record(turn, 0),
      { ok: true, cachedTokens: 0, outputTokens: 48 },
      BT,
      4 * BT,
      3,
    );
    expect(withAnswer.blocks.anonymous).toBe(3);
    // 4 + 4 + 3 = 11 > 10: the least recent old entry went, and the request's own keys stayed (freed last).
    expect(old.map((k) => withAnswer.blocks.has(k))).toEqual([true, true, true, false]);
    expect(turn.every((k) => withAnswer.blocks.has(k))).toBe(true);
    // Without the answer (an older caller: no tail) the old prefix is believed whole.
    const without = new BackendAffinity(10);
    without.settle(without.record(old, 0), { ok: true, cachedTokens: 0 }, BT, 4 * BT);
    without.settle(without.record(turn, 0), { ok: true, cachedTokens: 0 }, BT, 4 * BT);
    expect(old.every((k) => without.blocks.has(k))).toBe(true);
    expect(without.blocks.anonymous).toBe(0);
  });

  it("carries the fraction of an entry from one answer to the next, and charges nothing for a failure", () => {
    const a = new BackendAffinity(100);
    for (let i = 0; i < 4; i++)
      a.settle(a.record(chain(1000 * (i + 1), 2), 0), { ok: true, cachedTokens: 0 }, BT, 2 * BT, 0.75);
    expect(a.blocks.anonymous).toBe(3); // 4 × 0.75
    a.settle(a.record(chain(9000, 2), 0), { ok: false }, BT, 2 * BT, 5);
    expect(a.blocks.anonymous).toBe(3);
  });
});

describe("BackendAffinity's pinned entries (the memory our requests in flight hold)", () => {
  it("counts the blocks of the requests in flight, a shared history once, and frees them as they end", () => {
    const a = new BackendAffinity(1000);
    const sys = chain(1000, 4);
    const first = a.record([...sys, ...chain(2000, 6)], 0);
    const second = a.record([...sys, ...chain(3000, 3)], 4);
    expect(a.pinnedEntries()).toBe(4 + 6 + 3);
    a.settle(first, { ok: true, cachedTokens: 0 }, BT, 10 * BT);
    expect(a.pinnedEntries()).toBe(4 + 3);
    a.settle(second, { ok: true, cachedTokens: 4 * BT }, BT, 7 * BT);
    expect(a.pinnedEntries()).toBe(0);
  });
});
