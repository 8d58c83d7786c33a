import { describe, expect, it } from "vitest";
import { pastWindowEntries } from "./kv-footprint";

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
});
