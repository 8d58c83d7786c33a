import { describe, expect, it } from "vitest";
import { blockKeysFromIds, blockKeysFromTokens, chainSeed, keyOf, shortPromptKey } from "./block-keys";

function tokens(n: number, salt = 0): Uint32Array {
  const t = new Uint32Array(n);
  for (let i = 0; i < n; i++) t[i] = (i * 2654435761 + salt) % 200_000;
  return t;
}

describe("block keys", () => {
  const seed = chainSeed("llama-3.1-8b");

  it("keys only full blocks and honours the token cap", () => {
    expect(blockKeysFromTokens(tokens(47), seed, 16)).toHaveLength(2);
    expect(blockKeysFromTokens(tokens(48), seed, 16)).toHaveLength(3);
    expect(blockKeysFromTokens(tokens(10_000), seed, 16, 8192)).toHaveLength(512);
    expect(blockKeysFromTokens(tokens(10_000), seed, 16, 8200)).toHaveLength(512);
  });

  it("is deterministic and chained: a shared prefix shares keys, then diverges for good", () => {
    const a = tokens(160);
    const b = tokens(160);
    b[70] = 7; // block 4 differs
    const ka = blockKeysFromTokens(a, seed, 16);
    const kb = blockKeysFromTokens(b, seed, 16);
    expect(blockKeysFromTokens(a, seed, 16)).toEqual(ka);
    expect(kb.slice(0, 4)).toEqual(ka.slice(0, 4));
    for (let i = 4; i < 10; i++) expect(kb[i]).not.toBe(ka[i]);
  });

  it("keys are exact integers below 2^53 and distinct across many blocks", () => {
    const keys = blockKeysFromTokens(tokens(16 * 50_000), seed, 16);
    const seen = new Set(keys);
    expect(seen.size).toBe(keys.length);
    for (const k of keys.slice(0, 1000)) {
      expect(Number.isSafeInteger(k)).toBe(true);
      expect(k).toBeGreaterThanOrEqual(0);
    }
  });

  it("separates models and tenants", () => {
    const t = tokens(64);
    const base = blockKeysFromTokens(t, seed, 16);
    const otherModel = blockKeysFromTokens(t, chainSeed("llama-3.1-70b"), 16);
    const tenantA = blockKeysFromTokens(t, chainSeed("llama-3.1-8b", "tenant-a"), 16);
    const tenantB = blockKeysFromTokens(t, chainSeed("llama-3.1-8b", "tenant-b"), 16);
    for (const other of [otherModel, tenantA, tenantB]) {
      for (let i = 0; i < base.length; i++) expect(other[i]).not.toBe(base[i]);
    }
    for (let i = 0; i < base.length; i++) expect(tenantA[i]).not.toBe(tenantB[i]);
    // an empty tenant key is no tenant key
    expect(blockKeysFromTokens(t, chainSeed("llama-3.1-8b", ""), 16)).toEqual(base);
    // field boundaries are part of the seed: ("ab","c") is not ("a","bc")
    expect(chainSeed("ab", "c")).not.toEqual(chainSeed("a", "bc"));
  });

  it("ready-made block ids chain the same way", () => {
    const a = blockKeysFromIds([0, 1, 2, 3], seed);
    const b = blockKeysFromIds([0, 1, 9, 3], seed);
    expect(b.slice(0, 2)).toEqual(a.slice(0, 2));
    expect(b[2]).not.toBe(a[2]);
    expect(b[3]).not.toBe(a[3]); // same id after a different prefix is a different block
    expect(blockKeysFromIds([2 ** 40 + 5], seed)).not.toEqual(blockKeysFromIds([5], seed));
  });

  it("keys do not change: the same chain from release to release (affinity and ring homes depend on it)", () => {
    const t = new Uint32Array(48);
    for (let i = 0; i < 48; i++) t[i] = (i * 2654435761) % 200_000;
    expect(blockKeysFromTokens(t, seed, 16)).toEqual([2073264299338190, 188517311329867, 4993373653062437]);
    expect(blockKeysFromIds([0, 1, 2 ** 40 + 5], chainSeed("m", "tenant"))).toEqual([
      642544874370218, 1564859825617846, 7538213148878821,
    ]);
    expect(keyOf(chainSeed("m"))).toBe(3718592759300540);
  });

  it("keys a prompt shorter than one block by all its tokens, apart from block keys, models and tenants", () => {
    const keys = new Set<number>();
    for (let salt = 0; salt < 1000; salt++) keys.add(shortPromptKey(tokens(1 + (salt % 15), salt), seed));
    expect(keys.size).toBe(1000);
    expect(shortPromptKey(tokens(9, 3), seed)).toBe(shortPromptKey(tokens(9, 3), seed));
    // A prompt that is a prefix of another is still another prompt (the length is hashed too).
    expect(shortPromptKey(tokens(8), seed)).not.toBe(shortPromptKey(tokens(9), seed));
    expect(shortPromptKey(tokens(9), chainSeed("llama-3.1-8b", "t"))).not.toBe(
      shortPromptKey(tokens(9), seed),
    );
    expect(Number.isSafeInteger(shortPromptKey(tokens(5), seed))).toBe(true);
    // Tagged apart: a 16-token prompt's short key is not its one block key.
    expect(shortPromptKey(tokens(16), seed)).not.toBe(blockKeysFromTokens(tokens(16), seed, 16)[0]);
  });

  it("rejects a nonsensical block size", () => {
    expect(() => blockKeysFromTokens(tokens(32), seed, 0)).toThrow(/blockTokens/);
  });
});
