import { describe, expect, it } from "vitest";
import { oracleHitRate } from "./oracle";

const req = (blocks: number[], promptTokens = blocks.length * 10 + 5) => ({ blocks, promptTokens });

describe("oracleHitRate", () => {
  it("hits the longest cached prefix, block by block", () => {
    // blockTokens 10; prompts carry 5 extra tokens beyond their full blocks.
    const r = oracleHitRate([req([1, 2, 3]), req([1, 2, 4]), req([1, 2, 4, 5]), req([9])], 100, 10);
    // hits: 0, then [1,2] = 20, then [1,2,4] = 30, then 0
    expect(r.cachedTokens).toBe(50);
    expect(r.promptTokens).toBe(35 + 35 + 45 + 15);
    expect(r.hitRate).toBeCloseTo(50 / 130, 10);
  });

  it("never counts the last token: a fully cached block-aligned prompt misses its last block", () => {
    const r = oracleHitRate([req([1, 2], 20), req([1, 2], 20)], 100, 10);
    expect(r.cachedTokens).toBe(10);
  });

  it("evicts least recently used blocks, tails before heads", () => {
    // Capacity 3 blocks. A=[1,2,3] fills it; B=[7] evicts A's tail block 3 (the LRU one),
    // so A again hits [1,2] only.
    const r = oracleHitRate([req([1, 2, 3]), req([7]), req([1, 2, 3])], 3, 10);
    expect(r.cachedTokens).toBe(20);
  });

  it("hits nothing with zero capacity", () => {
    expect(oracleHitRate([req([1]), req([1])], 0, 10).cachedTokens).toBe(0);
  });
});
