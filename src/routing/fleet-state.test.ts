import { describe, expect, it } from "vitest";
import { blockKeysFromIds, chainSeed } from "../prefix/block-keys";
import { BackendAffinity } from "./affinity-index";
import { FleetState } from "./fleet-state";

describe("FleetState.freeCacheTokens", () => {
  it("is the index's capacity less what it holds and sets aside, in tokens, never negative", () => {
    // 16-token blocks, stride 2: one entry is 32 tokens; 10 entries of capacity.
    const f = new FleetState(16, 1.25, 2, undefined);
    const a = new BackendAffinity(10);
    f.affinity = [a];
    expect(f.freeCacheTokens(0)).toBe(320);
    const keys = blockKeysFromIds([1, 2, 3], chainSeed("m", "t"));
    const receipt = a.record(keys, 0, 2); // 3 keyed entries, 2 set aside past the keys
    expect(f.freeCacheTokens(0)).toBe((10 - 3 - 2) * 32);
    a.settle(receipt, { ok: true, cachedTokens: 0 }, 32, 5 * 32);
    // Ended: what was set aside is held as anonymous entries; nothing freed.
    expect(f.freeCacheTokens(0)).toBe((10 - 5) * 32);
    a.blocks.occupy(20);
    expect(f.freeCacheTokens(0)).toBe(0);
  });
});
