import { describe, expect, it } from "vitest";
import { pastWindowEntries, tailEntries } from "./kv-footprint";

describe("kv-footprint", () => {
  it("counts a prompt's full-block entries past the keyed ones", () => {
    // 40,000 tokens in 512-token entries: 78 full entries, 64 keyed (a 32k window).
    expect(pastWindowEntries(40_000, 64, 512)).toBe(14);
    // Within the window: nothing (a partial last block is never cached).
    expect(pastWindowEntries(170, 2, 64)).toBe(0);
    expect(pastWindowEntries(128, 2, 64)).toBe(0);
    // More keys than the count (the gateway's estimate past the window can be short): never negative.
    expect(pastWindowEntries(100, 5, 64)).toBe(0);
    expect(pastWindowEntries(0, 0, 64)).toBe(0);
  });

  it("counts what a finished request held past its prompt's whole entries: partial block and answer", () => {
    // 16-token blocks, one entry per block: 100 prompt + 30 output tokens held ceil(130/16) = 9 blocks,
    // 6 of them the prompt's full blocks (already charged): 3 more.
    expect(tailEntries(100, 30, 16, 16)).toBe(3);
    // 64-token entries (stride 4): the same request held 144 tokens of blocks, 64 charged: 80/64 entries.
    expect(tailEntries(100, 30, 16, 64)).toBe(1.25);
    // A prompt of whole blocks and a one-token answer: one more block.
    expect(tailEntries(128, 1, 16, 16)).toBe(1);
    // No output reported (an older caller): nothing, not even the partial block.
    expect(tailEntries(100, undefined, 16, 16)).toBe(0);
    // Nonsense is nothing, never negative or NaN.
    expect(tailEntries(100, -5, 16, 16)).toBe(0);
    expect(tailEntries(100, Number.NaN, 16, 16)).toBe(0);
    expect(tailEntries(100, Number.POSITIVE_INFINITY, 16, 16)).toBe(0);
    expect(tailEntries(0, 30, 16, 16)).toBe(0);
  });
});
